"""How field data shows itself: readable notebook tables (HTML) and terminal text.

The frames :func:`pagelab.field.record`, :func:`pagelab.field.history` and
:meth:`pagelab.Results.versus_field` return are plain DataFrames in every way, displayed in a
notebook as the other pagelab tables are (registry rounding and units, rating colours).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from pagelab._html import MISSING, Markup, table
from pagelab._readable import READABLE_BOX, ReadableFrame
from pagelab.models import METRICS, metric_value

__all__ = ["VERSUS_NOTE", "FieldHistory", "FieldRecord", "LabVersusField", "field_text",
           "history_text", "versus_table"]

_TITLE = Markup("<div><strong>{}</strong></div>")
_NOTE = Markup('<div style="color:#5f6368;font-size:12px">{}</div>')


def _percent(value: object) -> str:
    return MISSING if not isinstance(value, float) or math.isnan(value) else f"{value:.0%}"


def _day(value: object) -> str:
    return value.strftime("%Y-%m-%d") if isinstance(value, pd.Timestamp) else MISSING


def _period(frame: pd.DataFrame) -> str:
    if frame.empty:
        return ""
    return f"{_day(frame['first_date'].min())} to {_day(frame['last_date'].max())}"


def _heading(frame: pd.DataFrame) -> str:
    """``page https://… (phone), 2026-10-31 to 2026-11-27``, one line per target."""
    lines = []
    for (target, level, form), part in frame.groupby(
            ["target", "level", "form_factor"], sort=False, dropna=False):
        lines.append(f"Chrome UX Report, {level} {target} ({form}), {_period(part)}")
    return "; ".join(lines) or "Chrome UX Report: no metrics"


def _ratio(value: object) -> str:
    return MISSING if not isinstance(value, float) or math.isnan(value) else f"\u00d7{value:.2f}"


def _float(value: object) -> float | None:
    return None if value is None or value is pd.NA or (
        isinstance(value, float) and math.isnan(value)) else float(value)  # type: ignore[arg-type]


class FieldRecord(ReadableFrame):
    """:func:`pagelab.field.record`'s frame, displayed readably."""

    def _repr_html_(self) -> str:
        rows = [
            [METRICS[str(r.metric)].label, metric_value(METRICS[str(r.metric)], _float(r.p75)),
             _percent(r.good), _percent(r.needs_improvement), _percent(r.poor),
             r.rating if isinstance(r.rating, str) else MISSING]
            for r in self.itertuples()
        ]
        body = table(["metric", "p75", "good", "needs improvement", "poor", "rating"], rows,
                     css_class="pagelab-field")
        note = _NOTE.format("p75 of real Chrome users' page loads over 28 days; good / needs "
                            "improvement / poor: their shares")
        return str(READABLE_BOX.format(
            "pagelab-field-box", _TITLE.format(_heading(self)) + body + note, self._hint(body)))


class FieldHistory(ReadableFrame):
    """:func:`pagelab.field.history`'s frame, displayed as the p75 per weekly period."""

    def _repr_html_(self) -> str:
        names = [n for n in METRICS if n in set(self["metric"])]
        rows = []
        for last, part in self.groupby("last_date", sort=True, dropna=False):
            p75 = dict(zip(part["metric"], part["p75"], strict=True))
            rows.append([_day(last), *(metric_value(METRICS[n], _float(p75.get(n)))
                                       for n in names)])
        headers = ["period ending", *(METRICS[n].label for n in names)]
        body = table(headers, rows, css_class="pagelab-field-history")
        note = _NOTE.format("p75 per 28-day window, one window a week; a dash: too few users "
                            "that week")
        return str(READABLE_BOX.format(
            "pagelab-field-box", _TITLE.format(_heading(self)) + body + note, self._hint(body)))


class LabVersusField(ReadableFrame):
    """:meth:`pagelab.Results.versus_field`'s frame: lab medians beside field p75."""

    def _repr_html_(self) -> str:
        body = versus_table(self)
        note = _NOTE.format(VERSUS_NOTE)
        return str(READABLE_BOX.format(
            "pagelab-field-box", _TITLE.format("Lab beside field") + body + note,
            self._hint(body)))


#: What the lab-beside-field table compares, under it (notebook and HTML report).
VERSUS_NOTE = ("lab: the median of emulated runs; field: p75 of 28 days of real Chrome users "
               "(the Chrome UX Report); 'origin': the page had no record of its own")


def versus_table(frame: pd.DataFrame) -> Markup:
    """:meth:`pagelab.Results.versus_field`'s frame as a table: a row per cell and metric,
    both values coloured by their ratings."""
    cells = [c for c in ("url", "device", "location", "connection") if c in frame.columns
             and frame[c].notna().any()]
    rows = []
    for r in frame.to_dict("records"):
        m = METRICS[r["metric"]]
        level = r["field_level"] if isinstance(r["field_level"], str) else "none"
        ratio = _float(r["ratio"])
        rows.append([*(str(r[c]) if r[c] is not pd.NA else MISSING for c in cells),
                     r["form_factor"], m.label,
                     metric_value(m, _float(r["lab_median"])),
                     metric_value(m, _float(r["field_p75"])),
                     _ratio(math.nan if ratio is None else ratio), level])
    headers = [*cells, "form factor", "metric", "lab median", "field p75", "lab / field",
               "field data of"]
    return table(headers, rows, css_class="pagelab-versus-field",
                 align=["left"] * (len(cells) + 2) + ["right"] * 3 + ["left"],
                 wrap=[c == "url" for c in cells] + [False] * 6)


def _text_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                       for i, (h, w) in enumerate(zip(headers, widths, strict=True)))]
    lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths, strict=True))) for r in rows]
    return "\n".join(lines)


def field_text(frame: pd.DataFrame) -> str:
    """A record as terminal text: the heading, then a line per metric."""
    rows = [[METRICS[str(r.metric)].label, METRICS[str(r.metric)].format(_float(r.p75)),
             _percent(r.good), _percent(r.needs_improvement), _percent(r.poor),
             r.rating if isinstance(r.rating, str) else MISSING]
            for r in frame.itertuples()]
    return _heading(frame) + "\n" + _text_table(
        ["metric", "p75", "good", "needs impr.", "poor", "rating"], rows)


def history_text(frame: pd.DataFrame) -> str:
    """A history as terminal text: a line per weekly period, the p75 of each metric."""
    names = [n for n in METRICS if n in set(frame["metric"])]
    rows: list[list[str]] = []
    for last, part in frame.groupby("last_date", sort=True, dropna=False):
        p75: dict[Any, Any] = dict(zip(part["metric"], part["p75"], strict=True))
        rows.append([_day(last), *(METRICS[n].format(_float(p75.get(n)), unit=False)
                                   for n in names)])
    return _heading(frame) + "\n" + _text_table(
        ["period ending", *(METRICS[n].header for n in names)], rows)
