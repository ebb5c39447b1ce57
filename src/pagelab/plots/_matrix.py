"""Plots of a matrix of runs (the wide frame or ``Results``): runs per group, their
distribution, an A/B comparison, a trend over time or builds (its changes marked) and a heat
map over two axes.

Only successful runs with a value are drawn; failed runs are counted in the labels (and
marked on the trend's time axis), never drawn as zeros. Labels, units and the good / poor
thresholds come from the metric registry (:data:`pagelab.models.METRICS`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pagelab._change_points import (
    DIRECTION_RATING,
    NO_COMMIT,
    build_order,
    has_commits,
    short_commit,
)
from pagelab._exceptions import InvalidInputError
from pagelab._extras import require
from pagelab._public import renamed_keyword
from pagelab.frames import CELL
from pagelab.models import METRICS, RATING_COLOURS, RATING_FILL, Metric, unknown_value

from ._common import (
    EMPTY_FILL,
    NEUTRAL_FILL,
    axis_label,
    check_metric,
    failed,
    frame_of,
    group_columns,
    group_labels,
    measuring,
    new_axes,
    ordered_groups,
    plain,
    shows_its_figure,
    successful,
    threshold_lines,
    value_limits,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["comparison", "distribution", "heatmap", "metric_by_group", "trend"]

#: Columns :func:`comparison` reads from :func:`pagelab.stats.compare`'s frame.
COMPARE_COLUMNS = ("metric", "a_median", "b_median", "rel_diff", "ci_low", "ci_high",
                   "p_value", "verdict")
_POINT_COLOUR = "#1a73e8"
_MEDIAN_COLOUR = "#202124"
_FAILED_COLOUR = "#d93025"
_GREY = "#80868b"


def runs_text(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def _title_suffix(keys: list[str], origin: str | None) -> str:
    times = " \u00d7 "
    where = f" by {times.join(keys)}" if keys else ""
    return where + (f"  ({plain(origin)})" if origin else "")


def _runs_by_group(
    data: object, metric: str, by: str | Sequence[str] | None
) -> tuple[Metric, list[str], list[str], str | None, np.ndarray, np.ndarray, np.ndarray,
           np.ndarray]:
    """What a plot of one metric's runs per group reads: the metric, the grouping columns,
    the groups in order, the origin left out of their labels, and per run (runs that measure
    the metric) its group's label, its value, whether it succeeded and whether it failed."""
    frame = frame_of(data)
    m = check_metric(metric, frame)
    frame = measuring(frame, m.name).reset_index(drop=True)
    keys, labels, order, origin = _groups(frame, by)
    values = frame[m.name].to_numpy(dtype="float64", na_value=np.nan)
    return (m, keys, order, origin, labels.to_numpy(), values, successful(frame, m),
            failed(frame))


def _groups(frame: pd.DataFrame, by: str | Sequence[str] | None
            ) -> tuple[list[str], pd.Series, list[str], str | None]:
    keys = group_columns(frame, by)
    labels, origin = group_labels(frame, keys)
    return keys, labels, ordered_groups(frame, keys, labels), origin


def _legend(ax: Axes) -> None:
    """The legend beside the axes, right of them: inside, wherever it went, it could cover a
    point (a score of 100 sits in the lower right corner)."""
    handles, texts = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, texts, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1),
                  frameon=False)


