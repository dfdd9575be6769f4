"""Rebuild `docs/leaderboard_gap.png`: the leaderboard page's reproduction-gap table.

    python docs/leaderboard_gap.py [--logs DIR ... | --handmade] [--work /tmp/lb-gap] [--out PNG]

By default, the Hub-id path end to end, offline: the local fake Hub
(`tests/leaderboard/fake_hub.py`) gets the tiny random Qwen3 (`envfactory models prepare
tiny-qwen3`) pushed under a released checkpoint's id, `LARK-Lab/EnvFactory-4B`, and
`envfactory score run LARK-Lab/EnvFactory-4B --suite quick --limit 2` downloads it by id
(the resolved commit recorded) and scores it (about 5 minutes on 2 cores); its gap row is
what a random model scores against the paper's EnvFactory 4B. `--logs`: the logs given
instead (e.g. a `score reproduce ROW --suite paper` results folder); `--handmade`: the gap
test's hand-made logs (`tests.leaderboard.logs.released_checkpoint_logs`, every mark). Then
`envfactory leaderboard build` beside the reported baselines and a screenshot, in headless
chromium, of the gap table with its notes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "leaderboard_gap.png"
HUB_ID = "LARK-Lab/EnvFactory-4B"
BIN = Path(sys.executable).parent


def hub_run(work: Path) -> Path:
    """The tiny Qwen3 pushed to the fake Hub as `HUB_ID`, scored by that id; its logs."""
    os.environ["HF_HUB_DISABLE_XET"] = "1"  # read when huggingface_hub is imported
    from huggingface_hub import HfApi

    from tests.leaderboard.fake_hub import FakeHub
    from training.local_models import prepare_tiny_qwen3

    model = prepare_tiny_qwen3()
    hub = FakeHub.start(work / "hub")
    env = {"HF_ENDPOINT": hub.url, "HF_HUB_DISABLE_XET": "1", "HF_TOKEN": "hf_" + "0" * 16,
           "HF_HOME": str(work / "hf-home")}
    try:
        api = HfApi(endpoint=hub.url, token=env["HF_TOKEN"])
        api.create_repo(HUB_ID, exist_ok=True)
        api.upload_folder(repo_id=HUB_ID, folder_path=str(model),
                          commit_message="tiny random Qwen3 standing in for the release")
        subprocess.run([str(BIN / "envfactory"), "score", "run", HUB_ID, "--suite", "quick",
                        "--limit", "2", "--max-tokens", "16", "--log-dir",
                        str(work / "scores")], check=True, cwd=ROOT, env={**os.environ, **env})
    finally:
        hub.stop()
    return work / "scores"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", type=Path, nargs="*", default=None)
    parser.add_argument("--handmade", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--work", type=Path, default=Path("/tmp/lb-gap"))
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    shutil.rmtree(args.work, ignore_errors=True)
    logs = args.logs
    if args.handmade:
        from tests.leaderboard.logs import released_checkpoint_logs

        logs = [released_checkpoint_logs(args.work / "logs")]
    elif not logs:
        logs = [hub_run(args.work)]
    site = args.work / "site"
    subprocess.run([str(BIN / "envfactory"), "leaderboard", "build",
                    *map(str, logs), "--out-dir", str(site), "--no-taxonomy"],
                   check=True, cwd=ROOT)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium")
                                    or "/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1500, "height": 900})
        page.goto((site / "index.html").resolve().as_uri())
        if not page.locator("#gaps").count():
            raise SystemExit("no reproduction-gap row: none of the logs is of a released "
                             "checkpoint (leaderboard/checkpoints.json)")
        page.evaluate("""() => {
            const keep = document.createElement('div');
            const start = [...document.querySelectorAll('h2')]
                .find(h => h.textContent === 'Reproduction gap');
            let node = start;
            while (node && !(node.tagName === 'H3' && node !== start)) {
                const next = node.nextElementSibling; keep.appendChild(node); node = next;
            }
            keep.id = 'gap-section'; keep.style.display = 'inline-block';
            document.body.innerHTML = ''; document.body.appendChild(keep);
        }""")
        page.locator("#gap-section").screenshot(path=str(args.out))
        browser.close()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
