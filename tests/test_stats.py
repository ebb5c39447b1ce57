"""pagelab.stats on recorded real runs of the demo site (10 x /fast, 5 x /heavy, real engine;
``tests/data/record_runs.py``) and on synthetic data where the truth is known."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pagelab
from pagelab import InvalidInputError
from pagelab.frames import CELL, COLUMNS, to_frame
from pagelab.models import (
    METRIC_NAMES,
    Device,
    LighthouseConfig,
    LighthouseError,
    Location,
    Metrics,
    TestReport,
    TestStatus,
)
from pagelab.runners import read_history
from pagelab.stats import (
    AGGREGATIONS,
    compare,
    describe,
    history,
    representative_run,
    representative_runs,
    summarize,
)
from pagelab.store import create_test, finish_test, now_ms, transaction
from recorded_runs import load_runs, matrix_2x2

FAST = "http://demo.test/fast"
HEAVY = "http://demo.test/heavy"
LCP, TBT, FCP, TTI = ("largest_contentful_paint", "total_blocking_time",
                      "first_contentful_paint", "time_to_interactive")


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    return load_runs()


def failed_report(url: str, *, engine: bool = False, offset: int = 0) -> TestReport:
    code = "TIMEOUT" if engine else "ERRORED_DOCUMENT_REQUEST"
    return TestReport(
        id=f"lt_failed{offset}", url=url, device="mobile", location="us", status="failed",
        created_at=1_790_000_000_000 + offset, error=LighthouseError(code=code, message="x"),
    )


@pytest.fixture(scope="module")
def with_failures(runs: pd.DataFrame) -> pd.DataFrame:
    """The recorded runs plus a cell whose every run failed and one failed fast run."""
    extra = to_frame([
        failed_report("http://demo.test/broken", offset=1),
        failed_report("http://demo.test/broken", engine=True, offset=2),
        failed_report(FAST, engine=True, offset=3),
    ])
    return pd.concat([runs, extra.astype(runs.dtypes.to_dict())], ignore_index=True)


# -- recorded real runs ----------------------------------------------------------------------


def test_recorded_runs_are_real_and_complete(runs: pd.DataFrame) -> None:
    assert list(runs.columns) == list(COLUMNS)
    assert runs.dtypes.to_dict() == {
        name: pd.api.types.pandas_dtype(dtype) for name, dtype in COLUMNS.items()
    }
    assert runs["url"].value_counts().to_dict() == {FAST: 10, HEAVY: 5}
    assert (runs["status"] == "success").all()
    assert runs["lighthouse_version"].notna().all()


def test_heavy_page_is_slower_than_fast_in_lcp_and_tbt(runs: pd.DataFrame) -> None:
    # 5 runs each, as the issue asks: the first five fast runs against the five heavy ones.
    five = runs[(runs["url"] == HEAVY) | (runs["run"] < 5)]
    result = compare(five, "url", FAST, HEAVY).set_index("metric")
    for name in (LCP, TBT):
        row = result.loc[name]
        assert row["verdict"] == "b is slower", row
        assert row["n_a"] == row["n_b"] == 5
        assert row["p_value"] < 0.05
        assert 0 < row["ci_low"] <= row["diff"] <= row["ci_high"]
        assert row["effect_size"] == 1.0  # every heavy run above every fast run
        assert row["b_median"] > row["a_median"]
    assert result.loc["performance_score", "verdict"] == "b scores lower"
    assert result.loc["cumulative_layout_shift", "verdict"] == "no significant difference"
    # FMP is always null from Lighthouse 13: no row unless asked for.
    assert "first_meaningful_paint" not in result.index


def test_fast_page_against_itself_shows_no_difference(runs: pd.DataFrame) -> None:
    fast = runs[runs["url"] == FAST].copy()
    fast["half"] = np.where(fast["run"] < 5, "first", "second")
    result = compare(fast, "half", "first", "second")
    assert len(result) == 8
    assert (result["verdict"] == "no significant difference").all(), result
    assert (result["n_a"] == 5).all()
    assert (result["n_b"] == 5).all()
    assert (result["p_value"] > 0.05).all()


def test_run_counts_that_cannot_decide_say_so(runs: pd.DataFrame) -> None:
    # Issue 33: the quickstart's runs=3 gave "too few runs (need 5 per side)" on every row,
    # even LCP 637 against 7 502 ms. 3 against 3 can never go below p = 0.1: the verdict
    # says so and how many runs can; the p-value and the interval are still shown.
    three = runs[runs["run"] < 3]
    result = compare(three, "url", FAST, HEAVY, metrics=["LCP", "TBT"])
    assert result["metric"].tolist() == [LCP, TBT]
    assert (result["verdict"] == "3 vs 3 runs cannot show a difference at alpha 0.05: at least "
            "4 a side").all()
    assert result["p_value"].tolist() == pytest.approx([0.1, 0.1])
    assert result["ci_low"].notna().all()
    # 4 a side can: every heavy run slower than every fast one is p = 2/70.
    four = compare(runs[runs["run"] < 4], "url", FAST, HEAVY, metrics=["LCP", "TBT"])
    assert (four["verdict"] == "b is slower").all()
    assert four["p_value"].tolist() == pytest.approx([2 / 70, 2 / 70])
    assert (four["note"] == "interval from under 5 runs a side: covers less than its "
            "confidence").all()
    # The level is compare's: at 99 % confidence 4 a side cannot, 5 can.
    strict = compare(runs[runs["run"] < 4], "url", FAST, HEAVY, metrics="LCP",
                     confidence=0.99)
    assert strict["verdict"].tolist() == [
        "4 vs 4 runs cannot show a difference at alpha 0.01: at least 5 a side"]


def test_the_fewest_runs_come_from_the_exact_test() -> None:
    from scipy.stats import mannwhitneyu

    from pagelab.stats import min_runs, smallest_p_value, too_few_runs

    for n_a in range(1, 9):
        for n_b in range(1, 9):
            # The sides wholly apart: the most extreme split the exact test knows.
            apart = mannwhitneyu(np.arange(n_a), np.arange(n_b) + 100, method="exact").pvalue
            assert smallest_p_value(n_a, n_b) == pytest.approx(apart), (n_a, n_b)
    assert smallest_p_value(3, 4) == pytest.approx(0.057, abs=0.001)
    assert smallest_p_value(0, 5) == 1.0
    assert pagelab.stats.MIN_RUNS == min_runs(0.05) == 4
    assert min_runs(0.01) == 5
    assert min_runs(0.05, against=3) == 5  # 3 vs 5: 2/56 = 0.036
    assert min_runs(0.05, against=1) == 40
    assert min_runs(1e-9) == 17
    for alpha in (0.2, 0.05, 0.021, 0.01, 0.001):
        n = min_runs(alpha)
        assert smallest_p_value(n, n) < alpha <= smallest_p_value(n - 1, n - 1)
    assert too_few_runs(4, 3, 0.05) == ("4 vs 3 runs cannot show a difference at alpha 0.05: "
                                        "at least 4 a side")
    assert too_few_runs(3, 5, 0.05) is None
    with pytest.raises(InvalidInputError, match="alpha"):
        min_runs(0)
    with pytest.raises(InvalidInputError, match="against"):
        min_runs(0.05, against=0)


def test_compare_columns_dtypes_and_relative_difference(runs: pd.DataFrame) -> None:
    result = compare(runs, ["url", "device"], (FAST, "mobile"), (HEAVY, "mobile"))
    # Within the cell columns by does not name (here only the location holds a value).
    assert list(result.columns) == [
        "location", "metric", "unit", "a_median", "b_median", "diff", "rel_diff", "ci_low",
        "ci_high", "p_value", "effect_size", "n_a", "n_b", "verdict", "note",
    ]
    assert result.attrs["within"] == ["location"]
    assert (result["location"] == "us").all()
    assert (result["note"] == "").all()
    assert str(result["metric"].dtype) == "category"
    assert result["unit"].dtype == "string"
    assert result["verdict"].dtype == "string"
    assert result["n_a"].dtype == "int64"
    lcp = result.set_index("metric").loc[LCP]
    fast = runs.loc[runs["url"] == FAST, LCP]
    heavy = runs.loc[runs["url"] == HEAVY, LCP]
    assert lcp["a_median"] == fast.median()
    assert lcp["b_median"] == heavy.median()
    assert lcp["diff"] == pytest.approx(heavy.median() - fast.median())
    assert lcp["rel_diff"] == pytest.approx(lcp["diff"] / fast.median() * 100)
    assert lcp["unit"] == "ms"
    # CLS is 0 on both pages: no relative difference from 0, no variation, no verdict.
    cls = result.set_index("metric").loc["cumulative_layout_shift"]
    assert np.isnan(cls["rel_diff"])
    assert cls["diff"] == 0


def test_compare_bad_input_names_the_choices(runs: pd.DataFrame) -> None:
    with pytest.raises(InvalidInputError, match=r"by: the frame has no column 'page'.*url"):
        compare(runs, "page", FAST, HEAVY)
    with pytest.raises(InvalidInputError, match=r"a: no run has url = 'x'; valid: .*fast"):
        compare(runs, "url", "x", HEAVY)
    with pytest.raises(InvalidInputError, match=r"b: no run has device = 'tablet102'.*mobile"):
        compare(runs, "device", "mobile", "tablet102")
    with pytest.raises(InvalidInputError, match=r"unknown metric 'speed'.*largest_contentful"):
        compare(runs, "url", FAST, HEAVY, metrics=["speed"])
    with pytest.raises(InvalidInputError, match="a: expected a tuple"):
        compare(runs, ["url", "device"], FAST, HEAVY)
    with pytest.raises(InvalidInputError, match="the same runs"):
        compare(runs, "url", FAST, FAST)
    with pytest.raises(InvalidInputError, match="resamples"):
        compare(runs, "url", FAST, HEAVY, resamples=0)
    with pytest.raises(InvalidInputError, match="confidence"):
        compare(runs, "url", FAST, HEAVY, confidence=95)
    with pytest.raises(InvalidInputError, match="frame"):
        compare([1, 2], "url", FAST, HEAVY)  # type: ignore[arg-type]


# -- summarize / describe --------------------------------------------------------------------


def test_summarize_columns_values_and_cv(runs: pd.DataFrame) -> None:
    summary = summarize(runs)
    # connection is empty in these runs (the device's default): not a grouping column.
    assert list(summary.columns[:6]) == ["url", "device", "location", "runs", "failed",
                                         "engine_failures"]
    assert list(summary.columns[6:16]) == list(METRIC_NAMES)
    assert list(summary.columns[16:26]) == [f"{name}_cv" for name in METRIC_NAMES]
    assert list(summary.columns[26:]) == ["representative_id", "representative_report_url"]
    assert summary["url"].tolist() == [FAST, HEAVY]
    assert summary["runs"].tolist() == [10, 5]
    assert summary["runs"].dtype == "int64"
    assert summary["failed"].dtype == "int64"
    assert summary[LCP].dtype == "float64"
    assert summary[f"{LCP}_cv"].dtype == "float64"
    assert summary["representative_id"].dtype == "string"
    assert summary["device"].dtype == runs["device"].dtype
    fast = runs.loc[runs["url"] == FAST, LCP]
    assert summary.loc[0, LCP] == fast.median()
    assert summary.loc[0, f"{LCP}_cv"] == pytest.approx(fast.std() / fast.mean() * 100)
    assert 1 < summary.loc[0, f"{LCP}_cv"] < 20  # the fast page's bimodal LCP (issue 13)
    assert summary.loc[0, "cumulative_layout_shift_cv"] == 0  # always 0: no variation
    assert np.isnan(summary.loc[0, "first_meaningful_paint"])
    assert np.isnan(summary.loc[0, "first_meaningful_paint_cv"])


@pytest.mark.parametrize("agg", AGGREGATIONS)
def test_every_aggregation(runs: pd.DataFrame, agg: str) -> None:
    summary = summarize(runs, by="url", aggregation=agg, metrics="LCP")
    heavy = runs.loc[runs["url"] == HEAVY, LCP]
    expected = {
        "median": heavy.median(), "mean": heavy.mean(), "p75": heavy.quantile(0.75),
        "p90": heavy.quantile(0.9), "min": heavy.min(), "max": heavy.max(),
        "representative": runs.loc[representative_run(runs[runs["url"] == HEAVY]), LCP],
    }[agg]
    assert summary.loc[1, LCP] == pytest.approx(expected)
    assert list(summary.columns) == ["url", "runs", "failed", "engine_failures", LCP,
                                     f"{LCP}_cv", "representative_id",
                                     "representative_report_url"]


def test_agg_is_the_deprecated_spelling_of_aggregation(runs: pd.DataFrame) -> None:
    # One word on every face: the CLI's --aggregation, the budget files' aggregation.
    with pytest.warns(DeprecationWarning, match="agg= is deprecated: use aggregation="):
        old = summarize(runs, by="url", agg="p90", metrics="LCP")
    pd.testing.assert_frame_equal(old, summarize(runs, by="url", aggregation="p90",
                                                 metrics="LCP"))
    results = pagelab.Results.from_frame(runs)
    with pytest.warns(DeprecationWarning, match="agg="):
        assert results.summary(agg="max").frame.equals(
            results.summary(aggregation="max").frame)
    with pytest.raises(InvalidInputError, match="aggregation: unknown 'mode'"):
        summarize(runs, aggregation="mode")


def test_all_failed_cell_has_nan_values_and_no_representative(
    with_failures: pd.DataFrame,
) -> None:
    summary = summarize(with_failures, by="url").set_index("url")
    broken = summary.loc["http://demo.test/broken"]
    assert (broken["runs"], broken["failed"], broken["engine_failures"]) == (2, 2, 1)
    assert np.isnan(broken[LCP])
    assert np.isnan(broken[f"{LCP}_cv"])
    assert pd.isna(broken["representative_id"])
    assert pd.isna(broken["representative_report_url"])
    fast = summary.loc[FAST]
    assert (fast["runs"], fast["failed"], fast["engine_failures"]) == (11, 1, 1)
    # the failed run does not enter the statistics
    assert fast[LCP] == with_failures.loc[with_failures["url"] == FAST, LCP].median()
    picked = summarize(with_failures, by="url", aggregation="representative").set_index("url")
    chosen = with_failures["id"] == picked.loc[FAST, "representative_id"]
    assert picked.loc[FAST, LCP] == with_failures.loc[chosen, LCP].item()
    assert np.isnan(picked.loc["http://demo.test/broken", LCP])

    tidy = describe(with_failures, by="url")
    dead = tidy[tidy["url"] == "http://demo.test/broken"]
    assert len(dead) == len(METRIC_NAMES)
    assert (dead["n"] == 0).all()
    assert dead["median"].isna().all()
    assert dead["cv"].isna().all()

    reps = representative_runs(with_failures, "url")
    assert reps["http://demo.test/broken"] is None
    failed_only = with_failures[with_failures["url"] == "http://demo.test/broken"]
    assert representative_run(failed_only) is None
    assert representative_run(with_failures.iloc[0:0]) is None


def test_describe_is_tidy(runs: pd.DataFrame) -> None:
    tidy = describe(runs, metrics=["LCP", "performance_score", "CLS"])
    assert list(tidy.columns) == ["url", "device", "location", "metric", "median", "mean",
                                  "p75", "p90", "min", "max", "std", "cv", "n", "unit"]
    assert len(tidy) == 6
    assert tidy["metric"].tolist() == [LCP, "performance_score", "cumulative_layout_shift"] * 2
    assert tidy["unit"].tolist() == ["ms", "score", "unitless"] * 2
    assert tidy["n"].tolist() == [10, 10, 10, 5, 5, 5]
    assert tidy["n"].dtype == "int64"
    assert tidy["unit"].dtype == "string"
    row = tidy[(tidy["url"] == HEAVY) & (tidy["metric"] == LCP)].iloc[0]
    heavy = runs.loc[runs["url"] == HEAVY, LCP]
    assert row["std"] == pytest.approx(heavy.std())
    assert row["p90"] == pytest.approx(heavy.quantile(0.9))
    assert row["cv"] == pytest.approx(heavy.std() / heavy.mean() * 100)
    summary = summarize(runs, metrics="LCP")
    assert summary[f"{LCP}_cv"].tolist() == pytest.approx(
        tidy.loc[tidy["metric"] == LCP, "cv"].tolist()
    )


def test_grouping_defaults_and_bad_input(runs: pd.DataFrame) -> None:
    assert CELL == ("url", "device", "location", "connection", "flow", "step")
    whole = summarize(runs, by=[])
    assert len(whole) == 1
    assert whole.loc[0, "runs"] == 15
    assert len(summarize(runs.iloc[0:0])) == 0
    with pytest.raises(InvalidInputError,
                       match=r"aggregation: unknown 'p99': did you mean 'p90'\? \(valid: median"):
        summarize(runs, aggregation="p99")
    with pytest.raises(InvalidInputError, match="by: the frame has no column 'page'"):
        summarize(runs, by="page")
    with pytest.raises(InvalidInputError, match="unknown metric 'XYZ'"):
        describe(runs, metrics="XYZ")


# -- representative run ----------------------------------------------------------------------


def test_representative_run_is_lighthouses_choice_on_the_recorded_heavy_runs(
    runs: pd.DataFrame,
) -> None:
    # Hand-checked. Heavy runs (FCP, TTI in ms):
    #   row 1 (1343.2, 8144.2)  row 3 (908.6, 7757.6)  row 5 (1186.9, 7740.9)
    #   row 7 (949.9, 7654.9)   row 9 (985.0, 7658.0)
    # Medians: FCP 985.0 (row 9), TTI 7740.9 (row 5). Squared distances (ms^2): row 3
    # 76.3^2 + 16.7^2 = 6 109, row 9 0 + 82.9^2 = 6 874, row 7 8 617, row 5 40 768, row 1
    # 291 000. Lighthouse's computeMedianRun sorts by that sum: row 3. (A relative distance
    # would pick row 9: 0.0001 against 0.006.)
    heavy = runs[runs["url"] == HEAVY]
    assert heavy.loc[[1, 3, 5, 7, 9], FCP].round(1).tolist() == [
        1343.2, 908.6, 1186.9, 949.9, 985.0]
    assert representative_run(heavy) == 3
    summary = summarize(runs).set_index("url")
    assert summary.loc[HEAVY, "representative_id"] == runs.loc[3, "id"]
    assert summary.loc[HEAVY, "representative_report_url"] == runs.loc[3, "report_url"]
    reps = representative_runs(runs, ["url", "device"])
    assert reps.name == "representative"
    assert reps.loc[(HEAVY, "mobile")] == 3
    assert runs.loc[reps.dropna().tolist(), "id"].tolist() == summary["representative_id"].tolist()


def _cell(fcp: list[float], tti: list[float], status: list[str] | None = None) -> pd.DataFrame:
    return pd.DataFrame({
        "status": status or ["success"] * len(fcp), FCP: fcp, TTI: tti,
    }, index=[f"r{i}" for i in range(len(fcp))])


@pytest.mark.parametrize(("fcp", "tti", "status", "expected"), [
    # odd: the run at both medians
    ([300, 100, 500, 200, 400], [300, 100, 500, 200, 400], None, "r0"),
    # even (medians 300 / 300): 200 and 400 are equally close; the lower TTI wins
    ([400, 200, 100, 500], [400, 200, 100, 500], None, "r1"),
    # an FCP outlier does not pull the choice
    ([100, 380, 9000, 420, 500], [100, 260, 300, 400, 500], None, "r1"),
    # a TTI outlier neither
    ([100, 200, 300, 390, 500], [100, 200, 9000, 310, 500], None, "r3"),
    # identical runs: the earlier one
    ([500, 500, 500], [900, 900, 900], None, "r0"),
    # failed runs never count (the median is taken over successful runs only)
    ([1, 300, 200, 400], [1, 300, 200, 400], ["failed", "success", "success", "success"],
     "r1"),
    # a run without TTI is left out while others have one (Lighthouse's filterToValidRuns)
    ([300, 100, 500], [float("nan"), 100, 500], None, "r1"),
    # no TTI at all: FCP alone
    ([300, 100, 500], [float("nan")] * 3, None, "r0"),
    # nothing successful: no representative
    ([300, 100], [300, 100], ["failed", "failed"], None),
    # a value of 0 counts as missing, as Lighthouse's `numericValue || NaN` reads it (with the
    # 0 as a value the medians are 300 / 300 and r1 is chosen)
    ([100, 100, 500, 520], [0, 100, 500, 520], None, "r2"),
    # FCP 0 too (as a value: medians 305 / 305, r1); and with FCP 0 everywhere, none
    ([0, 300, 310, 900], [300, 300, 310, 900], None, "r2"),
    ([0, 0], [100, 200], None, None),
])
def test_representative_run_follows_compute_median_run(
    fcp: list[float], tti: list[float], status: list[str] | None, expected: str | None
) -> None:
    assert representative_run(_cell(fcp, tti, status)) == expected


# -- the bootstrap ---------------------------------------------------------------------------


def _synthetic(n_a: int, n_b: int, seed: int, shift: float = 1.1) -> pd.DataFrame:
    """Log-normal run times (median 1 000 ms for a, ``1000 * shift`` for b)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "page": ["a"] * n_a + ["b"] * n_b,
        "status": "success",
        LCP: np.concatenate([1000 * rng.lognormal(0, 0.2, n_a),
                             1000 * shift * rng.lognormal(0, 0.2, n_b)]),
    })


