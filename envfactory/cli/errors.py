"""One error style and one set of exit codes for every `envfactory` command.

Usage errors (`typer.BadParameter` and the other usage errors typer raises for a bad
flag, or a command raises for a bad value) exit 2 with one `error: ...` line on stderr
(an MCP client launching `env serve` shows it as is). Ordinary failures exit 1 with one
`error: ...` line on stderr instead of a traceback: an
`OSError` (a missing file), a `ValueError` (a bad record, a refused configuration), a
`CommandError` a command raises itself, or any exception class defined by the project's
library folders (`HubError`, `ScoreError`, `SearchAgentError`, ...). The library raises;
the handler here, installed on the root group, prints - so no command formats its own
errors. A bug (any other exception) still shows its traceback.

Old flag spellings are also translated here, before click parses the command line: each
command lists its deprecated aliases once (`DEPRECATED`), the note goes to stderr, and the
help shows only the current spelling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import typer
from typer.core import TyperGroup

__all__ = ["DEPRECATED", "CliGroup", "CommandError", "fail_message"]

#: the library folders whose exception classes are failures to report, not bugs to show
_LIBRARY_PACKAGES = frozenset({"envs", "harness", "tasks", "synthesis", "training",
                               "leaderboard", "envfactory"})

_CONCURRENCY = {"--max-concurrent": "--max-concurrency", "--concurrency": "--max-concurrency",
                "--workers": "--max-concurrency"}

#: command path -> {deprecated flag: current flag}; the old spellings users' scripts carry
DEPRECATED: Mapping[tuple[str, ...], Mapping[str, str]] = {
    ("tau2", "grade"): {"--out": "--results", **_CONCURRENCY},
    ("vitabench", "grade"): {"--out": "--results", "--base-url": "--judge-base-url",
                             "--judge-arg": "--judge-model-arg", "-M": "--judge-model-arg",
                             "--temperature": "--judge-temperature",
                             **_CONCURRENCY},
    ("mcp-atlas", "grade"): {"--out": "--results", "--base-url": "--judge-base-url",
                             **_CONCURRENCY},
    ("envgen", "verify"): {"--out": "--out-dir", **_CONCURRENCY},
    ("envgen", "build"): {"--out": "--out-dir", **_CONCURRENCY},
    ("synth", "queries"): {"--out": "--out-dir", **_CONCURRENCY},
    ("synth", "graph"): {"--out": "--out-dir"},
    ("synth", "graph-refine"): _CONCURRENCY,
    ("synth", "contamination"): {"--out": "--out-dir"},
    ("train", "export"): {"--out": "--out-dir"},
    ("leaderboard", "build"): {"--out": "--out-dir", **_CONCURRENCY},
    ("tasks", "build"): {"--out": "--out-dir"},
    ("models", "prepare"): {"--out": "--out-dir"},
}


class CommandError(Exception):
    """A failure a command reports itself (exit 1, one `error:` line)."""


def _is_failure(error: BaseException) -> bool:
    """Whether `error` is an ordinary failure (reported in one line) rather than a bug."""
    if isinstance(error, (OSError, ValueError, CommandError)):
        return True
    return type(error).__module__.split(".")[0] in _LIBRARY_PACKAGES


def fail_message(error: BaseException) -> str:
    """The one line printed for a failure: its message, lines joined."""
    text = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return "error: " + ("; ".join(lines) or type(error).__name__)


def _command_path(group: TyperGroup, ctx: Any, args: Sequence[str]) -> tuple[str, ...]:
    """The subcommand names at the front of `args` (up to the first option)."""
    path: list[str] = []
    command: object = group
    for arg in args:
        if not isinstance(command, TyperGroup) or arg.startswith("-"):
            break
        sub = command.get_command(ctx, arg)
        if sub is None:
            break
        path.append(arg)
        command = sub
    return tuple(path)


def _translate(args: list[str], aliases: Mapping[str, str]) -> list[str]:
    """`args` with each deprecated flag (`--old` or `--old=value`) replaced, noting it once."""
    out: list[str] = []
    for arg in args:
        if arg == "--":
            out.extend(args[len(out):])
            break
        flag, sep, value = arg.partition("=")
        if flag in aliases:
            typer.echo(f"note: {flag} is deprecated; use {aliases[flag]}", err=True)
            arg = aliases[flag] + sep + value
        out.append(arg)
    return out


class CliGroup(TyperGroup):
    """The root group: old flag spellings translated, ordinary failures exit 1 in one line."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        aliases = DEPRECATED.get(_command_path(self, ctx, args))
        return super().parse_args(ctx, _translate(args, aliases) if aliases else args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.TyperException as e:
            if getattr(e, "exit_code", 1) != 2 or type(e).__name__ == "NoArgsIsHelpError":
                raise
            where = getattr(getattr(e, "ctx", None), "command_path", None)  # a usage error
            typer.echo(f"error: {e.format_message()}"
                       + (f" (see `{where} --help`)" if where else ""), err=True)
            raise typer.Exit(2) from None
        except (typer.Exit, typer.Abort):
            raise
        except Exception as e:
            if not _is_failure(e):
                raise
            typer.echo(fail_message(e), err=True)
            raise typer.Exit(1) from None
