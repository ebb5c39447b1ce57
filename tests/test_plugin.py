"""pytest-pagelab through pytester, on recorded real runs (``--pagelab-replay``).

tests/data/runs-demo.csv holds 10 real runs of the demo site's /fast page and 5 of /heavy
(mobile, us; origin rewritten to http://demo.test). The real engine runs in
tests/test_plugin_engine.py.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

# Loaded before pytester snapshots the modules: the gate's statistics import scipy (and
# numpy.fft), which cannot be imported a second time in one process.
import scipy.stats  # noqa: F401

pytest_plugins = ["pytester"]

RUNS = Path(__file__).parent / "data" / "runs-demo.csv"
REPLAY = f"--pagelab-replay={RUNS}"

BUDGET_TESTS = """
import pytest

@pytest.mark.budget(largest_contentful_paint=2500, cumulative_layout_shift=0.1,
                    performance_score=90)
def test_fast(perf):
    results = perf.measure("http://demo.test/fast")
    assert results is not None

@pytest.mark.budget(largest_contentful_paint=2500)
def test_heavy(perf):
    perf.measure("http://demo.test/heavy")

@pytest.mark.budget(total_blocking_time={"limit": 500, "level": "warn"})
def test_heavy_warns(perf):
    perf.measure("http://demo.test/heavy")
"""

BUDGET_FILE = """
base_url: http://demo.test
budgets:
  largest_contentful_paint: 2500
  performance_score: 90
pages:
  - url: /fast
  - url: /heavy
    budgets:
      largest_contentful_paint: 8000
      performance_score: {limit: 90, level: warn}
