"""envfactory: evaluation-first harness for tool-use agents (package metadata and CLI)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("envfactory")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+source"
