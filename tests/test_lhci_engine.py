"""Lighthouse CI parity on the real engine: a lighthouserc with ``lighthouse:recommended`` and
``settings.preset: desktop`` on two demo pages, through ``pagelab check`` and through the
plugin's budget-file items, gives the verdicts Lighthouse CI's own ``assertions.js`` gives
on the very LHRs measured (accessibility and best practices included). Resource budgets
fail on the heavy page naming its image.

One run per page and path: eight engine runs in all. Where a face only checks runs another
one just measured, it replays them (their LHRs read through their report links).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pandas  # noqa: F401  (loaded before pytester's inline runs, which cannot reload numpy)
import pytest

from lhci_parity import lhci_verdicts
from pagelab.cli import main

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]


def _rc(site: str) -> dict[str, Any]:
    return {"ci": {"collect": {"url": [f"{site}/fast", f"{site}/heavy"], "numberOfRuns": 1,
                               "settings": {"preset": "desktop"}},
                   "assert": {"preset": "lighthouse:recommended", "assertions": {
                       "resource-summary:image:size": ["error", {"maxNumericValue": 500_000}]}}}}


def _stored_lhrs() -> list[dict[str, Any]]:
    import pagelab

    with pagelab.connect() as runner:
        reports = runner.list(per_page=100)
        lhrs = [runner.lhr(r) for r in reversed(reports) if r.status == "success"]
    assert lhrs, "no run was stored"
    return lhrs


def _key(result: dict[str, Any]) -> tuple[Any, ...]:
    def number(value: Any) -> Any:
        return None if value is None or value == "NaN" or (
            isinstance(value, float) and math.isnan(value)) else value

    return (result["url"], result["auditId"], result.get("auditProperty"), result["name"],
            result["level"], result["passed"], number(result["actual"]),
            tuple(number(v) for v in result["values"]), result["expected"])


def test_check_and_plugin_give_lighthouse_ci_verdicts(
    demo_url: str, engine_cache: str, tmp_path: Path, pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PAGELAB_CACHE_DIR", engine_cache)  # pytester moved HOME
    rc = _rc(demo_url)
    config = tmp_path / "lighthouserc.json"
    config.write_text(json.dumps(rc))
    monkeypatch.chdir(tmp_path)
    assert main(["check", str(config), "--format=lhci", "--no-progress"]) == 1
    out = capsys.readouterr().out
    ours = json.loads((tmp_path / ".lighthouseci" / "assertion-results.json").read_text())
    lhrs = _stored_lhrs()
    assert {lhr["configSettings"]["formFactor"] for lhr in lhrs} == {"desktop"}
    assert {"accessibility", "best-practices", "seo"} <= set(lhrs[0]["categories"])
    [theirs] = lhci_verdicts({str(i): lhr for i, lhr in enumerate(lhrs)},
                             [{"options": rc["ci"]["assert"],
                               "lhrs": [str(i) for i in range(len(lhrs))]}])["results"]
    assert sorted(map(_key, ours)) == sorted(_key(r) for r in theirs if not r["passed"])
    assert "resource-summary.image.size failure for maxNumericValue assertion" in out
    categories = {r["auditProperty"] for r in theirs if r["auditId"] == "categories"}
    audits = {r["auditId"] for r in theirs}
    assert {"color-contrast", "errors-in-console"} <= audits  # a11y and best practices
    assert categories == set()  # the preset asserts audits, not categories

    # The plugin's budget-file items, on fresh runs: the same verdicts per page.
    before = {json.dumps(lhr["fetchTime"]) for lhr in lhrs}
    pytester.makefile(".json", lighthouserc=json.dumps(rc))
    monkeypatch.chdir(pytester.path)
    result = pytester.runpytest("--pagelab-budgets=lighthouserc.json",
                                "--pagelab-results=results.json", "-p", "no:cacheprovider")
    fresh = [lhr for lhr in _stored_lhrs() if json.dumps(lhr["fetchTime"]) not in before]
    assert len(fresh) == 2
    [theirs] = lhci_verdicts({str(i): lhr for i, lhr in enumerate(fresh)},
                             [{"options": rc["ci"]["assert"],
                               "lhrs": [str(i) for i in range(len(fresh))]}])["results"]
    recorded = json.loads((pytester.path / "results.json").read_text())
    checks = [c for c in recorded["checks"] if c.get("kind") == "lhci"]
    assert sorted(map(_key, checks)) == sorted(map(_key, theirs))
    failing_urls = {r["url"] for r in theirs if not r["passed"] and r["level"] == "error"}
    result.assert_outcomes(failed=len(failing_urls), passed=2 - len(failing_urls),
                           warnings=result.parseoutcomes().get("warnings", 0))


def test_resource_budget_names_the_largest_request(
    demo_url: str, engine_cache: str, pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """A marker's resource budget passes on /fast; the same limit in pagelab's own budget
    file fails on /heavy, naming its image, through the plugin and through pagelab check
    (on the plugin's very runs, replayed: it measured /heavy once more before)."""
    monkeypatch.setenv("PAGELAB_CACHE_DIR", engine_cache)
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.budget(resource_size={{"image": 300_000}}, resource_count={{"total": 20}})
        def test_fast(perf):
            perf.measure("{demo_url}/fast", runs=1)
    """)
    budgets = pytester.makefile(".yaml", budgets="\n".join([
        "runs: 1",
        "budgets:",
        "  resource_size: {image: 300000}",
        "pages:",
        f"  - url: {demo_url}/heavy",
    ]))
    miss = (r".*resource_size:image [\d,.]+ KB > 300\.0 KB \(median of 1: \d+\) mobile/us "
            r".*/heavy; largest image: .*/static/hero\.jpg \([\d,.]+ KB\)")
    result = pytester.runpytest("-p", "no:cacheprovider", "--pagelab-results=results.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.re_match_lines([miss])
    capsys.readouterr()
    monkeypatch.chdir(pytester.path)
    # The runs the plugin measured, with their report links (the LHR names the image).
    assert main(["check", str(budgets), "--replay", "results.json", "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"resource_size:image\s+<= 300\.0 KB\s+[\d,.]+ KB\s+FAIL", out), out
    assert re.search("error: " + miss.removeprefix(".*"), out), out


def test_script_size_assertion_names_the_widget_through_check_and_a_replay(
    demo_url: str, engine_cache: str, tmp_path: Path, pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """LHCI's ``resource-summary:script:size`` on the twins /lean and /bloated (its 300 kB
    widget.js from a second loopback host): ``pagelab check`` passes the lean page and fails
    the bloated one naming widget.js; the plugin replays those very runs (their LHRs read
    from the reports their report_url opens) to the same verdicts. Two engine runs."""
    import pagelab
    from pagelab.frames import to_frame, to_records

    monkeypatch.setenv("PAGELAB_CACHE_DIR", engine_cache)
    monkeypatch.setenv("PAGELAB_DATA_DIR", str(tmp_path / "data"))
    lean, bloated = f"{demo_url}/lean", f"{demo_url}/bloated"
    rc = {"ci": {"collect": {"url": [lean, bloated], "numberOfRuns": 1},
                 "assert": {"assertions": {"resource-summary:script:size": [
                     "error", {"maxNumericValue": 100_000}]}}}}
    config = tmp_path / "lighthouserc.json"
    config.write_text(json.dumps(rc))
    monkeypatch.chdir(tmp_path)
    assert main(["check", str(config), "--no-progress"]) == 1
    out = capsys.readouterr().out
    widget = r"largest script: http://127\.0\.0\.2:\d+/static/widget\.js\?cb=\S+ \([\d,.]+ KB\)"
    assert f"1 result(s) for mobile/us {bloated} :" in out, out
    assert f"result(s) for mobile/us {lean} :" not in out, out
    assert re.search(r"resource-summary\.script\.size failure for maxNumericValue assertion"
                     r"\n.*\n\s+" + widget, out), out
    assert re.search(rf"mobile/us {re.escape(lean)}\s+resource-summary:script\.size "
                     r"maxNumericValue\s+<= 100000\s+0\s+pass", out), out

    # The plugin on those very runs, saved with their report links: no new engine run.
    with pagelab.connect() as runner:
        runs = to_frame(runner.list(per_page=100))
    assert sorted(runs["url"]) == [bloated, lean]
    pytester.makefile(".json", lighthouserc=json.dumps(rc),
                      runs=json.dumps({"runs": to_records(runs)}, default=str))
    monkeypatch.chdir(pytester.path)
    result = pytester.runpytest("--pagelab-budgets=lighthouserc.json",
                                "--pagelab-replay=runs.json", "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"*lighthouserc.json::{lean}*PASSED*",
                                 f"*lighthouserc.json::{bloated}*FAILED*"])
    result.stdout.re_match_lines([r"\s+" + widget])
    with pagelab.connect() as runner:
        assert len(runner.list(per_page=100)) == 2  # replayed, not measured