"""


def test_marker_pass_fail_and_warn(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_perf_budgets=BUDGET_TESTS)
    result = pytester.runpytest(REPLAY)
    result.assert_outcomes(passed=2, failed=1, warnings=1)
    result.stdout.re_match_lines([
        r"E?\s*largest_contentful_paint 7741 ms > 2500 ms \(median of 5: 7655, 7658, 7741, "
        r"7758, 8144\) mobile/us http://demo.test/heavy report: file://\S+/report.html",
    ])
    result.stdout.fnmatch_lines(["*BudgetWarning: total_blocking_time 1064 ms > 500 ms*"])


def test_terminal_summary_table(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_perf_budgets=BUDGET_TESTS)
    result = pytester.runpytest(REPLAY)
    result.stdout.re_match_lines([
        r"=+ pagelab budgets =+",
        r"check\s+metric\s+budget\s+actual\s+status",
        r"mobile/us http://demo.test/fast\s+largest_contentful_paint\s+<= 2500 ms\s+670 ms\s+pass",
        r"mobile/us http://demo.test/fast\s+performance_score\s+>= 90\s+100\s+pass",
        r"mobile/us http://demo.test/heavy\s+largest_contentful_paint\s+<= 2500 ms\s+7741 ms"
        r"\s+FAIL",
        r"mobile/us http://demo.test/heavy\s+total_blocking_time\s+<= 500 ms\s+1064 ms\s+warn",
        r"5 budget checks: 3 passed, 1 failed, 1 warned",
    ])
    assert "baseline comparison" not in result.stdout.str()


def test_help_lists_and_parses_every_option(pytester: pytest.Pytester) -> None:
    # pytest loads the plugin in every session: its --help must never break anyone's.
    from pytest_pagelab._state import SETTINGS

    result = pytester.runpytest("--help")
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()
    listed = set(re.findall(r"--pagelab-[a-z-]+", result.stdout.str()))
    flags = {f"--pagelab-{name.replace('_', '-')}": name for name in SETTINGS}
    assert listed == set(flags)
    result.stdout.fnmatch_lines(["*largest_contentful_paint:10%,performance_score:5*"])
    for flag, name in flags.items():
        config = pytester.parseconfig(f"{flag}=value%,x")
        parsed = config.getoption(f"pagelab_{name}")
        assert parsed == (["value%,x"] if name == "budgets" else "value%,x"), flag

def test_perf_measure_takes_pagelab_measure_names(pytester: pytest.Pytester) -> None:
    # The fixture speaks pagelab.measure's words; the old singular ones still work, warned.
    pytester.makepyfile("""
        import pytest

        @pytest.mark.budget(largest_contentful_paint=2500)
        def test_new_names(perf):
            results = perf.measure(urls=["http://demo.test/fast"], devices=["mobile"],
                                   locations="us", runs=2)
            assert set(results.frame["device"]) == {"mobile"}

        def test_old_names(perf):
            with pytest.deprecated_call(match="device= is deprecated; use devices="):
                results = perf.measure(url="http://demo.test/fast", device="mobile",
                                       location="us")
            assert set(results.frame["url"]) == {"http://demo.test/fast"}

        def test_both_is_an_error(perf):
            with pytest.raises(TypeError, match="give devices= or device=, not both"):
                perf.measure("http://demo.test/fast", devices="mobile", device="mobile")
    """)
    pytester.runpytest(REPLAY).assert_outcomes(passed=3)

def _runs_on_two_connections(path: Path) -> None:
    """The recorded /fast runs, relabelled: five on fiber, five on 3g and 2 s slower there."""
    frame = pd.read_csv(RUNS)
    fast = frame[frame["url"] == "http://demo.test/fast"].sort_values("run")
    fiber, slow = fast.iloc[:5].copy(), fast.iloc[5:].copy()
    fiber["connection"] = "fiber"
    slow["connection"] = "3g"
    slow["largest_contentful_paint"] += 2000
    pd.concat([fiber, slow]).to_csv(path, index=False)


def test_perf_measure_checks_each_connection(pytester: pytest.Pytester) -> None:
    # perf.measure(connections=...) as pagelab.measure: each connection is a cell of its
    # own, every limit checked on each; a replay keeps the runs of the connection asked for.
    _runs_on_two_connections(pytester.path / "connections.csv")
    pytester.makepyfile("""
        import pytest

        @pytest.mark.budget(largest_contentful_paint=2500)
        def test_both(perf):
            perf.measure("http://demo.test/fast", connections=["fiber", "3g", "fiber"])

        @pytest.mark.budget(largest_contentful_paint=2500)
        def test_fiber(perf):
            results = perf.measure("http://demo.test/fast", connections="fiber",
                                   config={"connection": "3g"})
            assert set(results.frame["connection"]) == {"fiber"}
            assert len(results.frame) == 5

        @pytest.mark.budget(largest_contentful_paint=2500)
        def test_config_connection(perf):
            perf.measure("http://demo.test/fast", config={"connection": "3g"})

        def test_not_recorded(perf):
            perf.measure("http://demo.test/fast", connections="4g")

        def test_unknown(perf):
            perf.measure("http://demo.test/fast", connections="3G_slow")
    """)
    result = pytester.runpytest("--pagelab-replay=connections.csv",
                                "--pagelab-results=results.json")
    result.assert_outcomes(passed=1, failed=4)
    result.stdout.re_match_lines([
        r"_+ test_both _+",
        r"largest_contentful_paint \d+ ms > 2500 ms \(median of 5: .*\) mobile/us/3g "
        r"http://demo.test/fast",
        r"_+ test_config_connection _+",
        r"largest_contentful_paint \d+ ms > 2500 ms .* mobile/us/3g ",
        r"_+ test_not_recorded _+",
        r"no recorded runs for mobile/us http://demo.test/fast in connections.csv on "
        r"connection 4g",
        r"_+ test_unknown _+",
    ])
    result.stdout.re_match_lines([
        r"E +pytest.UsageError: perf: connections: unknown '3G_slow': did you mean "
        r"'3g_slow'\?"])
    assert "During handling" not in result.stdout.str()
    checks = json.loads((pytester.path / "results.json").read_text())["checks"]
    both = {c["connection"]: c["passed"] for c in checks if "test_both" in c["nodeid"]}
    assert both == {"fiber": True, "3g": False}


def test_a_budget_file_checks_each_of_its_connections(pytester: pytest.Pytester) -> None:
    # connections: in a budget file, as perf.measure's: one item per page, device and
    # location checks the page on each connection.
    _runs_on_two_connections(pytester.path / "connections.csv")
    on_fiber = ("base_url: http://demo.test\nconnections: [fiber]\n"
                "budgets: {largest_contentful_paint: 2500}\npages:\n  - url: /fast\n")
    # The second file's page has connections of its own, over the file's.
    pytester.makefile(".budgets.yaml", fiber=on_fiber,
                      both=on_fiber + "    connections: [fiber, 3g]\n")
    result = pytester.runpytest("--pagelab-replay=connections.csv",
                                "--pagelab-results=results.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.re_match_lines([r"FAILED both.budgets.yaml::http://demo.test/fast\[mobile-us\]"])
    result.stdout.re_match_lines([r"largest_contentful_paint \d+ ms > 2500 ms .* "
                                  r"mobile/us/3g http://demo.test/fast"])
    checks = json.loads((pytester.path / "results.json").read_text())["checks"]
    assert sorted((c["nodeid"].split(".")[0], c["connection"], c["passed"]) for c in checks) \
        == [("both", "3g", False), ("both", "fiber", True), ("fiber", "fiber", True)]
    pytester.makefile(".budgets.yaml", fiber="connections: [5G]\npages: [{url: http://x/}]")
    pytester.runpytest("--pagelab-replay=connections.csv").stdout.fnmatch_lines(
        ["*fiber.budgets.yaml: connections[[]0[]]: unknown '5G': did you mean '5g'?*"])


def test_unknown_and_unmeasured_metrics_are_usage_errors(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        @pytest.mark.budget(lcp_ms=2500)
        def test_x(perf):
            pass
    """)
    result = pytester.runpytest(REPLAY)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*@pytest.mark.budget on test_unknown_and_unmeasured_metrics_are_usage_errors.py::test_x:"
        " unknown metric 'lcp_ms': did you mean 'lcp'? (valid: cumulative_layout_shift (cls),*"
    ])
    pytester.makepyfile("""
        import pytest

        @pytest.mark.budget(first_meaningful_paint=2000)
        def test_x(perf):
            pass
    """)
    result = pytester.runpytest(REPLAY)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*first_meaningful_paint: *the engine does not measure it*"])