def test_bootstrap_interval_contains_the_true_difference() -> None:
    true_diff = 1000 * 1.1 - 1000
    result = compare(_synthetic(200, 200, seed=1), "page", "a", "b").iloc[0]
    assert result["ci_low"] < true_diff < result["ci_high"]
    assert result["verdict"] == "b is slower"
    # Coverage over many data sets is near the nominal 90 %.
    covered = 0
    for seed in range(100):
        row = compare(_synthetic(40, 40, seed=seed), "page", "a", "b", resamples=2000,
                      confidence=0.9).iloc[0]
        covered += row["ci_low"] <= true_diff <= row["ci_high"]
    assert 0.8 <= covered / 100 <= 0.98, covered


def test_same_seed_same_interval() -> None:
    data = _synthetic(30, 25, seed=3)
    first = compare(data, "page", "a", "b", seed=7)
    assert first.equals(compare(data, "page", "a", "b", seed=7))
    other = compare(data, "page", "a", "b", seed=8)
    assert (first["ci_low"].iloc[0], first["ci_high"].iloc[0]) != (
        other["ci_low"].iloc[0], other["ci_high"].iloc[0])
    # An interval does not depend on which other metrics are compared alongside.
    data["total_blocking_time"] = data[LCP] / 3
    both = compare(data, "page", "a", "b", seed=7).set_index("metric")
    assert both.loc[LCP, "ci_low"] == first["ci_low"].iloc[0]


