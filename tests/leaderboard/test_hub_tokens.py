"""The token never leaks: the fake Hub refuses every request (401, 500) and echoes the
Authorization header it got in its error body and `X-Error-Message`, which the client
quotes in its exception. Neither our exception, its traceback, the CLI's output, the log
records nor any card may hold the token; the CLI run also goes through a real process."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from leaderboard.hub import HubError, download_results, push_dataset, push_results, redact
from tests.leaderboard.fake_hub import (  # noqa: F401
    REPO_ROOT,
    TOKEN,
    FakeHub,
    client_env,
    fake_hub_fixture,
    use_in_process,
)
from tests.leaderboard.test_hub_model import write_log

TASKS = REPO_ROOT / "tasks" / "envfactory" / "data"


@pytest.mark.parametrize("status", [401, 500])
def test_refused_push_never_shows_the_token(fake_hub: FakeHub, tmp_path: Path, status: int,
                                            caplog: pytest.LogCaptureFixture,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    fake_hub.fail_with = status
    log = tmp_path / "a.eval"
    write_log(log, "envfactory", {"overall": 0.5}, 2)

    errors: list[HubError] = []
    for push in (lambda: push_dataset([TASKS / "train.jsonl"], "tester/data"),
                 lambda: push_results([log], "tester/results"),
                 lambda: download_results("tester/results")):
        with pytest.raises(HubError) as info:
            push()
        errors.append(info.value)

    # the token did reach the server and came back in its answer: the redaction was needed
    assert any(TOKEN in header for header in fake_hub.auth_headers)
    for error in errors:
        text = "".join(traceback.format_exception(error))
        assert TOKEN not in text and TOKEN not in str(error)
        assert error.__cause__ is None and error.__context__ is None
        assert str(status) in str(error)
    assert "Bearer ***" in str(errors[0])  # the echoed header is there, masked
    if status == 401:
        assert "HF_TOKEN" in str(errors[0])  # what to do about it
    captured = capsys.readouterr()
    assert TOKEN not in captured.out + captured.err
    assert TOKEN not in caplog.text
    assert all(TOKEN not in record.getMessage() for record in caplog.records)
    assert fake_hub.repos == {}  # nothing was written, so no card either


def test_cli_error_is_one_redacted_line(fake_hub: FakeHub) -> None:
    fake_hub.fail_with = 401
    result = CliRunner().invoke(app, ["hub", "push-dataset", str(TASKS / "train.jsonl"),
                                      "--repo", "tester/data"])
    assert result.exit_code == 1
    assert "error: create dataset repo tester/data" in result.output
    assert TOKEN not in result.output


@pytest.mark.slow
def test_cli_push_in_a_real_process(fake_hub: FakeHub, tmp_path: Path) -> None:
    """`envfactory hub push-dataset` as a user runs it; then a refused one. (Slow: two
    `envfactory` processes, each importing every sub-app and the Hub stack.)"""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(client_env(fake_hub, tmp_path / "cli-home", TOKEN))
    envfactory = Path(sys.executable).parent / "envfactory"
    argv = [str(envfactory), "hub", "push-dataset", str(TASKS / "heldout.jsonl"),
            "--repo", "tester/cli", "--private"]

    ok = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120,
                        check=False)

    assert ok.returncode == 0, ok.stderr
    head = fake_hub.commits("tester/cli", "dataset")[0].sha
    assert f"{fake_hub.url}/datasets/tester/cli" in ok.stdout
    assert f"revision main, commit {head}: committed" in ok.stdout
    assert fake_hub.repo("tester/cli", "dataset").private
    card = fake_hub.read("tester/cli", "README.md", "dataset").decode()
    assert TOKEN not in ok.stdout + ok.stderr + card

    fake_hub.fail_with = 500
    refused = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120,
                             check=False)
    assert refused.returncode == 1
    assert "error:" in refused.stderr and "500" in refused.stderr
    assert TOKEN not in refused.stdout + refused.stderr


def test_redact_masks_token_shapes() -> None:
    text = f"sent {TOKEN}; Authorization: Bearer abc.def-123, other hf_abcdefghij"
    assert redact(text, TOKEN) == "sent ***; Authorization: Bearer ***, other hf_***"
    assert redact("Bearer hf_x1y2z3w4v5 end") == "Bearer *** end"


def test_a_short_token_is_masked_only_as_a_whole_word() -> None:
    """Issue 24's case: with `HF_TOKEN=x` every x of the message was masked, turning the
    repo name `doesnotexist` into `doesnote***ist`."""
    message = ("404 Client Error: Repository Not Found for url: "
               "https://huggingface.co/api/datasets/tester/doesnotexist")
    assert redact(message, "x") == message
    assert redact("token x was refused (x-request-id 7, max 3x)", "x") == (
        "token *** was refused (x-request-id 7, max 3x)")
    assert redact("Authorization: x", "x") == "Authorization: ***"


def test_a_long_token_is_masked_wherever_it_occurs() -> None:
    assert redact(f"url?t={TOKEN}&a=1 and x{TOKEN}y", TOKEN) == "url?t=***&a=1 and x***y"


def test_a_refused_call_with_a_one_letter_token_keeps_the_repo_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hub = FakeHub.start(tmp_path / "fake-hub")
    try:
        use_in_process(hub, tmp_path / "hf-home", "x", monkeypatch)
        with pytest.raises(HubError) as info:
            download_results("tester/doesnotexist")
    finally:
        hub.stop()
    assert "tester/doesnotexist" in str(info.value)
    assert "doesnote***ist" not in str(info.value)