def test_budget_file_items_with_overrides(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", budgets=BUDGET_FILE)
    result = pytester.runpytest(REPLAY, "-v")
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines([
        "budgets.yaml::http://demo.test/fast[[]mobile-us[]] PASSED*",
        "budgets.yaml::http://demo.test/heavy[[]mobile-us[]] PASSED*",
        "*BudgetWarning: performance_score 52 < 90 (median of 5: 51, 52, 52, 53, 55)*",
    ])
    # Without the override the heavy page misses the file-wide LCP budget.
    pytester.makefile(".yaml", budgets=BUDGET_FILE.replace("largest_contentful_paint: 8000\n",
                                                           ""))
    result = pytester.runpytest(REPLAY)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["largest_contentful_paint 7741 ms > 2500 ms (median of 5:*"])


def test_budget_file_errors_name_the_problem(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", budgets="pages:\n  - url: /fast\n    budget: {}\n")
    result = pytester.runpytest(REPLAY)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*budgets.yaml: pages[[]0[]]: unknown key 'budget': did you mean"
                                 " 'budgets'? (valid: *"])
    # The issue-33 file: the plugin says what the exception and `pagelab check` say.
    pytester.makefile(".yaml", budgets="pages:\n  - url: /fast\n    device: desktop\n"
                      "    budgets: {largest_contentful_paint: 2.5s}\n")
    result = pytester.runpytest(REPLAY)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([
        "*budgets.yaml: pages[[]0[]].budgets.largest_contentful_paint: write milliseconds as a"
        " number (2500); pages[[]0[]]: unknown key 'device': did you mean 'devices'? (valid: *"])


