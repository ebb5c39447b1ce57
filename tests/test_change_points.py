"""pagelab.stats.change_points on synthetic histories (no engine): seeded series of runs with
known levels, in the wide frame's shape (one row per run, a commit per build)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest

import pagelab
from pagelab.stats import change_points

RUNS = 5


def history(levels: Sequence[float], *, cv: float = 0.03, runs: int = RUNS, seed: int = 1,
            url: str = "https://example.test/") -> pd.DataFrame:
    """One build per level (commit ``c000``, ``c001``...), ``runs`` runs each, LCP normally
    spread around the level with the coefficient of variation ``cv``; builds an hour apart,
    rows shuffled (the order comes from ``created_at``, not from the rows)."""
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2026-01-01", tz="UTC")
    rows = [
        {"url": url, "device": "desktop", "status": "success", "commit": f"c{build:03d}",
         "created_at": start + pd.Timedelta(hours=build, seconds=run),
         "largest_contentful_paint": level * (1 + cv * rng.standard_normal())}
        for build, level in enumerate(levels) for run in range(runs)
    ]
    frame = pd.DataFrame(rows)
    return frame.sample(frac=1, random_state=seed).reset_index(drop=True)


def test_a_step_of_ten_percent_is_found_at_its_build() -> None:
    frame = history([1000.0] * 20 + [1100.0] * 20)
    changes = change_points(frame, metric="LCP")
    assert len(changes) == 1
    change = changes.iloc[0]
    assert (change["commit"], change["previous_commit"]) == ("c020", "c019")
    assert change["metric"] == "largest_contentful_paint"
    assert change["url"] == "https://example.test/"
    assert change["direction"] == "regression"
    assert change["before"] == pytest.approx(1000, rel=0.02)
    assert change["after"] == pytest.approx(1100, rel=0.02)
    assert change["rel_change"] == pytest.approx(10, abs=2)
    assert change["ci_low"] < change["diff"] < change["ci_high"]
    assert change["ci_low"] > 0
    assert 0 <= change["p_value"] < 0.05


def test_a_faster_page_is_an_improvement() -> None:
    changes = change_points(history([1000.0] * 15 + [900.0] * 15), metric="LCP")
    assert changes["direction"].tolist() == ["improvement"]
    assert changes["commit"].tolist() == ["c015"]


@pytest.mark.parametrize("seed", range(5))
def test_an_unchanged_history_has_no_change(seed: int) -> None:
    assert change_points(history([1000.0] * 60, cv=0.1, seed=seed), metric="LCP").empty


def test_two_steps_are_both_found() -> None:
    frame = history([1000.0] * 15 + [1100.0] * 15 + [1000.0] * 15)
    changes = change_points(frame, metric="LCP")
    assert changes["commit"].tolist() == ["c015", "c030"]
    assert changes["previous_commit"].tolist() == ["c014", "c029"]
    assert changes["direction"].tolist() == ["regression", "improvement"]


def test_cells_are_searched_apart() -> None:
    frame = pd.concat([
        history([1000.0] * 20 + [1200.0] * 20, url="https://example.test/a"),
        history([500.0] * 40, url="https://example.test/b", seed=2),
    ])
    changes = change_points(frame, metric="largest_contentful_paint")
    assert changes["url"].tolist() == ["https://example.test/a"]


def test_failed_runs_and_runs_without_commit_are_left_out() -> None:
    frame = history([1000.0] * 20 + [1100.0] * 20)
    extra = frame.iloc[:10].copy()
    extra["largest_contentful_paint"] = 50_000.0
    extra.loc[extra.index[:5], "status"] = "failed"
    extra.loc[extra.index[5:], "commit"] = None
    changes = change_points(pd.concat([frame, extra], ignore_index=True), metric="LCP")
    assert changes["commit"].tolist() == ["c020"]


def test_the_answer_is_deterministic() -> None:
    frame = history([1000.0] * 20 + [1100.0] * 20)
    pd.testing.assert_frame_equal(change_points(frame, metric="LCP"),
                                  change_points(frame, metric="LCP"))


def test_every_metric_column_by_default() -> None:
    frame = history([1000.0] * 20 + [1100.0] * 20)
    frame["performance_score"] = 90.0
    changes = change_points(frame)
    assert changes["metric"].tolist() == ["largest_contentful_paint"]


def test_a_missing_metric_column_is_a_clear_error() -> None:
    with pytest.raises(pagelab.InvalidInputError, match="no 'total_blocking_time' column"):
        change_points(history([1000.0] * 10), metric="TBT")
    with pytest.raises(pagelab.InvalidInputError, match="metric"):
        change_points(history([1000.0] * 10), metric="speed")


def test_a_frame_without_commits_is_a_clear_error() -> None:
    with pytest.raises(pagelab.InvalidInputError, match="no run has a commit"):
        change_points(history([1000.0] * 10).drop(columns="commit"), metric="LCP")
    # Runs stored without their build: the column is there, empty.
    with pytest.raises(pagelab.InvalidInputError, match="no run has a commit"):
        change_points(history([1000.0] * 10).assign(commit=None), metric="LCP")


def test_an_empty_history_has_no_change() -> None:
    assert change_points(history([1000.0] * 10).iloc[:0], metric="LCP").empty


def test_a_full_hash_is_shown_short() -> None:
    from pagelab._change_points import short_commit

    assert short_commit("0123456789abcdef0123456789abcdef01234567") == "0123456"
    assert short_commit("v1.2.0") == "v1.2.0"


@pytest.mark.parametrize("alpha", [0, 1, "0.05", True])
def test_alpha_outside_zero_to_one_is_a_clear_error(alpha: object) -> None:
    with pytest.raises(pagelab.InvalidInputError, match="alpha"):
        change_points(history([1000.0] * 10), metric="LCP", alpha=alpha)  # type: ignore[arg-type]


def test_a_short_level_between_two_others_is_found() -> None:
    """A regression fixed three builds later: a split in two alone sees two alike sides."""
    frame = history([1000.0] * 10 + [1200.0] * 3 + [1000.0] * 10, runs=3)
    changes = change_points(frame, metric="LCP")
    assert changes["commit"].tolist() == ["c010", "c013"]


def test_a_higher_score_is_an_improvement() -> None:
    frame = history([80.0] * 20 + [90.0] * 20).rename(
        columns={"largest_contentful_paint": "performance_score"})
    changes = change_points(frame, metric="performance_score")
    assert changes["direction"].tolist() == ["improvement"]


def test_results_changes_is_change_points_of_its_frame() -> None:
    frame = history([1000.0] * 20 + [1100.0] * 20).assign(location="us")
    results = pagelab.Results.from_frame(frame)
    pd.testing.assert_frame_equal(results.changes(), change_points(frame))
    pd.testing.assert_frame_equal(results.changes("LCP", alpha=0.01),
                                  change_points(frame, "LCP", alpha=0.01))
    assert results.changes()["commit"].tolist() == ["c020"]


def test_results_changes_has_the_default_alpha_of_change_points() -> None:
    # Written out in Results (its module loads no pandas), pinned here.
    import inspect

    from pagelab._change_points import ALPHA

    for function in (pagelab.Results.changes, change_points):
        assert inspect.signature(function).parameters["alpha"].default == ALPHA


def test_results_without_builds_say_so() -> None:
    from recorded_runs import matrix_frame

    with pytest.raises(pagelab.InvalidInputError, match="no run has a commit"):
        pagelab.Results.from_frame(matrix_frame()).changes()


def whole_ms_history(levels: Sequence[float]) -> pd.DataFrame:
    """Runs as Lighthouse reports an observed time on loopback: whole milliseconds, each
    build's 3 runs at its level plus 0-2 ms (the real engine test's 500 ms TTFB level)."""
    frame = history(levels, cv=0.0, runs=3)
    jitter = np.random.default_rng(7).integers(0, 3, len(frame))
    frame["largest_contentful_paint"] = frame["largest_contentful_paint"].round() + jitter
    return frame


def test_a_consistent_shift_under_min_change_is_no_change() -> None:
    """Ranks see order, not size: a 1 ms step on a 500 ms level whose runs vary by 2 ms is
    as significant as a 250 ms one. Seen on the real engine (tests/test_history_engine.py)."""
    frame = whole_ms_history([250.0] * 7 + [500.0] * 6 + [501.0] * 7)
    frame.loc[frame["commit"] >= "c013", "largest_contentful_paint"] += 3
    assert change_points(frame, metric="LCP", min_change=0, min_diff=0)["commit"].tolist() == [
        "c007", "c013"]
    # Each floor alone holds it back: 3 ms is 0.6 % of the level, and under 10 ms.
    assert change_points(frame, metric="LCP", min_diff=0)["commit"].tolist() == ["c007"]
    assert change_points(frame, metric="LCP", min_change=0)["commit"].tolist() == ["c007"]
    changes = change_points(frame, metric="LCP")
    assert changes["commit"].tolist() == ["c007"]
    assert changes["after"].iloc[0] == pytest.approx(502, abs=3)


def test_a_change_from_zero_is_large_enough_above_the_metric_s_floor() -> None:
    frame = history([0.0] * 10 + [40.0] * 10, cv=0.0)
    assert change_points(frame, metric="LCP")["commit"].tolist() == ["c010"]
    # From 0 to 5 ms: infinitely many percent, but under 10 ms.
    frame = history([0.0] * 10 + [5.0] * 10, cv=0.0)
    assert change_points(frame, metric="LCP").empty
    assert change_points(frame, metric="LCP", min_diff=0)["commit"].tolist() == ["c010"]


def test_a_loaded_machine_s_few_ms_of_ttfb_are_no_change() -> None:
    """An unchanged page's TTFB on loopback, measured on the real engine while a CPU hog ran
    over builds 6-12 (docs/history.md): 0-2 ms, then 0-13 ms, then 0-2 ms again. The shift
    is real (p < 0.001 both ways) and +300 %, but a few ms: no change worth reporting."""
    ttfb = [[1, 1, 0], [1, 1, 2], [1, 0, 1], [0, 1, 1], [0, 1, 2], [12, 12, 2], [8, 7, 4],
            [2, 4, 1], [2, 2, 0], [9, 4, 2], [2, 13, 1], [12, 13, 8], [2, 1, 2], [1, 1, 1],
            [0, 1, 2], [1, 1, 1], [2, 1, 1], [1, 0, 1], [1, 0, 0], [1, 1, 1]]
    frame = history([1.0] * len(ttfb), cv=0.0, runs=3).sort_values("created_at")
    frame["server_response_time"] = [float(v) for build in ttfb for v in build]
    assert change_points(frame, metric="TTFB").empty
    raw = change_points(frame, metric="TTFB", min_diff=0)
    assert raw["direction"].tolist() == ["regression", "improvement"]
    assert (raw["p_value"] < 0.001).all()


@pytest.mark.parametrize("min_change", [-0.1, "2%", True, float("inf")])
def test_min_change_must_be_a_fraction(min_change: object) -> None:
    with pytest.raises(pagelab.InvalidInputError, match="min_change"):
        change_points(history([1000.0] * 10), metric="LCP",
                      min_change=min_change)  # type: ignore[arg-type]


@pytest.mark.parametrize("min_diff", [-1, "10ms", True, float("inf"), float("nan")])
def test_min_diff_must_be_an_amount_of_the_metric_s_unit(min_diff: object) -> None:
    with pytest.raises(pagelab.InvalidInputError, match="min_diff: expected the smallest"):
        change_points(history([1000.0] * 10), metric="LCP",
                      min_diff=min_diff)  # type: ignore[arg-type]


def test_each_metric_has_its_floor() -> None:
    from pagelab.models import METRICS, metric

    floors = {m.label: m.smallest_change for m in METRICS.values()}
    assert floors == {"CLS": 0.01, "FCP": 10, "FMP": 10, "TTI": 10, "LCP": 10, "TTFB": 10,
                      "SI": 10, "TBT": 10, "Score": 1, "INP": 10}
    assert metric("user_timing:app-ready").smallest_change == 10


def test_a_change_is_placed_by_the_runs_values() -> None:
    """Seeded so that the split with the largest rank-sum z is a build early: the runs'
    logs' distances to the levels either side (nearly the most likely split) place it at
    its build."""
    frame = history([1000.0] * 15 + [1100.0] * 15, runs=3, seed=184)
    assert change_points(frame, metric="LCP")["commit"].tolist() == ["c015"]


def test_a_change_cut_either_side_is_one_change() -> None:
    """Seeded so that binary segmentation cuts two builds before the step up as well as at
    it (a short level of mixed runs between): the step on a step is one change."""
    frame = history([1000.0] * 8 + [1200.0] * 4 + [1000.0] * 10, runs=3, seed=211)
    assert change_points(frame, metric="LCP")["commit"].tolist() == ["c008", "c012"]


def test_a_slow_run_next_to_a_change_does_not_move_it() -> None:
    """One run of the build before a step five times slower: seeded so that ranks (the
    slow run ranked above every other) place the step a build early."""
    frame = history([1000.0] * 20 + [1100.0] * 20, runs=3, seed=10)
    frame.loc[frame.index[frame["commit"] == "c019"][0], "largest_contentful_paint"] = 5000.0
    assert change_points(frame, metric="LCP")["commit"].tolist() == ["c020"]


def test_a_regression_stays_open_until_its_level_is_restored() -> None:
    from pagelab._change_points import open_regressions

    def still_open(levels: list[float]) -> list[str]:
        changes = change_points(history(levels, cv=0.005), metric="LCP")
        return open_regressions(changes)["commit"].tolist()

    assert still_open([1000.0] * 8 + [1300.0] * 8) == ["c008"]
    # 50 ms back of a 300 ms regression: an improvement, and the regression still open.
    assert still_open([1000.0] * 8 + [1300.0] * 8 + [1250.0] * 8) == ["c008"]
    assert still_open([1000.0] * 8 + [1300.0] * 8 + [1000.0] * 8) == []
    # Two steps up, then back to the first: the page is slower since the first step.
    assert still_open([1000.0] * 8 + [1300.0] * 8 + [1600.0] * 8 + [1300.0] * 8) == ["c008"]
    assert still_open([1000.0] * 8 + [1300.0] * 8 + [1600.0] * 8) == ["c008"]
    # Fixed, then slower again: open since the second time.
    assert still_open([1000.0] * 8 + [1300.0] * 8 + [1000.0] * 8 + [1300.0] * 8) == ["c024"]
    # Back to within the floors (2 %, 10 ms) of the level before: restored.
    assert still_open([1000.0] * 8 + [1300.0] * 8 + [1015.0] * 8) == []
    assert still_open([1300.0] * 8 + [1000.0] * 8) == []  # an improvement is never open


def test_the_scan_s_bound_holds_where_nothing_changed_and_is_below_bonferroni() -> None:
    """Worsley's bound (``_p``) over the splits of 20 builds of 3 runs: at the z it puts at
    5 %, at most 5 % of 4 000 seeded rearrangements of the runs reach it (none changed),
    and Bonferroni's correction puts that z above 5 %."""
    from scipy.optimize import brentq
    from scipy.special import ndtr

    from pagelab._change_points import _p, _ranks, _splits, _z

    offsets = np.arange(21) * 3
    starts, stops, parents = _splits(offsets, 4)
    inside = offsets[stops] - offsets[starts]
    threshold = brentq(lambda z: _p(z, inside, parents, 60) - 0.05, 2.0, 6.0)
    rng = np.random.default_rng(0)
    largest = []
    for _ in range(4_000):
        cumulative, squares = _ranks(rng.permutation(60).astype(float))
        largest.append(_z(inside.astype(float), cumulative[offsets[stops]]
                          - cumulative[offsets[starts]], 60, squares).max())
    assert np.mean(np.array(largest) >= threshold) <= 0.05
    assert 2 * ndtr(-threshold) * inside.size > 0.05
