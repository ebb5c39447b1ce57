"""Statistics over the wide frame: aggregation per cell, the representative run, A/B
comparison, its explanation and history.

Plain functions on the wide frame of :func:`pagelab.frames.to_frame` (one row per run). A
*cell* is one combination of the grouping columns, by default :data:`CELL` (URL x device x
location x connection). Only successful runs (``status == "success"``) enter the statistics;
``runs``, ``failed`` and ``engine_failures`` count every run. A cell without a successful run
gets NaN values and no representative run. Metric facts (units, which way is better) come
from the metric registry, :data:`pagelab.models.METRICS`. Decisions: ``docs/analysis.md``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from pagelab._bootstrap import Bootstrap
from pagelab._cells import cell_columns
from pagelab._change_points import change_points
from pagelab._exceptions import InvalidInputError
from pagelab._explain import Explanation, cell_name, explain_runs
from pagelab._history import PagedTests, read_history
from pagelab._public import publish, renamed_keyword
from pagelab.frames import to_frame
from pagelab.models import (
    METRIC_NAMES,
    METRICS,
    Metric,
    TimeInput,
    metric,
    metric_columns,
    mode_measures,
    unknown_metric,
    unknown_value,
)

__all__ = [
    "AGGREGATIONS",
    "MIN_RUNS",
    "Explanation",
    "change_points",
    "compare",
    "describe",
    "explain",
    "history",
    "representative_run",
    "representative_runs",
    "summarize",
]

#: What :func:`summarize` can put in a metric column (``p75``/``p90``: linear percentiles;
#: ``representative``: the metric values of the cell's representative run).
AGGREGATIONS: tuple[str, ...] = ("median", "mean", "p75", "p90", "min", "max", "representative")

#: Shown beside an interval from 2 to _COVERING_RUNS - 1 runs on a side: the percentile
#: bootstrap of a median then covers the true difference far less often than it says
#: (measured: 66 % at 2 runs a side, 90 % at 3, 93 % at 4 for a nominal 95 %;
#: docs/analysis.md).
_COVERING_RUNS = 5
_FEW_RUNS_NOTE = (f"interval from under {_COVERING_RUNS} runs a side: covers less than its "
                  "confidence")
_NO_DIFFERENCE = "no significant difference"
#: The exact (permutation) p-value is used while the smaller side has at most this many
#: runs and both sides together at most _EXACT_MAX_TOTAL; above, the normal approximation
#: with tie and continuity corrections (scipy's) is already close.
_EXACT_MAX_SMALLER = 10
_EXACT_MAX_TOTAL = 60
#: Metric values must be finite and below this in magnitude: squares and sums of values
#: (std, mean, the median of two) then never overflow.
_MAX_MAGNITUDE = 1e100

_FCP = "first_contentful_paint"
_TTI = "time_to_interactive"
#: The tidy frames' ``metric`` dtype, as in :func:`pagelab.frames.to_long`.
_METRIC_DTYPE = pd.CategoricalDtype(list(METRIC_NAMES))


def _metric_dtype(names: Iterable[str]) -> pd.CategoricalDtype:
    """:data:`_METRIC_DTYPE`, with the user timings among ``names`` after the nine."""
    extra = [n for n in names if n not in METRICS]
    return pd.CategoricalDtype([*METRIC_NAMES, *extra]) if extra else _METRIC_DTYPE
_STATS = ("median", "mean", "p75", "p90", "min", "max", "std")


# -- how many runs can decide ----------------------------------------------------------------
# The one computation of it, for compare, the gate, baselines and runs=auto; outside
# __all__ (the public API stays at most 200 names): users see MIN_RUNS and the verdicts.


def smallest_p_value(n_a: int, n_b: int) -> float:
    """The smallest two-sided p-value the exact rank-sum test (Mann-Whitney U) can give for
    ``n_a`` against ``n_b`` runs: the two sides wholly apart, no ties, one of the
    ``C(n_a + n_b, n_a)`` equally likely splits at each end: ``2 / C(n_a + n_b, n_a)``,
    capped at 1 (1 when a side has no run). Ties only raise it."""
    if n_a < 1 or n_b < 1:
        return 1.0
    return min(1.0, 2 / math.comb(n_a + n_b, n_a))


def min_runs(alpha: float = 0.05, against: int | None = None) -> int:
    """The fewest runs on one side that can show a difference at ``alpha`` (a p-value below
    it, :func:`smallest_p_value`) against ``against`` runs on the other side, or against as
    many runs (``None``): 4 at 0.05, 5 at 0.01; against a 3-run baseline, 5 at 0.05."""
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise InvalidInputError(f"alpha: expected a number between 0 and 1, got {alpha!r}")
    if against is not None and (isinstance(against, bool) or not isinstance(against, int)
                                or against < 1):
        raise InvalidInputError(f"against: expected a positive number of runs, got {against!r}")

    def enough(n: int) -> bool:
        return smallest_p_value(n, n if against is None else against) < alpha

    high = 1
    while not enough(high):  # doubling, then halving: a p-value of 1e-9 needs 2e9 runs
        high *= 2
    low = high // 2  # not enough (or 0)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high


def too_few_runs(n_a: int, n_b: int, alpha: float) -> str | None:
    """Why ``n_a`` against ``n_b`` runs can never give a p-value below ``alpha``, or None
    when they can: ``3 vs 4 runs cannot show a difference at alpha 0.05: at least 4 a
    side``, the verdict :func:`compare` gives and the gate's reason."""
    if smallest_p_value(n_a, n_b) < alpha:
        return None
    return (f"{n_a} vs {n_b} runs cannot show a difference at alpha {alpha:.2g}: at least "
            f"{min_runs(alpha)} a side")


