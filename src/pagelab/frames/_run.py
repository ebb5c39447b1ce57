"""Frames from one run's Lighthouse result (LHR): its audits and its network requests.

:func:`audits` columns (one row per audit of the performance category, metrics and hidden
audits left out; opportunities first by estimated savings, then diagnostics, then passed):

====================  ========  ===========================================================
column                dtype     meaning
====================  ========  ===========================================================
id                    string    Lighthouse audit id (``render-blocking-insight``)
title                 string    what the audit checks
group                 category  ``opportunity`` (not passed, estimated savings > 0),
                                ``diagnostic`` (not passed, no savings estimate) or
                                ``passed`` (Lighthouse shows it as passed, or not applicable)
score                 float64   Lighthouse's score, 0-1 (NaN: informative or not applicable)
score_display_mode    string    ``numeric``, ``binary``, ``metricSavings``, ``informative``...
display_value         string    Lighthouse's text (``Est savings of 190 ms``)
numeric_value         float64   the audit's number, in ``numeric_unit``
numeric_unit          string    Lighthouse's unit: ``millisecond``, ``byte``, ``element``...
savings_ms            float64   estimated time saved, ms (the largest of FCP, LCP, TBT, INP)
savings_bytes         float64   estimated bytes saved
lighthouse_group      string    the category group Lighthouse files it under
                                (``insights``, ``diagnostics``)
description           string    Lighthouse's advice (Markdown, may link to web.dev)
====================  ========  ===========================================================

:func:`requests` columns (one row per request, in Lighthouse's order; times in ms since
navigation start, so they share an axis with FCP, LCP and the filmstrip):

====================  ========  ===========================================================
url                   string    requested URL (``data:`` URLs elided by Lighthouse)
resource_type         string    ``Document``, ``Script``, ``Stylesheet``, ``Image``, ``Font``,
                                ``Fetch``, ``XHR``, ``Ping``, ``Media``, ``Other``
entity                string    who serves it, by Lighthouse's own classification (the LHR's
                                ``entities``: third-party-web's list, else the host's root
                                domain, e.g. ``127.0.0.2``)
party                 category  ``first`` or ``third`` (Lighthouse's ``isFirstParty`` of the
                                entity); NA when Lighthouse classified no entity
mime_type             string
status                Int64     HTTP status; NA when no response came
protocol              string    ``http/1.1``, ``h2``, ``h3``...
priority              string    Chromium's priority (``VeryHigh`` ... ``VeryLow``)
transfer_size         Int64     bytes on the wire (headers included; 0 from cache)
resource_size         Int64     bytes of the decoded body
queued_ms             float64   when the renderer asked for it, ms
start_ms              float64   when it went to the network, ms
end_ms                float64   when its last byte arrived, ms
duration_ms           float64   ``end_ms - start_ms``
from_cache            boolean   served from the disk, memory or prefetch cache
blocked               boolean   no HTTP response at all: blocked (pagelab's blacklist or ad
                                list, which fail requests before they leave the browser) or
                                failed at the network level; the LHR keeps no reason
finished              boolean   Lighthouse saw it finish
render_blocking       boolean   Lighthouse's render-blocking insight lists it (it held the
                                first paint back)
====================  ========  ===========================================================
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from pagelab._exceptions import InvalidInputError

__all__ = [
    "AUDIT_COLUMNS", "AUDIT_GROUPS", "PARTIES", "REQUEST_COLUMNS", "as_lhr", "audits",
    "entity_parties", "requests", "table_items", "typed_frame",
]

#: The values of the ``party`` column.
PARTIES: tuple[str, ...] = ("first", "third")

#: The audit groups, in the order rows are sorted.
AUDIT_GROUPS: tuple[str, ...] = ("opportunity", "diagnostic", "passed")

#: Column -> dtype of :func:`audits`, in column order.
AUDIT_COLUMNS: dict[str, Any] = {
    "id": "string",
    "title": "string",
    "group": pd.CategoricalDtype(list(AUDIT_GROUPS), ordered=True),
    "score": "float64",
    "score_display_mode": "string",
    "display_value": "string",
    "numeric_value": "float64",
    "numeric_unit": "string",
    "savings_ms": "float64",
    "savings_bytes": "float64",
    "lighthouse_group": "string",
    "description": "string",
}

#: Column -> dtype of :func:`requests`, in column order.
REQUEST_COLUMNS: dict[str, Any] = {
    "url": "string",
    "resource_type": "string",
    "entity": "string",
    "party": pd.CategoricalDtype(list(PARTIES)),
    "mime_type": "string",
    "status": "Int64",
    "protocol": "string",
    "priority": "string",
    "transfer_size": "Int64",
    "resource_size": "Int64",
    "queued_ms": "float64",
    "start_ms": "float64",
    "end_ms": "float64",
    "duration_ms": "float64",
    "from_cache": "boolean",
    "blocked": "boolean",
    "finished": "boolean",
    "render_blocking": "boolean",
}

# Lighthouse's report shows an audit as passed at this score (report-utils.js, PASS).
_PASS_SCORE = 0.9
# metricSavings keys that are times (CLS savings are unitless and not added in).
_TIME_SAVINGS = ("FCP", "LCP", "TBT", "INP")
_NAN = float("nan")


def as_lhr(lhr: Mapping[str, Any] | str | bytes) -> Mapping[str, Any]:
    """The LHR as a mapping (the ``lighthouse-json`` resource's text is parsed)."""
    if isinstance(lhr, str | bytes):
        try:
            lhr = json.loads(lhr)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"lhr: not JSON ({exc})") from exc
    if not isinstance(lhr, Mapping) or not isinstance(lhr.get("audits"), Mapping):
        raise InvalidInputError(
            "lhr: not a Lighthouse result (expected a dict with 'audits', as runner.lhr() "
            "returns)"
        )
    return lhr


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _NAN
    return float(value) if math.isfinite(value) else _NAN