@shows_its_figure
def metric_by_group(
    data: object,
    metric: str,
    by: str | Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Every successful run of each group as a point and the group's median as a bar.

    ``data`` is the wide frame or ``Results``; ``metric`` a spec name or label (``LCP``);
    ``by`` the grouping columns (default: the cell columns that vary). One row per group,
    labelled with its runs, failed runs and median; values in the metric's unit (ms, CLS
    unitless, score 0-100) with its good / poor thresholds. Returns the Axes.
    """
    m, keys, order, origin, label_array, values, ok, bad = _runs_by_group(data, metric, by)
    ax = new_axes(ax, (8.0, 1.4 + 0.75 * len(order)))
    rng = np.random.default_rng(0)  # jitter only spreads the points; fixed for repeatability
    ticks = []
    medians_drawn = False
    for row, group in enumerate(order):
        in_group = label_array == group
        points = values[in_group & ok]
        y = len(order) - 1 - row  # first group on top
        n_failed = int((in_group & bad).sum())
        text = [runs_text(int(in_group.sum()))]
        if n_failed:
            text.append(f"{n_failed} failed")
        if len(points):
            ax.scatter(points, y + rng.uniform(-0.18, 0.18, len(points)), s=28,
                       color=_POINT_COLOUR, alpha=0.75, edgecolors="white", linewidths=0.5,
                       zorder=3, label="run" if not medians_drawn else None)
            median = float(np.median(points))
            ax.plot([median, median], [y - 0.32, y + 0.32], color=_MEDIAN_COLOUR, linewidth=2.5,
                    solid_capstyle="butt", zorder=4, label="median" if not medians_drawn else None)
            medians_drawn = True
            text.append(f"median {m.format(median)}")
        else:
            text.append("no successful run")
        ticks.append((y, f"{plain(group)}\n{', '.join(text)}"))
    ax.set_yticks([y for y, _ in ticks], [t for _, t in ticks], fontsize="small")
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.set_xlim(*value_limits(values[ok], m))
    threshold_lines(ax, m, "x")
    ax.set_xlabel(axis_label(m))
    ax.set_title(f"{m.title}{_title_suffix(keys, origin)}", loc="left", fontsize="medium")
    ax.grid(axis="x", alpha=0.3)
    _legend(ax)
    return ax


@shows_its_figure
def distribution(
    data: object,
    metric: str,
    by: str | Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """The distribution of each group's runs as an empirical cumulative distribution: a
    step line per group, one marker per successful run, the share of runs at or below each
    value (%) against the value in the metric's unit, with its good / poor thresholds.

    With the 5 to 20 runs a matrix has, a histogram's bins would show the binning more
    than the runs; every run stays visible here and medians read off at 50 %.
    """
    m, keys, order, origin, label_array, values, ok, bad = _runs_by_group(data, metric, by)
    ax = new_axes(ax, (9.0, 4.5))
    low, high = value_limits(values[ok], m)
    for group in order:
        in_group = label_array == group
        points = np.sort(values[in_group & ok])
        n_failed = int((in_group & bad).sum())
        name = f"{plain(group)} (n={len(points)}" + (f", {n_failed} failed)" if n_failed
                                                      else ")")
        if not len(points):
            ax.plot([], [], label=f"{name}: no successful run")
            continue
        share = np.arange(1, len(points) + 1) / len(points) * 100
        # The step starts at 0 % from the axis' left end, then one marker per run.
        ax.step(np.r_[low, points], np.r_[0.0, share], where="post", linewidth=1.6,
                label=name, zorder=3)
        colour = ax.lines[-1].get_color()
        ax.plot(points, share, linestyle="none", marker="o", markersize=4.5, color=colour,
                zorder=4)
    ax.set_xlim(low, high)
    ax.set_ylim(0, 105)
    threshold_lines(ax, m, "x")
    ax.set_xlabel(axis_label(m))
    ax.set_ylabel("runs at or below the value (%)")
    ax.set_title(f"{m.title}: distribution of runs{_title_suffix(keys, origin)}", loc="left",
                 fontsize="medium")
    ax.grid(alpha=0.3)
    _legend(ax)
    return ax


#: The most characters of one side's name in the comparison's title.
_SIDE_CHARS = 36


def _side_text(value: object) -> str:
    """A side (``a`` / ``b``) as the title shows it: values joined by `` · ``, a URL without
    its scheme, the middle of a long name elided."""
    parts = value if isinstance(value, tuple | list) else (value,)
    text = " \u00b7 ".join(str(p).split("://", 1)[-1] for p in parts)
    if len(text) > _SIDE_CHARS:
        keep = (_SIDE_CHARS - 1) // 2
        text = f"{text[:keep]}\u2026{text[-keep:]}"
    return plain(text)


def _significant(row: Any) -> bool:
    """Whether ``compare`` called the difference significant: the verdict is worded as one
    (its text is the one authority, whatever ``confidence`` was)."""
    verdict = str(row["verdict"])
    return verdict.startswith("b ")


@shows_its_figure
def comparison(
    compare_frame: pd.DataFrame,
    ax: Axes | None = None,
    *,
    a: object = None,
    b: object = None,
) -> Axes:
    """The frame of :func:`pagelab.stats.compare` as one row per metric: the relative
    difference of b's median from a's (% of a) with its bootstrap confidence interval as a
    bar, green where b is better, red where worse, grey where the difference is not
    significant; the verdict under each metric's label. ``a`` / ``b`` name the two sides in
    the title (e.g. ``a="/fast", b="/heavy"``). Metrics whose a median is 0 have no relative
    difference and are listed without a point.
    """
    if not isinstance(compare_frame, pd.DataFrame):
        raise InvalidInputError(
            f"compare_frame: expected the frame of pagelab.stats.compare, "
            f"got {type(compare_frame).__name__}"
        )
    missing = [c for c in COMPARE_COLUMNS if c not in compare_frame.columns]
    if missing:
        raise InvalidInputError(
            f"compare_frame: missing column(s) {', '.join(missing)}; expected the frame of "
            f"pagelab.stats.compare"
        )
    rows = compare_frame.reset_index(drop=True)
    # Comparisons made within cells: each row names its cell where the cells differ.
    cells = [c for c in CELL if c in rows.columns and rows[c].nunique(dropna=False) > 1]
    cell_labels, _ = group_labels(rows, cells) if cells else (None, None)
    ax = new_axes(ax, (8.0, 1.2 + 0.62 * max(len(rows), 1)))
    ticks = []
    legend_done: set[str] = set()
    for i, row in rows.iterrows():
        m: Metric = METRICS[str(row["metric"])]
        y = len(rows) - 1 - int(str(i))
        base = float(row["a_median"])
        rel = float(row["rel_diff"])
        verdict = str(row["verdict"])
        name = m.label if cell_labels is None else (
            f"{m.label} \u00b7 {plain(cell_labels.iloc[int(str(i))])}")
        ticks.append((y, f"{name}\n{verdict}"))
        if not math.isfinite(rel) or not base:
            ax.text(0, y, "  no relative difference (a's median is 0)", va="center",
                    fontsize="small", color=_GREY)
            continue
        if _significant(row):
            better = m.is_better(float(row["b_median"]), base)
            colour, kind = (RATING_FILL["good"], "b better") if better else (
                RATING_FILL["poor"], "b worse")
        else:
            colour, kind = _GREY, "not significant"
        low, high = float(row["ci_low"]) / base * 100, float(row["ci_high"]) / base * 100
        if math.isfinite(low) and math.isfinite(high):
            ax.errorbar(rel, y, xerr=[[max(rel - low, 0)], [max(high - rel, 0)]], fmt="none",
                        ecolor=colour, elinewidth=2, capsize=4, zorder=3)
        ax.plot(rel, y, marker="o", markersize=8, color=colour, linestyle="none", zorder=4,
                label=kind if kind not in legend_done else None)
        legend_done.add(kind)
        ax.annotate(Metric.format_rel_diff(rel), (rel, y), xytext=(0, 7),
                    textcoords="offset points", ha="center", fontsize="x-small")
    ax.axvline(0, color=_MEDIAN_COLOUR, linewidth=0.8)
    ax.set_yticks([y for y, _ in ticks], [t for _, t in ticks], fontsize="small")
    ax.set_ylim(-0.7, max(len(rows), 1) - 0.3)
    ax.margins(x=0.12)
    ax.set_xlabel("b's median relative to a's (%), with the 95 % bootstrap interval")
    sides = (f": {_side_text(b)} vs {_side_text(a)}" if a is not None and b is not None
             else ": b vs a")
    # wrap: the figure's width breaks the title at spaces; _side_text keeps each side short
    # enough to fit one line (a URL has no space to break at).
    ax.set_title(f"Difference of medians{sides}", loc="left", fontsize="medium", wrap=True)
    ax.grid(axis="x", alpha=0.3)
    _legend(ax)
    return ax


def _utc_naive(times: pd.Series) -> pd.Series:
    """Timestamps as naive UTC (matplotlib's date axis then shows UTC whatever the zone)."""
    times = pd.to_datetime(times, utc=True)
    return times.dt.tz_localize(None)


#: The most commits labelled on a build axis (beyond, every k-th build is labelled).
_BUILD_LABELS = 30
#: Columns :func:`trend` reads from :func:`pagelab.stats.change_points`' frame.
_CHANGE_MARK_COLUMNS = ("metric", "commit", "rel_change", "direction")


@shows_its_figure
def trend(
    frame: object,
    metric: str,
    ax: Axes | None = None,
    *,
    by: str | Sequence[str] | None = None,
    x: str | None = None,
    changes: bool | pd.DataFrame = True,
) -> Axes:
    """A metric over time or over builds, per group (``by`` default: the cell columns that
    vary), with the good / poor thresholds as horizontal lines and failed runs as red
    crosses on the x axis (they have no value). Takes the wide frame (e.g.
    :func:`pagelab.stats.history`) or ``Results``.

    ``x="time"``: the successful runs over ``created_at`` (UTC), joined by a line.
    ``x="build"``: the builds in build order (a build's first run's ``created_at``), each
    labelled with its short commit; the successful runs as points and each build's median
    as a line (runs without a commit left out). ``x=None``: builds when any run names its
    commit, else time.

    ``changes`` marks where the level changed: a vertical line at the first build of each
    new level (on the time axis: at its first run), labelled with the change in percent,
    red for a regression and green for an improvement. True: the metric's
    :func:`pagelab.stats.change_points` (when the runs have commits); a frame of it (e.g.
    ``Results.changes()``): its rows for this metric; False: none.
    """
    data = frame_of(frame, "frame")
    m = check_metric(metric, data)
    if x not in (None, "time", "build"):
        raise InvalidInputError(f"x: {unknown_value(x, ('time', 'build'))}")
    marks = _change_marks(data, m, changes)
    keys, labels, order, origin = _groups(data, by)
    ax = new_axes(ax, (9.0, 4.5))
    if x == "build" or (x is None and has_commits(data)):
        where = _by_build(ax, data, m, keys, labels.to_numpy(), order)
        what = "over builds"
    else:
        where = _by_time(ax, data, m, keys, labels.to_numpy(), order)
        what = "over time"
    _mark_changes(ax, marks, where, keys)
    threshold_lines(ax, m, "y")
    ax.set_ylabel(axis_label(m))
    ax.set_title(f"{m.title} {what}{_title_suffix(keys, origin)}", loc="left",
                 fontsize="medium")
    ax.grid(alpha=0.3)
    _legend(ax)
    return ax


def _by_time(ax: Axes, data: pd.DataFrame, m: Metric, keys: list[str],
             label_array: np.ndarray, order: list[str]) -> dict[str, Any]:
    """The runs over ``created_at``; returns where each commit's first run is."""
    if "created_at" not in data.columns:
        raise InvalidInputError("frame: no created_at column; expected the wide frame")
    times = _utc_naive(data["created_at"])
    ok = successful(data, m) & times.notna().to_numpy(bool)
    bad = failed(data) & times.notna().to_numpy(bool)
    values = data[m.name].to_numpy(dtype="float64", na_value=np.nan)
    for group in order:
        chosen = (label_array == group) & ok
        if not chosen.any():
            continue
        part = pd.DataFrame({"t": times[chosen].to_numpy(), "v": values[chosen]}).sort_values("t")
        ax.plot(part["t"], part["v"], marker="o", markersize=4, linewidth=1.2, zorder=3,
                label=plain(group) if keys else f"runs (n={len(part)})")
    _failed_marks(ax, times[bad].to_numpy())
    ax.set_ylim(*value_limits(values[ok], m))
    ax.set_xlabel("time (UTC)")
    locator = _date_locator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(_concise(locator))
    if not has_commits(data):
        return {}
    commits = data["commit"].astype("string")
    first = times[commits.notna().to_numpy(bool)].groupby(commits.dropna().to_numpy()).min()
    return {str(commit): time for commit, time in first.items()}


def _by_build(ax: Axes, data: pd.DataFrame, m: Metric, keys: list[str],
              label_array: np.ndarray, order: list[str]) -> dict[str, Any]:
    """The runs over the builds; returns each commit's position."""
    if not has_commits(data):
        raise InvalidInputError(NO_COMMIT)
    with_commit = data["commit"].notna().to_numpy(bool)
    runs = data[with_commit]
    positions, commits = build_order(runs)
    label_array = label_array[with_commit]
    ok = successful(runs, m)
    values = runs[m.name].to_numpy(dtype="float64", na_value=np.nan)
    for group in order:
        chosen = (label_array == group) & ok
        if not chosen.any():
            continue
        medians = pd.Series(values[chosen]).groupby(positions[chosen]).median()
        line, = ax.plot(medians.index, medians.to_numpy(), linewidth=1.4, marker="_",
                        markersize=9, zorder=4,
                        label=plain(group) if keys else "median of each build")
        ax.scatter(positions[chosen], values[chosen], s=14, color=line.get_color(),
                   alpha=0.55, linewidths=0, zorder=3,
                   label=None if keys else f"runs (n={int(chosen.sum())})")
    _failed_marks(ax, positions[failed(runs)])
    ax.set_ylim(*value_limits(values[ok], m))
    ax.set_xlim(-0.5, len(commits) - 0.5)
    step = math.ceil(len(commits) / _BUILD_LABELS)
    shown = range(0, len(commits), step)
    ax.set_xticks(list(shown), [plain(short_commit(commits[i])) for i in shown],
                  rotation=90, fontsize="x-small")
    ax.set_xlabel(f"build, oldest first ({len(commits)} builds, by commit)")
    return {commit: index for index, commit in enumerate(commits)}


def _failed_marks(ax: Axes, where: np.ndarray) -> None:
    """Failed runs as red crosses on the x axis at ``where`` (they have no value)."""
    if len(where):
        ax.plot(where, np.zeros(len(where)), linestyle="none", marker="x", markersize=7,
                color=_FAILED_COLOUR, clip_on=False, zorder=5,
                transform=ax.get_xaxis_transform(), label=f"failed run ({len(where)})")


def _change_marks(data: pd.DataFrame, m: Metric, changes: bool | pd.DataFrame) -> pd.DataFrame:
    """The changes of ``m`` to mark: computed (True, when the runs have commits), given (a
    frame of :func:`pagelab.stats.change_points`) or none."""
    if isinstance(changes, pd.DataFrame):
        missing = [c for c in _CHANGE_MARK_COLUMNS if c not in changes.columns]
        if missing:
            raise InvalidInputError(
                f"changes: missing column(s) {', '.join(missing)}; expected the frame of "
                f"pagelab.stats.change_points")
        return changes[changes["metric"].astype("string") == m.name].reset_index(drop=True)
    if not isinstance(changes, bool):
        raise InvalidInputError(
            f"changes: expected True, False or the frame of pagelab.stats.change_points, "
            f"got {type(changes).__name__}")
    if not changes or not has_commits(data):
        return pd.DataFrame(columns=list(_CHANGE_MARK_COLUMNS))
    from pagelab.stats import change_points

    return change_points(data, m.name)


def _mark_changes(ax: Axes, marks: pd.DataFrame, where: dict[str, Any],
                  keys: list[str]) -> None:
    """A vertical line at the first build of each new level, coloured by its direction,
    and its change in percent (with its group's name when groups are drawn) at the top."""
    named = bool(keys) and all(k in marks.columns for k in keys)
    group_names = group_labels(marks, keys)[0] if named and len(marks) else None
    legend_done: set[str] = set()
    stacked: dict[object, int] = {}  # marks at one build are written one under the other
    for i, row in marks.iterrows():
        commit = str(row["commit"])
        if commit not in where:
            continue
        direction = str(row["direction"])
        rating = DIRECTION_RATING[direction]
        position = where[commit]
        ax.axvline(position, color=RATING_FILL[rating], linewidth=1.6, zorder=2,
                   gid=f"change:{commit}", label=direction if direction not in legend_done
                   else None)
        legend_done.add(direction)
        text = Metric.format_rel_diff(float(row["rel_change"]))
        if group_names is not None:
            text = f"{plain(group_names.iloc[int(str(i))])} {text}"
        row_index = stacked.get(position, 0)
        stacked[position] = row_index + 1
        ax.annotate(text, (position, 1), xycoords=ax.get_xaxis_transform(),
                    xytext=(3, -10 - 11 * row_index), textcoords="offset points",
                    fontsize="x-small", color=RATING_COLOURS[rating][1], zorder=6,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})