#: The fewest runs a side that can show a difference at :func:`compare`'s default
#: confidence (0.95): 4, where 4 against 4 reaches p = 0.029 in one order only and 3
#: against 3 never goes below 0.1. :func:`min_runs` gives it for any level.
MIN_RUNS = min_runs(0.05)


# -- input checks ----------------------------------------------------------------------------


def _check_frame(frame: object) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise InvalidInputError(
            "frame: expected the wide DataFrame of runs (pagelab.frames.to_frame), "
            f"got {type(frame).__name__}"
        )
    return frame


def _metric_names(metrics: str | Iterable[str] | None, frame: pd.DataFrame) -> list[str]:
    """Spec names of the requested metrics (names or labels such as ``LCP``), in given order."""
    if metrics is None:
        return metric_columns(frame.columns)
    items = [metrics] if isinstance(metrics, str) else list(metrics)
    names: list[str] = []
    for item in items:
        found = _lookup_metric(item)
        if found.name not in frame.columns:
            raise InvalidInputError(f"metrics: the frame has no {found.name!r} column")
        if found.name not in names:
            names.append(found.name)
    if not names:
        raise InvalidInputError(f"metrics: name at least one of {', '.join(METRIC_NAMES)}")
    return names


def _lookup_metric(item: object) -> Metric:
    if isinstance(item, str):
        try:
            return metric(item)
        except KeyError:
            pass
    raise InvalidInputError(f"metrics: {unknown_metric(item)}")


def _by_columns(by: str | Sequence[str] | None, frame: pd.DataFrame,
                what: str = "by") -> list[str]:
    """The grouping columns; the default is the :data:`CELL` columns holding any value."""
    if by is None:
        return cell_columns(frame)
    if isinstance(by, str):
        columns: list[Any] = [by]
    elif isinstance(by, Sequence):
        columns = list(by)
    else:
        raise InvalidInputError(f"{what}: expected a column name or a list of them, got {by!r}")
    for column in columns:
        if not isinstance(column, str) or column not in frame.columns:
            valid = ", ".join(map(str, frame.columns))
            raise InvalidInputError(f"{what}: the frame has no column {column!r}; valid: {valid}")
    return list(dict.fromkeys(columns))


def _successful(frame: pd.DataFrame) -> np.ndarray:
    """Which rows are successful runs (a frame without ``status``: every row)."""
    if "status" not in frame.columns:
        return np.ones(len(frame), dtype=bool)
    return (frame["status"].astype("string") == "success").fillna(False).to_numpy(dtype=bool)


def _flag(frame: pd.DataFrame, column: str, value: object = True) -> np.ndarray:
    if column not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    series = frame[column]
    if value is True:
        return series.astype("boolean").fillna(False).to_numpy(dtype=bool)
    return (series.astype("string") == value).fillna(False).to_numpy(dtype=bool)


def _check_values(frame: pd.DataFrame, names: Iterable[str]) -> None:
    """Refuse infinite or overflowing metric values (what no measurement gives), naming the
    column and the rows, instead of statistics that come out as inf or NaN."""
    for name in names:
        values = _values(frame, name)
        bad = np.flatnonzero(np.abs(np.nan_to_num(values, nan=0.0)) >= _MAX_MAGNITUDE)
        if bad.size:
            rows = ", ".join(map(str, frame.index[bad[:5]])) + (", ..." if bad.size > 5 else "")
            raise InvalidInputError(
                f"frame: {name} holds {bad.size} infinite or overflowing value"
                f"{'s' if bad.size != 1 else ''} (rows {rows}); metric values must be finite "
                f"and below {_MAX_MAGNITUDE:g}: drop or fix those runs"
            )


def _values(frame: pd.DataFrame, name: str) -> np.ndarray:
    if name not in frame.columns:
        return np.full(len(frame), np.nan)
    return pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=float, na_value=np.nan)


# -- cells -----------------------------------------------------------------------------------