def test_lighthouse_ci_and_budget_json_files(pytester: pytest.Pytester) -> None:
    lhci = {"ci": {"collect": {"url": ["http://demo.test/fast", "http://demo.test/heavy"]},
                   "assert": {"assertions": {
                       "largest-contentful-paint": ["error", {"maxNumericValue": 2500,
                                                              "aggregationMethod": "median"}],
                       "categories:performance": ["warn", {"minScore": 0.9}]}}}}
    pytester.makefile(".json", lighthouserc=json.dumps(lhci))
    result = pytester.runpytest(REPLAY, "--pagelab-budgets=lighthouserc.json")
    result.assert_outcomes(passed=1, failed=1, warnings=1)
    # As `lhci assert` prints it: the audit, the assertion, expected, found, every run.
    result.stdout.fnmatch_lines(["*largest-contentful-paint failure for maxNumericValue*",
                                 "*expected: <=2500", "*found: 7740.88",
                                 "*all values: 8144.2, 7757.62, 7740.88, 7654.93, 7657.97"])
    # ... and in the summary table with every budget.
    result.stdout.re_match_lines([r"mobile/us http://demo.test/heavy\s+largest-contentful-paint "
                                  r"maxNumericValue\s+<= 2500\s+7740.88\s+FAIL"])

    # ci.collect is read: a screen size maps to the nearest profile, said as a warning.
    lhci["ci"]["collect"]["settings"] = {"screenEmulation": {"width": 365, "height": 650,
                                                              "deviceScaleFactor": 3}}
    pytester.makefile(".json", lighthouserc=json.dumps(lhci))
    result = pytester.runpytest(REPLAY, "--pagelab-budgets=lighthouserc.json")
    result.stdout.fnmatch_lines(["*lighthouserc.json: screenEmulation 365x650@3: measured as "
                                 "phoneG5 (360x640@3), the nearest profile*"])
    result.stdout.fnmatch_lines(["*no recorded runs for phoneG5/us http://demo.test/fast*"])

    budget_json = [{"path": "/*", "timings": [{"metric": "interactive", "budget": 5000}]},
                   {"path": "/heavy", "timings": [{"metric": "interactive", "budget": 9000}]},
                   {"path": "/fast"}]
    pytester.makefile(".json", budget=json.dumps(budget_json))
    result = pytester.runpytest(REPLAY, "--pagelab-budgets=budget.json",
                                "--pagelab-base-url=http://demo.test", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*budget.json::http://demo.test/heavy[[]mobile-us[]] PASSED*"])

    # Request counts live in the LHR, read from each run's report: these are long gone.
    pytester.makefile(".json", budget=json.dumps([{"path": "/fast", "resourceCounts": [
        {"resourceType": "third-party", "budget": 10}]}]))
    result = pytester.runpytest(REPLAY, "--pagelab-budgets=budget.json",
                                "--pagelab-base-url=http://demo.test")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*its report is gone*need each replayed run's Lighthouse "
                                 "result*"])


