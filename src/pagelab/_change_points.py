"""Change points in a history of builds: where a metric's level moved, and at which commit.

Behind :func:`pagelab.stats.change_points`. Pure: a wide frame in (one row per run, a
``commit`` column naming each run's build), a frame of changes out.

Method: binary segmentation (as E-divisive means does) with a rank scan test on the runs.
In a stretch of builds, every boundary between two builds (each side holding at least
``min_runs`` runs), and every short level between two others, splits the stretch's runs in
two; the split whose normal-scores z (van der Waerden's rank test) is largest in size is
the candidate, and Worsley's improved Bonferroni bound over the splits tried (neighbouring
splits are strongly correlated) is its p-value. Below ``alpha``, the stretch is cut there
and both parts are searched again. Ranks rather than values (Otava's t-test) because runs
have long right tails; a bound rather than random permutations so that the answer is
deterministic and the chance that a history without change reports one stays at most
``alpha`` per stretch searched. Found changes are then placed by values (Huber's loss on
the runs' logs: nearly the most likely split, where ranks miss by a build more often) and
tested again by ranks where they are.
Measured (false alarms, detection, speed): ``benchmarks/change_points.py``,
``docs/history.md``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from pagelab._bootstrap import Bootstrap
from pagelab._cells import cell_columns
from pagelab._exceptions import InvalidInputError
from pagelab.models import Metric, Rating, metric_columns, unknown_metric
from pagelab.models import metric as lookup_metric

__all__ = ["ALPHA", "CHANGE_COLUMNS", "DIRECTION_RATING", "MIN_CHANGE", "NO_COMMIT",
           "build_order", "build_sequence", "change_points", "has_commits", "open_regressions",
           "segment", "short_commit"]

#: The columns of :func:`change_points`' frame after the cell columns.
CHANGE_COLUMNS: tuple[str, ...] = (
    "metric", "commit", "previous_commit", "before", "after", "diff", "rel_change",
    "ci_low", "ci_high", "p_value", "direction",
)
#: The chance that a history without change reports one, unless told.
ALPHA = 0.05
#: The smallest change reported, as a fraction of the level before it, unless told: a
#: shift below it is no change, however consistent (Perfherder alerts from 2 % too). The
#: rank test sees order, not size: runs that vary less than a metric's resolution (a
#: 500 ms TTFB reported in whole ms) make a 1 ms step as significant as a 250 ms one.
MIN_CHANGE = 0.02
REGRESSION, IMPROVEMENT = "regression", "improvement"
#: How a change's ``direction`` is coloured (plots, tables): by the rating palette's
#: colours, a regression as poor, an improvement as good.
DIRECTION_RATING: dict[str, Rating] = {REGRESSION: "poor", IMPROVEMENT: "good"}
#: What a history without builds is told (here, and by the plots of builds).
NO_COMMIT = ("frame: no run has a commit: change points need each run's build (the commit "
             "it measured)")
#: A full commit hash (SHA-1 or SHA-256), which labels shorten.
_FULL_HASH = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


#: The longest stretch, in builds, that the scan tests as a level of its own between two
#: others (a regression fixed a few builds later); splits in two are tested at any place.
EPIDEMIC_WIDTH = 50
#: Rounds of moving each change to the best place between its neighbours.
_REFINE_ROUNDS = 20


def segment(values: np.ndarray, builds: np.ndarray, alpha: float, min_runs: int,
            min_change: float = MIN_CHANGE, min_diff: float = 0.0) -> list[tuple[int, float]]:
    """The change points of one series: ``(build, p_value)`` for each build that starts a
    new level, in build order. ``values`` are the runs' values, ``builds`` each run's build
    position (0, 1, ... in build order; every position holds a run)."""
    order = np.argsort(builds, kind="stable")
    values = values[order]
    # Build b's runs are values[edges[b]:edges[b + 1]].
    edges = np.searchsorted(builds[order], np.arange(int(builds.max(initial=-1)) + 2))
    cuts: set[int] = set()  # build positions starting a new level
    stretches = [(0, len(edges) - 1)]  # builds [first, stop)
    while stretches:
        first, stop = stretches.pop()
        found = _scan(values, edges[first:stop + 1], alpha, min_runs)
        if not found:
            continue
        inner = [first + b for b in found]
        cuts.update(inner)
        bounds = [first, *inner, stop]
        stretches += list(pairwise(bounds))
    return _settle(values, edges, sorted(cuts), alpha, min_runs, min_change, min_diff)


def _settle(values: np.ndarray, edges: np.ndarray, cuts: list[int], alpha: float,
            min_runs: int, min_change: float, min_diff: float) -> list[tuple[int, float]]:
    """The changes found, placed (:func:`_move`, :func:`_merge`), then tested where they
    are by ranks: the weakest change above ``alpha`` is dropped, then the smallest, below
    ``min_change`` of its level before or below ``min_diff``, one at a time, until every
    one holds."""
    last = len(edges) - 1
    scaled = np.log(values) if values.size and values.min() > 0 else values
    while True:
        _move(scaled, edges, cuts, min_runs)
        if _merge(values, scaled, edges, cuts, alpha, min_runs):
            continue
        tested = []
        for k, cut in enumerate(cuts):
            low, high = (cuts[k - 1] if k else 0), (cuts[k + 1] if k + 1 < len(cuts) else last)
            tested.append((cut, _p_at(values, edges[low:high + 1], cut - low, min_runs)))
        weakest = max(range(len(tested)), key=lambda k: tested[k][1], default=None)
        if weakest is not None and tested[weakest][1] >= alpha:
            del cuts[weakest]
            continue
        if not cuts:
            return tested
        sizes = _sizes(values, edges, cuts, min_change, min_diff)
        smallest = min(range(len(sizes)), key=sizes.__getitem__)
        if sizes[smallest] >= 1:
            return tested
        del cuts[smallest]


def _move(scaled: np.ndarray, edges: np.ndarray, cuts: list[int], min_runs: int) -> None:
    """Each change (in place) moved to the best single split between its neighbours
    (:func:`_place`): a first cut in a stretch holding two changes can land a build off,
    and ranks place a change less well than values."""
    last = len(edges) - 1
    for _ in range(_REFINE_ROUNDS):
        moved = False
        for k, cut in enumerate(cuts):
            low, high = (cuts[k - 1] if k else 0), (cuts[k + 1] if k + 1 < len(cuts) else last)
            best = _place(scaled, edges[low:high + 1], cut - low, min_runs)
            if best is not None and low + best != cut:
                cuts[k], moved = low + best, True
        if not moved:
            return


def _merge(values: np.ndarray, scaled: np.ndarray, edges: np.ndarray, cuts: list[int],
           alpha: float, min_runs: int) -> bool:
    """Two neighbouring changes made one (in place), if any pair is a single change seen
    twice: a step on a step (the level between them is between the levels either side) and
    one change placed between their neighbours leaves neither side with a change of its own
    (:func:`_scan`). Binary segmentation can cut a build or two either side of a change and
    each cut then holds between its neighbours. A level above or below both its neighbours
    (a regression fixed later) is never merged."""
    last = len(edges) - 1
    for k in range(len(cuts) - 1):
        low, high = (cuts[k - 1] if k else 0), (cuts[k + 2] if k + 2 < len(cuts) else last)
        before, between, after = (float(np.median(scaled[edges[a]:edges[b]])) for a, b in
                                  pairwise((low, cuts[k], cuts[k + 1], high)))
        if not min(before, after) < between < max(before, after):
            continue
        best = _place(scaled, edges[low:high + 1], cuts[k] - low, min_runs)
        if best is None:
            continue
        middle = low + best
        if not (_scan(values, edges[low:middle + 1], alpha, min_runs)
                or _scan(values, edges[middle:high + 1], alpha, min_runs)):
            cuts[k:k + 2] = [middle]
            return True
    return False


def _sizes(values: np.ndarray, edges: np.ndarray, cuts: list[int], min_change: float,
           min_diff: float) -> list[float]:
    """Each change's size against the floors (:func:`_size`), its levels being the medians
    of the runs either side."""
    bounds = [0, *cuts, len(edges) - 1]
    levels = [float(np.median(values[edges[low]:edges[high]]))
              for low, high in pairwise(bounds)]
    return [_size(before, after, min_change, min_diff) for before, after in pairwise(levels)]


def _size(before: float, after: float, min_change: float, min_diff: float) -> float:
    """How far ``after`` is from ``before`` against the floors: the difference as a
    fraction of ``min_change`` of ``before``, or of ``min_diff``, whichever is less (at
    least 1: large enough; a floor of 0 always holds)."""
    diff = abs(after - before)
    relative = diff / abs(before) if before else (math.inf if diff else 0.0)
    return min(relative / min_change if min_change else math.inf,
               diff / min_diff if min_diff else math.inf)


def open_regressions(changes: pd.DataFrame, min_change: float = MIN_CHANGE,
                     min_diff: float | None = None) -> pd.DataFrame:
    """The rows of ``changes`` (:func:`change_points`' frame) that are open regressions, one
    per cell and metric at most: the first regression that no level since has restored,
    none of them back within the floors a change must pass (``min_change``, ``min_diff``:
    as :func:`change_points`') of the level before it. So the page has been slower since
    that commit: a later improvement smaller than the regression, or a later regression,
    leaves it open; a return to the level before it closes it."""
    keys = [*cell_columns(changes), "metric"]
    still_open: list[Any] = []
    for _, series in changes.groupby(keys, dropna=False, sort=False, observed=True):
        rows = series.to_dict("records")  # in build order, as change_points gives them
        name = str(rows[0]["metric"])
        floor = lookup_metric(name).smallest_change if min_diff is None else min_diff
        for index, (label, row) in enumerate(zip(series.index, rows, strict=True)):
            if row["direction"] != REGRESSION:
                continue
            before = float(row["before"])
            worse = float(row["after"]) - before
            if all((float(later["after"]) - before) * worse > 0
                   and _size(before, float(later["after"]), min_change, floor) >= 1
                   for later in rows[index:]):
                still_open.append(label)
                break
    return changes.loc[still_open]


def _ranks(values: np.ndarray) -> tuple[np.ndarray, float]:
    """The cumulative sums of a stretch's runs' normal scores (0 first) and the scores' sum
    of squares. A run's score is the normal quantile of its rank, ``Φ⁻¹(rank / (n + 1))``
    (van der Waerden's; tied runs share their mid-rank's), centred on 0: a rank test, so a
    slow run counts as the slowest and no more, but one that loses nothing on normal logs,
    where the plain rank sum saturates: a short level above all others has a z of at most
    ``sqrt(3 n1 n2 / (n + 1))`` with ranks (5.2 for 10 runs of 100), 5.8 with scores."""
    from scipy.special import ndtri
    from scipy.stats import rankdata

    scores = ndtri(rankdata(values) / (len(values) + 1))
    scores -= scores.mean() if scores.size else 0.0
    return np.concatenate([[0.0], np.cumsum(scores)]), float((scores ** 2).sum())


def _z(inside: np.ndarray, score_sum: np.ndarray, total: int, squares: float) -> np.ndarray:
    """The z (in size) of the centred scores' sum ``score_sum`` of ``inside`` runs against
    the rest: its variance over every rearrangement of the runs is
    ``inside (total - inside) / (total (total - 1))`` times the scores' sum of squares."""
    variance = inside * (total - inside) / max(total * (total - 1), 1) * squares
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(variance > 0, np.abs(score_sum) / np.sqrt(variance), 0.0)


def _p(z: float, inside: np.ndarray, parent: np.ndarray, total: int) -> float:
    """The chance that the largest z (in size) of the splits tried reaches ``z`` where
    there is no change, bounded above by Worsley's improved Bonferroni inequality
    (Biometrika, 1982; made for change-point scans). The splits form a tree: each but the
    first is joined to a ``parent`` split that holds its runs or lies within them
    (``inside``, ``parent``: the runs in each split's set; the first split's parent is
    itself). The bound is the first split's chance, ``2 Φ(-z)``, plus for every other the
    chance that it reaches ``z`` while its parent does not, at most
    ``4 T(z, sqrt((1 - r) / (1 + r)))`` (Owen's T) for their correlation r over the
    rearrangements of the runs. Neighbouring splits differ by a build and are strongly
    correlated, so the bound is well below Bonferroni's (``2 Φ(-z)`` times the splits
    tried), which it equals for independent splits: a history without change still
    reports one with a chance of at most ``alpha``."""
    from scipy.special import ndtr, owens_t

    small, large = np.minimum(inside, parent)[1:], np.maximum(inside, parent)[1:]
    rho = np.sqrt(small * (total - large) / (large * (total - small)))
    joined = 4 * float(owens_t(z, np.sqrt((1 - rho) / (1 + rho))).sum())
    return min(1.0, 2 * float(ndtr(-z)) + joined)


def _chained(splits: np.ndarray) -> np.ndarray:
    """The parents (:func:`_p`) of splits in two in build order: each joined to the split a
    build before it, the first to itself."""
    parents: np.ndarray = np.concatenate([splits[:1], splits[:-1]])
    return parents


def _offsets(edges: np.ndarray, min_runs: int) -> np.ndarray:
    """The splits of the builds bounded by ``edges`` that leave ``min_runs`` runs either
    side: each as the number of runs on the left."""
    total = int(edges[-1] - edges[0])
    offsets: np.ndarray = edges[1:-1] - edges[0]
    kept: np.ndarray = offsets[(offsets >= min_runs) & (total - offsets >= min_runs)]
    return kept


def _p_at(values: np.ndarray, edges: np.ndarray, build: int, min_runs: int) -> float:
    """The p-value of splitting the builds bounded by ``edges`` before ``build`` (from 1):
    its normal-scores z, corrected over every split between them (:func:`_p`,
    :func:`_chained`)."""
    start, stop = int(edges[0]), int(edges[-1])
    splits = _offsets(edges, min_runs)
    inside = int(edges[build]) - start
    if not splits.size or inside < min_runs or stop - start - inside < min_runs:
        return 1.0
    cumulative, squares = _ranks(values[start:stop])
    z = _z(np.array([float(inside)]), cumulative[[inside]], stop - start, squares)
    return _p(float(z[0]), splits, _chained(splits), stop - start)


#: Huber's tuning constant, in standard deviations: a run further than that from a level
#: counts linearly, not squared (a slow run must not move a change). Measured in the
#: benchmark: 1.345 (Huber's usual) placed 5 % steps less often at their build than least
#: squares, 3 let a slow run beside a step move it about as often as ranks; 2 neither.
_HUBER = 2.0


def _place(scaled: np.ndarray, edges: np.ndarray, cut: int, min_runs: int) -> int | None:
    """The split of the builds bounded by ``edges`` (the build index, from 1, of the first
    build on the right) where the runs lie closest to the levels either side of the
    current ``cut`` (each side's Huber estimate), by Huber's loss: the most likely split of two
    normal levels (the runs' logs: load times are about log-normal), with a slow run's
    weight bounded. It places a change at its build more often than ranks do."""
    start, stop = int(edges[0]), int(edges[-1])
    offsets = _offsets(edges, min_runs)
    if not offsets.size:
        return None
    stretch = scaled[start:stop]
    middle = int(edges[cut]) - start
    left, right = float(np.median(stretch[:middle])), float(np.median(stretch[middle:]))
    deviations = np.abs(stretch - np.where(np.arange(stretch.size) < middle, left, right))
    # The normal's sd from the median absolute deviation, or (most runs on their level's
    # median: whole ms) from the mean one.
    bound = _HUBER * (1.4826 * float(np.median(deviations))
                      or 1.2533 * float(deviations.mean()))
    # Each level a one-step Huber estimate: nearly the mean's precision, a slow run bounded.
    left = float(np.clip(stretch[:middle], left - bound, left + bound).mean())
    right = float(np.clip(stretch[middle:], right - bound, right + bound).mean())
    as_left = np.concatenate([[0.0], np.cumsum(_huber(stretch - left, bound))])
    as_right = np.concatenate([[0.0], np.cumsum(_huber(stretch - right, bound))])
    loss = as_left[offsets] + as_right[-1] - as_right[offsets]
    return int(np.searchsorted(edges, start + offsets[int(np.argmin(loss))]))


def _huber(residuals: np.ndarray, bound: float) -> np.ndarray:
    """Huber's loss: squared within ``bound``, linear beyond (all squared if 0)."""
    size = np.abs(residuals)
    if not bound:
        squared: np.ndarray = size ** 2 / 2
        return squared
    loss: np.ndarray = np.where(size <= bound, size ** 2 / 2, bound * size - bound ** 2 / 2)
    return loss


def _splits(offsets: np.ndarray, min_runs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The splits :func:`_scan` tries in the builds bounded by ``offsets`` (each build's
    first run, from 0): each as the builds ``[start, stop)`` set against the rest (a split
    in two is ``[0, stop)``; a level between two others starts after 0 and holds at most
    :data:`EPIDEMIC_WIDTH` builds), each side holding ``min_runs`` runs; and each split's
    parent for :func:`_p`, as its number of runs: a split in two is joined to the one a
    build before (:func:`_chained`), a level ``[a, b)`` to ``[a, b - 1)`` if tried, else
    to ``[a - 1, b)``, else to the split ``[0, b)``: one holds the other."""
    total, builds = int(offsets[-1]), len(offsets) - 1
    widest = min(EPIDEMIC_WIDTH, builds - 2)

    def tried(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        inside = offsets[b] - offsets[a]
        kept: np.ndarray = ((inside >= min_runs) & (total - inside >= min_runs)
                            & ((a == 0) | ((offsets[a] >= min_runs) & (b - a <= widest)
                                           & (total - offsets[b] >= min_runs))))
        return kept

    stops = np.arange(1, builds)
    stops = stops[tried(np.zeros_like(stops), stops)]
    starts, ends = [np.zeros_like(stops)], [stops]
    parents = [_chained(offsets[stops])]
    for width in range(1, widest + 1):
        a = np.arange(1, builds - width)
        b = a + width
        keep = tried(a, b)
        a, b = a[keep], b[keep]
        starts.append(a)
        ends.append(b)
        parents.append(np.where(tried(a, b - 1), offsets[b - 1] - offsets[a],
                                np.where(tried(a - 1, b),
                                         offsets[b] - offsets[a - 1], offsets[b])))
    return np.concatenate(starts), np.concatenate(ends), np.concatenate(parents)


def _scan(values: np.ndarray, edges: np.ndarray, alpha: float, min_runs: int) -> list[int]:
    """The builds (index within ``edges``, from 1) where the stretch bounded by ``edges``
    is cut: one split in two, or a level of at most :data:`EPIDEMIC_WIDTH` builds between
    two others (:func:`_splits`), whichever normal-scores z is largest, if its p-value
    corrected over every split tried (:func:`_p`) is below ``alpha``; else none."""
    start, stop = int(edges[0]), int(edges[-1])
    total = stop - start
    if total < 2 * min_runs:
        return []
    offsets = (edges - start).astype(np.intp)
    starts, stops, parents = _splits(offsets, min_runs)
    if not stops.size:
        return []
    cumulative, squares = _ranks(values[start:stop])
    inside = offsets[stops] - offsets[starts]
    z = _z(inside.astype(float), cumulative[offsets[stops]] - cumulative[offsets[starts]],
           total, squares)
    k = int(np.argmax(z))
    if _p(float(z[k]), inside, parents, total) >= alpha:
        return []
    return [int(stops[k])] if starts[k] == 0 else [int(starts[k]), int(stops[k])]


def change_points(
    frame: pd.DataFrame,
    metric: str | Iterable[str] | None = None,
    alpha: float = ALPHA,
    *,
    min_runs: int = 4,
    min_change: float = MIN_CHANGE,
    min_diff: float | None = None,
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
    holds. ``min_change``: the smallest change reported, a fraction of the level before it
    (0.02: 2 %; 0 reports every significant one). ``min_diff``: the smallest change
    reported in the metric's unit (None: each metric's own,
    :attr:`~pagelab.models.Metric.smallest_change`: 10 ms for times, 0.01 for CLS, 1 point
    of score; 0 reports every significant one); a change must pass both. The interval of
    ``diff`` (after - before) is the percentile bootstrap of the difference of medians
    that :func:`pagelab.stats.compare` gives, at ``confidence``, seeded.

    One row per change: the cell columns, ``metric``, ``commit`` (the first build of the
    new level), ``previous_commit`` (the build before it), ``before`` and ``after`` (the
    medians of the runs of the two segments either side), ``diff``, ``rel_change``
    (percent of ``before``), ``ci_low``, ``ci_high``, ``p_value`` (the change's own test
    where it is placed, corrected over the splits between its neighbouring changes) and
    ``direction`` (``regression`` / ``improvement``, from the metric registry).
    """
    frame = _check(frame, alpha, min_runs)
    if not _is_floor(min_change):
        raise InvalidInputError("min_change: expected a fraction of the level before "
                                f"(0.02 is 2 %), got {min_change!r}")
    if min_diff is not None and not _is_floor(min_diff):
        raise InvalidInputError("min_diff: expected the smallest change in the metric's unit "
                                f"(10 is 10 ms) or None for each metric's own, got {min_diff!r}")
    names = _names(metric, frame)
    runs = frame[_successful(frame) & frame["commit"].notna().to_numpy(bool)].reset_index(
        drop=True)
    keys = cell_columns(runs)
    build_of, commits = build_order(runs)
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
            floor = lookup_metric(name).smallest_change if min_diff is None else min_diff
            cuts = segment(values, position, alpha, min_runs, min_change, floor)
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
        "direction": REGRESSION if higher == m.lower_is_better else IMPROVEMENT,
    }


def _is_floor(value: object) -> bool:
    """Whether ``value`` is a finite number of at least 0 (not a bool)."""
    return (not isinstance(value, bool) and isinstance(value, int | float)
            and 0 <= value < math.inf)


def _check(frame: object, alpha: object, min_runs: object) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise InvalidInputError(
            "frame: expected the wide DataFrame of runs (pagelab.frames.to_frame), "
            f"got {type(frame).__name__}")
    if "commit" not in frame.columns or (len(frame) and not has_commits(frame)):
        raise InvalidInputError(NO_COMMIT)
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


def build_sequence(frame: pd.DataFrame) -> np.ndarray:
    """The row positions of ``frame`` in build order, the one definition of it: a build's
    place is its first run's ``created_at`` (ties, and frames without the column: its
    first row), a build's runs follow in ``created_at`` order; a run without a ``commit``
    is a build of its own. :func:`change_points` reads builds in this order, and
    :func:`pagelab.history` returns runs in it."""
    rows = np.arange(len(frame))
    created = (pd.DatetimeIndex(pd.to_datetime(frame["created_at"], utc=True)).asi8
               if "created_at" in frame.columns else rows)
    commits = (frame["commit"].astype("string") if "commit" in frame.columns
               else pd.Series(pd.NA, index=frame.index, dtype="string"))
    # A run without a commit gets a build label of its own (no commit starts with NUL).
    labels = np.where(commits.isna().to_numpy(bool), [f"\0{row}" for row in rows],
                      commits.fillna("").to_numpy(str))
    start = pd.Series(created).groupby(labels, sort=False).transform("min").to_numpy()
    first_row = pd.Series(rows).groupby(labels, sort=False).transform("min").to_numpy()
    return np.lexsort((rows, created, first_row, start))


def build_order(runs: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Each run's build position and the commits in build order (:func:`build_sequence`).
    Every run of ``runs`` has a commit."""
    commits = runs["commit"].astype(str).to_numpy()
    ordered = list(dict.fromkeys(commits[build_sequence(runs)]))
    position = {commit: index for index, commit in enumerate(ordered)}
    return np.array([position[c] for c in commits], dtype=np.intp), ordered


def has_commits(frame: pd.DataFrame) -> bool:
    """Whether any run of ``frame`` names its build (a ``commit`` with a value)."""
    return "commit" in frame.columns and bool(frame["commit"].notna().any())


def short_commit(commit: object) -> str:
    """A commit as labels show it: a full hash's first 7 characters (git's short form),
    any other name (a tag, ``v1.2``) as it is."""
    text = str(commit)
    return text[:7] if _FULL_HASH.fullmatch(text) else text