def _cells(frame: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Each row's cell number and the cells' key values (one row per cell, sorted; a
    missing key value forms its own cell, last)."""
    if not keys:
        return np.zeros(len(frame), dtype=np.intp), pd.DataFrame(index=range(min(len(frame), 1)))
    codes = (
        frame.groupby(keys, observed=True, dropna=False, sort=True)
        .ngroup()
        .to_numpy(dtype=np.intp)
    )
    first = np.flatnonzero(~pd.Series(codes).duplicated().to_numpy())
    cells = frame[keys].iloc[first[np.argsort(codes[first], kind="stable")]]
    return codes, cells.reset_index(drop=True)


def _representative_position(fcp: np.ndarray, tti: np.ndarray) -> int | None:
    """Lighthouse's ``computeMedianRun`` on one cell's successful runs (positions given).

    Among the runs with both values, the smallest squared distance to the median FCP and the
    median TTI (ms), ties broken by the lower TTI, then the earlier run. Without any TTI, FCP
    alone; without any FCP, no representative run. A value of 0 is missing, as Lighthouse
    reads it (``numericValue || NaN``): no page paints at 0 ms, so a 0 is a broken run.
    """
    has_fcp = np.isfinite(fcp) & (fcp != 0)
    both = has_fcp & np.isfinite(tti) & (tti != 0)
    if both.any():
        candidates = np.flatnonzero(both)
        f, t = fcp[candidates], tti[candidates]
        distance = (np.median(f) - f) ** 2 + (np.median(t) - t) ** 2
        # np.lexsort: the last key is the primary one.
        return int(candidates[np.lexsort((candidates, t, distance))[0]])
    if has_fcp.any():
        candidates = np.flatnonzero(has_fcp)
        f = fcp[candidates]
        return int(candidates[np.lexsort((candidates, (np.median(f) - f) ** 2))[0]])
    return None


def _representatives(frame: pd.DataFrame, codes: np.ndarray, n_cells: int) -> list[int | None]:
    """Position (in ``frame``) of each cell's representative run, None without one."""
    ok = np.flatnonzero(_successful(frame))
    fcp, tti = _values(frame, _FCP)[ok], _values(frame, _TTI)[ok]
    out: list[int | None] = [None] * n_cells
    cell_of = codes[ok]
    order = np.argsort(cell_of, kind="stable")
    bounds = np.searchsorted(cell_of[order], np.arange(n_cells + 1))
    for cell in range(n_cells):
        members = order[bounds[cell]:bounds[cell + 1]]
        position = _representative_position(fcp[members], tti[members])
        out[cell] = None if position is None else int(ok[members[position]])
    return out


def _cell_stats(
    frame: pd.DataFrame, names: list[str], codes: np.ndarray, n_cells: int
) -> dict[str, pd.DataFrame]:
    """Per statistic, a (cell x metric) frame over the successful runs; ``n`` counts values,
    ``cv`` is the coefficient of variation in percent."""
    ok = _successful(frame)
    values = pd.DataFrame({name: _values(frame, name)[ok] for name in names})
    grouped = values.groupby(codes[ok], sort=True)
    cells = pd.RangeIndex(n_cells)
    out = {
        "median": grouped.median(),
        "mean": grouped.mean(),
        "p75": grouped.quantile(0.75),
        "p90": grouped.quantile(0.9),
        "min": grouped.min(),
        "max": grouped.max(),
        "std": grouped.std(ddof=1),
        "n": grouped.count(),
    }
    out = {key: table.reindex(index=cells, columns=names) for key, table in out.items()}
    out["n"] = out["n"].fillna(0).astype("int64")
    std, mean, n = out["std"], out["mean"], out["n"]
    # Sample standard deviation over the mean; 0 when every value is the same (also all 0).
    cv = (std / mean.abs() * 100).where(std != 0, 0.0)
    out["cv"] = cv.where(n >= 2)
    return out


# -- summarize / describe --------------------------------------------------------------------


def summarize(
    frame: pd.DataFrame,
    by: str | Sequence[str] | None = None,
    aggregation: str = "median",
    metrics: str | Iterable[str] | None = None,
    *,
    agg: str | None = None,
) -> pd.DataFrame:
    """One row per cell: its runs and one aggregated value per metric.

    Columns: the ``by`` columns (default: the :data:`CELL` columns holding any value),
    ``runs`` (every run), ``failed`` (status failed), ``engine_failures`` (the engine, not the
    page, failed), ``noisy`` (runs measured on a machine unfit to measure, by the engine's
    fitness rule; only when the frame has runs that were judged), one column per metric
    (spec name; ms, CLS unitless, score 0-100) with the ``aggregation`` of its successful
    runs (one of :data:`AGGREGATIONS`), one
    ``<metric>_cv`` column per metric (coefficient of variation, percent),
    ``representative_id`` and ``representative_report_url`` (the run Lighthouse's
    ``computeMedianRun`` would pick). ``agg`` is the deprecated spelling of ``aggregation``.
    """
    aggregation = renamed_keyword("agg", agg, "aggregation", aggregation)
    frame = _check_frame(frame)
    keys = _by_columns(by, frame)
    names = _metric_names(metrics, frame)
    if aggregation not in AGGREGATIONS:
        raise InvalidInputError(
            f"aggregation: {unknown_value(aggregation, AGGREGATIONS)}")
    _check_values(frame, names)
    codes, cells = _cells(frame, keys)
    n_cells = len(cells)
    stats = _cell_stats(frame, names, codes, n_cells)
    chosen = _representatives(frame, codes, n_cells)
    out = cells.copy()
    out["runs"] = np.bincount(codes, minlength=n_cells).astype("int64")
    for column, mask in (
        ("failed", _flag(frame, "status", "failed")),
        ("engine_failures", _flag(frame, "engine_failure")),
    ):
        out[column] = np.bincount(codes, weights=mask, minlength=n_cells).astype("int64")
    if "noisy" in frame.columns and frame["noisy"].notna().any():
        out["noisy"] = np.bincount(codes, weights=_flag(frame, "noisy"),
                                   minlength=n_cells).astype("int64")
    if aggregation == "representative":
        for name in names:
            values = _values(frame, name)
            out[name] = [np.nan if p is None else float(values[p]) for p in chosen]
    else:
        for name in names:
            out[name] = stats[aggregation][name].to_numpy(dtype=float)
    for name in names:
        out[f"{name}_cv"] = stats["cv"][name].to_numpy(dtype=float)
    for column, source in (("representative_id", "id"),
                           ("representative_report_url", "report_url")):
        texts = frame[source].to_numpy(dtype=object) if source in frame.columns else None
        picked = [None if p is None or texts is None else texts[p] for p in chosen]
        out[column] = pd.array([None if pd.isna(v) else str(v) for v in picked], dtype="string")
    return out


def describe(
    frame: pd.DataFrame,
    by: str | Sequence[str] | None = None,
    metrics: str | Iterable[str] | None = None,
) -> pd.DataFrame:
    """Tidy statistics: one row per (cell, metric) over the cell's successful runs.

    Columns: the ``by`` columns, ``metric`` (spec name), ``median``, ``mean``, ``p75``,
    ``p90``, ``min``, ``max``, ``std`` (sample standard deviation), ``cv`` (``std / mean``
    in percent; 0 when every value is equal; NaN below 2 values), all in the metric's unit,
    ``n`` (successful runs with a value) and ``unit`` (``ms``, ``unitless``, ``score``).
    """
    frame = _check_frame(frame)
    keys = _by_columns(by, frame)
    names = _metric_names(metrics, frame)
    _check_values(frame, names)
    codes, cells = _cells(frame, keys)
    n_cells, n_metrics = len(cells), len(names)
    stats = _cell_stats(frame, names, codes, n_cells)
    out = cells.iloc[np.repeat(np.arange(n_cells), n_metrics)].reset_index(drop=True)
    out["metric"] = pd.Categorical(names * n_cells, dtype=_metric_dtype(names))
    for key in (*_STATS, "cv"):
        out[key] = stats[key].to_numpy(dtype=float).ravel()
    out["n"] = stats["n"].to_numpy(dtype="int64").ravel()
    out["unit"] = pd.array([metric(name).unit for name in names] * n_cells, dtype="string")
    return out


# -- representative run ----------------------------------------------------------------------


def representative_run(frame: pd.DataFrame) -> Hashable | None:
    """The index label of the run that stands for ``frame`` (one cell), or None.

    Exactly Lighthouse's ``computeMedianRun`` (``core/lib/median-run.js``): among the
    successful runs with an FCP and a TTI, the one with the smallest squared distance to the
    median FCP and the median TTI (both ms), ties broken by the lower TTI, then the earlier
    row. Without any TTI, FCP alone decides; with no successful run, None.
    """
    frame = _check_frame(frame)
    if _FCP not in frame.columns:
        raise InvalidInputError(f"frame: no {_FCP!r} column to pick a representative run by")
    chosen = _representatives(frame, np.zeros(len(frame), dtype=np.intp), 1)[0]
    return None if chosen is None else frame.index[chosen]


def representative_runs(
    frame: pd.DataFrame, by: str | Sequence[str] | None = None
) -> pd.Series:
    """Each cell's representative run (see :func:`representative_run`).

    A Series named ``representative``, indexed by the cell's ``by`` values (a MultiIndex for
    several columns), holding the run's index label in ``frame`` or None when the cell has no
    successful run: ``frame.loc[representative_runs(frame).dropna()]`` gives the rows.
    """
    frame = _check_frame(frame)
    if _FCP not in frame.columns:
        raise InvalidInputError(f"frame: no {_FCP!r} column to pick a representative run by")
    keys = _by_columns(by, frame)
    codes, cells = _cells(frame, keys)
    chosen = _representatives(frame, codes, len(cells))
    labels = [None if p is None else frame.index[p] for p in chosen]
    index: pd.Index
    if len(keys) == 1:
        index = pd.Index(cells[keys[0]])
    elif keys:
        index = pd.MultiIndex.from_frame(cells)
    else:
        index = pd.RangeIndex(len(cells))
    return pd.Series(labels, index=index, dtype=object, name="representative")


# -- compare ---------------------------------------------------------------------------------


def _side_mask(frame: pd.DataFrame, keys: list[str], value: object, side: str) -> np.ndarray:
    """Rows whose ``keys`` equal ``value`` (a value, or a tuple with one per key)."""
    if len(keys) == 1 and not isinstance(value, tuple):
        wanted: tuple[Any, ...] = (value,)
    elif isinstance(value, tuple) and len(value) == len(keys):
        wanted = value
    else:
        raise InvalidInputError(
            f"{side}: expected {'a value' if len(keys) == 1 else 'a tuple'} for "
            f"{', '.join(keys)}, got {value!r}"
        )
    mask = np.ones(len(frame), dtype=bool)
    for key, item in zip(keys, wanted, strict=True):
        column = frame[key]
        if isinstance(column.dtype, pd.CategoricalDtype) and item not in column.cat.categories:
            mask[:] = False
            break
        mask &= (column == item).fillna(False).to_numpy(dtype=bool)
    if not mask.any():
        present = frame[keys].drop_duplicates()
        choices = [
            repr(row[0] if len(keys) == 1 else tuple(row))
            for row in present.itertuples(index=False)
        ]
        shown = ", ".join(choices[:20]) + (", ..." if len(choices) > 20 else "")
        raise InvalidInputError(
            f"{side}: no run has {', '.join(keys)} = {value!r}; valid: {shown}"
        )
    return mask


def _cliffs_delta(a: np.ndarray, b: np.ndarray) -> float:
    """P(b > a) - P(b < a) over all pairs: +1 every b above every a, -1 all below."""
    ordered = np.sort(a)
    below = np.searchsorted(ordered, b, side="left").sum()  # a values < each b
    above = (len(a) - np.searchsorted(ordered, b, side="right")).sum()  # a values > each b
    return float((below - above) / (len(a) * len(b)))


def _exact_rank_sum_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of the Wilcoxon rank sum (Mann-Whitney U) test from its exact
    distribution given the ties: every way to split the pooled midranks into the two
    sides, counted by a pass over the values (subsets of k values by their doubled rank
    sum; midranks are multiples of 1/2). ``2 * min(P(W <= w), P(W >= w))``, capped at 1, as
    scipy's exact test and ``permutation_test`` give; with ties the normal approximation can
    fall below any p-value the runs allow (``[700] * 5`` vs ``[800] * 5``: 0.004 where the
    smallest possible is 2 / 252 = 0.0079)."""
    from scipy.stats import rankdata

    small, large = (a, b) if len(a) <= len(b) else (b, a)
    doubled = np.rint(rankdata(np.concatenate([small, large])) * 2).astype(np.intp)
    k, total = len(small), int(doubled.sum())
    ways = np.zeros((k + 1, total + 1))  # counts up to C(60, 10) ~ 7.5e10: exact in float64
    ways[0, 0] = 1.0
    for rank in doubled:
        # In place, high k first: each value joins a subset at most once.
        ways[1:, rank:] += ways[:-1, :total + 1 - rank]
    distribution = ways[k] / ways[k].sum()
    observed = int(doubled[:k].sum())
    lower = float(distribution[:observed + 1].sum())
    upper = float(distribution[observed:].sum())
    return min(1.0, 2 * min(lower, upper))


def _p_value(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann-Whitney U: exact for small samples (:func:`_exact_rank_sum_p`), else
    scipy's normal approximation with tie and continuity corrections."""
    if min(len(a), len(b)) <= _EXACT_MAX_SMALLER and len(a) + len(b) <= _EXACT_MAX_TOTAL:
        return _exact_rank_sum_p(a, b)
    from scipy.stats import mannwhitneyu  # loaded on use

    return float(mannwhitneyu(a, b, alternative="two-sided", method="asymptotic").pvalue)


def _verdict(m: Metric, n_a: int, n_b: int, p_value: float, low: float, high: float,
             alpha: float) -> str:
    too_few = too_few_runs(n_a, n_b, alpha)
    if too_few is not None:
        return too_few
    if not (p_value < alpha and (low > 0 or high < 0)):
        return _NO_DIFFERENCE
    higher = low > 0
    if m.unit == "ms":
        return "b is slower" if higher else "b is faster"
    if m.unit == "score":
        return "b scores higher" if higher else "b scores lower"
    better = higher != m.lower_is_better
    return f"b is {'higher' if higher else 'lower'} ({'better' if better else 'worse'})"


def _decided_by(keys: list[str]) -> list[str]:
    """The cell columns ``by`` decides as well as its own: a user flow decides the URLs of
    its steps, so two flows are compared step by step whatever pages they open."""
    return ["url"] if "flow" in keys else []


def _within_columns(frame: pd.DataFrame, within: str | Sequence[str] | None,
                    keys: list[str]) -> list[str]:
    """The columns a comparison stays within: default every :data:`CELL` column holding a
    value that ``by`` does not name or decide; ``[]`` pools."""
    if within is None:
        return cell_columns(frame, exclude=[*keys, *_decided_by(keys)])
    columns = _by_columns(within, frame, "within") if (
        isinstance(within, str) or len(within)) else []
    overlap = [c for c in columns if c in keys]
    if overlap:
        raise InvalidInputError(
            f"within: {', '.join(overlap)} is what a and b differ by (by); name other columns"
        )
    return columns


def _pooled_note(frame: pd.DataFrame, keys: list[str], within: list[str],
                 rows: np.ndarray) -> str:
    """``pooled over device (desktop, mobile)``: the cell columns a comparison was told to
    pool although their values differ among the compared runs; empty when none."""
    pooled = []
    for column in cell_columns(frame, exclude=[*keys, *within, *_decided_by(keys)]):
        values = frame[column][rows].dropna().astype(str).unique()
        if len(values) > 1:
            pooled.append(f"{column} ({', '.join(sorted(values))})")
    return f"pooled over {'; '.join(pooled)}" if pooled else ""


#: The columns of :func:`compare` after its ``within`` columns (the cell compared within);
#: for the readable table (:mod:`pagelab._readable`), not in ``__all__`` (the public API
#: stays at most 200 names).
COMPARISON_COLUMNS: tuple[str, ...] = (
    "metric", "unit", "a_median", "b_median", "diff", "rel_diff", "ci_low", "ci_high",
    "p_value", "effect_size", "n_a", "n_b", "verdict", "note")


def compare(
    frame: pd.DataFrame,
    by: str | Sequence[str],
    a: object,
    b: object,
    metrics: str | Iterable[str] | None = None,
    *,
    within: str | Sequence[str] | None = None,
    resamples: int = 10_000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Whether the runs where ``by == b`` differ from those where ``by == a``, per metric and
    per cell.

    ``by`` is a column or a list of columns, ``a`` / ``b`` a value or a tuple of values (one
    per column). The runs are compared **within** cells: separately for each combination of
    the ``within`` columns, by default every cell column (:data:`CELL`: URL, device,
    location, connection, and a user flow's step) holding a value that ``by`` does not name,
    so ``compare(by="url", a=fast, b=heavy)`` on a mobile x desktop matrix gives one
    comparison on mobile and one on desktop, never a median pooled over both;
    ``compare(by="flow", ...)`` compares two flows step by step (not by URL: a flow decides
    the pages it opens). Only cells where both
    sides have runs are compared. ``within=[]`` pools every run of a and of b into one
    comparison (the ``note`` column then names what was pooled); ``within=["device"]``
    keeps only the device apart.

    One row per cell and metric (default: every metric with a value in either side's
    successful runs): the ``within`` columns, ``metric``, ``unit``, ``a_median``,
    ``b_median``, ``diff`` (``b_median - a_median``), ``rel_diff`` (percent of ``a_median``;
    NaN when it is 0), ``ci_low`` / ``ci_high`` (percentile bootstrap interval of the
    difference of medians at ``confidence``, ``resamples`` resamples, seeded by ``seed``; NaN
    below 2 runs on a side), ``p_value`` (two-sided Mann-Whitney U, exact given the ties
    with up to 10 runs on the smaller side; NaN when a side has no run),
    ``effect_size`` (Cliff's delta of b against a, -1 to 1), ``n_a``, ``n_b``, ``verdict``
    and ``note``. A difference is significant when ``p_value < 1 - confidence`` (0.05) and
    the interval excludes 0, and is then worded by the metric's registry entry ("b is
    slower", "b is faster", "b scores higher", ...); else "no significant difference", or,
    when the run counts can never give a p-value below ``1 - confidence``
    (:func:`too_few_runs`), "3 vs 3 runs cannot show a difference at alpha 0.05: at least 4
    a side" (:func:`min_runs`). ``note`` says when the interval comes from 2 to 4 runs
    a side (it then covers the true difference less often than ``confidence``) and what
    ``within=[]`` pooled; empty otherwise. ``attrs["within"]`` lists the ``within`` columns.
    Units are the metric's (ms; CLS unitless; score 0-100). Infinite values are refused.
    """
    frame = _check_frame(frame)
    if by is None:
        raise InvalidInputError("by: name the column (or columns) whose values a and b are")
    keys = _by_columns(by, frame)
    if not keys:
        raise InvalidInputError("by: name at least one column")
    if within is not None and not isinstance(within, str | Sequence):
        raise InvalidInputError(
            f"within: expected a column name, a list of them or [] to pool, got {within!r}"
        )
    groups = _within_columns(frame, within, keys)
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InvalidInputError(f"resamples: expected a positive integer, got {resamples!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not (
        0 < confidence < 1
    ):
        raise InvalidInputError(
            f"confidence: expected a number between 0 and 1, got {confidence!r}"
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InvalidInputError(f"seed: expected a non-negative integer or None, got {seed!r}")
    mask_a = _side_mask(frame, keys, a, "a")
    mask_b = _side_mask(frame, keys, b, "b")
    if not (mask_a & ~mask_b).any() and not (mask_b & ~mask_a).any():
        raise InvalidInputError(f"b: the same runs as a ({b!r}); compare two different groups")
    ok = _successful(frame)
    names = _metric_names(metrics, frame)
    _check_values(frame, names)
    if metrics is None:
        names = [n for n in names if np.isfinite(_values(frame, n)[ok & (mask_a | mask_b)]).any()]
    codes, cells = _cells(frame, groups)
    shared = [cell for cell in range(len(cells))
              if (mask_a & (codes == cell)).any() and (mask_b & (codes == cell)).any()]
    if not shared:
        raise InvalidInputError(
            f"a and b share no cell: no {', '.join(groups)} has runs of both; compare them "
            f"within=[] to pool every run of each side"
        )
    pooled = _pooled_note(frame, keys, groups, mask_a | mask_b) if not groups else ""
    columns = np.array([_values(frame, name) for name in names]).reshape(len(names), len(frame))
    bootstrap = Bootstrap(resamples, seed)
    alpha = 1 - confidence
    rows: list[dict[str, Any]] = []
    modes = frame["mode"].astype(object).to_numpy() if "mode" in frame.columns else None
    flows = frame["flow"].notna().to_numpy(bool) if "flow" in frame.columns else None
    for cell in shared:
        in_cell = ok & (codes == cell)
        where = {key: cells.at[cell, key] for key in groups}
        # A cell of flow steps only: a metric none of their modes measures (INP on a
        # navigation, anything on a snapshot) is not compared, not "too few runs". (A
        # failed step's row has no mode.)
        rows_in = (codes == cell) & (mask_a | mask_b)
        step_modes = ({m for m in modes[rows_in] if isinstance(m, str)}
                      if modes is not None and flows is not None and flows[rows_in].all()
                      else set())
        for index, name in enumerate(names):
            if step_modes and not any(mode_measures(mode, name) for mode in step_modes):
                continue
            m = metric(name)
            xa = columns[index][in_cell & mask_a]
            xb = columns[index][in_cell & mask_b]
            xa, xb = xa[~np.isnan(xa)], xb[~np.isnan(xb)]
            rows.append({**where, **_compare_one(m, xa, xb, bootstrap, confidence, alpha,
                                                 pooled)})
    out = pd.DataFrame(rows, columns=[*groups, *COMPARISON_COLUMNS])
    for key in groups:
        out[key] = out[key].astype(frame[key].dtype)
    out["metric"] = pd.Categorical(out["metric"], dtype=_metric_dtype(names))
    for text in ("unit", "verdict", "note"):
        out[text] = out[text].astype("string")
    for number in ("a_median", "b_median", "diff", "rel_diff", "ci_low", "ci_high", "p_value",
                   "effect_size"):
        out[number] = out[number].astype("float64")
    out[["n_a", "n_b"]] = out[["n_a", "n_b"]].astype("int64")
    out.attrs["within"] = list(groups)
    return out


def explain(
    results: Any,
    by: str | Sequence[str],
    a: object,
    b: object,
    *,
    within: str | Sequence[str] | None = None,
) -> Explanation:
    """Why the runs where ``by == b`` differ from those where ``by == a``: an
    :class:`Explanation` of the requests, entities, resource types, main-thread categories,
    INP phases (of a flow's timespan steps) and user timings that changed, ranked, with a
    summary in words.

    ``results`` is :class:`~pagelab.Results` (its wide frame and each run's LHR, read
    through its runner). ``by``, ``a``, ``b`` and ``within`` choose the runs as in
    :func:`compare`: within each cell ``by`` does not name (``within=[]`` pools). Each
    contribution is the difference of the medians over each side's successful runs.
    """
    if not callable(getattr(results, "lhr", None)):
        raise InvalidInputError(
            "results: expected Results (runs and their LHRs), got "
            f"{type(results).__name__}; a bare frame has no requests to explain"
        )
    frame = _check_frame(getattr(results, "frame", None))
    chosen = []
    run_ids: dict[str, tuple[list[str], list[str]]] = {}
    for where, ids_a, ids_b in compared_runs(frame, by, a, b, within=within):
        run_ids[cell_name(where)] = (ids_a, ids_b)
        chosen.append((where, [results.lhr(i) for i in ids_a], [results.lhr(i) for i in ids_b]))
    return explain_runs(chosen, a_label=_label(a), b_label=_label(b), run_ids=run_ids)


# For explain, the HTML report and pagelab.plots' pictures of a comparison (not in __all__).
def representative_id(frame: pd.DataFrame, ids: Sequence[str]) -> str:
    """The run among ``ids`` that Lighthouse's ``computeMedianRun`` would pick (the first
    without FCP values to pick by)."""
    runs = frame[frame["id"].astype("string").isin(list(ids))]
    if _FCP in runs.columns:
        label = representative_run(runs)
        if label is not None:
            return str(runs.at[label, "id"])
    return str(ids[0])



def compared_runs(
    frame: pd.DataFrame, by: str | Sequence[str], a: object, b: object, *,
    within: str | Sequence[str] | None = None,
) -> list[tuple[dict[str, object], list[str], list[str]]]:
    """The successful runs' ids of side a and side b in each cell both have runs in (the
    cell's ``within`` values first), choosing the runs as :func:`compare` does."""
    if by is None:
        raise InvalidInputError("by: name the column (or columns) whose values a and b are")
    keys = _by_columns(by, frame)
    groups = _within_columns(frame, within, keys)
    mask_a = _side_mask(frame, keys, a, "a") & _successful(frame)
    mask_b = _side_mask(frame, keys, b, "b") & _successful(frame)
    codes, cells = _cells(frame, groups)
    found = []
    for cell in range(len(cells)):
        ids_a = frame.loc[mask_a & (codes == cell), "id"].astype(str).tolist()
        ids_b = frame.loc[mask_b & (codes == cell), "id"].astype(str).tolist()
        if ids_a and ids_b:
            found.append(({key: _plain(cells.at[cell, key]) for key in groups}, ids_a, ids_b))
    if not found:
        raise InvalidInputError(
            f"a and b share no cell with successful runs of both: no {', '.join(groups)} "
            "has them; pass within=[] to pool every run of each side"
        )
    return found


def _plain(value: object) -> object:
    return None if value is None or (isinstance(value, float) and np.isnan(value)) or (
        value is pd.NA) else value


def _label(value: object) -> str:
    return "/".join(map(str, value)) if isinstance(value, tuple) else str(value)


def _compare_one(m: Metric, xa: np.ndarray, xb: np.ndarray, bootstrap: Bootstrap,
                 confidence: float, alpha: float, pooled: str) -> dict[str, Any]:
    """One metric's comparison of one cell's runs (values without NaN)."""
    n_a, n_b = len(xa), len(xb)
    a_median = float(np.median(xa)) if n_a else np.nan
    b_median = float(np.median(xb)) if n_b else np.nan
    diff = b_median - a_median
    low = high = p_value = effect = np.nan
    notes = [pooled] if pooled else []
    if n_a >= 2 and n_b >= 2:
        low, high = bootstrap.interval(xa, xb, confidence)
        if min(n_a, n_b) < _COVERING_RUNS:
            notes.append(_FEW_RUNS_NOTE)
    if n_a and n_b:
        effect = _cliffs_delta(xa, xb)
        p_value = _p_value(xa, xb)
    return {
        "metric": m.name,
        "unit": m.unit,
        "a_median": a_median,
        "b_median": b_median,
        "diff": diff,
        "rel_diff": diff / a_median * 100 if a_median else np.nan,
        "ci_low": low,
        "ci_high": high,
        "p_value": p_value,
        "effect_size": effect,
        "n_a": n_a,
        "n_b": n_b,
        "verdict": _verdict(m, n_a, n_b, p_value, low, high, alpha),
        "note": "; ".join(notes),
    }


# -- history ---------------------------------------------------------------------------------


def history(
    runner: PagedTests,
    *,
    since: TimeInput = None,
    until: TimeInput = None,
    url: str | Iterable[str] | None = None,
    device: str | Iterable[str] | None = None,
    location: str | Iterable[str] | None = None,
    limit: int = 1000,
) -> pd.DataFrame:
    """The wide frame of past tests, oldest first, for trends: the newest ``limit`` tests
    that pass the filters, as :func:`pagelab.runners.read_history` reads them from the
    runner, sorted by ``created_at`` (equal timestamps in creation order)."""
    frame = to_frame(read_history(runner, since=since, until=until, url=url, device=device,
                                  location=location, limit=limit))
    return frame.sort_values("created_at", kind="stable").reset_index(drop=True)


publish(__name__, globals(), __all__)
