"""The comparison notebook in a real browser: JupyterLab on loopback, Debian's Chromium
driven by Playwright. Runs the notebook, clicks Run in the widget, waits for the table and
reads its rows from the DOM; then adds cells showing the TTFB and trend widgets. At a
1,280 px window the comparisons' verdicts show without scrolling, and a report link in the
summary opens the Lighthouse report in a new tab (issue 33). The screenshots stay in
``tests/artifacts/`` (git-ignored; ``docs/img/`` holds copies).

Engine runs: the notebook's 8, then 4 for the click.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from jupyter_browser import (
    JupyterLab,
    chromium,
    execute_command,
    wait_for_kernel_idle,
)

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
NOTEBOOK = "comparing-devices-and-locations.ipynb"

# The engine lock is machine-wide: other suites' runs may come first.
NOTEBOOK_TIMEOUT_MS = 900_000
RUN_TIMEOUT_MS = 600_000


@pytest.mark.engine
# Its own waits (a notebook up to 15 min, then a widget run) say more than a timeout; 226 s
# measured on a loaded machine.
@pytest.mark.timeout(1800)
# The notebook and its widgets in a browser are under test, not Lighthouse's measurements:
# JupyterLab's kernel inherits the short quiet window (conftest.py).
@pytest.mark.usefixtures("quick_navigation")
def test_comparison_notebook_in_jupyterlab(tmp_path: Path) -> None:
    root = tmp_path / "lab"
    root.mkdir()
    shutil.copy(NOTEBOOKS / NOTEBOOK, root / NOTEBOOK)
    ARTIFACTS.mkdir(exist_ok=True)
    with JupyterLab(root, ARTIFACTS / "jupyterlab.log") as lab, chromium() as browser:
        # 1,280 px wide: the window issue 33 measured (a 1,048 px output); tall, so every
        # output is rendered for the screenshots.
        page = browser.new_page(viewport={"width": 1280, "height": 2400})
        page.goto(lab.notebook_url(NOTEBOOK))
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        wait_for_kernel_idle(page, 120_000)
        execute_command(page, "application:toggle-left-area")

        # Every cell but the last (which stops the demo site and closes the runner).
        cells = page.locator(".jp-Notebook .jp-Cell")
        count = cells.count()
        cells.nth(count - 1).locator(".jp-InputPrompt").click()
        execute_command(page, "notebook:run-all-above")
        page.wait_for_function(
            "(n) => { const prompts = [...document.querySelectorAll("
            "'.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')].slice(0, -1);"
            " const status = document.querySelector('.jp-Notebook-ExecutionIndicator');"
            " return prompts.length === n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent))"
            " && status && status.getAttribute('data-status') === 'idle'; }",
            arg=page.locator(".jp-Notebook .jp-CodeCell").count() - 1,
            timeout=NOTEBOOK_TIMEOUT_MS,
        )
        tracebacks = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd"
                                  ".jupyter.stderr'] >> text=Traceback")
        assert tracebacks.count() == 0, tracebacks.all_inner_texts()
        _check_readable_tables(page)
        _open_a_report_link(page)
        widget = page.locator(".pagelab-batchcomparison").first
        assert widget.locator(".pagelab-summary tbody tr").count() == 2

        # The click: the table goes, the runs happen off the kernel's main thread, it comes
        # back with one row per device.
        widget.locator("button.pagelab-run").click()
        widget.locator(".pagelab-summary").wait_for(state="detached", timeout=30_000)
        assert widget.locator("button.pagelab-run").is_disabled()
        widget.locator(".pagelab-summary tbody tr").first.wait_for(timeout=RUN_TIMEOUT_MS)
        rows = widget.locator(".pagelab-summary tbody tr")
        keys = [rows.nth(i).get_attribute("data-key") for i in range(rows.count())]
        assert keys == ["mobile", "desktop"]
        headers = widget.locator(".pagelab-summary thead th").all_inner_texts()
        assert {"device", "runs", "LCP (ms)", "TBT (ms)", "Score", "report"} <= set(headers)
        first = rows.nth(0).locator("td").all_inner_texts()
        assert first[:3] == ["mobile", "2", "0"]
        assert widget.locator("text=Done: 4 runs (0 failed).").count() == 1
        # The comparison and the plot come after the table, then Run is enabled again.
        widget.locator(".pagelab-comparison tbody tr").first.wait_for()
        _verdict_in_view(widget.locator(".pagelab-comparison-box"))
        assert "pooled" not in widget.locator(".pagelab-comparison-box").inner_text()
        expect(widget.locator("button.pagelab-run")).to_be_enabled(timeout=60_000)
        plot = widget.locator("img.pagelab-plot")
        assert plot.evaluate("img => img.naturalWidth") > 500
        widget.screenshot(path=str(ARTIFACTS / "batch-comparison.png"))
        page.screenshot(path=str(ARTIFACTS / "comparison-notebook.png"))

        # The other two widgets, in new cells of the same kernel (its runner holds the runs).
        _add_cell(page, 'from pagelab.widgets import TTFBExplorer; ttfb = TTFBExplorer('
                        'runner, url=site.page_url("slow?ms=80"), region="oceania", '
                        'repeats=3); ttfb')
        ttfb = page.locator(".pagelab-ttfbexplorer").first
        ttfb.locator("button.pagelab-run").click()
        ttfb.locator(".pagelab-ttfb tbody tr").first.wait_for(timeout=120_000)
        assert ttfb.locator(".pagelab-ttfb tbody tr").count() == 2
        ttfb.locator("img.pagelab-plot").wait_for()
        page.wait_for_function(
            "() => [...document.querySelectorAll('.pagelab-ttfbexplorer img.pagelab-plot')]"
            ".some(img => img.naturalWidth > 0)")
        ttfb.screenshot(path=str(ARTIFACTS / "ttfb-explorer.png"))

        _add_cell(page, 'from pagelab.widgets import TrendExplorer; trend = TrendExplorer('
                        'runner, url=site.page_url("heavy"), metric="total_blocking_time"); '
                        'trend')
        trend = page.locator(".pagelab-trendexplorer").first
        trend.locator("button.pagelab-run").click()
        trend.locator(".pagelab-trend tbody tr").first.wait_for(timeout=60_000)
        cells_text = trend.locator(".pagelab-trend tbody tr td").all_inner_texts()
        assert cells_text[:2] == ["TBT (ms)", "12"]  # the notebook's 8 runs and the click's 4
        page.wait_for_function(
            "() => [...document.querySelectorAll('.pagelab-trendexplorer img.pagelab-plot')]"
            ".some(img => img.naturalWidth > 0)")
        trend.screenshot(path=str(ARTIFACTS / "trend-explorer.png"))


#: The cells whose output is shot for docs/img, by the start of their source, and the file.
READABLE_SHOTS = (
    ("results = pagelab.measure(", "notebook-results.png"),
    ("results.summary()", "notebook-summary.png"),
    ('results.compare(by="location", a="us", b="de")\n', "notebook-compare.png"),
)


def _code_cell_index(start: str) -> int:
    """The position among the notebook's code cells of the one whose source starts so."""
    import json

    cells = json.loads((NOTEBOOKS / NOTEBOOK).read_text())["cells"]
    sources = ["".join(c["source"]) + "\n" for c in cells if c["cell_type"] == "code"]
    return next(i for i, source in enumerate(sources) if source.startswith(start))


