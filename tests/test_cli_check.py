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


def test_check_lighthouserc_prints_as_lhci_assert_and_writes_its_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    config = tmp_path / "lighthouserc.json"
    config.write_text(json.dumps({"ci": {
        "collect": {"url": ["http://demo.test/fast", "http://demo.test/heavy"]},
        "assert": {"assertions": {
            "largest-contentful-paint": ["error", {"maxNumericValue": 2500,
                                                   "aggregationMethod": "median"}],
            "categories:performance": ["warn", {"minScore": 0.9}]}}}}))
    monkeypatch.chdir(tmp_path)
    assert main(["check", str(config), "--replay", RUNS, "--format=lhci"]) == 1
    out = capsys.readouterr().out
    assert "1 result(s) for mobile/us http://demo.test/heavy :" not in out
    assert "2 result(s) for mobile/us http://demo.test/heavy :" in out
    assert "  \u2718  largest-contentful-paint failure for maxNumericValue assertion" in out
    assert "        expected: <=2500\n           found: 7740.88\n" in out
    assert "categories.performance warning for minScore assertion" in out
    assert "4 checks: 2 passed, 1 failed, 1 warned" in out
    written = json.loads((tmp_path / ".lighthouseci" / "assertion-results.json").read_text())
    assert [(r["auditId"], r["level"], r["passed"]) for r in written] == [
        ("largest-contentful-paint", "error", False), ("categories", "warn", False)]
    assert written[1]["auditProperty"] == "performance"
    assert written[1]["actual"] == 0.55
    rc = json.loads(config.read_text())
    rc["ci"]["assert"]["includePassedAssertions"] = True
    config.write_text(json.dumps(rc))
    assert main(["check", str(config), "--replay", RUNS, "--format=lhci"]) == 1
    written = json.loads((tmp_path / ".lighthouseci" / "assertion-results.json").read_text())
    assert [r["passed"] for r in written] == [True, True, False, False]

    # A desktop config is checked on desktop runs only; mobile-only runs are missing.
    config.write_text(json.dumps({"ci": {
        "collect": {"url": ["http://demo.test/fast"], "settings": {"preset": "desktop"}},
        "assert": {"assertions": {"interactive": "error"}}}}))
    assert main(["check", str(config), "--replay", RUNS]) == 1
    assert "no runs: desktop/us http://demo.test/fast" in capsys.readouterr().out
    # An assertion the metrics cannot answer needs the runs' reports: these are gone.
    config.write_text(json.dumps({"assertions": {"color-contrast": "error"}}))
    assert main(["check", str(config), "--replay", RUNS]) == 2
    assert "its report is gone" in capsys.readouterr().err
