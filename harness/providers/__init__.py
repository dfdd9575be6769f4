"""Offline model providers: `envfactory/oracle` (gold actions) and `envfactory/replay`."""
