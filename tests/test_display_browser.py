"""What the notebook displays look like in Debian's Chromium (driven by Playwright, no
JupyterLab, no engine): the readable comparison in an output as wide as JupyterLab's at a
1,280 px window (1,048 px, issue 33), on recorded runs."""

from __future__ import annotations

import pandas as pd
import pytest

import pagelab
from jupyter_browser import chromium
from recorded_runs import matrix_frame

#: The width of a JupyterLab output at a 1,280 px window (issue 33).
OUTPUT_PX = 1048


def _few_runs() -> pagelab.Results:
    """Two runs a cell: every row's verdict is "too few runs" with the interval's note."""
    frame = matrix_frame()
    return pagelab.Results.from_frame(
        frame[frame.groupby(["url", "device"]).cumcount() < 2].reset_index(drop=True))


@pytest.mark.parametrize("results", [
    pytest.param(lambda: pagelab.Results.from_frame(matrix_frame()), id="enough-runs"),
    pytest.param(_few_runs, id="few-runs"),
])
def test_comparison_verdict_is_in_view_of_a_notebook_output(results: object) -> None:
    assert callable(results)
    compared = results().compare(by="url", a="http://demo.test/fast",
                                 b="http://demo.test/heavy")
    assert isinstance(compared, pd.DataFrame)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_content(f'<div id="output" style="width:{OUTPUT_PX}px">'
                         f"{compared._repr_html_()}</div>")
        box = page.evaluate("""() => {
            const right = (el) => el.getBoundingClientRect().right;
            const output = document.querySelector('#output');
            const headers = [...output.querySelectorAll('th')];
            const verdict = headers.find((th) => th.textContent === 'verdict');
            const scroller = output.querySelector('.pagelab-comparison-box');
            return {output: right(output), table: right(output.querySelector('table')),
                    verdict: verdict ? right(verdict) : null,
                    scrolls: scroller.scrollWidth > scroller.clientWidth,
                    headers: headers.map((th) => th.textContent)};
        }""")
    # Nothing to scroll sideways: the whole table, verdict included, is in view.
    assert box["verdict"] is not None
    assert box["verdict"] <= box["output"]
    assert box["table"] <= box["output"]
    assert not box["scrolls"]
    # The verdict and the medians come before the evidence.
    headers = box["headers"]
    assert headers.index("verdict") < headers.index("b \u2212 a") < len(headers) - 1
