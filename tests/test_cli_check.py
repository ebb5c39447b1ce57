"""``pagelab check`` on recorded real runs (``--replay``): the table and the exit status."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagelab.cli import main

RUNS = str(Path(__file__).parent / "data" / "runs-demo.csv")


def test_check_exit_status_and_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    budgets = tmp_path / "budgets.yaml"
    budgets.write_text("base_url: http://demo.test\nbudgets: {largest_contentful_paint: 2500}\n"
                       "pages: [{url: /fast}, {url: /heavy}]\n")
    assert main(["check", str(budgets), "--replay", RUNS]) == 1
    out = capsys.readouterr().out
    assert "mobile/us http://demo.test/heavy  largest_contentful_paint  <= 2500 ms  7741 ms  FAIL" \
        in out
    assert "error: largest_contentful_paint 7741 ms > 2500 ms (median of 5:" in out
    budgets.write_text(budgets.read_text().replace("2500}", "{limit: 2500, level: warn}}"))
    assert main(["check", str(budgets), "--replay", RUNS]) == 0
    assert "2 checks: 1 passed, 0 failed, 1 warned" in capsys.readouterr().out
    budgets.write_text(budgets.read_text().replace("{url: /fast}, ", ""))
    assert main(["check", str(budgets), "--replay", RUNS]) == 0
    assert "1 check: 0 passed, 0 failed, 1 warned" in capsys.readouterr().out


def test_check_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    budgets = tmp_path / "budgets.yaml"
    budgets.write_text("budgets: {lcp_ms: 1}\npages: [{url: /fast}]\n")
    assert main(["check", str(budgets), "--replay", RUNS]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "unknown metric 'lcp_ms'" in err
