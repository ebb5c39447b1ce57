"""The metric registry: the one place that knows what each of the nine metrics is.

Every part of pagelab that names, formats, colours, compares or budgets a metric reads it from
here: frames (units), the engine's LHR mapping (audit ids), the service's pages, the CLI
tables, statistics (direction), plots (labels, thresholds) and budgets.

Thresholds are the web-vitals "good" / "poor" boundaries where web.dev publishes them (FCP,
LCP, CLS, TTFB) and Lighthouse's mobile scoring control points otherwise (TBT, TTI, Speed
Index); the score uses Lighthouse's colour bands (90 and 50). A value is *good* when it is at
or better than ``good``, *poor* when it is worse than ``poor``, else *needs improvement*.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from ._validation import unknown_value

__all__ = [
    "FIELD_METRICS",
    "HEADLINE_METRICS",
    "METRICS",
    "METRIC_NAMES",
    "RATING_COLOURS",
    "RATING_FILL",
    "USER_TIMING_PREFIX",
    "Direction",
    "Metric",
    "Rating",
    "metric",
    "metric_columns",
    "unknown_metric",
    "user_timing_values",
]


class Direction(StrEnum):
    """Which way is better."""

    LOWER = "lower"
    HIGHER = "higher"


Rating = Literal["good", "needs-improvement", "poor"]

#: The one palette: rating -> (background, text) colours, web-vitals' green / amber / red
#: with text dark enough to read on them (contrast >= 4.5:1). Tables, pills, the widgets'
#: cells, the export report and the service's pages all read it from here.
RATING_COLOURS: dict[Rating, tuple[str, str]] = {
    "good": ("#e6f4ea", "#0d652d"),
    "needs-improvement": ("#fef3e0", "#8a4b00"),
    "poor": ("#fce8e6", "#a50e0e"),
}
#: The same palette for plots: rating -> fill of points, bars and heat-map cells (Lighthouse's
#: green / orange / red; the pale table backgrounds above are too light for a plot).
RATING_FILL: dict[Rating, str] = {
    "good": "#0cce6b",
    "needs-improvement": "#ffa400",
    "poor": "#ff4e42",
}


@dataclass(frozen=True, slots=True)
class Metric:
    """What one metric is: its name, how to show it, which way is better, its thresholds."""

    #: The spec's field name, also the wide frame's column.
    name: str
    #: Short label, as Lighthouse and web.dev write it (``LCP``).
    label: str
    #: Full name (``Largest Contentful Paint``).
    title: str
    #: ``ms``, ``unitless`` or ``score`` (0-100).
    unit: str
    direction: Direction
    #: Lighthouse audit id whose ``numericValue`` gives the value (None: the score).
    audit_id: str | None
    #: ``format(value, spec)`` spec for a value (without its unit).
    spec: str
    #: Good / poor boundaries (None where no published threshold exists).
    good: float | None = None
    poor: float | None = None
    #: The Chrome UX Report API's name of the same metric measured in the field
    #: (:mod:`pagelab.field`); None where the report has no counterpart.
    field_id: str | None = None

    @property
    def lower_is_better(self) -> bool:
        return self.direction is Direction.LOWER

    @property
    def smallest_change(self) -> float:
        """The smallest change of a level that counts as one, in the metric's unit: 10 ms
        for times, 0.01 for CLS, 1 point of score (:func:`pagelab.stats.change_points`)."""
        return _SMALLEST_CHANGE[self.unit]

    @property
    def header(self) -> str:
        """Column header with the unit, e.g. ``LCP (ms)``, ``CLS``, ``Score``."""
        return f"{self.label} (ms)" if self.unit == "ms" else self.label

    def format(self, value: float | None, *, unit: bool = True) -> str:
        """``3,120 ms``, ``0.318``, ``54``; an en dash for a missing value."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "\u2013"
        text = format(value, self.spec)
        return f"{text} ms" if unit and self.unit == "ms" else text

    def format_diff(self, value: float | None, *, unit: bool = True) -> str:
        """A difference with its sign: ``+1,234 ms``, ``-0.012``, ``0 ms`` for none. A real
        difference the metric's precision would round to 0 gets the digits that show it
        (``-0.4 ms``, never ``-0 ms``)."""
        if value is None or math.isnan(value):
            return "\u2013"
        if value == 0:
            text = format(0.0, self.spec)
        else:
            spec = self.spec
            decimals = _decimals(spec)
            if decimals is not None and float(format(value, f".{decimals}f")) == 0:
                needed = max(decimals, -math.floor(math.log10(abs(value))))
                spec = spec[: spec.rindex(".")] + f".{needed}f"
            text = format(value, "+" + spec)
        return f"{text} ms" if unit and self.unit == "ms" else text

    @staticmethod
    def format_rel_diff(percent: float | None) -> str:
        """A relative difference in percent with its sign (``+12.5 %``, ``-0.3 %``; ``0 %``
        for none; an en dash when undefined, e.g. against a median of 0)."""
        if percent is None or math.isnan(percent) or math.isinf(percent):
            return "\u2013"
        if percent == 0:
            return "0 %"
        digits = max(1, -math.floor(math.log10(abs(percent)))) if abs(percent) < 0.05 else 1
        return f"{percent:+,.{digits}f} %"

    def is_better(self, a: float, b: float) -> bool:
        """Whether ``a`` is strictly better than ``b``."""
        return a < b if self.lower_is_better else a > b

    def rating(self, value: float | None) -> Rating | None:
        """``good``, ``needs-improvement`` or ``poor`` (None without thresholds or value)."""
        if value is None or self.good is None or self.poor is None or math.isnan(value):
            return None
        if self.lower_is_better:
            return "good" if value <= self.good else "poor" if value > self.poor else (
                "needs-improvement"
            )
        return "good" if value >= self.good else "poor" if value < self.poor else (
            "needs-improvement"
        )


