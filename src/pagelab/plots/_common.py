"""What the matrix plots share: input checks, grouping, labels, threshold lines, new axes.

matplotlib is imported on use (``pagelab[notebook]``) and the backend is never switched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import wraps
from itertools import pairwise
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar
from urllib.parse import urlsplit

import numpy as np
import pandas as pd

from pagelab._exceptions import InvalidInputError
from pagelab._extras import require
from pagelab.frames import CELL
from pagelab.models import RATING_FILL, Metric, metric, mode_measures, unknown_metric

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "axis_label",
    "check_metric",
    "frame_of",
    "group_columns",
    "group_labels",
    "measuring",
    "new_axes",
    "plain",
    "shows_its_figure",
    "successful",
    "threshold_lines",
]

#: A cell or bar with a value but no thresholds, and one without any successful run.
NEUTRAL_FILL = "#aecbfa"
EMPTY_FILL = "#f1f3f4"
#: Threshold lines: the boundary's colour, darker than the fill so it reads on white.
_LINE_COLOURS = {"good": "#0d8a4a", "poor": "#d93025"}


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _nothing() -> None:
    """What a plot's Axes show as a cell's result: nothing; the figure shows itself."""


class _AxesPair(tuple):  # type: ignore[type-arg]
    """Two Axes (a above b), a tuple in every way, that show nothing as a cell's result."""

    __slots__ = ()

    def _ipython_display_(self) -> None:
        pass


def _shown_once(figure: Figure) -> Callable[[], None]:
    """How a plot's Figure shows in a notebook: once. The first display (the cell's result,
    or the inline backend's at the cell's end, ``;`` or not) closes the figure in pyplot, so
    the backend does not show it again, and shows it as any figure shows."""

    def show() -> None:
        from IPython.display import display

        del figure._ipython_display_  # type: ignore[attr-defined]
        pyplot().close(figure)
        display(figure)  # type: ignore[no-untyped-call]

    return show