def _date_locator() -> Any:
    dates = require("matplotlib.dates", "notebook")
    return dates.AutoDateLocator(minticks=3, maxticks=8)


def _concise(locator: Any) -> Any:
    dates = require("matplotlib.dates", "notebook")
    return dates.ConciseDateFormatter(locator)


#: heatmap's aggregations (p75 / p90: linear percentiles, as pagelab.stats computes them).
_AGGS: dict[str, Any] = {
    "median": "median", "mean": "mean", "min": "min", "max": "max",
    "p75": lambda s: s.quantile(0.75), "p90": lambda s: s.quantile(0.9),
}


@shows_its_figure
def heatmap(
    frame: object,
    metric: str,
    rows: str = "url",
    columns: str = "device",
    ax: Axes | None = None,
    *,
    aggregation: str = "median",
    agg: str | None = None,
) -> Axes:
    """A metric over two axes (default URL x device): each cell the ``aggregation`` (median,
    mean, p75, p90, min, max) of its successful runs, written in the cell with its run counts
    and coloured by the metric's rating (green good, orange needs improvement, red poor; blue
    for a metric without thresholds, grey where no run succeeded). ``agg`` is deprecated."""
    aggregation = renamed_keyword("agg", agg, "aggregation", aggregation)
    patches = require("matplotlib.patches", "notebook")
    data = frame_of(frame, "frame")
    m = check_metric(metric, data)
    for what, column in (("rows", rows), ("columns", columns)):
        if not isinstance(column, str) or column not in data.columns:
            raise InvalidInputError(f"{what}: the frame has no column {column!r}")
    if rows == columns:
        raise InvalidInputError("columns: must differ from rows")
    if aggregation not in _AGGS:
        raise InvalidInputError(
            f"aggregation: {unknown_value(aggregation, _AGGS)}")
    ok = successful(data, m)
    bad = failed(data)
    row_labels, origin = group_labels(data, [rows])
    col_labels, col_origin = group_labels(data, [columns])
    row_order = ordered_groups(data, [rows], row_labels)
    col_order = ordered_groups(data, [columns], col_labels)
    table = pd.DataFrame({"r": row_labels.to_numpy(), "c": col_labels.to_numpy(),
                          "v": data[m.name].to_numpy(dtype="float64", na_value=np.nan),
                          "ok": ok, "bad": bad})
    counts = table.groupby(["r", "c"]).agg(runs=("ok", "size"), failed=("bad", "sum"))
    good_rows = table[table["ok"]]
    values = good_rows.groupby(["r", "c"])["v"].agg(_AGGS[aggregation])
    n_ok = good_rows.groupby(["r", "c"]).size()
    width, height = len(col_order), len(row_order)
    ax = new_axes(ax, (2.2 + 1.9 * width, 1.4 + 0.75 * height))
    for i, r in enumerate(row_order):
        for j, c in enumerate(col_order):
            value = values.get((r, c))
            runs = int(counts["runs"].get((r, c), 0))
            n_failed = int(counts["failed"].get((r, c), 0))
            if value is not None and np.isfinite(value):
                rating = m.rating(float(value))
                fill = RATING_FILL[rating] if rating else NEUTRAL_FILL
                text = f"{m.format(float(value))}\n{runs_text(int(n_ok.get((r, c), 0)))}"
            else:
                fill = EMPTY_FILL
                text = "no runs" if not runs else "no successful run"
            if n_failed:
                text += f", {n_failed} failed"
            ax.add_patch(patches.Rectangle((j, i), 1, 1, facecolor=fill, edgecolor="white",
                                   linewidth=2, gid=f"cell:{r}|{c}"))
            ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize="small",
                    color="#202124")
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)  # first row on top
    ax.set_xticks(np.arange(width) + 0.5, [plain(c) for c in col_order])
    ax.set_yticks(np.arange(height) + 0.5, [plain(r) for r in row_order])
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_xlabel(columns + (f" ({plain(col_origin)})" if col_origin else ""))
    ax.set_ylabel(rows + (f" ({plain(origin)})" if origin else ""))
    ax.set_title(f"{axis_label(m)}: {aggregation} of successful runs", loc="left",
                 fontsize="medium")
    if m.good is not None and m.poor is not None:
        better = "\u2264" if m.lower_is_better else "\u2265"
        worse = ">" if m.lower_is_better else "<"
        ax.legend(handles=[
            patches.Patch(color=RATING_FILL["good"], label=f"good {better} {m.format(m.good)}"),
            patches.Patch(color=RATING_FILL["needs-improvement"], label="needs improvement"),
            patches.Patch(color=RATING_FILL["poor"], label=f"poor {worse} {m.format(m.poor)}"),
        ], loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small", frameon=False)
    return ax