#: A unit -> the smallest change of a level in it that counts as one. Times: 10 ms, under
#: a frame at 60 Hz and under the spread a loaded machine adds to a loopback TTFB of 1 ms
#: (measured: 1 -> 4-8 ms, docs/history.md); a relative floor alone calls that +300 %.
#: CLS: a tenth of "good" (0.1). The score: its resolution, whole points.
_SMALLEST_CHANGE = {"ms": 10.0, "unitless": 0.01, "score": 1.0}


def _decimals(spec: str) -> int | None:
    """The digits after the point a ``format`` spec such as ``,.0f`` gives (None: unknown)."""
    point = spec.rfind(".")
    if point < 0 or not spec.endswith("f") or not spec[point + 1:-1].isdigit():
        return None
    return int(spec[point + 1:-1])


def _time(name: str, label: str, title: str, audit_id: str,
          good: float | None = None, poor: float | None = None,
          field_id: str | None = None) -> Metric:
    return Metric(name, label, title, "ms", Direction.LOWER, audit_id, ",.0f", good, poor,
                  field_id)


#: The nine metrics by name, in the spec's order.
METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("cumulative_layout_shift", "CLS", "Cumulative Layout Shift", "unitless",
               Direction.LOWER, "cumulative-layout-shift", ".3f", 0.1, 0.25,
               "cumulative_layout_shift"),
        _time("first_contentful_paint", "FCP", "First Contentful Paint",
              "first-contentful-paint", 1800, 3000, "first_contentful_paint"),
        # Lighthouse >= 12.1 no longer computes it: always null from this engine.
        _time("first_meaningful_paint", "FMP", "First Meaningful Paint",
              "first-meaningful-paint"),
        _time("time_to_interactive", "TTI", "Time to Interactive", "interactive", 3800, 7300),
        _time("largest_contentful_paint", "LCP", "Largest Contentful Paint",
              "largest-contentful-paint", 2500, 4000, "largest_contentful_paint"),
        # The field's TTFB also counts redirects, DNS, TCP and TLS: the same thresholds,
        # a wider span than the lab's server response time (docs/field.md).
        _time("server_response_time", "TTFB", "Server Response Time",
              "server-response-time", 800, 1800, "experimental_time_to_first_byte"),
        _time("speed_index", "SI", "Speed Index", "speed-index", 3400, 5800),
        _time("total_blocking_time", "TBT", "Total Blocking Time", "total-blocking-time",
              200, 600),
        Metric("performance_score", "Score", "Performance score", "score",
               Direction.HIGHER, None, ".0f", 90, 50),
        # Measured in user-flow timespans only (a page load has no interaction): null in
        # every page test. Thresholds: web.dev's (good <= 200 ms, poor > 500 ms).
        _time("interaction_to_next_paint", "INP", "Interaction to Next Paint",
              "interaction-to-next-paint", 200, 500, "interaction_to_next_paint"),
    )
}

