"""Field data plots: lab beside field per metric, and the field p75 over time.

They take the frames of :mod:`pagelab.field` (:meth:`pagelab.Results.versus_field`,
:func:`pagelab.field.history`) and draw the metric registry's thresholds shaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np
import pandas as pd

from pagelab._exceptions import InvalidInputError
from pagelab.models import RATING_FILL, Metric, metric

from ._common import (
    NEUTRAL_FILL,
    axis_label,
    new_axes,
    plain,
    shows_its_figure,
    threshold_lines,
    value_limits,
)
from ._matrix import _concise, _date_locator, _legend

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["field_history", "versus_field"]

_VERSUS = ("url", "form_factor", "metric", "lab_median", "field_p75", "field_level")
_HISTORY = ("target", "form_factor", "metric", "last_date", "p75")


def _checked(data: object, columns: tuple[str, ...], what: str) -> pd.DataFrame:
    if not isinstance(data, pd.DataFrame) or not set(columns) <= set(data.columns):
        raise InvalidInputError(f"{what}: expected the frame of {what} (columns "
                                f"{', '.join(columns)}), got {type(data).__name__}")
    return data


def _metric(name: object) -> Metric:
    if not isinstance(name, str):
        raise InvalidInputError(f"metric: expected a metric name such as 'LCP', got {name!r}")
    try:
        return metric(name)
    except KeyError as exc:
        raise InvalidInputError(f"metric: {exc.args[0]}") from None


def _fill(m: Metric, value: float) -> str:
    rating = m.rating(float(value))
    return RATING_FILL[rating] if rating else NEUTRAL_FILL


def _cell_label(row: pd.Series) -> str:
    url = str(row["url"])
    parts = urlsplit(url)
    label = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    device = row.get("device")
    return f"{label} \u00b7 {device}" if isinstance(device, str) else label


@shows_its_figure
def versus_field(table: pd.DataFrame, metric: str = "largest_contentful_paint",
                 ax: Axes | None = None) -> Axes:
    """Lab beside field for one metric: per cell (a row), the lab median (a dot) and the
    field p75 (a diamond; hollow when it is the origin's, the page having no record of its
    own), joined by a line, each filled by its rating; the good / poor zones shaded. Takes
    :meth:`pagelab.Results.versus_field`'s frame."""
    data = _checked(table, _VERSUS, "versus_field")
    m = _metric(metric)
    rows = data[data["metric"] == m.name].reset_index(drop=True)
    ax = new_axes(ax, (8.0, max(2.2, 0.55 * len(rows) + 1.4)))
    lab = rows["lab_median"].to_numpy(dtype="float64", na_value=np.nan)
    field = rows["field_p75"].to_numpy(dtype="float64", na_value=np.nan)
    labels = [_cell_label(row) for _, row in rows.iterrows()]
    y = np.arange(len(rows))[::-1]
    levels = rows["field_level"].astype(object).tolist()
    for i, at in enumerate(y):
        if not np.isnan(lab[i]) and not np.isnan(field[i]):
            ax.plot([lab[i], field[i]], [at, at], color="#9aa0a6", linewidth=1.2, zorder=2)
        if not np.isnan(lab[i]):
            ax.scatter([lab[i]], [at], s=60, marker="o", zorder=3, color=_fill(m, lab[i]),
                       edgecolors="#202124", label="lab median")
        if not np.isnan(field[i]):
            origin = levels[i] == "origin"
            colour = _fill(m, field[i])
            ax.scatter([field[i]], [at], s=70, marker="D", zorder=4,
                       color="white" if origin else colour,
                       edgecolors=colour if origin else "#202124",
                       linewidths=1.8 if origin else 1.0,
                       label="field p75 (origin's)" if origin else "field p75")
    values = np.concatenate([lab, field])
    ax.set_xlim(*value_limits(values[~np.isnan(values)], m))
    threshold_lines(ax, m, "x")
    ax.set_yticks(y, [plain(label) for label in labels])
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(axis_label(m))
    ax.set_title(f"{m.title}: lab median vs field p75", loc="left", fontsize="medium")
    ax.grid(axis="x", alpha=0.3)
    _dedupe_legend(ax)
    return ax


def _dedupe_legend(ax: Axes) -> None:
    handles, texts = ax.get_legend_handles_labels()
    seen: dict[str, Any] = {}
    for handle, text in zip(handles, texts, strict=True):
        seen.setdefault(text, handle)
    if seen:
        ax.legend(list(seen.values()), list(seen), fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.01, 1), frameon=False)


@shows_its_figure
def field_history(frame: pd.DataFrame, metric: str = "largest_contentful_paint",
                  ax: Axes | None = None) -> Axes:
    """The field p75 of one metric over time: a line per page or origin and form factor,
    a point per weekly period (at the end of its 28 days), gaps where a period had too few
    users; the good / poor zones shaded. Takes :func:`pagelab.field.history`'s frame."""
    data = _checked(frame, _HISTORY, "history")
    m = _metric(metric)
    rows = data[data["metric"] == m.name]
    ax = new_axes(ax, (9.0, 4.5))
    for (target, form), part in rows.groupby(["target", "form_factor"], sort=False):
        part = part.sort_values("last_date")
        ax.plot(pd.to_datetime(part["last_date"]).to_numpy(),
                part["p75"].to_numpy(dtype="float64", na_value=np.nan), marker="o",
                markersize=4, linewidth=1.2, zorder=3, label=plain(f"{target} ({form})"))
    values = rows["p75"].to_numpy(dtype="float64", na_value=np.nan)
    ax.set_ylim(*value_limits(values[~np.isnan(values)], m))
    threshold_lines(ax, m, "y")
    ax.set_ylabel(f"p75 {axis_label(m)}")
    ax.set_xlabel("end of the 28-day period")
    locator = _date_locator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(_concise(locator))
    ax.set_title(f"{m.title} in the field (p75) over time", loc="left", fontsize="medium")
    ax.grid(alpha=0.3)
    _legend(ax)
    return ax
