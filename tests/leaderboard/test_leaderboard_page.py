"""The leaderboard page in a real headless browser (Debian's chromium driven by
Playwright; `make install-browser` installs chromium): it renders from disk with no
network, a header click sorts the table, the plots load, and a screenshot is a
non-blank image of plausible size; the benchmark groups, the selectors, the sticky model
column, the notes list and the reported-rows toggle work."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from leaderboard.build import build
from tests.leaderboard.logs import BFCL_META, showcase, write_log

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason="chromium not installed (`make install-browser`, or "
                              "apt-get install chromium)"),
]


def _png_size_and_colours(path: Path) -> tuple[int, int, int]:
    """Width, height and number of distinct colours of a PNG (Pillow, matplotlib's
    dependency)."""
    from PIL import Image

    with Image.open(path) as image:
        assert image.format == "PNG"
        colours = image.convert("RGB").getcolors(maxcolors=1 << 24) or []
        return image.width, image.height, len(colours)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("page")
    for model, correct in (("m/low", 1), ("m/high", 4), ("m/mid", 2)):
        write_log(root / "logs" / f"{model[2:]}.eval", task="bfcl_multiturn", model=model,
                  metadata=BFCL_META, limit=4,
                  scores=[(f"multi_turn_base_{i}", 1, "C" if i < correct else "I")
                          for i in range(4)])
    build([root / "logs"], root / "out")
    return root / "out" / "index.html"


def test_page_renders_sorts_and_shows_plots(page: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright not installed (dev extra)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM,
                                    args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context(offline=True, viewport={"width": 1400, "height": 900})
        requests: list[str] = []
        web = context.new_page()
        web.on("request", lambda r: requests.append(r.url))
        errors: list[str] = []
        web.on("pageerror", lambda e: errors.append(str(e)))
        web.goto(page.as_uri())
        first_column = "#table tr td.label"
        labels = web.locator(first_column).all_inner_texts()
        assert labels[:3] == ["m/high", "m/low", "m/mid"]  # as built: by key
        assert len(labels) == 3 + 14  # measured + reported rows (11 + 3 SFT-only)
        web.locator("#table th", has_text="BFCL MT overall").click()
        after = web.locator(first_column).all_inner_texts()
        assert [x for x in after if x.startswith("m/")] == ["m/high", "m/mid", "m/low"]
        # the reported 8B EnvScaler row (51.88) sorts above m/mid (50.0), below m/high
        assert after[1] == "EnvScaler 8B (reported)"
        web.locator("#table th", has_text="BFCL MT overall").click()  # again: ascending
        assert web.locator(first_column).all_inner_texts()[0] == "Qwen3 1.7B (reported)"
        images = web.locator("#plots img")
        assert images.count() >= 2
        widths = web.eval_on_selector_all("#plots img", "els => els.map(e => e.naturalWidth)")
        assert all(w > 100 for w in widths), widths  # every plot loaded
        link = web.locator("#table td a").first.get_attribute("href")
        assert link is not None and link.endswith(".eval")
        shot = tmp_path / "page.png"
        web.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert errors == []
    assert all(u.startswith("file://") for u in requests), requests
    width, height, colours = _png_size_and_colours(shot)
    assert width >= 1000 and 300 <= height <= 20000
    assert colours > 20  # text, bars and table shading, not a blank page


@pytest.fixture(scope="module")
def showcase_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("showcase")
    build([showcase(root / "logs")], root / "out")
    return root / "out" / "index.html"


def test_grouped_header_selectors_sticky_column_notes_and_reported_toggle(
        showcase_page: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright not installed (dev extra)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM,
                                    args=["--no-sandbox", "--disable-gpu"])
        web = browser.new_context(offline=True,
                                  viewport={"width": 1400, "height": 900}).new_page()
        errors: list[str] = []
        web.on("pageerror", lambda e: errors.append(str(e)))
        web.goto(showcase_page.as_uri())
        groups = web.locator("#table th.group").all_inner_texts()
        assert groups == ["BFCL multi-turn", "BFCL single-turn", "τ²-bench",
                          "EnvFactory held-out", "VitaBench", "MCP-Atlas", "Overall"]
        # the table is wider than the page and scrolls inside its box, model column kept
        box = web.locator(".scroll")
        assert box.evaluate("e => e.scrollWidth > e.clientWidth")
        label = web.locator("#table td.label").first
        left = label.bounding_box()["x"]  # type: ignore[index]
        box.evaluate("e => { e.scrollLeft = 800; }")
        assert label.bounding_box()["x"] == left  # type: ignore[index]
        # † reasons and the runs not used are in the notes list, not only on hover
        notes = web.locator("#notes li").all_inner_texts()
        assert "m/limited: not comparable: limit 4 (column: all)" in notes
        [other] = [n for n in notes if n.startswith("m/strong: uses strong-bfcl-2.eval")]
        assert "strong-bfcl-check.eval (2026-06-04T10:00, n=1; sample_id" in other
        # a benchmark's checkbox hides its columns; "part columns" leaves the headlines
        columns = web.locator("#table th.col")
        assert "VitaBench average" in columns.all_inner_texts()
        web.locator("#controls input[data-benchmark='vitabench']").uncheck()
        assert not any(t.startswith("VitaBench") for t in columns.all_inner_texts())
        web.locator("#show-parts").uncheck()
        assert columns.all_inner_texts() == ["BFCL MT overall", "BFCL ST sample mean",
                                             "τ² average", "EnvFactory R",
                                             "MCP-Atlas pass@0.75", "Overall (paper's)"]
        # hiding the reported rows hides them and switches the plots to measured-only
        plot = web.locator("#plots img[alt='bars_bfcl_mt']")
        assert plot.get_attribute("src") == "plots/bars_bfcl_mt.svg"
        web.locator("#show-reported").uncheck()
        assert web.locator("#table tr.reported").count() == 0
        assert web.locator("#table td.label").all_inner_texts() == [
            "m/limited", "m/strong", "m/weak", "smollm2-135m-instruct"]
        # BFCL single-turn has reported values only: its column goes with them
        assert "BFCL ST sample mean" not in columns.all_inner_texts()
        assert plot.get_attribute("src") == "plots/bars_bfcl_mt.measured.svg"
        web.wait_for_load_state("networkidle")
        assert plot.evaluate("e => e.naturalWidth") > 100
        assert web.locator("#plots img[alt='bars_bfcl_st']").is_hidden()  # reported only
        browser.close()
    assert errors == []
