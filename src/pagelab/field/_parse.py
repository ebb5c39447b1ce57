"""The API's answers as rows: one per metric (``queryRecord``) or per metric and weekly
period (``queryHistoryRecord``), in the metric registry's names, order and thresholds.

The API sends CLS as a string (``"0.05"``) and a period without enough data as a null p75
and ``"NaN"`` densities: both read as numbers here, the missing ones as NaN.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from pagelab.models import FIELD_METRICS, METRICS, Metric

__all__ = ["COLUMNS", "FORM_FACTOR_NAMES", "history_frame", "record_frame"]

#: The API's form factors -> how pagelab writes them (None: every form factor together).
FORM_FACTOR_NAMES: dict[str | None, str] = {
    "PHONE": "phone", "DESKTOP": "desktop", "TABLET": "tablet", None: "all"}

#: The columns of :func:`pagelab.field.record` and :func:`pagelab.field.history`.
COLUMNS: dict[str, str] = {
    "target": "string",
    "level": "string",
    "form_factor": "string",
    "metric": "string",
    "first_date": "datetime64[ns]",
    "last_date": "datetime64[ns]",
    "p75": "float64",
    "good": "float64",
    "needs_improvement": "float64",
    "poor": "float64",
    "rating": "string",
}


def _number(value: object) -> float:
    """A p75 or a density as a float: numbers, numeric strings (CLS); NaN for null/"NaN"."""
    if isinstance(value, bool) or value is None:
        return math.nan
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return math.nan
    return math.nan


def _date(value: object) -> pd.Timestamp | None:
    if not isinstance(value, dict):
        return None
    try:
        return pd.Timestamp(int(value["year"]), int(value["month"]), int(value["day"]))
    except (KeyError, TypeError, ValueError):
        return None


def _densities(m: Metric, bins: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """good / needs improvement / poor shares of the loads from a histogram's bins
    ``(start, end, density)``, cut at the registry's thresholds (the API's own bins)."""
    if not bins or all(math.isnan(d) for _, _, d in bins):
        return math.nan, math.nan, math.nan
    good = needs = poor = 0.0
    for start, end, density in bins:
        share = 0.0 if math.isnan(density) else density
        if m.good is not None and end <= m.good + 1e-9:
            good += share
        elif m.poor is not None and start >= m.poor - 1e-9:
            poor += share
        else:
            needs += share
    return good, needs, poor


def _bins(histogram: object, index: int | None = None) -> list[tuple[float, float, float]]:
    """``(start, end, density)`` per bin; ``index`` picks a period of a time series."""
    bins = []
    for item in histogram if isinstance(histogram, list) else []:
        if not isinstance(item, dict):
            continue
        if index is None:
            density = _number(item.get("density"))
        else:
            series = item.get("densities")
            density = _number(series[index]) if isinstance(series, list) and index < len(
                series) else math.nan
        end = _number(item.get("end"))
        bins.append((_number(item.get("start")), math.inf if math.isnan(end) else end, density))
    return bins


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _identity(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    record = body.get("record")
    if not isinstance(record, dict):
        raise ValueError("no record in the answer")
    key = _dict(record.get("key"))
    level = "origin" if "origin" in key else "page"
    target = key.get("origin") if level == "origin" else key.get("url")
    normalized = body.get("urlNormalizationDetails")
    if level == "page" and isinstance(normalized, dict) and normalized.get("normalizedUrl"):
        target = normalized["normalizedUrl"]
    return record, {
        "target": str(target or ""),
        "level": level,
        "form_factor": FORM_FACTOR_NAMES.get(key.get("formFactor"), "all"),
    }


def _known(metrics: object) -> list[tuple[Metric, dict[str, Any]]]:
    """The answer's metrics the registry knows, in the registry's order."""
    if not isinstance(metrics, dict):
        return []
    by_name = {FIELD_METRICS[k].name: v for k, v in metrics.items()
               if k in FIELD_METRICS and isinstance(v, dict)}
    return [(m, by_name[m.name]) for m in METRICS.values() if m.name in by_name]


def _row(identity: dict[str, Any], m: Metric, p75: float,
         densities: tuple[float, float, float], first: object, last: object) -> dict[str, Any]:
    return {**identity, "metric": m.name, "first_date": first, "last_date": last, "p75": p75,
            "good": densities[0], "needs_improvement": densities[1], "poor": densities[2],
            "rating": m.rating(p75)}


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return frame.astype(COLUMNS)


def record_frame(body: dict[str, Any]) -> pd.DataFrame:
    """A ``queryRecord`` answer: one row per metric."""
    record, identity = _identity(body)
    period = _dict(record.get("collectionPeriod"))
    first, last = _date(period.get("firstDate")), _date(period.get("lastDate"))
    rows = []
    for m, data in _known(record.get("metrics")):
        percentiles = _dict(data.get("percentiles"))
        p75 = _number(percentiles.get("p75"))
        rows.append(_row(identity, m, p75, _densities(m, _bins(data.get("histogram"))),
                         first, last))
    return _frame(rows)


def history_frame(body: dict[str, Any]) -> pd.DataFrame:
    """A ``queryHistoryRecord`` answer: one row per metric and weekly period (each a 28-day
    window), oldest first; a period without enough data has NaN values."""
    record, identity = _identity(body)
    found = record.get("collectionPeriods")
    periods: list[Any] = found if isinstance(found, list) else []
    dates = [(_date(p.get("firstDate")), _date(p.get("lastDate"))) if isinstance(p, dict)
             else (None, None) for p in periods]
    rows = []
    for m, data in _known(record.get("metrics")):
        series = data.get("percentilesTimeseries")
        p75s = series.get("p75s") if isinstance(series, dict) else None
        for index, (first, last) in enumerate(dates):
            p75 = _number(p75s[index]) if isinstance(p75s, list) and index < len(
                p75s) else math.nan
            bins = _bins(data.get("histogramTimeseries"), index)
            rows.append(_row(identity, m, p75, _densities(m, bins), first, last))
    return _frame(rows)