def test_baseline_save_then_regression(pytester: pytest.Pytester,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # The commit as a GitHub Actions job names it (the one build rule reads GITHUB_SHA only
    # with GITHUB_ACTIONS, as every CI's variables only under that CI's marker).
    for name, value in {"GITHUB_ACTIONS": "true", "GITHUB_SHA": "a" * 40,
                        "GITHUB_REF": "refs/heads/main", "GITHUB_REF_NAME": "main"}.items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile(test_pages="""
        def test_fast(perf):
            perf.measure("http://demo.test/fast")
    """)
    result = pytester.runpytest(REPLAY, "--pagelab-save-baseline=baseline.json")
    result.assert_outcomes(passed=1)
    baseline_path = pytester.path / "baseline.json"
    baseline = json.loads(baseline_path.read_text())
    assert baseline["format"] == "pagelab-baseline/2"
    assert baseline["commit"] == "a" * 40
    assert baseline["environment"]["pagelab"] == "0.1.0"
    [cell] = baseline["cells"]
    assert cell["url"] == "http://demo.test/fast"
    assert cell["runs"] == 10
    assert cell["lighthouse_version"] == "13.5.0"
    assert cell["device_profile"]["id"] == "mobile"
    # The runs themselves, in run order, beside their aggregate.
    frame = pd.read_csv(RUNS)
    fast = frame[frame["url"] == "http://demo.test/fast"].sort_values("run")
    assert cell["values"]["largest_contentful_paint"] == pytest.approx(
        fast["largest_contentful_paint"].tolist())
    assert cell["environment"]["throttling_method"] is not None

    limits = "--pagelab-compare-fail=largest_contentful_paint:10%,performance_score:5"
    result = pytester.runpytest(REPLAY, "--pagelab-compare=baseline.json", limits)
    result.assert_outcomes(passed=1)
    # No budget: the summary has only the comparison, under its own heading and count.
    result.stdout.re_match_lines([
        r"=+ pagelab budgets =+",
        r"baseline comparison \(baseline\.json\)",
        r"check\s+metric\s+baseline\s+median\s+difference \(interval\)\s+p\s+n\s+verdict"
        r"\s+status",
        r"mobile/us http://demo.test/fast\s+largest_contentful_paint\s+670 ms\s+670 ms\s+0 ms "
        r"\(-\d+ ms to \+\d+ ms\)\s+1\s+10 vs 10\s+ok\s+pass",
        r"2 regression checks: 2 passed, 0 failed, 0 warned",
    ])
    assert "budget checks" not in result.stdout.str()

    # A baseline from an earlier, faster build: every run's LCP 20% lower than these runs.
    lcp = cell["values"]["largest_contentful_paint"]
    lcp[:] = [v / 1.2 for v in lcp]
    cell["lighthouse_version"] = "12.8.0"
    baseline_path.write_text(json.dumps(baseline))
    result = pytester.runpytest(REPLAY, "--pagelab-compare=baseline.json", limits)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "largest_contentful_paint regression: median 670 ms vs baseline 559 ms, +112 ms "
        "(95% interval +* ms to +* ms), p=*, n=10 vs 10, limit largest_contentful_paint:10% "
        "(at most 614 ms) mobile/us http://demo.test/fast report:*",
        "baseline warning: baseline for mobile/us http://demo.test/fast was measured with "
        "Lighthouse 12.8.0, these runs with 13.5.0",
    ])


def test_large_but_not_significant_is_inconclusive(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_pages="""
        def test_fast(perf):
            perf.measure("http://demo.test/fast")
    """)
    pytester.runpytest(REPLAY, "--pagelab-save-baseline=baseline.json")
    path = pytester.path / "baseline.json"
    baseline = json.loads(path.read_text())
    # 3 % faster baseline runs: beyond a 1 % limit, but well within the runs' noise.
    lcp = baseline["cells"][0]["values"]["largest_contentful_paint"]
    lcp[:] = [v / 1.03 for v in lcp]
    path.write_text(json.dumps(baseline))
    limits = "--pagelab-compare-fail=largest_contentful_paint:1%"
    result = pytester.runpytest(REPLAY, "--pagelab-compare=baseline.json", limits,
                                "--pagelab-results=results.json")
    result.assert_outcomes(passed=1)
    result.stdout.re_match_lines([r".*largest_contentful_paint.*\s+10 vs 10\s+inconclusive\s+pass"])
    [check] = json.loads((pytester.path / "results.json").read_text())["checks"]
    assert check["kind"] == "baseline"
    assert check["verdict"] == "inconclusive"
    assert check["significant"] is False
    assert check["p_value"] > 0.05
    assert check["n"] == check["n_baseline"] == 10
    low, high = check["interval"]
    assert low < 0 < high
    assert check["difference"] == pytest.approx(check["median"] - check["baseline_median"])

    result = pytester.runpytest(REPLAY, "--pagelab-compare=baseline.json", limits,
                                "--pagelab-inconclusive=fail")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "largest_contentful_paint inconclusive (n=10 vs 10): median 670 ms vs baseline 651 ms,"
        " +20 ms (95% interval -* ms to +* ms), p=0.19, limit largest_contentful_paint:1% "
        "(at most 657 ms) mobile/us http://demo.test/fast report: *",
    ])
    result = pytester.runpytest(REPLAY, "--pagelab-compare=baseline.json", limits,
                                "--pagelab-inconclusive=maybe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--pagelab-inconclusive: expected pass or fail, got 'maybe'*"])
    result = pytester.runpytest(REPLAY, "--pagelab-alpha=2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--pagelab-alpha: expected a number between 0 and 0.5, got '2'*"])