def test_resampled_medians_match_the_index_matrix_median() -> None:
    # The exact sampler of the middle ranks draws from the same distribution as
    # np.median(values[idx], axis=1) over a (resamples x n) index matrix.
    from pagelab._bootstrap import bootstrap_median_ranks

    draws = 100_000
    for n in (2, 5, 6, 11):
        lo, hi = bootstrap_median_ranks(n, draws, np.random.default_rng(n))
        assert ((lo >= 0) & (lo <= hi) & (hi < n)).all()
        idx = np.sort(np.random.default_rng(100 + n).integers(0, n, (draws, n)), axis=1)
        ours = np.bincount(lo * n + hi, minlength=n * n) / draws
        reference = np.bincount(idx[:, (n - 1) // 2] * n + idx[:, n // 2], minlength=n * n)
        assert np.abs(ours - reference / draws).max() < 0.01, n


def test_cliffs_delta_and_significance_need_both_rules() -> None:
    # Non-overlapping sides: delta -1 / +1; a shift much smaller than the noise: ~0.
    data = _synthetic(50, 50, seed=5, shift=1.0)
    row = compare(data, "page", "a", "b").iloc[0]
    assert abs(row["effect_size"]) < 0.3
    assert row["verdict"] == "no significant difference"
    apart = pd.DataFrame({"page": ["a"] * 5 + ["b"] * 5, "status": "success",
                          "performance_score": [50, 51, 52, 53, 54, 90, 91, 92, 93, 94]})
    row = compare(apart, "page", "a", "b").iloc[0]
    assert row["effect_size"] == 1.0
    assert row["verdict"] == "b scores higher"
    row = compare(apart, "page", "b", "a").iloc[0]
    assert row["effect_size"] == -1.0
    assert row["verdict"] == "b scores lower"
    shifts = pd.DataFrame({"page": ["a"] * 6 + ["b"] * 6, "status": "success",
                           "cumulative_layout_shift": [0.01] * 6 + [0.3] * 6})
    assert compare(shifts, "page", "a", "b").loc[0, "verdict"] == "b is higher (worse)"


# -- history ---------------------------------------------------------------------------------


@pytest.fixture
def seeded_runner(tmp_path: Path, runs: pd.DataFrame) -> Iterator[pagelab.LocalRunner]:
    """A LocalRunner store holding the recorded runs 16 times over (240 tests, one a minute,
    the newest a minute ago), a desktop copy of the first 10 fast ones, and one failed test."""
    runner = pagelab.LocalRunner(tmp_path / "history")
    now = int(datetime.now(UTC).timestamp() * 1000)
    rows = runs.to_dict("records")
    with runner.store.connection() as conn, transaction(conn):
        for i in range(240):
            row = rows[i % len(rows)]
            created = now - (240 - i) * 60_000
            devices = [Device.MOBILE] + ([Device.DESKTOP] if i < 15 and row["url"] == FAST
                                         else [])
            for device in devices:
                test_id = create_test(
                    conn, url=row["url"], device=device, location=Location.US,
                    config=LighthouseConfig(), retention=runner.store.retention,
                    created_at=created,
                )
                finish_test(
                    conn, test_id, status=TestStatus.SUCCESS, lighthouse_version="13.5.0",
                    metrics=Metrics(**{n: None if pd.isna(row[n]) else row[n]
                                       for n in METRIC_NAMES}),
                    error=None, vantage="local", environment=None,
                )
        test_id = create_test(conn, url=FAST, device=Device.MOBILE, location=Location.DE,
                              config=LighthouseConfig(), retention=runner.store.retention,
                              created_at=now - 30_000)
        finish_test(conn, test_id, status=TestStatus.FAILED, lighthouse_version="13.5.0",
                    metrics=None, error=LighthouseError(code="TIMEOUT", message="x"),
                    vantage="local", environment=None, engine_failure=True)
    with runner:
        yield runner


def test_history_pages_through_and_filters(seeded_runner: pagelab.LocalRunner) -> None:
    everything = history(seeded_runner)
    assert len(everything) == 240 + 10 + 1  # three pages of 100
    assert list(everything.columns) == list(COLUMNS)
    assert everything["created_at"].is_monotonic_increasing
    assert everything["id"].is_unique

    mobile_fast = history(seeded_runner, url=FAST, device="mobile", location="us")
    assert len(mobile_fast) == 160
    assert set(mobile_fast["url"]) == {FAST}
    assert set(mobile_fast["device"]) == {"mobile"}
    assert len(history(seeded_runner, device=["desktop"])) == 10
    assert len(history(seeded_runner, location="de")) == 1
    assert len(history(seeded_runner, url=[FAST, HEAVY], location="us")) == 250

    newest = history(seeded_runner, url=HEAVY, limit=7)
    assert len(newest) == 7
    all_heavy = history(seeded_runner, url=HEAVY)
    assert newest["id"].tolist() == all_heavy["id"].tolist()[-7:]

    since = everything["created_at"].iloc[-11].to_pydatetime()
    until = everything["created_at"].iloc[-2].to_pydatetime()
    window = history(seeded_runner, since=since, until=until)
    assert window["created_at"].min() >= since
    assert window["created_at"].max() <= until
    assert len(window) == 10

    summary = summarize(history(seeded_runner, location="us"), by=["url", "device"])
    assert summary["runs"].tolist() == [160, 10, 80]
    assert summarize(history(seeded_runner, location="de")).loc[0, "engine_failures"] == 1


def test_history_reading_lives_with_the_runners(seeded_runner: pagelab.LocalRunner) -> None:
    # The runner I/O gives reports, oldest first; stats.history is their frame.
    from pagelab.runners import read_history

    reports = read_history(seeded_runner, url=HEAVY, limit=7)
    assert all(isinstance(report, pagelab.TestReport) for report in reports)
    assert [r.id for r in reports] == history(seeded_runner, url=HEAVY, limit=7)["id"].tolist()
    with pytest.raises(pagelab.InvalidInputError, match="device: unknown 'fridge'"):
        read_history(seeded_runner, device="fridge")


class _Listing:
    """A runner's ``list``, recording what each call asked for; with ``whole_seconds``, the
    times cut to whole seconds, as a server that reports seconds answers (the spec allows
    either unit)."""

    def __init__(self, runner: pagelab.LocalRunner, *, whole_seconds: bool = False) -> None:
        self.runner, self.whole_seconds = runner, whole_seconds
        self.asked: list[tuple[int, int | None]] = []

    def list(self, page: int = 1, per_page: int = 10, **bounds: Any) -> list[TestReport]:
        lte = bounds.get("created_at_lte")
        self.asked.append((page, lte))
        reports = self.runner.list(page, per_page, **bounds)
        if self.whole_seconds:
            reports = [r.model_copy(update={"created_at": r.created_at.replace(microsecond=0)})
                       for r in reports]
        return reports


def _store_tests(runner: pagelab.LocalRunner, created: list[int]) -> list[str]:
    """Tests of /fast created at these epoch ms, in this order; their ids."""
    with runner.store.connection() as conn, transaction(conn):
        return [create_test(conn, url=FAST, device=Device.MOBILE, location=Location.US,
                            config=LighthouseConfig(), retention=runner.store.retention,
                            created_at=at) for at in created]


def test_a_long_history_is_read_from_its_newest_end_each_time(tmp_path: Path) -> None:
    # Each request is a first page bounded by the oldest test read so far: numbered pages
    # made the store step over every test already read, for each page (quadratic: a
    # 50 000-test history took half a minute). 150 tests sharing one millisecond are more
    # than a page: there the bound cannot move, and the next page number is asked for.
    start = now_ms() - 3_600_000
    created = [start + i * 1000 for i in range(300)] + [start + 300_000] * 150 + [
        start + 301_000 + i * 1000 for i in range(120)]
    with pagelab.LocalRunner(tmp_path) as runner:
        ids = _store_tests(runner, created)
        listing = _Listing(runner)
        reports = read_history(listing, limit=10_000)  # type: ignore[arg-type]
    assert [r.id for r in reports] == ids  # each once, in creation order
    pages = [page for page, _ in listing.asked]
    assert pages.count(1) == len(pages) - 1, listing.asked  # one page 2: inside the tie
    bounds = [bound for _, bound in listing.asked[1:]]
    assert bounds == sorted(bounds, reverse=True)


def test_a_history_in_whole_seconds_loses_no_test(tmp_path: Path) -> None:
    # Three tests a second: a server reporting whole seconds hides where a page ended
    # inside its second; the next request reaches a second further and skips what it saw.
    start = now_ms() - 3_600_000
    created = [start + i * 333 for i in range(420)]
    with pagelab.LocalRunner(tmp_path) as runner:
        ids = _store_tests(runner, created)
        listing = _Listing(runner, whole_seconds=True)
        reports = read_history(listing, limit=10_000)  # type: ignore[arg-type]
        newest = read_history(_Listing(runner, whole_seconds=True), limit=250)  # type: ignore[arg-type]
    assert sorted(r.id for r in reports) == sorted(ids)
    assert len(reports) == len(ids)
    assert [r.id for r in newest] == ids[-250:]


def test_history_bad_input(seeded_runner: pagelab.LocalRunner) -> None:
    with pytest.raises(InvalidInputError, match="limit"):
        history(seeded_runner, limit=0)
    with pytest.raises(InvalidInputError, match=r"device: unknown 'watch' \(valid: mobile"):
        history(seeded_runner, device="watch")
    with pytest.raises(InvalidInputError, match="location: unknown 'mars'"):
        history(seeded_runner, location=["us", "mars"])
    with pytest.raises(InvalidInputError, match="created_at_gte"):
        history(seeded_runner, since="yesterday")  # type: ignore[arg-type]
    assert len(history(seeded_runner, device="iphone7")) == 0  # the service's alias


def test_stats_is_a_lazy_module() -> None:
    assert pagelab.stats.summarize is summarize
    assert "stats" in pagelab.__all__


# -- comparisons within cells (issue 20 item 2) ------------------------------------------------


def test_compare_stays_within_each_device_of_a_real_matrix() -> None:
    frame = matrix_2x2()  # real runs: /fast and /heavy on mobile and on desktop
    result = compare(frame, "url", FAST, HEAVY, metrics="LCP")
    assert result.attrs["within"] == ["device", "location"]
    assert result[["device", "location"]].astype(str).values.tolist() == [
        ["mobile", "us"], ["desktop", "us"]]
    lcp = frame[LCP]
    for row in result.itertuples():
        on = frame["device"] == row.device
        assert row.a_median == lcp[on & (frame["url"] == FAST)].median()
        assert row.b_median == lcp[on & (frame["url"] == HEAVY)].median()
        assert row.verdict == "b is slower"
    # No median pooled over both devices appears anywhere.
    pooled = {lcp[frame["url"] == url].median() for url in (FAST, HEAVY)}
    assert not pooled & set(result[["a_median", "b_median"]].to_numpy().ravel())
    assert (result["n_a"].tolist(), result["n_b"].tolist()) == ([10, 5], [5, 5])
    # Results.compare is the same comparison.
    from pagelab import Results

    same = Results.from_frame(frame).compare("url", FAST, HEAVY, metrics="LCP")
    pd.testing.assert_frame_equal(same, result)


def test_compare_pools_only_when_told_and_says_so() -> None:
    frame = matrix_2x2()
    pooled = compare(frame, "url", FAST, HEAVY, metrics="LCP", within=[])
    assert pooled.attrs["within"] == []
    assert "device" not in pooled.columns
    assert pooled.loc[0, "a_median"] == frame.loc[frame["url"] == FAST, LCP].median()
    assert pooled.loc[0, "note"] == "pooled over device (desktop, mobile)"
    device_only = compare(frame, "url", FAST, HEAVY, metrics="LCP", within="device")
    assert device_only.attrs["within"] == ["device"]
    assert len(device_only) == 2
    with pytest.raises(InvalidInputError, match="within: url is what a and b differ by"):
        compare(frame, "url", FAST, HEAVY, within=["url"])
    with pytest.raises(InvalidInputError, match="within: the frame has no column 'page'"):
        compare(frame, "url", FAST, HEAVY, within="page")


def test_compare_needs_a_shared_cell() -> None:
    frame = matrix_2x2()
    apart = frame[((frame["url"] == FAST) & (frame["device"] == "mobile"))
                  | ((frame["url"] == HEAVY) & (frame["device"] == "desktop"))]
    with pytest.raises(InvalidInputError, match=r"a and b share no cell.*within=\[\]"):
        compare(apart, "url", FAST, HEAVY)
    assert len(compare(apart, "url", FAST, HEAVY, metrics="LCP", within=[])) == 1


def test_compare_by_device_stays_within_each_url() -> None:
    frame = matrix_2x2()
    result = compare(frame, "device", "mobile", "desktop", metrics="LCP")
    assert result["url"].tolist() == [FAST, HEAVY]
    assert (result["verdict"] == "b is faster").all()


# -- exact p-values with ties (findings, statistics 1) -----------------------------------------


def _two_sides(a: list[float], b: list[float], metric: str = LCP) -> pd.DataFrame:
    return pd.DataFrame({"url": ["A"] * len(a) + ["B"] * len(b), metric: a + b})


def test_tied_small_samples_get_the_exact_p_value() -> None:
    # All five of a below all five of b: the smallest p-value 5 vs 5 allows is 2 / 252.
    result = compare(_two_sides([700.0] * 5, [800.0] * 5), "url", "A", "B")
    assert result.loc[0, "p_value"] == pytest.approx(2 / 252)
    # Identical up to one run: nothing at all to tell apart.
    score = compare(_two_sides([100.0] * 5, [100, 100, 100, 98, 100], "performance_score"),
                    "url", "A", "B")
    assert score.loc[0, "p_value"] == 1.0
    # The finding's TBT example: the normal approximation said p = 0.034, "b is faster".
    tbt = compare(_two_sides([1, 1, 1, 0, 1, 1], [0, 0, 0, 0, 1, 0], TBT), "url", "A", "B")
    assert tbt.loc[0, "p_value"] == pytest.approx(0.0800866, abs=1e-6)
    assert tbt.loc[0, "verdict"] == "no significant difference"


def test_exact_p_value_agrees_with_scipy() -> None:
    from scipy.stats import mannwhitneyu, permutation_test

    def u(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.asarray(mannwhitneyu(x, y, axis=axis).statistic)

    rng = np.random.default_rng(7)
    for n_a, n_b in ((5, 5), (5, 8), (7, 6), (10, 12)):
        for tied in (False, True) if n_a + n_b < 20 else (False,):
            a = rng.normal(1000, 100, n_a)
            b = rng.normal(1080, 100, n_b)
            if tied:
                a, b = np.round(a, -2), np.round(b, -2)
            p = compare(_two_sides(a.tolist(), b.tolist()), "url", "A", "B").loc[0, "p_value"]
            if tied:  # scipy's exact conditional distribution: every split of the runs
                want = permutation_test((a, b), u, permutation_type="independent",
                                        vectorized=True, n_resamples=np.inf).pvalue
            else:
                want = mannwhitneyu(a, b, method="exact").pvalue
            assert p == pytest.approx(want, rel=1e-9), (n_a, n_b, tied)
    # Past the exact range, scipy's normal approximation.
    a, b = rng.normal(1000, 100, 40), rng.normal(1050, 100, 40)
    p = compare(_two_sides(a.tolist(), b.tolist()), "url", "A", "B").loc[0, "p_value"]
    assert p == pytest.approx(mannwhitneyu(a, b, method="asymptotic").pvalue)


# -- intervals from few runs, edge values (findings, statistics 2 and 4) ------------------------


def test_interval_from_few_runs_carries_a_note(runs: pd.DataFrame) -> None:
    three = compare(runs[runs["run"] < 3], "url", FAST, HEAVY, metrics="LCP")
    assert three.loc[0, "ci_low"] == three.loc[0, "ci_low"]  # shown
    assert "covers less than its confidence" in three.loc[0, "note"]
    five = compare(runs, "url", FAST, HEAVY, metrics="LCP")
    assert five.loc[0, "note"] == ""


def test_infinite_values_are_refused_everywhere() -> None:
    frame = pd.DataFrame({"url": ["A"] * 5 + ["B"] * 5,
                          LCP: [1.0, 2.0, np.inf, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]})
    for call in (lambda: describe(frame), lambda: summarize(frame),
                 lambda: compare(frame, "url", "A", "B")):
        with pytest.raises(InvalidInputError, match=r"largest_contentful_paint holds 1 infinite"
                                                     r" or overflowing value \(rows 2\)"):
            call()
    huge = frame.assign(**{LCP: [1e308] * 10})
    with pytest.raises(InvalidInputError, match="overflowing"):
        describe(huge)
