"""`python -m envfactory ...` runs the console script (used to launch MCP servers)."""

from envfactory.cli import app

app()