def test_run_counts_that_cannot_decide_are_said_at_save_and_compare(
        pytester: pytest.Pytester) -> None:
    # Issue 33: a baseline of 3 runs was saved without a word, and against it a page 400 ms
    # slower passed as "p -, 4 vs 3, inconclusive": 4 vs 3 runs never go below p = 0.057.
    frame = pd.read_csv(RUNS)
    fast = frame[frame["url"] == "http://demo.test/fast"].sort_values("run")
    fast.iloc[:3].to_csv(pytester.path / "three.csv", index=False)
    slower = fast.iloc[3:7].copy()
    slower["largest_contentful_paint"] += 400
    slower.to_csv(pytester.path / "slower.csv", index=False)
    pytester.makepyfile(test_pages="""
        def test_fast(perf):
            perf.measure("http://demo.test/fast")
    """)
    result = pytester.runpytest("--pagelab-replay=three.csv",
                                "--pagelab-save-baseline=baseline.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "baseline warning: baseline for mobile/us http://demo.test/fast saved with 3 runs: "
        "3 vs 3 runs cannot show a difference at alpha 0.05: at least 4 a side",
    ])
    assert len(json.loads((pytester.path / "baseline.json").read_text())["cells"]) == 1

    limits = "--pagelab-compare-fail=largest_contentful_paint:10%"
    result = pytester.runpytest("--pagelab-replay=slower.csv", "--pagelab-compare=baseline.json",
                                limits, "--pagelab-results=results.json")
    result.assert_outcomes(passed=1)  # inconclusive passes by default, but not silently
    reason = "4 vs 3 runs cannot show a difference at alpha 0.05: at least 4 a side"
    result.stdout.re_match_lines([
        r"mobile/us http://demo.test/fast\s+largest_contentful_paint\s+\d+ ms\s+\d+ ms\s+"
        r"\+\d+ ms \(\+\d+ ms to \+\d+ ms\)\s+0.057\s+4 vs 3\s+inconclusive: "
        + re.escape(reason) + r"\s+pass",
    ])
    result.stdout.fnmatch_lines([
        f"baseline warning: largest_contentful_paint mobile/us http://demo.test/fast: {reason};"
        " the gate cannot fail it",
    ])
    [check] = json.loads((pytester.path / "results.json").read_text())["checks"]
    assert check["too_few_runs"] == reason
    assert check["p_value"] == pytest.approx(2 / 35)
    # The failure line says it too, when inconclusive fails.
    result = pytester.runpytest("--pagelab-replay=slower.csv", "--pagelab-compare=baseline.json",
                                limits, "--pagelab-inconclusive=fail")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"largest_contentful_paint inconclusive ({reason}): median *"])
    # At alpha 0.01 a baseline needs 5 runs a side.
    result = pytester.runpytest("--pagelab-replay=slower.csv", "--pagelab-alpha=0.01",
                                "--pagelab-save-baseline=four.json")
    result.stdout.fnmatch_lines([
        "baseline warning: baseline for mobile/us http://demo.test/fast saved with 4 runs: "
        "4 vs 4 runs cannot show a difference at alpha 0.01: at least 5 a side",
    ])


def test_old_baseline_files_still_load(pytester: pytest.Pytester) -> None:
    # A baseline as pagelab wrote it before baselines kept their runs (format 1).
    old = {
        "format": "pagelab-baseline/1",
        "created_at": "2026-01-01T00:00:00+00:00",
        "aggregation": "median",
        "cells": [{"url": "http://demo.test/fast", "device": "mobile", "location": "us",
                   "runs": 5, "metrics": {"largest_contentful_paint": 559.0,
                                          "performance_score": 100.0},
                   "lighthouse_version": "13.5.0", "device_profile": None}],
    }
    (pytester.path / "old.json").write_text(json.dumps(old))
    pytester.makepyfile(test_pages="""
        def test_fast(perf):
            perf.measure("http://demo.test/fast")
    """)
    limits = "--pagelab-compare-fail=largest_contentful_paint:10%,performance_score:5"
    result = pytester.runpytest(REPLAY, "--pagelab-compare=old.json", limits)
    # Compared as before: the new median (670 ms) against 559 ms + 10 %, no significance.
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "largest_contentful_paint regression: median 670 ms vs baseline 559 ms, +111 ms, "
        "n=10 vs 5 (baseline without runs: fixed threshold only), limit "
        "largest_contentful_paint:10% (at most 615 ms) mobile/us http://demo.test/fast report:*",
        "baseline warning: the baseline (pagelab-baseline/1) has no per-run values: compared "
        "by the fixed threshold as before*",
    ])
    old["cells"][0]["metrics"]["largest_contentful_paint"] = 660.0
    (pytester.path / "old.json").write_text(json.dumps(old))
    result = pytester.runpytest(REPLAY, "--pagelab-compare=old.json", limits)
    result.assert_outcomes(passed=1)