def shows_its_figure(plot: Callable[_P, _R]) -> Callable[_P, _R]:
    """``plot`` returns Axes (or a pair of them) that IPython does not print as a cell's
    last line: the figure is what shows, not ``<Axes: ...>`` above it (IPython asks an
    object for ``_ipython_display_`` first; only these Axes have one, so other plots in
    the notebook print as they always did); a Figure it returns shows once."""

    @wraps(plot)
    def drawing(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        from matplotlib.figure import Figure  # drawn: matplotlib is loaded

        drawn = plot(*args, **kwargs)
        if isinstance(drawn, tuple):
            return _AxesPair(drawn)  # type: ignore[return-value]
        shown = _shown_once(drawn) if isinstance(drawn, Figure) else _nothing
        setattr(drawn, "_ipython_display_", shown)  # noqa: B010 (an instance attribute)
        return drawn

    return drawing


def pyplot() -> Any:
    return require("matplotlib.pyplot", "notebook")


def plain(text: object) -> str:
    """Text as matplotlib shows it literally (a ``$`` would start mathtext)."""
    return str(text).replace("$", r"\$")


def frame_of(data: object, what: str = "data") -> pd.DataFrame:
    """The wide frame of ``data``: a DataFrame, or anything with a ``.frame`` (``Results``)."""
    frame = data if isinstance(data, pd.DataFrame) else getattr(data, "frame", None)
    if not isinstance(frame, pd.DataFrame):
        raise InvalidInputError(
            f"{what}: expected a wide frame (pagelab.frames.to_frame) or Results, "
            f"got {type(data).__name__}"
        )
    return frame


def check_metric(name: object, frame: pd.DataFrame) -> Metric:
    """The registry entry of ``name`` (spec name or label), which ``frame`` must hold."""
    if not isinstance(name, str):
        raise InvalidInputError(f"metric: expected a metric name such as 'largest_contentful_"
                                f"paint' or 'LCP', got {name!r}")
    try:
        m = metric(name)
    except KeyError:
        raise InvalidInputError(f"metric: {unknown_metric(name)}") from None
    if m.name not in frame.columns:
        raise InvalidInputError(f"metric: the frame has no column {m.name!r}")
    return m


def successful(frame: pd.DataFrame, m: Metric | None = None) -> np.ndarray:
    """Rows of successful runs (with a value of ``m`` when given): failed runs have no
    metrics and are never drawn, least of all as zeros."""
    if "status" in frame.columns:
        ok = (frame["status"].astype("string") == "success").fillna(False).to_numpy(bool)
    else:
        ok = np.ones(len(frame), dtype=bool)
    if m is not None:
        ok &= frame[m.name].notna().to_numpy(bool)
    return ok


def failed(frame: pd.DataFrame) -> np.ndarray:
    """Rows of runs that finished failed (not those still pending)."""
    if "status" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    return (frame["status"].astype("string") == "failed").fillna(False).to_numpy(bool)


def measuring(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """``frame`` without the user-flow steps whose mode does not measure metric ``name``
    (a snapshot, INP on a navigation): they are not runs without a value, they are not
    runs of that metric. Page runs and failed steps stay."""
    if "mode" not in frame.columns:
        return frame
    modes = frame["mode"].astype(object)
    keep = [not isinstance(mode, str) or mode_measures(mode, name) for mode in modes]
    return frame[keep]


def group_columns(frame: pd.DataFrame, by: str | Sequence[str] | None) -> list[str]:
    """The grouping columns: ``by``, or the cell columns (URL, device, location, connection)
    that take more than one value, or none (every run one group)."""
    if by is None:
        return [c for c in CELL if c in frame.columns and frame[c].nunique(dropna=True) > 1]
    keys = [by] if isinstance(by, str) else list(by)
    for key in keys:
        if not isinstance(key, str) or key not in frame.columns:
            raise InvalidInputError(
                f"by: the frame has no column {key!r}; valid: {', '.join(map(str, frame.columns))}"
            )
    return list(dict.fromkeys(keys))


def _common_origin(urls: pd.Series) -> str | None:
    origins = {f"{p.scheme}://{p.netloc}" for p in map(urlsplit, urls.dropna().astype(str))}
    return origins.pop() if len(origins) == 1 else None


def group_labels(frame: pd.DataFrame, keys: list[str]) -> tuple[pd.Series, str | None]:
    """A label per row naming its group (values joined by `` · ``), and the origin left out
    of URL labels when every URL shares it (``/fast`` for ``http://demo.test/fast``)."""
    if not keys:
        url = frame["url"].dropna() if "url" in frame.columns else pd.Series([], dtype=str)
        label = str(url.iloc[0]) if len(url) and url.nunique() == 1 else "all runs"
        return pd.Series(label, index=frame.index, dtype=object), None
    origin = _common_origin(frame["url"]) if "url" in keys else None
    parts = []
    for key in keys:
        values = frame[key].astype(object).where(frame[key].notna(), "\u2013").astype(str)
        if key == "url" and origin is not None:
            values = values.map(lambda u: u[len(origin):] or "/" if u.startswith(origin) else u)
        parts.append(values)
    labels = parts[0]
    for part in parts[1:]:
        labels = labels + " \u00b7 " + part
    return labels, origin


def ordered_groups(frame: pd.DataFrame, keys: list[str], labels: pd.Series) -> list[str]:
    """Group labels in the frame's sort order of the key columns (categories in their
    declared order), each once."""
    if not keys:
        return list(dict.fromkeys(labels))
    order = frame[keys].copy()
    order["_label"] = labels
    order = order.sort_values(keys, kind="stable", na_position="last")
    return list(dict.fromkeys(order["_label"]))


def axis_label(m: Metric) -> str:
    """The value axis: the registry's header with the unit (``LCP (ms)``, ``CLS (unitless)``,
    ``Score (0-100)``)."""
    if m.unit == "score":
        return f"{m.header} (0\u2013100)"
    if m.unit == "unitless":
        return f"{m.header} (unitless)"
    return m.header


def threshold_lines(ax: Axes, m: Metric, axis: str) -> list[Any]:
    """The good / poor boundaries of ``m`` as lines across the plot (``axis`` the value
    axis, ``"x"`` or ``"y"``), drawn where they fall inside the data's range, with the
    zones shaded faintly; nothing for a metric without thresholds."""
    if m.good is None or m.poor is None:
        return []
    low, high = ax.get_xlim() if axis == "x" else ax.get_ylim()
    lines = []
    better, worse = ("\u2264", ">") if m.lower_is_better else ("\u2265", "<")
    for value, rating, text in (
        (m.good, "good", f"good {better} "),
        (m.poor, "poor", f"poor {worse} "),
    ):
        if not low <= value <= high:
            continue
        draw = ax.axvline if axis == "x" else ax.axhline
        lines.append(draw(value, color=_LINE_COLOURS[rating], linestyle="--", linewidth=1.2,
                          label=text + m.format(value), zorder=1))
    # Zones between the boundaries (and the view's ends), shaded under everything.
    cuts = sorted((low, *(v for v in (m.good, m.poor) if low < v < high), high))
    for start, end in pairwise(cuts):
        zone = m.rating((start + end) / 2)
        if zone is None:
            continue
        span = ax.axvspan if axis == "x" else ax.axhspan
        span(start, end, color=RATING_FILL[zone], alpha=0.08, linewidth=0, zorder=0)
    if axis == "x":
        ax.set_xlim(low, high)
    else:
        ax.set_ylim(low, high)
    return lines


def value_limits(values: np.ndarray, m: Metric) -> tuple[float, float]:
    """The value axis' range: from 0 (every metric is non-negative) to a little over the
    largest value; scores up to 100."""
    top = float(np.nanmax(values)) if len(values) and np.isfinite(values).any() else 0.0
    if m.unit == "score":
        return 0.0, 102.0
    if top <= 0:
        top = 1.0 if m.unit == "unitless" else 100.0
    return 0.0, top * 1.08


def new_axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    """``ax``, or the axes of a new figure (``pyplot.subplots``: shown inline in Jupyter,
    the backend left as it is) of ``size`` inches."""
    if ax is not None:
        return ax
    _, created = pyplot().subplots(figsize=size, layout="constrained")
    return created  # type: ignore[no-any-return]