def _shows_as_passed(audit: Mapping[str, Any]) -> bool:
    """Lighthouse's ``ReportUtils.showAsPassed``."""
    mode = audit.get("scoreDisplayMode")
    if mode in ("manual", "notApplicable"):
        return True
    if mode in ("error", "informative"):
        return False
    score = audit.get("score")
    return isinstance(score, int | float) and score >= _PASS_SCORE


def _savings(audit: Mapping[str, Any]) -> tuple[float, float]:
    """(ms, bytes) of estimated savings; NaN where Lighthouse gives no estimate."""
    details = audit.get("details") if isinstance(audit.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    ms = _number(details.get("overallSavingsMs"))
    if math.isnan(ms):
        metric_savings = audit.get("metricSavings")
        if isinstance(metric_savings, Mapping):
            times = [_number(metric_savings.get(key)) for key in _TIME_SAVINGS]
            times = [t for t in times if not math.isnan(t)]
            ms = max(times) if times else _NAN
    size = _number(details.get("overallSavingsBytes"))
    if math.isnan(size):
        debug = details.get("debugData")
        if isinstance(debug, Mapping):
            size = _number(debug.get("wastedBytes"))
    return ms, size


def audits(lhr: Mapping[str, Any] | str | bytes) -> pd.DataFrame:
    """The run's audits as a frame (columns in :data:`AUDIT_COLUMNS`): what to fix first.

    ``lhr`` is a Lighthouse result as :meth:`Runner.lhr` returns it (or its JSON text).
    """
    result = as_lhr(lhr)
    all_audits: Mapping[str, Any] = result["audits"]
    category = (result.get("categories") or {}).get("performance") or {}
    refs = category.get("auditRefs") if isinstance(category, Mapping) else None
    if isinstance(refs, list) and refs:
        chosen = [
            (str(ref.get("id")), ref.get("group"))
            for ref in refs
            if isinstance(ref, Mapping) and ref.get("group") not in ("metrics", "hidden")
        ]
    else:  # an LHR without the performance category: every audit
        chosen = [(audit_id, None) for audit_id in all_audits]
    rows: list[dict[str, Any]] = []
    for audit_id, lighthouse_group in chosen:
        audit = all_audits.get(audit_id)
        if not isinstance(audit, Mapping):
            continue
        savings_ms, savings_bytes = _savings(audit)
        if _shows_as_passed(audit):
            group = "passed"
        elif savings_ms > 0 or savings_bytes > 0:  # NaN compares False
            group = "opportunity"
        else:
            group = "diagnostic"
        rows.append({
            "id": audit_id,
            "title": audit.get("title"),
            "group": group,
            "score": _number(audit.get("score")),
            "score_display_mode": audit.get("scoreDisplayMode"),
            "display_value": audit.get("displayValue"),
            "numeric_value": _number(audit.get("numericValue")),
            "numeric_unit": audit.get("numericUnit"),
            "savings_ms": savings_ms,
            "savings_bytes": savings_bytes,
            "lighthouse_group": lighthouse_group,
            "description": audit.get("description"),
        })
    frame = typed_frame(rows, AUDIT_COLUMNS)
    # Opportunities by savings (largest first), then diagnostics, then passed; Lighthouse's
    # order within a tie (a stable sort).
    return frame.sort_values(
        ["group", "savings_ms", "savings_bytes"], ascending=[True, False, False],
        na_position="last", kind="stable",
    ).reset_index(drop=True)


#: ``frame.attrs["observed_ms"]`` of :func:`requests`: label -> the ``metrics`` audit's key.
_OBSERVED = {
    "FCP": "observedFirstContentfulPaint",
    "LCP": "observedLargestContentfulPaint",
    "DOMContentLoaded": "observedDomContentLoaded",
    "load": "observedLoad",
}


def _observed(lhr: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``metrics`` audit's observed timings (this browser's clock, not the simulation)."""
    metrics = (lhr["audits"].get("metrics") or {}).get("details") or {}
    items = metrics.get("items") if isinstance(metrics, Mapping) else None
    if isinstance(items, list) and items and isinstance(items[0], Mapping):
        return items[0]
    return {}


def _navigation_offset_ms(observed: Mapping[str, Any], network_start_us: Any) -> float:
    """ms from navigation start to the network table's zero (its first request).

    Lighthouse times requests from the earliest request and metrics from navigation start;
    the two timestamps (µs) let both share one axis. 0 when either is missing.
    """
    navigation_us = _number(observed.get("observedNavigationStartTs"))
    offset = (_number(network_start_us) - navigation_us) / 1000
    return 0.0 if math.isnan(offset) else offset


def requests(lhr: Mapping[str, Any] | str | bytes) -> pd.DataFrame:
    """The run's network requests as a frame (columns in :data:`REQUEST_COLUMNS`).

    Times are ms since navigation start, sizes bytes. An LHR without the ``network-requests``
    audit (a failed run) gives an empty frame with the same columns.

    ``frame.attrs["observed_ms"]`` holds the page's milestones on the same clock as seen in
    this run's browser (``FCP``, ``LCP``, ``DOMContentLoaded``, ``load``; ms). With simulated
    throttling (the default) the reported metrics are Lighthouse's *simulation* and differ
    from these observed times.
    """
    result = as_lhr(lhr)
    audit = result["audits"].get("network-requests") or {}
    details: Any = audit.get("details") if isinstance(audit, Mapping) else None
    if not isinstance(details, Mapping):
        details = {}
    items: Any = details.get("items")
    if not isinstance(items, list):
        items = []
    debug: Any = details.get("debugData")
    if not isinstance(debug, Mapping):
        debug = {}
    observed = _observed(result)
    parties = entity_parties(result)
    blocking = {str(i.get("url")) for i in table_items(result, "render-blocking-insight")}
    offset = _navigation_offset_ms(observed, debug.get("networkStartTimeTs"))
    rows: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        status = item.get("statusCode")
        answered = isinstance(status, int) and not isinstance(status, bool) and status > 0
        start = _number(item.get("networkRequestTime")) + offset
        end = _number(item.get("networkEndTime")) + offset
        rows.append({
            "url": item.get("url"),
            "resource_type": item.get("resourceType"),
            "entity": item.get("entity"),
            "party": parties.get(str(item.get("entity"))),
            "mime_type": item.get("mimeType"),
            "status": status if answered else None,
            "protocol": item.get("protocol"),
            "priority": item.get("priority"),
            "transfer_size": _integer(item.get("transferSize")),
            "resource_size": _integer(item.get("resourceSize")),
            "queued_ms": _number(item.get("rendererStartTime")) + offset,
            "start_ms": start,
            "end_ms": end,
            "duration_ms": end - start,
            "from_cache": item.get("cache") not in (None, "none"),
            "blocked": not answered,
            "finished": bool(item.get("finished")),
            "render_blocking": item.get("url") in blocking,
        })
    frame = typed_frame(rows, REQUEST_COLUMNS)
    # The page's own milestones on the same clock, for the waterfall's marks.
    frame.attrs["observed_ms"] = {
        label: value for label, key in _OBSERVED.items()
        if not math.isnan(value := _number(observed.get(key)))
    }
    return frame


def table_items(lhr: Mapping[str, Any], audit_id: str) -> list[Mapping[str, Any]]:
    """The ``details.items`` of one audit's table (empty when the audit or table is absent)."""
    audit = lhr["audits"].get(audit_id)
    details = audit.get("details") if isinstance(audit, Mapping) else None
    items = details.get("items") if isinstance(details, Mapping) else None
    return [item for item in items if isinstance(item, Mapping)] if isinstance(items, list) else []


def entity_parties(lhr: Mapping[str, Any]) -> dict[str, str]:
    """Entity name -> ``first`` or ``third``, from the LHR's ``entities``."""
    entities = lhr.get("entities")
    if not isinstance(entities, list):
        return {}
    return {
        str(entity["name"]): "first" if entity.get("isFirstParty") else "third"
        for entity in entities if isinstance(entity, Mapping) and entity.get("name")
    }


def _integer(value: Any) -> int | None:
    number = _number(value)
    return None if math.isnan(number) else round(number)


def typed_frame(rows: list[dict[str, Any]], columns: Mapping[str, Any]) -> pd.DataFrame:
    """A frame of ``rows`` with ``columns``' dtypes, in their order."""
    return pd.DataFrame({
        name: pd.Series([row[name] for row in rows], dtype=dtype)
        for name, dtype in columns.items()
    }, columns=list(columns))
