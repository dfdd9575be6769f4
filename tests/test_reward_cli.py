"""`envfactory reward FILE --variant release|strict`: recorded rollouts re-scored offline.

The expected parts of each line are worked out by hand in the comments, for `release`
from the released `tool_reward_fcn.py`'s rules (notes/envfactory.md §16) and for
`strict` from harness.rewards' docstring.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from envfactory.cli import app

BEFORE, AFTER = {"bank": {"b": 10}}, {"bank": {"b": 5}}


def line(calls: list[dict[str, Any]], gold: list[dict[str, Any]], final: dict[str, Any],
         **extra: Any) -> dict[str, Any]:
    return {"calls": calls, "gold_calls": gold, "final_states": final,
            "gold_states": AFTER, "format_failures": 0, "initial_states": BEFORE, **extra}


PAY = {"name": "bank-transfer", "arguments": {"amount": 5}}
CASES = [
    # the gold call and state: 1 in both
    line([PAY], [PAY], AFTER),
    # flag 1 for True, one bad block: release 0.5*1 + 0.5*1 - 0.05 = 0.95;
    # strict (bools are not numbers) 0.5*0 + 0.5*1 - 0.05 = 0.45
    line([{"name": "bank-set", "arguments": {"flag": 1}}],
         [{"name": "bank-set", "arguments": {"flag": True}}], AFTER, format_failures=1),
    # empty gold, one read, nothing changed: release R_traj 1, no server -> R_state 0,
    # no P_length: 0.5; strict R_state = R_traj = 1, P_length 0.05: 0.95
    line([{"name": "bank-get", "arguments": {}}], [], BEFORE, gold_states=BEFORE),
    # the line's alpha 0.3, a wrong amount, the right state: 0.3*0 + 0.7*1 = 0.7 in both
    line([{"name": "bank-transfer", "arguments": {"amount": 6}}], [PAY], AFTER, alpha=0.3),
    # three extra calls: 1 - 0.05*3 = 0.85 in both
    line([PAY] + [{"name": "bank-get", "arguments": {}}] * 3, [PAY], AFTER),
]
RELEASE = [(1, 1, 1, 0, 0), (0.95, 1, 1, 0, 0.05), (0.5, 1, 0, 0, 0), (0.7, 0, 1, 0, 0),
           (0.85, 1, 1, 0.15, 0)]
STRICT = [(1, 1, 1, 0, 0), (0.45, 0, 1, 0, 0.05), (0.95, 1, 1, 0.05, 0), (0.7, 0, 1, 0, 0),
          (0.85, 1, 1, 0.15, 0)]
PARTS = ("reward", "r_traj", "r_state", "p_length", "p_format")


def run(path: Path, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    result = CliRunner().invoke(app, ["reward", str(path), *args])
    return (result.exit_code, [json.loads(x) for x in result.stdout.splitlines()],
            result.stderr)


@pytest.mark.parametrize(("variant", "expected"), [("release", RELEASE), ("strict", STRICT)])
def test_hand_computed_lines_in_both_variants(tmp_path: Path, variant: str,
                                              expected: list[tuple[float, ...]]) -> None:
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    code, out, err = run(path, "--variant", variant)
    assert code == 0, err
    assert [tuple(o[k] for k in PARTS) for o in out] == [pytest.approx(e) for e in expected]
    assert f"5 scored, 0 failed ({variant} α=0.5 γ=0.05)" in err


def test_alpha_and_gamma_flags(tmp_path: Path) -> None:
    path = tmp_path / "rollouts.jsonl"
    path.write_text(json.dumps(CASES[1]) + "\n" + json.dumps(CASES[4]) + "\n")
    # α 0.8: 0.8*1 + 0.2*1 - 0.05 = 0.95 (release); γ 0.1: 1 - 0.1*3 = 0.7
    code, out, err = run(path, "--variant", "release", "--alpha", "0.8", "--gamma", "0.1")
    assert code == 0, err
    assert [o["reward"] for o in out] == [pytest.approx(0.95), pytest.approx(0.7)]
    assert "(release α=0.8 γ=0.1)" in err


def test_a_bad_line_gets_an_error_line_in_its_place_and_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "rollouts.jsonl"
    no_initial = {k: v for k, v in CASES[0].items() if k != "initial_states"}
    path.write_text("\n".join([json.dumps(CASES[0]), "{not json",
                               json.dumps({**CASES[0], "format_failures": -1}),
                               json.dumps(no_initial), json.dumps(CASES[0])]) + "\n")
    code, out, err = run(path, "--variant", "strict")
    assert code == 1
    assert out[0]["reward"] == out[4]["reward"] == 1
    assert [o.get("error", "").partition(": ")[0] for o in out[1:4]] == [
        f"{path}:2", f"{path}:3", f"{path}:4"]
    assert "format_failures" in out[2]["error"]
    assert "needs initial_states" in out[3]["error"]
    assert f"error: {path}:2:" in err and "2 scored, 3 failed" in err
    # release reads no initial state: line 4 scores there
    code, out, _ = run(path, "--variant", "release")
    assert code == 1 and out[3]["reward"] == 1 and "error" in out[1]


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "rollouts.jsonl"
    path.write_text(json.dumps(CASES[0]) + "\n")
    assert run(path, "--variant", "paper")[0] == 2
    assert run(path, "--variant", "release", "--alpha", "2")[0] == 2
    assert run(path)[0] == 2  # --variant is required