def test_results_json_and_its_replay(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_perf_budgets=BUDGET_TESTS)
    pytester.runpytest(REPLAY, "--pagelab-results=out/results.json")
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    assert data["aggregation"] == "median"
    assert len(data["checks"]) == 5
    assert len(data["runs"]) == 15
    heavy = next(c for c in data["checks"] if c["nodeid"].endswith("test_heavy"))
    assert heavy["actual"] == pytest.approx(7741, abs=1)
    assert heavy["passed"] is False
    assert heavy["values"]
    assert heavy["report_url"].startswith("file://")
    # The results file is itself a runs file: budgets re-checked without measuring.
    result = pytester.runpytest("--pagelab-replay=out/results.json")
    result.assert_outcomes(passed=2, failed=1, warnings=1)


def test_junit_properties(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_perf_budgets=BUDGET_TESTS)
    pytester.runpytest(REPLAY, "--junitxml=junit.xml")
    tree = ET.parse(pytester.path / "junit.xml")
    heavy = next(t for t in tree.iter("testcase") if t.get("name") == "test_heavy")
    [prop] = heavy.iter("property")
    assert prop.get("name") == (
        "pagelab largest_contentful_paint mobile/us http://demo.test/heavy")
    assert prop.get("value", "").startswith("FAIL: largest_contentful_paint 7741 ms > 2500 ms")


