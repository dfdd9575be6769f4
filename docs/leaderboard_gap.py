"""Rebuild `docs/leaderboard_gap.png`: the leaderboard page's reproduction-gap table.

    python docs/leaderboard_gap.py [--logs DIR ...] [--work /tmp/lb-gap]

With `--logs`, the logs given (e.g. the results folder of `envfactory score run
LARK-Lab/EnvFactory-4B --suite paper`); without, the hand-made logs of the leaderboard's
gap test (`tests.leaderboard.logs.released_checkpoint_logs`: `LARK-Lab/EnvFactory-4B` as
`score run` records it, with a τ² `--limit` subset and a VitaBench run without a user,
and `Qwen/Qwen3-4B` run by `inspect eval`), which say nothing of any real model. Then
`envfactory leaderboard build` beside the reported baselines and a screenshot, in headless
chromium, of the gap table with its notes.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "leaderboard_gap.png"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", type=Path, nargs="*", default=None)
    parser.add_argument("--work", type=Path, default=Path("/tmp/lb-gap"))
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    shutil.rmtree(args.work, ignore_errors=True)
    logs = args.logs
    if not logs:
        from tests.leaderboard.logs import released_checkpoint_logs

        logs = [released_checkpoint_logs(args.work / "logs")]
    site = args.work / "site"
    subprocess.run([str(Path(sys.executable).parent / "envfactory"), "leaderboard", "build",
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
        page.locator("#gap-section").screenshot(path=str(OUT))
        browser.close()
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