def _check_readable_tables(page: object) -> None:
    """``results``, ``results.summary()`` and ``results.compare()`` show the readable
    tables in JupyterLab (units in the headers, rounded values, no empty FMP column), and
    their screenshots go to the artifacts (docs/img holds copies)."""
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    code_cells = page.locator(".jp-Notebook .jp-CodeCell")
    for start, name in READABLE_SHOTS:
        output = code_cells.nth(_code_cell_index(start)).locator(".jp-OutputArea-output")
        output.scroll_into_view_if_needed()
        headers = output.locator("thead th").all_inner_texts()
        text = output.inner_text()
        assert "first_meaningful_paint" not in text
        assert "FMP" not in headers
        if "compare" in start:
            assert {"metric", "verdict", "us (a)", "de (b)", "b \u2212 a"} <= set(headers)
            assert "LCP (ms)" in text
            assert re.search(r"[+-]\d[\d,.]* %", text)  # the relative difference, labelled
            _verdict_in_view(output)
        else:
            assert {"location", "runs", "failed", "Score", "LCP (ms)", "CLS"} <= set(headers)
        # Rounded per metric: no pandas six-decimal floats anywhere.
        assert not re.search(r"\d\.\d{5,}", text)
        output.screenshot(path=str(ARTIFACTS / name))


def _verdict_in_view(output: object) -> None:
    """Issue 33: the comparison's verdict column shows without scrolling sideways: its
    header ends inside the output, and the table's box has nothing to scroll."""
    from playwright.sync_api import Locator

    assert isinstance(output, Locator)
    box = output.evaluate("""(output) => {
        const right = (el) => el.getBoundingClientRect().right;
        const verdict = [...output.querySelectorAll('.pagelab-comparison th')]
            .find((th) => th.textContent === 'verdict');
        const scroller = output.matches('.pagelab-comparison-box') ? output
            : output.querySelector('.pagelab-comparison-box');
        return {output: right(output), window: window.innerWidth,
                verdict: verdict ? right(verdict) : null,
                table: right(output.querySelector('.pagelab-comparison')),
                scrolls: scroller.scrollWidth > scroller.clientWidth};
    }""")
    assert box["verdict"] is not None, box
    assert box["verdict"] <= min(box["output"], box["window"]), box
    assert box["table"] <= min(box["output"], box["window"]), box
    assert not box["scrolls"], box


def _open_a_report_link(page: object) -> None:
    """Issue 33: a report link in a notebook opens. The summary's first "report" link is
    clicked; a new tab shows the Lighthouse report (the browser refused the file:// link
    it used to be)."""
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    output = page.locator(".jp-Notebook .jp-CodeCell").nth(
        _code_cell_index("results.summary()")).locator(".jp-OutputArea-output")
    link = output.locator("a", has_text="report").first
    assert link.get_attribute("href").startswith("http://127.0.0.1:")
    with page.context.expect_page() as opened:
        link.click()
    report = opened.value
    report.wait_for_load_state()
    report.locator(".lh-category").first.wait_for(timeout=30_000)
    assert "Lighthouse" in report.title()
    report.screenshot(path=str(ARTIFACTS / "notebook-report-link.png"))
    report.close()


def _add_cell(page: object, code: str) -> None:
    """Insert a code cell below the active one, type ``code`` and run it."""
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    execute_command(page, "notebook:insert-cell-below")
    execute_command(page, "notebook:enter-edit-mode")
    # insert_text types no keys: no auto-closed brackets.
    page.keyboard.insert_text(code)
    execute_command(page, "notebook:run-cell")
    wait_for_kernel_idle(page, 60_000)
