"""Task options are checked when a task is built: one line naming the option and what it
accepts, and `inspect eval` stops (exit 1) before any sample runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import task_options
from harness.task_options import TaskOptionError
from tasks.bfcl_multiturn.bfcl_multiturn import bfcl_multiturn
from tasks.bfcl_singleturn.bfcl_singleturn import bfcl_singleturn
from tasks.envfactory.envfactory import envfactory
from tests.shared_data import needs_tau2

ROOT = Path(__file__).resolve().parents[2]


def test_checks_name_the_option_and_what_it_accepts() -> None:
    with pytest.raises(TaskOptionError) as e:
        task_options.one_of("transport", "foo", ["inprocess", "mcp"])
    assert str(e.value) == "-T transport='foo': use one of inprocess, mcp"
    assert isinstance(e.value, ValueError)
    with pytest.raises(TaskOptionError, match=r"^-T max_steps=-1: use an integer >= 1$"):
        task_options.integer("max_steps", -1, minimum=1)
    with pytest.raises(TaskOptionError, match=r"^-T max_steps='abc': use an integer >= 1$"):
        task_options.integer("max_steps", "abc", minimum=1)
    with pytest.raises(TaskOptionError, match="use an integer"):
        task_options.integer("epochs", True)
    with pytest.raises(TaskOptionError, match=r"^-T alpha=1.5: use a number from 0.0 to 1.0$"):
        task_options.number("alpha", 1.5, 0.0, 1.0)
    with pytest.raises(TaskOptionError, match="use true or false"):
        task_options.boolean("solo", "maybe")
    assert task_options.integer("max_steps", 3, minimum=1) == 3
    assert task_options.number("alpha", 1, 0.0, 1.0) == 1.0


def test_parsed_reports_the_parsers_own_message_as_the_options() -> None:
    def parse(value: str) -> int:
        raise ValueError(f"{value} is not a colour; use red or blue")

    with pytest.raises(TaskOptionError, match=r"^-T colour='x': x is not a colour; use red"):
        task_options.parsed("colour", "x", parse)


@pytest.mark.parametrize(("options", "message"), [
    ({"transport": "foo"}, "-T transport='foo': use one of inprocess, mcp"),
    ({"max_steps": -1}, "-T max_steps=-1: use an integer >= 1"),
    ({"max_steps": 0}, "-T max_steps=0: use an integer >= 1"),
    ({"split": "test"}, "-T split='test': use one of heldout, train, all"),
    ({"alpha": 2}, "-T alpha=2: use a number from 0.0 to 1.0"),
    ({"data_dir": "/nonexistent/tasks"}, "-T data_dir='/nonexistent/tasks': use an existing"),
])
def test_envfactory_rejects_bad_options_when_built(options: dict[str, Any],
                                                   message: str) -> None:
    with pytest.raises(TaskOptionError) as e:
        envfactory(**options)
    assert str(e.value).startswith(message)


def test_bfcl_tasks_reject_bad_options_when_built() -> None:
    with pytest.raises(TaskOptionError, match=r"^-T category='nope': .*\bmiss_func\b"):
        bfcl_multiturn(category="nope")
    with pytest.raises(TaskOptionError, match=r"^-T category='nope': .*\blive_simple\b"):
        bfcl_singleturn(category="nope")
    with pytest.raises(TaskOptionError, match=r"^-T version='1999.1.1': BFCL version"):
        bfcl_singleturn(version="1999.1.1")


@needs_tau2
@pytest.mark.usefixtures("use_tau2_data")
def test_tau2_tasks_reject_bad_options_when_built() -> None:
    from tasks.tau2.tau2 import tau2_airline, tau2_telecom

    with pytest.raises(TaskOptionError, match=r"^-T split='nope': use one of .*\btest\b"):
        tau2_airline(split="nope")
    with pytest.raises(TaskOptionError, match=r"^-T mode='x': use one of default, oracle_plan$"):
        tau2_airline(mode="x")
    with pytest.raises(TaskOptionError, match=r"^-T max_steps=-1: use an integer >= 1$"):
        tau2_telecom(max_steps=-1)
    with pytest.raises(TaskOptionError, match=r"^-T epochs=0: use an integer >= 1$"):
        tau2_telecom(epochs=0)
    with pytest.raises(TaskOptionError, match=r"^-T max_errors=0: use an integer >= 1$"):
        tau2_telecom(max_errors=0)
    with pytest.raises(TaskOptionError, match=r"^-T temperature=-1: use a number >= 0.0$"):
        tau2_airline(temperature=-1)
    with pytest.raises(TaskOptionError, match=r"^-T seed='x': use an integer >= 0$"):
        tau2_airline(seed="x")
    with pytest.raises(TaskOptionError, match=r"^-T solo='yes please': use true or false$"):
        tau2_telecom(solo="yes please")


def test_inspect_eval_stops_with_the_one_line_message(tmp_path: Path) -> None:
    """Before: every sample errored with a 100-line traceback and the run exited 0."""
    inspect = Path(sys.executable).with_name("inspect")
    result = subprocess.run(
        [str(inspect), "eval", "tasks/envfactory", "-T", "transport=foo",
         "--model", "mockllm/model", "--log-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert lines == ["-T transport='foo': use one of inprocess, mcp"]
