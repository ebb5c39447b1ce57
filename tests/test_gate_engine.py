"""The gate's faces on the real engine: ``pagelab.measure(runs="auto", against=...)``,
``pagelab check --runs auto`` and ``pagelab gate-check`` on the demo site's fast page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import pagelab
from pagelab.cli import main

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def fast() -> Iterator[str]:
    from pagelab.demo import DemoServer

    with DemoServer() as server:
        yield server.page_url("fast")


def test_measure_auto_against_earlier_results(fast: str) -> None:
    earlier = pagelab.measure(fast, devices="desktop", runs=5, progress=False)
    seen: list[pagelab.TestReport] = []
    again = pagelab.measure(fast, devices="desktop", runs="auto:5-7", against=earlier,
                            limits="largest_contentful_paint:25%", progress=seen.append)
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

    assert main(["gate-check", fast, "--runs", "3", "--repeat", "2", "--devices", "desktop",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"gate-check: desktop/us {fast}: 2 A/A comparisons of 3 vs 3 runs" in out
    assert "limit" in out
    assert "fixed threshold failed" in out
    assert "largest_contentful_paint:10%" in out
    assert "of 2 (" in out
    assert main(["gate-check", fast, "--devices", "desktop,mobile"]) == 2
    assert "--devices: one id" in capsys.readouterr().err
