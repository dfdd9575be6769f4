"""Rebuild `docs/leaderboard.md` and `docs/leaderboard.png` from real, cheap, offline logs.

    python docs/leaderboard_demo.py [--work /tmp/lb-demo] [--tau2-data DIR]

Runs (a few samples each, our offline providers, no network):

* `envfactory/oracle` on the held-out EnvFactory tasks, BFCL multi-turn, BFCL single-turn
  and τ² airline (2 epochs; only when τ² data is found: `--tau2-data`, `TAU2_DATA_DIR` or
  `../shared/data/tau2`);
* a negative control: `envfactory/replay` of text-only answers on EnvFactory and BFCL
  multi-turn (scores 0);
* a "mutated oracle": the oracle's own EnvFactory trajectories (`envfactory trajectories`)
  with one defect per task — other arguments, a call left out, an unknown tool, a missing
  required argument, a bad id — replayed, so that the failure taxonomy has something to
  sort;

plus every log under `~/.cache/envfactory/demo/scores/` (checkpoints auto-scored by
`envfactory demo`, when that has run here), then `envfactory leaderboard build` beside
the reported baselines, and two screenshots of the page in headless chromium: the whole
page (`leaderboard.png`) and the paper's table with its Overall column and the ablations
under it, part columns hidden (`leaderboard_paper.png`).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from envs.jsonl import read_objects

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BIN = Path(sys.executable).parent


def run(*argv: str, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(argv), flush=True)
    subprocess.run(argv, check=True, cwd=ROOT, env={**os.environ, **(env or {})})


def inspect_eval(task: str, model: str, logs: Path, *extra: str,
                 env: dict[str, str] | None = None) -> None:
    run(str(BIN / "inspect"), "eval", task, "--model", model, "--log-dir", str(logs),
        "--display", "none", *extra, env=env)


def mutate(records: list[dict]) -> list[dict]:
    """One defect per task, in the order of the held-out tasks (the 4th is left intact)."""
    out = []
    for i, record in enumerate(records):
        r = copy.deepcopy(record)
        calls = [c for m in r["messages"] if m["role"] == "assistant"
                 for c in m.get("tool_calls") or []]
        if i == 0:  # other arguments: the expense's amount
            calls[-1]["arguments"]["amount"] = 81.4
        elif i == 1:  # a required call left out: the last turn's calls dropped
            last = [m for m in r["messages"] if m["role"] == "assistant"
                    and m.get("tool_calls")][-1]
            last["tool_calls"] = []
            last["content"] = "Done."
        elif i == 2:  # a tool that does not exist
            calls[2]["name"] = "expense_reports-attach_file"
        elif i == 4:  # a required argument missing
            calls[2]["arguments"].pop("decision")
        elif i == 5:  # a bad id: the tool errors and the agent never recovers
            calls[3]["arguments"]["report_id"] = "R-999"
        out.append(r)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/lb-demo"))
    parser.add_argument("--tau2-data", type=Path, default=None)
    args = parser.parse_args()
    work: Path = args.work
    shutil.rmtree(work, ignore_errors=True)
    logs = work / "logs"
    logs.mkdir(parents=True)
    oracle = "envfactory/oracle"
    inspect_eval("tasks/envfactory", oracle, logs / "oracle", "--limit", "6")
    inspect_eval("tasks/bfcl_multiturn", oracle, logs / "oracle", "--limit", "4")
    inspect_eval("tasks/bfcl_singleturn", oracle, logs / "oracle", "--limit", "4")
    tau2 = args.tau2_data or (Path(os.environ["TAU2_DATA_DIR"])
                              if os.environ.get("TAU2_DATA_DIR")
                              else ROOT.parent / "shared/data/tau2")
    if (tau2 / "domains").is_dir():
        inspect_eval("tasks/tau2/tau2.py@tau2_airline", oracle, logs / "oracle",
                     "--model-role", f"user={oracle}", "--limit", "3", "--epochs", "2",
                     env={"TAU2_DATA_DIR": str(tau2.resolve())})
    else:
        print(f"τ² left out: no data at {tau2}")
    ids = [f"expense_reports-00{i}" for i in range(1, 7)] + [
        f"multi_turn_base_{i}" for i in range(4)]
    negative = work / "negative.jsonl"
    negative.write_text("".join(json.dumps({"id": i, "turns": []}) + "\n" for i in ids))
    for task, limit in (("tasks/envfactory", "6"), ("tasks/bfcl_multiturn", "4")):
        inspect_eval(task, "envfactory/replay", logs / "negative", "-M",
                     f"path={negative}", "--limit", limit)
    recorded = work / "oracle.jsonl"
    run(str(BIN / "envfactory"), "trajectories",
        *map(str, sorted((logs / "oracle").glob("*envfactory*.eval"))), "--out",
        str(recorded))
    records = read_objects(recorded)
    mutated = work / "mutated.jsonl"
    mutated.write_text("".join(json.dumps(r) + "\n" for r in mutate(records)))
    inspect_eval("tasks/envfactory", "envfactory/replay", logs / "mutated", "-M",
                 f"path={mutated}", "--limit", "6")
    sources = [str(logs)]
    scores = Path.home() / ".cache/envfactory/demo/scores"
    if scores.is_dir():
        sources.append(str(scores))
    out = work / "out"
    run(str(BIN / "envfactory"), "leaderboard", "build", *sources, "--out-dir", str(out))
    text = (out / "leaderboard.md").read_text()
    (DOCS / "leaderboard.md").write_text(text.replace(str(work) + "/", ""))
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium")
                                    or "/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto((out / "index.html").as_uri())
        page.locator("#table th[data-key=envfactory]").click()
        page.screenshot(path=str(DOCS / "leaderboard.png"), full_page=True)
        # the paper's table: headline columns (Overall included) and the ablations under it
        page.locator("#show-parts").uncheck()
        bottom = page.evaluate("() => { const e = document.getElementById('ablations-note');"
                               " const r = e.getBoundingClientRect();"
                               " return r.bottom + window.scrollY; }")
        page.screenshot(path=str(DOCS / "leaderboard_paper.png"), full_page=True,
                        clip={"x": 0, "y": 0, "width": 1600, "height": bottom + 16})
        browser.close()
    print(f"-> {DOCS / 'leaderboard.md'}, {DOCS / 'leaderboard.png'}, "
          f"{DOCS / 'leaderboard_paper.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
