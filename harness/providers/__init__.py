"""Offline model providers: `gold_players.py` (`envfactory/oracle` plays gold actions,
`envfactory/replay` a recorded trajectory), `script.py` (`envfactory/script` answers from a
script file, a plumbing check for every role) and `responder.py` (a model calling a
function, under the test kit's scripted models)."""