#: The metric fields, in the spec's order.
METRIC_NAMES: tuple[str, ...] = tuple(METRICS)

#: The Chrome UX Report API's metric name -> the registry's entry (the metrics measured both
#: in the lab and in the field).
FIELD_METRICS: dict[str, Metric] = {
    m.field_id: m for m in METRICS.values() if m.field_id is not None}

#: The metrics shown by default in every table, page and report (the notebook displays, the
#: export report, the service's pages, the CLI), in reading order: the score, then
#: Lighthouse's own order (FCP, LCP, TBT, CLS, Speed Index), then TTI and TTFB. FMP is left
#: out: Lighthouse >= 12.1 no longer computes it.
HEADLINE_METRICS: tuple[str, ...] = (
    "performance_score", "first_contentful_paint", "largest_contentful_paint",
    "total_blocking_time", "cumulative_layout_shift", "speed_index", "time_to_interactive",
    "server_response_time",
)


#: Metrics named ``user_timing:<name>``: a page's own ``performance.mark`` (its start time)
#: or ``performance.measure`` (its duration), in ms, lower is better. They exist only where
#: a page records them, so they are not in :data:`METRICS`; :func:`metric` knows them.
USER_TIMING_PREFIX = "user_timing:"


def _user_timing(name: str) -> Metric:
    mark = name.removeprefix(USER_TIMING_PREFIX)
    return Metric(name, mark, f"User timing {mark}", "ms", Direction.LOWER, "user-timings",
                  ",.0f")


def user_timing_values(items: object) -> dict[str, float]:
    """``user_timing:<name>`` -> ms from the items of Lighthouse's ``user-timings`` audit:
    a mark's ``startTime``, a measure's ``duration`` (as sitespeed.io reports them); the
    first entry of a repeated name."""
    values: dict[str, float] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not item.get("name"):
            continue
        kind = str(item.get("timingType", "")).lower()
        value = item.get("startTime" if kind == "mark" else "duration")
        if kind in ("mark", "measure") and isinstance(value, int | float) and math.isfinite(
                value):
            values.setdefault(f"{USER_TIMING_PREFIX}{item['name']}", float(value))
    return values


def metric_columns(columns: object) -> list[str]:
    """The metric columns among ``columns`` (a frame's), in order: the registry's in the
    spec's order, then the ``user_timing:`` ones as they come."""
    names = [str(c) for c in columns] if isinstance(columns, Iterable) else []
    return [n for n in METRICS if n in names] + [
        n for n in names if n.startswith(USER_TIMING_PREFIX)]


def metric(name: str) -> Metric:
    """The registry entry for ``name`` (a field name, a label such as ``LCP``, or a user
    timing ``user_timing:<name>``).

    Raises :class:`KeyError` naming the valid names.
    """
    found = METRICS.get(name)
    if found is not None:
        return found
    if name.startswith(USER_TIMING_PREFIX) and len(name) > len(USER_TIMING_PREFIX):
        return _user_timing(name)
    for candidate in METRICS.values():
        if candidate.label.lower() == name.lower():
            return candidate
    raise KeyError(unknown_metric(name))


def unknown_metric(name: object, names: Iterable[str] = METRIC_NAMES) -> str:
    """``unknown metric 'lcpp': did you mean 'lcp'? (valid: ..., largest_contentful_paint
    (lcp), ...)``: every spelling :func:`metric` reads among ``names``, each with its label
    (the alias), and the user timings."""
    found = [METRICS[n] for n in names]
    spellings = [spelling for m in found for spelling in (m.name, m.label.lower())]
    valid = ", ".join(f"{m.name} ({m.label.lower()})" for m in found)
    return unknown_value(name, spellings, what="metric",
                         valid=f"{valid}, {USER_TIMING_PREFIX}<mark or measure>")
