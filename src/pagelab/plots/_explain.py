"""Pictures of a difference between two runs: waterfalls on one time axis and the ranked
contributions of an :class:`~pagelab.stats.Explanation` (filmstrips on one time axis are
:func:`~pagelab.plots.filmstrip_compare`'s)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagelab._exceptions import InvalidInputError
from pagelab._explain import amount, causes, item_text

from ._common import plain, pyplot, shows_its_figure
from ._run import waterfall

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from pagelab.stats import Explanation

__all__ = ["compare_waterfalls", "contributions"]

# Bar colour per kind of contribution.
_KIND_COLOURS = {
    "request": "#f9ab00",
    "entity": "#a142f4",
    "resource type": "#4285f4",
    "main thread": "#d93025",
    "INP phase": "#e8710a",
    "user timing": "#1e8e3e",
}


def _two_axes(axes: Sequence[Axes] | None, figsize: tuple[float, float]) -> tuple[Axes, Axes]:
    if axes is None:
        _, found = pyplot().subplots(2, 1, figsize=figsize, layout="constrained")
        return found[0], found[1]
    if len(axes) != 2:
        raise InvalidInputError("axes: expected two Axes (a above b)")
    return axes[0], axes[1]


@shows_its_figure
def compare_waterfalls(
    a: Mapping[str, Any] | str, b: Mapping[str, Any] | str,
    axes: Sequence[Axes] | None = None, *, labels: tuple[str, str] = ("a", "b"),
) -> tuple[Axes, Axes]:
    """Two runs' request waterfalls, a above b, on one time axis (ms since navigation
    start). ``a`` and ``b`` are LHRs (``results.lhr(id)``, ``runner.lhr(report)``)."""
    from pagelab.frames import requests

    frames = [requests(a), requests(b)]
    rows = max(len(frames[0]), len(frames[1]), 1)
    top, bottom = _two_axes(axes, (10, 2.6 + 0.64 * rows))
    for ax, frame, label in zip((top, bottom), frames, labels, strict=True):
        waterfall(frame, ax)
        ax.set_title(f"{plain(label)}: {ax.get_title(loc='left')}", fontsize=10, loc="left")
    right = max(top.get_xlim()[1], bottom.get_xlim()[1])
    for ax in (top, bottom):
        ax.set_xlim(0, right)
    return top, bottom


@shows_its_figure
def contributions(explanation: Explanation, ax: Axes | None = None, *,
                  top: int = 12) -> Axes:
    """The ``top`` contributions of an explanation as bars of their weight (ms: a time
    delta as it is, bytes as the time they take at the runs' throughput), right of zero
    when b has more, left when less, coloured by kind. Each cause once: the totals of the
    same bytes by entity and resource type are the explanation's table's, not bars here;
    main-thread categories in words."""
    frame = causes(explanation.frame).head(top)
    frame = frame[frame["weight_ms"] > 0]
    if frame.empty:
        raise InvalidInputError("contributions: nothing to draw (no difference found)")
    if ax is None:
        _, ax = pyplot().subplots(figsize=(10, 1.0 + 0.42 * len(frame)), layout="constrained")
    assert ax is not None
    rows = list(range(len(frame)))
    signed = [w if d >= 0 else -w for w, d in zip(frame["weight_ms"], frame["delta"],
                                                    strict=True)]
    colours = [_KIND_COLOURS.get(str(k), "#80868b") for k in frame["kind"]]
    ax.barh(rows, signed, color=colours, height=0.6)
    names = [
        f"{_short(item_text(str(kind), str(item), explanation.labels))} "
        f"({amount(delta, str(unit), signed=True)})"
        for kind, item, delta, unit in zip(frame["kind"], frame["item"], frame["delta"],
                                           frame["unit"], strict=True)
    ]
    ax.set_yticks(rows, [plain(n) for n in names], fontsize=8)
    ax.set_ylim(len(frame) - 0.5, -0.5)
    ax.axvline(0, color="#5f6368", linewidth=0.8)
    ax.set_xlabel(f"contribution, ms ({plain(explanation.b_label)} minus "
                  f"{plain(explanation.a_label)}; bytes as download time)")
    ax.grid(axis="x", color="#e8eaed", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    from matplotlib.patches import Patch

    kinds = [k for k in _KIND_COLOURS if k in set(map(str, frame["kind"]))]
    ax.legend(handles=[Patch(color=_KIND_COLOURS[k], label=k) for k in kinds],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    ax.set_title("Why it differs: contributions, largest first", fontsize=10, loc="left")
    return ax


def _short(item: str) -> str:
    if "://" not in item:
        return item
    tail = item.split("://", 1)[1]
    host, _, path = tail.partition("/")
    name = path.rsplit("/", 1)[-1] or host
    return f"{name} ({host})" if len(name) < 40 else name[:39] + "\u2026"
