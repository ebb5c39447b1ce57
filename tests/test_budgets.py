"""pagelab.budgets on recorded real runs (tests/data/runs-demo.csv: /fast x10, /heavy x5)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pagelab import InvalidInputError, budgets, frames, stats
from pagelab.budgets._baseline import BASELINE_FORMAT, BaselineCell
from pagelab.budgets._models import PRESETS
from pagelab.models import METRICS

RUNS = Path(__file__).parent / "data" / "runs-demo.csv"
FAST = "http://demo.test/fast"
HEAVY = "http://demo.test/heavy"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return frames.read_runs(RUNS)


def test_aggregations_are_the_stats_ones() -> None:
    assert budgets.AGGREGATION_NAMES == stats.AGGREGATIONS


def test_presets_read_the_registry() -> None:
    assert PRESETS["good"]["largest_contentful_paint"] == METRICS[
        "largest_contentful_paint"].good
    assert PRESETS["not-poor"]["performance_score"] == METRICS["performance_score"].poor
    assert "first_meaningful_paint" not in PRESETS["good"]


def test_evaluate_mapping_on_every_cell(frame: pd.DataFrame) -> None:
    results = budgets.evaluate({"LCP": 2500, "performance_score": 90}, frame)
    by = {(r.url, r.metric): r for r in results}
    fast = by[FAST, "largest_contentful_paint"]
    assert fast.passed
    assert fast.operator == "<="
    assert len(fast.values) == 10
    heavy = by[HEAVY, "largest_contentful_paint"]
    assert not heavy.passed
    assert heavy.actual is not None
    assert heavy.actual > 7000
    assert heavy.message.startswith("largest_contentful_paint 7741 ms > 2500 ms (median of 5: ")
    assert f"mobile/us {HEAVY} report: file://" in heavy.message
    score = by[HEAVY, "performance_score"]
    assert score.operator == ">="
    assert not score.passed
    assert " < 90 " in score.message
    assert set(fast.to_dict()) == {
        "url", "device", "location", "connection", "metric", "operator", "expected", "actual",
        "values", "aggregation", "passed", "level", "report_url", "message", "status", "label",
        "flow", "step"}
    assert fast.connection is None  # the device's default
    # The wording every face prints comes from the result.
    assert (fast.status, fast.label) == ("pass", "pass")
    assert (score.status, score.label, score.to_dict()["label"]) == ("fail", "FAIL", "FAIL")


def test_aggregation_choice(frame: pd.DataFrame) -> None:
    worst = budgets.evaluate({"largest_contentful_paint": 7700}, frame, aggregation="max")
    heavy = next(r for r in worst if r.url == HEAVY)
    assert heavy.actual == max(heavy.values)
    assert heavy.aggregation == "max"
    with pytest.raises(InvalidInputError, match="aggregation: unknown 'p99'"):
        budgets.evaluate({"largest_contentful_paint": 1}, frame, aggregation="p99")


def test_budget_file_overrides_levels_and_missing_cells(frame: pd.DataFrame) -> None:
    budget_file = budgets.parse_budgets({
        "base_url": "http://demo.test",
        "budgets": {"largest_contentful_paint": 2500,
                    "total_blocking_time": {"limit": 500, "level": "warn"}},
        "pages": [{"url": "/fast"},
                  {"url": "/heavy", "budgets": {"largest_contentful_paint": 9000}},
                  {"url": "/gone", "devices": ["desktop"]}],
    })
    results = {(r.url, r.device, r.metric): r for r in budgets.evaluate(budget_file, frame)}
    assert results[HEAVY, "mobile", "largest_contentful_paint"].passed
    tbt = results[HEAVY, "mobile", "total_blocking_time"]
    assert not tbt.passed
    assert tbt.level == "warn"
    assert tbt.status == "warn"
    gone = results["http://demo.test/gone", "desktop", "largest_contentful_paint"]
    assert not gone.passed
    assert gone.actual is None
    assert "no runs" in gone.message


def test_missing_value_is_a_failed_record(frame: pd.DataFrame) -> None:
    failed = frame.copy()
    failed["status"] = "failed"
    failed["error_code"] = "NO_FCP"
    [result, *_] = budgets.evaluate({"speed_index": 3000}, failed)
    assert not result.passed
    assert result.actual is None
    assert "no value in 10 runs (failed: NO_FCP)" in result.message


def test_unknown_keys_and_metrics_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="extra_key"):
        budgets.parse_budgets({"pages": [], "extra_key": 1})
    with pytest.raises(InvalidInputError,
                       match=r"unknown metric 'lcp_ms': did you mean 'lcp'\? \(valid: "):
        budgets.parse_budgets({"budgets": {"lcp_ms": 1}})
    with pytest.raises(InvalidInputError, match="does not measure it"):
        budgets.checks_from_mapping({"first_meaningful_paint": 1000})


def test_lighthouse_ci_config_is_read_whole(frame: pd.DataFrame) -> None:
    budget_file = budgets.parse_budgets({"ci": {
        "collect": {"url": [FAST], "numberOfRuns": 5},
        "assert": {"assertions": {
            "largest-contentful-paint": ["error", {"maxNumericValue": 2500}],
            "interactive": ["warn", {"maxNumericValue": 5000, "aggregationMethod": "median"}],
            "categories:performance": ["error", {"minScore": 0.9}],
            "speed-index": "off",
        }},
    }})
    assert budget_file.runs == 5
    assert budget_file.checks() == []
    assert budget_file.config is None  # performance only: the default, fast run
    results = {(r.audit_id, r.name): r for r in budgets.assert_runs(budget_file.lhci or {},
                                                                      frame) if r.url == FAST}
    # Lighthouse CI's default aggregation is optimistic: the best run; scores on 0-1.
    lcp = results["largest-contentful-paint", "maxNumericValue"]
    assert lcp.actual == min(lcp.values)
    assert lcp.passed
    assert results["categories", "minScore"].expected == 0.9
    assert ("speed-index", "maxNumericValue") not in results
    with pytest.raises(InvalidInputError, match="holds Lighthouse CI assertions"):
        budgets.evaluate(budget_file, frame)


def test_lighthouse_ci_collect_settings() -> None:
    desktop = budgets.parse_budgets({"ci": {"collect": {"url": FAST, "settings": {
        "preset": "desktop"}}, "assert": {"preset": "lighthouse:recommended"}}})
    assert [d.value for d in desktop.devices] == ["desktop"]
    assert desktop.config == {"categories": ["accessibility", "best-practices", "performance",
                                             "seo"]}
    slow = budgets.parse_budgets({"ci": {"collect": {"url": FAST, "settings": {
        "throttlingMethod": "devtools", "throttling": {"rttMs": 300, "throughputKbps": 1600},
        "screenEmulation": {"width": 375, "height": 667, "deviceScaleFactor": 2}}},
        "assert": {"assertions": {"categories:performance": ["error", {"minScore": 0.5}]}}}})
    assert [d.value for d in slow.devices] == ["phone7"]
    assert slow.config == {"throttling_method": "applied", "connection": "3g"}
    assert any("nearest profile" in note for note in slow.notes)
    for bad, named in (
        ({"collect": {"staticDistDir": "./dist"}}, "staticDistDir cannot be mapped"),
        ({"collect": {"settings": {"throttlingMethod": "provided"}}}, "'provided' cannot"),
        ({"collect": {"settings": {"throttling": {"cpuSlowdownMultiplier": 2}}}},
         "cpuSlowdownMultiplier 2"),
        ({"collect": {"settings": {"chromeFlags": "--headless"}}}, "chromeFlags cannot"),
    ):
        with pytest.raises(InvalidInputError, match=named):
            budgets.parse_budgets({"ci": {**bad, "assert": {"assertions": {
                "interactive": "error"}}}})
    with pytest.raises(InvalidInputError, match="Lighthouse CI ignores camelCase"):
        budgets.parse_budgets({"assertions": {"firstContentfulPaint": "error"}})


def test_lighthouse_budget_json(frame: pd.DataFrame) -> None:
    budget_file = budgets.parse_budgets([
        {"path": "/*", "timings": [{"metric": "largest-contentful-paint", "budget": 2500}]},
        {"path": "/heavy", "timings": [{"metric": "largest-contentful-paint", "budget": 9000},
                                       {"metric": "cumulative-layout-shift", "budget": 0.1}]},
    ])
    results = {(r.url, r.metric): r for r in budgets.evaluate(budget_file, frame)}
    assert results[FAST, "largest_contentful_paint"].expected == 2500
    # The last matching entry wins, as in Lighthouse.
    assert results[HEAVY, "largest_contentful_paint"].expected == 9000
    assert results[HEAVY, "largest_contentful_paint"].passed
    sized = budgets.parse_budgets([{"resourceSizes": [{"resourceType": "script",
                                                       "budget": 300}]}])
    assert sized.lhci == {"assertMatrix": [{"matchingUrlPattern": ".*", "assertions": {
        "resource-summary:script:size": ["error", {"maxNumericValue": 300 * 1024}]}}]}
    with pytest.raises(InvalidInputError, match="'max-potential-fid' cannot be mapped"):
        budgets.parse_budgets([{"timings": [{"metric": "max-potential-fid", "budget": 1}]}])


def test_load_budgets_yaml_errors(tmp_path: Path) -> None:
    bad = tmp_path / "b.yaml"
    bad.write_text("budgets: [unclosed\n")
    with pytest.raises(InvalidInputError, match=r"b.yaml: not valid YAML \(line"):
        budgets.load_budgets(bad)
    with pytest.raises(InvalidInputError, match="budget files end in"):
        budgets.load_budgets(tmp_path / "b.toml")


def test_baseline_save_and_regression(frame: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    saved = budgets.save_baseline(frame, path)
    data = json.loads(path.read_text())
    assert data["format"] == BASELINE_FORMAT
    assert len(data["cells"]) == 2
    assert data["cells"][0]["lighthouse_version"] == "13.5.0"
    assert data["cells"][0]["device_profile"]["id"] == "mobile"
    baseline = budgets.load_baseline(path)
    assert baseline == saved
    limits = budgets.parse_regression_limits("LCP:10%,performance_score:5")
    same = budgets.compare_baseline(baseline, frame, limits)
    assert all(r.passed for r in same.results)
    assert not same.warnings
    # An earlier, faster build: every run's LCP 20% lower and score 10 points higher.
    for cell in baseline.cells:
        lcp, score = cell.values["largest_contentful_paint"], cell.values["performance_score"]
        lcp[:] = [None if v is None else v / 1.2 for v in lcp]
        score[:] = [None if v is None else v + 10 for v in score]
    worse = budgets.compare_baseline(baseline, frame, limits)
    failed = {(r.url, r.metric) for r in worse.results if not r.passed}
    assert (FAST, "largest_contentful_paint") in failed
    assert (HEAVY, "performance_score") in failed
    assert {r.verdict for r in worse.results if not r.passed} == {"regression"}
    message = next(r.message for r in worse.results if not r.passed)
    assert "regression: median " in message
    assert " vs baseline " in message
    assert "limit largest_contentful_paint:10% (at most " in message


def test_baseline_mismatch_warnings(frame: pd.DataFrame) -> None:
    baseline = budgets.make_baseline(frame)
    other = budgets.Baseline(baseline.aggregation, [
        BaselineCell(c.url, c.device, c.location, c.runs, c.metrics, "12.0.0",
                             {**(c.device_profile or {}), "cpu_slowdown": 1})
        for c in baseline.cells[:1]
    ])
    comparison = budgets.compare_baseline(
        other, frame, budgets.parse_regression_limits("speed_index:5"))
    text = "\n".join(comparison.warnings)
    assert "Lighthouse 12.0.0, these runs with 13.5.0" in text
    assert "another mobile device profile" in text
    assert f"baseline has no runs for mobile/us {HEAVY}" in text


def _two_connections(frame: pd.DataFrame) -> pd.DataFrame:
    """The ten recorded /fast runs as if the first five ran on 4g and the rest on 3g (the
    grouping, not the engine, is under test), with the 3g runs 3x slower."""
    fast = frame[frame["url"] == FAST].reset_index(drop=True)
    fast["connection"] = pd.Categorical(["4g"] * 5 + ["3g"] * 5,
                                        dtype=frame["connection"].dtype)
    slow = fast["connection"] == "3g"
    fast.loc[slow, "largest_contentful_paint"] *= 3
    return fast


def test_budget_checks_each_connection_as_its_own_cell(frame: pd.DataFrame) -> None:
    # The cell bug: budgets grouped by URL x device x location only, so runs of two
    # connections were pooled into one check (10 values, one median between them).
    runs = _two_connections(frame)
    results = budgets.evaluate({"LCP": 1500}, runs)
    assert len(results) == 2
    by = {r.connection: r for r in results}
    assert set(by) == {"4g", "3g"}
    assert all(len(r.values) == 5 for r in results)
    assert by["4g"].passed
    assert not by["3g"].passed
    assert f"mobile/us/3g {FAST}" in by["3g"].message


def test_baseline_keeps_connections_apart(frame: pd.DataFrame, tmp_path: Path) -> None:
    runs = _two_connections(frame)
    path = tmp_path / "baseline.json"
    saved = budgets.save_baseline(runs, path)
    assert sorted(c.connection or "" for c in saved.cells) == ["3g", "4g"]
    assert budgets.load_baseline(path) == saved
    compared = budgets.compare_baseline(saved, runs, budgets.parse_regression_limits("LCP:10%"))
    assert not compared.warnings
    assert sorted(r.connection or "" for r in compared.results) == ["3g", "4g"]
    assert all(r.passed for r in compared.results)
    # A baseline file from before the connection was recorded: its cells are the default.
    data = json.loads(path.read_text())
    for cell in data["cells"]:
        del cell["connection"]
    path.write_text(json.dumps(data))
    assert all(c.connection is None for c in budgets.load_baseline(path).cells)


def test_run_failures_name_the_connection(frame: pd.DataFrame) -> None:
    runs = _two_connections(frame)
    runs.loc[0, "status"] = "failed"
    runs.loc[0, "error_code"] = "NO_FCP"
    runs.loc[0, "engine_failure"] = False
    assert budgets.run_failures(runs) == {(FAST, "mobile", "us", "4g", None, None): ["NO_FCP"]}


def test_regression_limit_errors() -> None:
    with pytest.raises(InvalidInputError, match="expected METRIC:N% or METRIC:N"):
        budgets.parse_regression_limits("largest_contentful_paint=10")
    with pytest.raises(InvalidInputError, match="unknown metric 'foo'"):
        budgets.parse_regression_limits("foo:5")


def test_runs_round_trip(frame: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"runs": frames.to_records(frame)}))
    again = frames.read_runs(path)
    pd.testing.assert_frame_equal(again, frame)


def test_a_target_of_several_connections_is_one_target_per_connection() -> None:
    from pagelab.budgets._pipeline import connection_targets

    chosen = budgets.parse_connections(["3g", "fiber", "3g"], "connections")
    assert chosen == ("3g", "fiber")  # repeats dropped, in order
    target = budgets.Target("https://example.test/", ("mobile",), ("us",),
                            {"connection": "4g", "adblock": True}, 3,
                            connections=chosen)
    split = connection_targets(target)
    assert [t.config for t in split] == [
        {"connection": "3g", "adblock": True},
        {"connection": "fiber", "adblock": True}]
    assert all(t.connections == () and t.page == target.page for t in split)
    assert connection_targets(split[0]) == [split[0]]
    with pytest.raises(InvalidInputError, match=r"^connections: unknown '3G': did you mean "
                                                r"'3g'\?"):
        budgets.parse_connections("3G", "connections")
