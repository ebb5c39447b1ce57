"""Pictures of how two sides paint: their filmstrips on one time axis and their
visual-progress curves (:meth:`pagelab.Results.visual_progress`)."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pagelab._exceptions import InvalidInputError
from pagelab._explain import cell_name
from pagelab.frames import (
    observed_ms,
    run_screenshots,
    visual_progress_curve,
    visually_complete_ms,
)
from pagelab.models import Metric, metric, unknown_metric

from ._common import (
    frame_of,
    group_columns,
    group_labels,
    new_axes,
    ordered_groups,
    plain,
    shows_its_figure,
)
from ._run import _MARKS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["filmstrip_compare", "visual_progress"]

#: The outline of the first frame that shows the page visually complete.
COMPLETE_COLOUR = "#1a73e8"
# More frames than this in a row become unreadable: the interval is widened to fit.
_MAX_FRAMES = 40
_TIME_AXIS = "time since navigation start (ms)"
# One colour per side / group, in order (a, b, then more groups).
_SIDE_COLOURS = ("#4285f4", "#d93025", "#1e8e3e", "#f9ab00", "#a142f4", "#12b5cb")


@dataclass(frozen=True)
class _Side:
    """One side's representative run: its screenshots and its marks."""

    label: str
    test_id: str
    shots: list[tuple[float, bytes]]
    marks: list[tuple[str, float]]
    complete_ms: float


def _metrics(names: Sequence[str]) -> list[Metric]:
    if isinstance(names, str):
        names = [names]
    found = []
    for name in names:
        try:
            m = metric(str(name))
        except KeyError:
            raise InvalidInputError(f"metrics: {unknown_metric(str(name))}") from None
        if m.unit != "ms":
            raise InvalidInputError(f"metrics: {m.label} is not a time to mark on a filmstrip")
        found.append(m)
    return found


def _side(results: Any, frame: pd.DataFrame, label: str, test_id: str,
          metrics: list[Metric]) -> _Side:
    shots = run_screenshots(results, test_id)
    if not shots:
        raise InvalidInputError(f"filmstrip_compare: run {test_id} has no screenshots")
    lhr = results.lhr(test_id)
    row = frame[frame["id"].astype("string") == test_id].iloc[0]
    marks = []
    for m in metrics:
        # The observed time is on the screenshots' clock; a simulated value is not.
        at = observed_ms(lhr, m.audit_id) if m.audit_id else None
        if at is None and m.name in frame.columns and pd.notna(row[m.name]):
            at = float(row[m.name])
        if at is not None:
            marks.append((m.label, at))
    curve = visual_progress_curve(shots)
    return _Side(label, test_id, sorted(shots, key=lambda s: s[0]), marks,
                 visually_complete_ms(curve["time_ms"].tolist(), curve["progress"].tolist()))


def _sides(results: Any, by: str | Sequence[str], a: object, b: object,
           metrics: list[Metric]) -> list[tuple[str, _Side, _Side]]:
    """(cell name, a's side, b's side) for every cell both sides have runs in."""
    from pagelab.stats import compared_runs, representative_id

    if not callable(getattr(results, "lhr", None)):
        raise InvalidInputError(
            f"results: expected Results (runs and their screenshots), got {type(results).__name__}"
        )
    frame = frame_of(results, "results")
    keys = [by] if isinstance(by, str) else list(by)
    out = []
    for where, ids_a, ids_b in compared_runs(frame, by, a, b):
        chosen = [representative_id(frame, ids) for ids in (ids_a, ids_b)]
        rows = frame[frame["id"].astype("string").isin(chosen)]
        if len(rows) < len(chosen):
            # Steps of user flows have no test id (they are not stored as runs).
            raise InvalidInputError(
                "filmstrip_compare: the compared runs have no test ids to read their "
                "screenshots by")
        labels, _ = group_labels(rows, keys)
        by_id = dict(zip(rows["id"].astype(str), labels, strict=True))
        side_a, side_b = (_side(results, frame, by_id[i], i, metrics) for i in chosen)
        out.append((cell_name(where), side_a, side_b))
    return out


