"""Change points in a history of builds: where a metric's level moved, and at which commit.

Behind :func:`pagelab.stats.change_points`. Pure: a wide frame in (one row per run, a
``commit`` column naming each run's build), a frame of changes out.

Method: binary segmentation (as E-divisive means does) with a rank scan test on the runs.
In a stretch of builds, every boundary between two builds (each side holding at least
``min_runs`` runs) splits the stretch's runs in two; the boundary whose Mann-Whitney rank-sum
z (normal approximation with the tie correction) is largest in size is the candidate, and
its two-sided p-value times the number of boundaries tried (Bonferroni) is its p-value. Below
``alpha``, the stretch is cut there and both parts are searched again. Ranks rather than
values (Otava's t-test) because runs have long right tails; Bonferroni over the boundaries
rather than random permutations so that the answer is deterministic and the chance that a
history without change reports one stays at most ``alpha`` per stretch searched.
Measured (false alarms, detection, speed): ``benchmarks/change_points.py``, ``docs/history.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from pagelab._bootstrap import Bootstrap
from pagelab._cells import cell_columns
from pagelab._exceptions import InvalidInputError
from pagelab.models import Metric, metric_columns, unknown_metric
from pagelab.models import metric as lookup_metric

__all__ = ["CHANGE_COLUMNS", "change_points", "segment"]

#: The columns of :func:`change_points`' frame after the cell columns.
CHANGE_COLUMNS: tuple[str, ...] = (
    "metric", "commit", "previous_commit", "before", "after", "diff", "rel_change",
    "ci_low", "ci_high", "p_value", "direction",
)


def segment(values: np.ndarray, builds: np.ndarray, alpha: float,
            min_runs: int) -> list[tuple[int, float]]:
    """The change points of one series: ``(build, p_value)`` for each build that starts a
    new level, in build order. ``values`` are the runs' values, ``builds`` each run's build
    position (0, 1, ... in build order; every position holds a run)."""
    order = np.argsort(builds, kind="stable")
    values, builds = values[order], builds[order]
    found: list[tuple[int, float]] = []
    stretches = [(0, len(values))]  # run positions [start, stop) of whole builds
    while stretches:
        start, stop = stretches.pop()
        cut = _best_cut(values[start:stop], builds[start:stop], alpha, min_runs)
        if cut is None:
            continue
        offset, p_value = cut
        found.append((int(builds[start + offset]), p_value))
        stretches += [(start, start + offset), (start + offset, stop)]
    return sorted(found)


def _best_cut(values: np.ndarray, builds: np.ndarray, alpha: float,
              min_runs: int) -> tuple[int, float] | None:
    """The run offset (a build's first run) where the stretch splits, with its corrected
    p-value, or None when no boundary is significant at ``alpha``."""
    from scipy.special import ndtr
    from scipy.stats import rankdata

    total = len(values)
    if total < 2 * min_runs:
        return None
    # Boundaries: the offsets where a new build starts.
    starts = np.flatnonzero(np.diff(builds)) + 1
    starts = starts[(starts >= min_runs) & (total - starts >= min_runs)]
    if not starts.size:
        return None
    ranks = rankdata(values)
    left = starts.astype(float)
    right = total - left
    rank_sums = np.cumsum(ranks)[starts - 1]
    u_stat = rank_sums - left * (left + 1) / 2
    _, counts = np.unique(values, return_counts=True)
    ties = float((counts ** 3 - counts).sum()) / (total * (total - 1))
    variance = left * right / 12 * ((total + 1) - ties)
    if not (variance > 0).all():
        return None  # every value equal: nothing moved
    excess = np.maximum(np.abs(u_stat - left * right / 2) - 0.5, 0.0)  # continuity
    z = excess / np.sqrt(variance)
    best = int(np.argmax(z))
    p_value = min(1.0, 2 * float(ndtr(-z[best])) * starts.size)
    return (int(starts[best]), p_value) if p_value < alpha else None


def change_points(
    frame: pd.DataFrame,
    metric: str | Iterable[str] | None = None,
    alpha: float = 0.05,
    *,
    min_runs: int = 4,
    confidence: float = 0.95,
    resamples: int = 2_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Where each metric's level changed in a history of builds, per cell.

    ``frame`` is the wide frame of :func:`pagelab.frames.to_frame` with a ``commit`` column
    (a run's build); builds are ordered by their first run's ``created_at`` (without that
    column, by their first row). Only successful runs with a commit enter. ``metric``: one
    name or label (``LCP``) or several; None: every metric column. ``alpha``: the chance
    that one series without change reports one. ``min_runs``: the fewest runs a segment
    holds. The interval of ``diff`` (after - before) is the percentile bootstrap of the
    difference of medians that :func:`pagelab.stats.compare` gives, at ``confidence``,
    seeded.

    One row per change: the cell columns, ``metric``, ``commit`` (the first build of the
    new level), ``previous_commit`` (the build before it), ``before`` and ``after`` (the
    medians of the runs of the two segments either side), ``diff``, ``rel_change``
    (percent of ``before``), ``ci_low``, ``ci_high``, ``p_value`` (Bonferroni-corrected
    over the boundaries tried) and ``direction`` (``regression`` / ``improvement``, from the
    metric registry).
    """
    frame = _check(frame, alpha, min_runs)
    names = _names(metric, frame)
    runs = frame[_successful(frame) & frame["commit"].notna().to_numpy(bool)].reset_index(
        drop=True)
    keys = cell_columns(runs)
    build_of, commits = _build_order(runs)
    bootstrap = Bootstrap(resamples, seed)
    rows: list[dict[str, Any]] = []
    groups = runs.groupby(keys, observed=True, dropna=False, sort=True) if keys else [((), runs)]
    for key, cell in groups:
        where = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        cell_builds = build_of[cell.index.to_numpy()]
        for name in names:
            values = pd.to_numeric(cell[name], errors="coerce").to_numpy(float, na_value=np.nan)
            has = np.isfinite(values)
            values, builds = values[has], cell_builds[has]
            # Positions among this series' builds (a build without a value is skipped).
            present, position = np.unique(builds, return_inverse=True)
            cuts = segment(values, position, alpha, min_runs)
            bounds = [0, *(b for b, _ in cuts), len(present)]
            for index, (build, p_value) in enumerate(cuts):
                before = values[(position >= bounds[index]) & (position < build)]
                after = values[(position >= build) & (position < bounds[index + 2])]
                rows.append({**where, **_change(lookup_metric(name), before, after, p_value,
                                                commits[present[build]],
                                                commits[present[build - 1]],
                                                bootstrap, confidence)})
    out = pd.DataFrame(rows, columns=[*keys, *CHANGE_COLUMNS])
    for column in keys:
        out[column] = out[column].astype(frame[column].dtype)
    for text in ("metric", "commit", "previous_commit", "direction"):
        out[text] = out[text].astype("string")
    for number in ("before", "after", "diff", "rel_change", "ci_low", "ci_high", "p_value"):
        out[number] = out[number].astype("float64")
    return out



def _change(m: Metric, before: np.ndarray, after: np.ndarray, p_value: float, commit: str,
            previous: str, bootstrap: Bootstrap, confidence: float) -> dict[str, Any]:
    low, high = bootstrap.interval(before, after, confidence)
    level_before, level_after = float(np.median(before)), float(np.median(after))
    diff = level_after - level_before
    # Which way: the medians', or the means' where the medians are equal (heavy ties).
    higher = diff > 0 if diff else float(np.mean(after)) > float(np.mean(before))
    return {
        "metric": m.name,
        "commit": commit,
        "previous_commit": previous,
        "before": level_before,
        "after": level_after,
        "diff": diff,
        "rel_change": diff / level_before * 100 if level_before else math.nan,
        "ci_low": low,
        "ci_high": high,
        "p_value": p_value,
        "direction": "regression" if higher == m.lower_is_better else "improvement",
    }


def _check(frame: object, alpha: object, min_runs: object) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise InvalidInputError(
            "frame: expected the wide DataFrame of runs (pagelab.frames.to_frame), "
            f"got {type(frame).__name__}")
    if "commit" not in frame.columns:
        raise InvalidInputError(
            "frame: no 'commit' column: change points need each run's build (its commit)")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise InvalidInputError(f"alpha: expected a number between 0 and 1, got {alpha!r}")
    if isinstance(min_runs, bool) or not isinstance(min_runs, int) or min_runs < 1:
        raise InvalidInputError(f"min_runs: expected a positive number of runs, got {min_runs!r}")
    return frame


def _names(requested: str | Iterable[str] | None, frame: pd.DataFrame) -> list[str]:
    if requested is None:
        names = metric_columns(frame.columns)
        if not names:
            raise InvalidInputError("frame: no metric column to look for changes in")
        return names
    items = [requested] if isinstance(requested, str) else list(requested)
    names = []
    for item in items:
        try:
            name = lookup_metric(item).name if isinstance(item, str) else None
        except KeyError:
            name = None
        if name is None:
            raise InvalidInputError(f"metric: {unknown_metric(item)}")
        if name not in frame.columns:
            raise InvalidInputError(f"metric: the frame has no {name!r} column")
        names.append(name)
    if not names:
        raise InvalidInputError("metric: name at least one metric")
    return list(dict.fromkeys(names))


def _successful(frame: pd.DataFrame) -> np.ndarray:
    if "status" not in frame.columns:
        return np.ones(len(frame), dtype=bool)
    return (frame["status"].astype("string") == "success").fillna(False).to_numpy(dtype=bool)


def _build_order(runs: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Each run's build position and the commits in build order: a build's first run's
    ``created_at`` (ties, and frames without the column: the first row)."""
    commits = runs["commit"].astype(str).to_numpy()
    if "created_at" in runs.columns:
        first = pd.Series(pd.to_datetime(runs["created_at"], utc=True).to_numpy()).groupby(
            commits, sort=False).min()
        ordered = list(first.sort_values(kind="stable").index)
    else:
        ordered = list(dict.fromkeys(commits))
    position = {commit: index for index, commit in enumerate(ordered)}
    return np.array([position[c] for c in commits], dtype=np.intp), ordered
