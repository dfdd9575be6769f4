"""Offline model providers: `gold_players.py` (`envfactory/oracle` plays gold actions,
`envfactory/replay` a recorded trajectory) and `responder.py` (a scripted model for tests)."""