def _image(data: bytes) -> np.ndarray:
    from matplotlib import image as mpimg

    image: np.ndarray = mpimg.imread(io.BytesIO(data), format="jpeg")
    return image


@shows_its_figure
def filmstrip_compare(
    results: Any,
    by: str | Sequence[str],
    a: object,
    b: object,
    *,
    interval_ms: float = 100,
    metrics: Sequence[str] = ("first_contentful_paint", "largest_contentful_paint"),
    figure: Figure | None = None,
) -> Figure:
    """Side ``a`` above side ``b``, each a row of what its page showed every ``interval_ms``
    on one shared time axis (ms since navigation start), as WebPageTest's filmstrip view.

    Each row is the representative run (Lighthouse's ``computeMedianRun``) of the side in
    one cell (``by``, ``a`` and ``b`` choose the runs as :meth:`pagelab.Results.compare`
    does; several cells give a pair of rows each). A frame shows the latest screenshot at or
    before its time (every screenshot of the trace, or the LHR's thumbnails for runs stored
    without them); a blank frame is before the first. ``metrics`` are marked on each row at
    the time this browser observed them (the screenshots' clock; with simulated throttling
    the reported values are a simulation), and the first frame where the side is visually
    complete (its visual progress reaches 100) is outlined. The rows end one interval after
    the later side is complete; more than 40 frames widen the interval to a multiple of
    ``interval_ms``. Returns the matplotlib Figure: a new pyplot figure, or ``figure``
    (a bare :class:`matplotlib.figure.Figure`, sized here to fit: pyplot is not touched, as
    a report written from any thread needs).
    """
    from ._common import pyplot

    if isinstance(interval_ms, bool) or not isinstance(interval_ms, int | float) or not (
        math.isfinite(interval_ms) and interval_ms > 0
    ):
        raise InvalidInputError(f"interval_ms: expected a positive number, got {interval_ms!r}")
    marked = _metrics(metrics)
    rows = [(cell, side) for cell, side_a, side_b in _sides(results, by, a, b, marked)
            for side in (side_a, side_b)]
    sides = [side for _, side in rows]
    ends = [s.complete_ms if math.isfinite(s.complete_ms) else s.shots[-1][0] for s in sides]
    ends += [at for s in sides for _, at in s.marks]
    step = float(interval_ms)
    count = math.floor(max(ends) / step) + 2
    if count > _MAX_FRAMES:
        step *= math.ceil(count / _MAX_FRAMES)
        count = math.floor(max(ends) / step) + 2
    ticks = [i * step for i in range(count)]
    height, width = _image(sides[0].shots[-1][1]).shape[:2]
    frame_width_in = min(1.0, 16 / count)
    row_height_in = frame_width_in * 0.9 * height / width + 0.35
    size = (count * frame_width_in + 1.5, row_height_in * len(sides) + 0.6)
    fig: Figure
    if figure is None:
        fig = pyplot().figure(figsize=size, layout="constrained")
    else:
        fig = figure
        fig.set_size_inches(size)
        fig.set_layout_engine("constrained")
    axes = fig.subplots(len(sides), 1, sharex=True, squeeze=False)
    for position, (cell, side) in enumerate(rows):
        ax = axes[position][0]
        _draw_row(ax, side, ticks, step)
        where = f" ({plain(cell)})" if cell else ""
        ax.set_title(f"{plain(side.label)}{where}: {side.test_id}", fontsize=9, loc="left")
    bottom = axes[-1][0]
    bottom.set_xlim(-step / 2, ticks[-1] + step / 2)
    bottom.set_xticks(ticks[:: max(1, count // 12)])
    bottom.set_xlabel(_TIME_AXIS)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = [Line2D([], [], color=_MARKS.get(m.label, "#5f6368"), linestyle="--",
                      label=m.label) for m in marked]
    handles.append(Patch(fill=False, edgecolor=COMPLETE_COLOUR, linewidth=2,
                         label="visually complete"))
    axes[0][0].legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.12), ncols=3,
                      fontsize=8, frameon=False)
    return fig


def _draw_row(ax: Axes, side: _Side, ticks: list[float], step: float) -> None:
    from matplotlib.patches import Rectangle

    width = step * 0.9
    complete_tick = next((t for t in ticks if t >= side.complete_ms), None)
    for tick in ticks:
        shown = [data for at, data in side.shots if at <= tick]
        left = tick - width / 2
        if shown:
            ax.imshow(_image(shown[-1]), extent=(left, left + width, 0, 1), aspect="auto",
                      interpolation="antialiased")
        outlined = tick == complete_tick
        ax.add_patch(Rectangle((left, 0), width, 1, fill=False,
                               edgecolor=COMPLETE_COLOUR if outlined else "#dadce0",
                               linewidth=2.2 if outlined else 0.8, zorder=3))
    # Marks at (nearly) the same time share a line and a label ("FCP, LCP 196 ms").
    groups: list[tuple[float, list[str]]] = []
    for at, label in sorted((at, label) for label, at in side.marks):
        if groups and at - groups[-1][0] <= step / 4:
            groups[-1][1].append(label)
        else:
            groups.append((at, [label]))
    for at, labels in groups:
        colour = _MARKS.get(labels[-1], "#5f6368")
        ax.axvline(at, color=colour, linestyle="--", linewidth=1.2, zorder=4)
        ax.text(at, 1.02, f" {', '.join(labels)} {at:,.0f} ms", color=colour, fontsize=7,
                va="bottom", clip_on=False)
    ax.set_ylim(0, 1.14)
    ax.set_yticks([])
    for spine in ("top", "right", "left"):
        ax.spines[spine].set_visible(False)


@shows_its_figure
def visual_progress(
    results: Any,
    by: str | Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """The visual-progress curves (:meth:`pagelab.Results.visual_progress`) of each group of
    ``by`` (default: the cell columns that vary): every run a thin step line, the group's
    representative run (Lighthouse's ``computeMedianRun``) a bold one; x is ms since
    navigation start, y percent visually complete."""
    from pagelab.stats import representative_runs

    if not callable(getattr(results, "visual_progress", None)):
        raise InvalidInputError(
            f"results: expected Results (runs and their screenshots), got {type(results).__name__}"
        )
    frame = frame_of(results, "results")
    keys = group_columns(frame, by)
    curves = results.visual_progress()
    if curves.empty:
        raise InvalidInputError("visual_progress: no successful run to draw")
    runs = frame[frame["id"].astype("string").isin(curves["id"].astype("string").unique())]
    labels, _ = group_labels(runs, keys)
    label_of = dict(zip(runs["id"].astype(str), labels, strict=True))
    representative = set()
    if "first_contentful_paint" in runs.columns:
        chosen = representative_runs(runs, by=keys or None).dropna()
        representative = {str(runs.at[label, "id"]) for label in chosen}
    ax = new_axes(ax, (9, 4.2))
    end = float(curves["time_ms"].max())
    order = ordered_groups(runs, keys, labels)
    for number, group in enumerate(order):
        colour = _SIDE_COLOURS[number % len(_SIDE_COLOURS)]
        for test_id, curve in curves.groupby(curves["id"].astype(str), sort=False):
            if label_of.get(test_id) != group:
                continue
            bold = test_id in representative
            times = [0.0, *curve["time_ms"], end * 1.05]
            values = [0.0, *curve["progress"], float(curve["progress"].iloc[-1])]
            ax.step(times, values, where="post", color=colour,
                    linewidth=2.2 if bold else 0.8, alpha=1.0 if bold else 0.45,
                    label=plain(group) if bold else None, zorder=3 if bold else 2)
    ax.set_xlim(0, end * 1.05)
    ax.set_ylim(0, 103)
    ax.set_xlabel(_TIME_AXIS)
    ax.set_ylabel("visually complete (%)")
    ax.grid(color="#e8eaed", linewidth=0.8)
    ax.set_axisbelow(True)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    ax.set_title("Visual progress (bold: each group's representative run)", fontsize=10,
                 loc="left")
    return ax
