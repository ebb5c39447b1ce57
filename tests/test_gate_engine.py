"""The gate's faces on the real engine: ``pagelab.measure(runs="auto", against=...)``,
``pagelab check --runs auto`` and ``pagelab gate-check`` on the demo site's fast page (the
gates' own server, ``gate_site``).

The earlier results ``runs="auto"`` compares against are the session's ``gate_baseline``
(tests/conftest.py: 8 desktop runs of that page), which the plugin's gate test reads too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pagelab
from pagelab import LocalRunner
from pagelab.cli import main
from pagelab.demo import DemoServer
from pagelab.engine import Engine

pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]


@pytest.fixture(scope="module")
def fast(gate_site: DemoServer) -> str:
    return gate_site.page_url("fast")


def test_measure_auto_against_earlier_results(fast: str, gate_baseline: pagelab.Results,
                                              engine: Engine, tmp_path: Path) -> None:
    # The earlier results: the shared runs of this page (they were 5 runs measured here).
    earlier = gate_baseline
    seen: list[pagelab.TestReport] = []
    with LocalRunner(tmp_path / "store", engine=engine) as runner:
        again = pagelab.measure(fast, devices="desktop", runs="auto:5-7", against=earlier,
                                limits="largest_contentful_paint:25%", runner=runner,
                                progress=seen.append)
    frame = again.frame
    assert 5 <= len(frame) <= 7
    assert len(seen) == len(frame)
    assert frame["run"].tolist() == list(range(len(frame)))
    assert (frame["status"].astype(str) == "success").all()
    # Where the cell stopped, and the power its runs reached (issue 33's finding).
    [note] = again.notes
    assert note.startswith(f"runs=auto: desktop/us {fast} ")
    assert " runs; power " in note
    assert "for a true largest_contentful_paint:25% (CV " in note
    with pytest.raises(pagelab.InvalidInputError, match="needs against="):
        pagelab.measure(fast, runs="auto", progress=False)
    with pytest.raises(pagelab.InvalidInputError, match="'auto'"):
        pagelab.measure(fast, runs="often", against=earlier, progress=False)


def test_check_runs_auto_and_gate_check(fast: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    budgets = tmp_path / "budgets.yaml"
    budgets.write_text(f"devices: [desktop]\nbudgets: {{largest_contentful_paint: 2500}}\n"
                       f"pages: [{{url: '{fast}'}}]\n")
    # 2.5 s is far above a fast page's LCP: decided at the minimum of 3 runs.
    assert main(["check", str(budgets), "--runs", "auto:3-6", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"runs=auto: desktop/us {fast} decided after 3 runs" in out
    assert "1 check: 1 passed, 0 failed, 0 warned" in out

    # 2 runs a side, the fewest gate-check takes (it measured 3): below 4 a side the gate
    # is inconclusive whatever the runs (stats.MIN_RUNS), at 3 as at 2, and the table
    # read here has the same rows and columns.
    assert main(["gate-check", fast, "--runs", "2", "--repeat", "2", "--devices", "desktop",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"gate-check: desktop/us {fast}: 2 A/A comparisons of 2 vs 2 runs" in out
    assert "limit" in out
    assert "fixed threshold failed" in out
    assert "largest_contentful_paint:10%" in out
    assert "of 2 (" in out
    assert main(["gate-check", fast, "--devices", "desktop,mobile"]) == 2
    assert "--devices: one id" in capsys.readouterr().err