def test_settings_from_ini_and_command_line_wins(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"""
        [pytest]
        pagelab_replay = {RUNS}
        pagelab_aggregation = max
    """)
    pytester.makepyfile("""
        import pytest

        @pytest.mark.budget(largest_contentful_paint=700)
        def test_fast(perf):
            perf.measure("http://demo.test/fast")
    """)
    pytester.runpytest().assert_outcomes(failed=1)  # max of the runs: 756 ms
    result = pytester.runpytest("--pagelab-aggregation=min")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["1 budget check: 1 passed, 0 failed, 0 warned"])
    result = pytester.runpytest("--pagelab-aggregation=p99")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--pagelab-aggregation: unknown 'p99': did you mean 'p90'? (valid: median, *"])


def test_engine_failure_is_an_error_and_failed_page_a_failure(
    pytester: pytest.Pytester,
) -> None:
    frame = pd.read_csv(RUNS, dtype=object)
    crashed = frame.iloc[[0]].assign(url="http://demo.test/crash", status="failed",
                                     error_code="ENGINE_CRASHED", engine_failure="True")
    refused = frame.iloc[[0]].assign(url="http://demo.test/down", status="failed",
                                     error_code="FAILED_DOCUMENT_REQUEST")
    pd.concat([frame, crashed, refused]).to_csv(pytester.path / "runs.csv", index=False)
    pytester.makepyfile("""
        import pytest

        @pytest.mark.budget(largest_contentful_paint=2500)
        def test_crash(perf):
            perf.measure("http://demo.test/crash")

        @pytest.mark.budget(largest_contentful_paint=2500)
        def test_down(perf):
            perf.measure("http://demo.test/down")
    """)
    result = pytester.runpytest("--pagelab-replay=runs.csv")
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines([
        "the engine failed on mobile/us http://demo.test/crash: ENGINE_CRASHED (recorded in*",
        "page failed to load: mobile/us http://demo.test/down: FAILED_DOCUMENT_REQUEST",
        "engine error: *::test_crash: the engine failed on*",
        "ERROR *::test_crash*",
    ])


def test_xdist_two_workers_merge_results(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_perf_budgets=BUDGET_TESTS)
    pytester.makefile(".yaml", budgets=BUDGET_FILE)
    result = pytester.runpytest_subprocess(
        "-n", "2", REPLAY, "--pagelab-results=results.json",
        "--pagelab-save-baseline=baseline.json")
    result.assert_outcomes(passed=4, failed=1)
    data = json.loads((pytester.path / "results.json").read_text())
    nodeids = {c["nodeid"] for c in data["checks"]}
    assert nodeids == {
        "test_perf_budgets.py::test_fast", "test_perf_budgets.py::test_heavy",
        "test_perf_budgets.py::test_heavy_warns", "budgets.yaml::http://demo.test/fast[mobile-us]",
        "budgets.yaml::http://demo.test/heavy[mobile-us]"}
    assert len(data["runs"]) == 15
    assert len(json.loads((pytester.path / "baseline.json").read_text())["cells"]) == 2
    result.stdout.fnmatch_lines(["*pagelab budgets*",
                                 "9 budget checks: 6 passed, 1 failed, 2 warned"])


def test_disabled_with_no_pagelab(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        def test_x(perf):
            pass
    """)
    pytester.makefile(".yaml", budgets=BUDGET_FILE)
    result = pytester.runpytest("-p", "no:pagelab")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'perf' not found*"])
    result = pytester.runpytest("-p", "no:pagelab", REPLAY)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unrecognized arguments: --pagelab-replay*"])


def test_plugin_loads_pagelab_only_on_use() -> None:
    # pytest loads the plugin in every session: its import and configure stay light.
    import subprocess
    import sys

    code = (
        "import sys, pytest\n"
        "pytest.main(['--co', '-q', '-p', 'no:cacheprovider', '-p', 'no:nbval', '/dev/null'])\n"
        "heavy = {'pagelab', 'pandas'} & set(sys.modules)\n"
        "assert 'pytest_pagelab.plugin' in sys.modules\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_plugin_imports_flow_one_way() -> None:
    # Every import between the plugin's modules, those inside functions too, points one way.
    import ast
    import graphlib

    import pytest_pagelab

    package = Path(pytest_pagelab.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in package.glob("*.py"):
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module:
                    imported.add(node.module)
                elif node.level == 1:
                    imported.update(alias.name for alias in node.names)
                elif (node.module or "").startswith("pytest_pagelab."):
                    imported.add(str(node.module).removeprefix("pytest_pagelab."))
        graph[path.stem] = imported - {path.stem}
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError on a circle


def test_plugin_imports_public_pagelab_names_only() -> None:
    # The plugin is a face over pagelab's public modules: no private module such as
    # pagelab._cells (issue 36); what it needs is re-exported by pagelab.budgets.
    import ast

    import pytest_pagelab

    private = []
    for path in Path(pytest_pagelab.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            private += [f"{path.name}: {name}" for name in names
                        if name.split(".")[0] == "pagelab"
                        and any(part.startswith("_") for part in name.split("."))]
    assert private == []


def test_the_build_is_resolved_once_a_session(pytester: pytest.Pytester,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # Real git in the session's directory; HEAD moves between the two tests. Every test's
    # runs measure the build the session resolved once (the runs of perf.measure and of
    # budget files: the state's build, passed to budgets.matrix_measure), not one git
    # look-up per test.
    import subprocess

    from pagelab._build import BUILD_VARIABLES, CI_SYSTEMS

    for name in [*BUILD_VARIABLES, *(ci.marker for ci in CI_SYSTEMS)]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(pytester.path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    first = subprocess.run(["git", "rev-parse", "HEAD"], check=True, capture_output=True,
                           text=True).stdout.strip()
    pytester.makepyfile(test_builds=f"""
        import subprocess
        from pytest_pagelab._state import STATE_KEY

        def test_a(request):
            assert request.config.stash[STATE_KEY].build().commit == {first!r}
            subprocess.run({git!r} + ["commit", "-q", "--allow-empty", "-m", "next"],
                           check=True)

        def test_b(request):
            assert request.config.stash[STATE_KEY].build().commit == {first!r}
    """)
    pytester.runpytest().assert_outcomes(passed=2)
