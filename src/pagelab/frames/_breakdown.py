"""Where a run's bytes and main-thread time went: per-run breakdowns from the stored LHR.

Each function takes one run or many:

- an LHR (``runner.lhr(report)``, or its JSON text): one run's rows;
- a :class:`~pagelab.TestReport`, a batch item or an ``lt_…`` id, with ``runner=`` (the
  runner that stored it): that run's rows;
- :class:`~pagelab.Results` (anything with a wide ``frame`` and an ``lhr(test_id)`` method):
  every successful run's rows, each led by ``id``, ``run`` and the cell columns
  (:data:`~pagelab.frames.CELL`), so ``frame.groupby([*CELL, "resource_type"]).median()``
  is the median over repeated runs.

:func:`resource_summary` (one row per run x resource type x party; Lighthouse's
``resource-summary`` rules: its seven types, ``data:`` and other non-network URLs and a
``/favicon.ico`` of type ``other`` left out):

================  ========  ==============================================================
resource_type     category  ``document``, ``script``, ``stylesheet``, ``image``, ``media``,
                            ``font``, ``other`` (Lighthouse's budget types)
party             category  ``first`` or ``third`` (NA: no entity classified)
requests          int64     number of requests
transfer_bytes    int64     bytes on the wire, headers included
resource_bytes    int64     decoded body bytes
================  ========  ==============================================================

:func:`third_parties` (one row per entity per run, largest transfer first):

================  ========  ==============================================================
entity            string    Lighthouse's entity (third-party-web's name, else the host's
                            root domain)
party             category  ``first`` or ``third``
requests          int64     requests to the entity
transfer_bytes    int64     their bytes on the wire
main_thread_ms    float64   main-thread time of the entity's scripts, ms: the
                            ``third-parties-insight`` audit for third parties, the
                            ``bootup-time`` audit (scripts above its 50 ms threshold) for
                            the first party, which that insight leaves out
blocking_ms       float64   the parts beyond 50 ms of the long tasks Lighthouse attributes
                            to the entity's URLs (``long-tasks``), ms: its share of blocking
================  ========  ==============================================================

:func:`main_thread` (one row per category per run; ``mainthread-work-breakdown``):

================  ========  ==============================================================
category          string    Lighthouse's group id: ``scriptEvaluation``, ``styleLayout``,
                            ``paintCompositeRender``, ``parseHTML``, ``scriptParseCompile``,
                            ``garbageCollection``, ``other``
label             string    its title (``Script Evaluation``)
time_ms           float64   main-thread time, ms (with simulated throttling, scaled by the
                            CPU slowdown as Lighthouse reports it)
================  ========  ==============================================================

:func:`user_timings` (one row per ``performance.mark`` / ``measure`` per run; ``user-timings``):

================  ========  ==============================================================
name              string    the mark's or measure's name
kind              category  ``mark`` or ``measure``
start_ms          float64   start, ms since navigation start
duration_ms       float64   the measure's duration, ms (0 for a mark)
value_ms          float64   the metric ``user_timing:<name>``: a mark's start, a measure's
                            duration (as sitespeed.io reports them), ms
================  ========  ==============================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

import pandas as pd

from pagelab._cells import CELL
from pagelab._exceptions import InvalidInputError
from pagelab.models import (
    RESOURCE_TYPES,
    USER_TIMING_PREFIX,
    BatchItem,
    TestReport,
    resource_type,
    user_timing_values,
)

from ._run import PARTIES, as_lhr, entity_parties, table_items, typed_frame
from ._run import requests as _run_requests

__all__ = [
    "MAIN_THREAD_COLUMNS",
    "RESOURCE_SUMMARY_COLUMNS",
    "RESOURCE_TYPES",
    "RUN_COLUMNS",
    "THIRD_PARTY_COLUMNS",
    "USER_TIMING_COLUMNS",
    "LhrReader",
    "RunSource",
    "main_thread",
    "requests",
    "resource_summary",
    "resource_type",
    "third_parties",
    "user_timings",
]

#: The columns that lead every row of a breakdown over many runs.
RUN_COLUMNS: tuple[str, ...] = ("id", "run", *CELL)

_PARTY = pd.CategoricalDtype(list(PARTIES))

RESOURCE_SUMMARY_COLUMNS: dict[str, Any] = {
    "resource_type": pd.CategoricalDtype(list(RESOURCE_TYPES)),
    "party": _PARTY,
    "requests": "int64",
    "transfer_bytes": "int64",
    "resource_bytes": "int64",
}
THIRD_PARTY_COLUMNS: dict[str, Any] = {
    "entity": "string",
    "party": _PARTY,
    "requests": "int64",
    "transfer_bytes": "int64",
    "main_thread_ms": "float64",
    "blocking_ms": "float64",
}
MAIN_THREAD_COLUMNS: dict[str, Any] = {
    "category": "string",
    "label": "string",
    "time_ms": "float64",
}
USER_TIMING_COLUMNS: dict[str, Any] = {
    "name": "string",
    "kind": pd.CategoricalDtype(["mark", "measure"]),
    "start_ms": "float64",
    "duration_ms": "float64",
    "value_ms": "float64",
}

# Lighthouse's NetworkRequest.isNonNetworkRequest: no bytes crossed a network.
_NON_NETWORK = ("data", "blob", "about", "chrome", "chrome-extension", "file", "filesystem")
# A long task blocks input for what lasts beyond this (the TBT rule).
_BLOCKING_THRESHOLD_MS = 50.0


@runtime_checkable
class LhrReader(Protocol):
    """What reads a stored run's LHR: every runner (``runner.lhr(report)``)."""

    def lhr(self, report: Any) -> Mapping[str, Any]: ...


@runtime_checkable
class RunSource(Protocol):
    """Many runs and their LHRs: :class:`~pagelab.Results`."""

    @property
    def frame(self) -> pd.DataFrame: ...

    def lhr(self, report: Any) -> Mapping[str, Any]: ...


Source = Mapping[str, Any] | str | bytes | TestReport | BatchItem | RunSource


def _per_run(
    source: Source, runner: LhrReader | None, build: Callable[[Mapping[str, Any]], pd.DataFrame],
    what: str,
) -> pd.DataFrame:
    """``build`` of one LHR, or of every successful run of a :class:`RunSource` with the
    run columns in front."""
    if isinstance(source, Mapping | bytes) or (
        isinstance(source, str) and not source.startswith("lt_")
    ):
        return build(as_lhr(source))
    if isinstance(source, TestReport | BatchItem | str):
        if runner is None:
            raise InvalidInputError(
                f"{what}: pass runner= (the runner that ran it) to read this test's LHR, "
                "or pass the LHR itself (runner.lhr(report))"
            )
        return build(as_lhr(runner.lhr(source)))
    if not isinstance(source, RunSource):
        raise InvalidInputError(
            f"{what}: expected an LHR, a TestReport (with runner=) or Results, "
            f"got {type(source).__name__}"
        )
    frame = source.frame
    ok = frame.index[(frame["status"].astype(str) == "success").to_numpy()]
    parts: list[pd.DataFrame] = []
    for row in ok:
        part = build(as_lhr(source.lhr(str(frame.at[row, "id"]))))
        for column in reversed(RUN_COLUMNS):
            value = frame.at[row, column] if column in frame.columns else None
            part.insert(0, column, pd.Series([value] * len(part), dtype=object))
        parts.append(part)
    empty = build({"audits": {}})
    for column in reversed(RUN_COLUMNS):
        empty.insert(0, column, pd.Series([], dtype=object))
    out = pd.concat(parts, ignore_index=True) if parts else empty
    for column in RUN_COLUMNS:
        dtype: Any = frame[column].dtype if column in frame.columns else "string"
        out[column] = out[column].astype(dtype)
    for column in empty.columns[len(RUN_COLUMNS):]:
        out[column] = out[column].astype(empty[column].dtype)
    return out


def _is_network(url: str) -> bool:
    return urlsplit(url).scheme not in _NON_NETWORK


def _size(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and math.isfinite(value) else 0


def _ms(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else 0.0


def requests(source: Source, *, runner: LhrReader | None = None) -> pd.DataFrame:
    """The network requests of a run (columns in :data:`REQUEST_COLUMNS`), or of every run
    of :class:`~pagelab.Results` (led by ``id``, ``run`` and the cell columns).

    Times are ms since navigation start, sizes bytes. One LHR's frame keeps
    ``attrs["observed_ms"]``, the page's observed milestones on the same clock.
    """
    return _per_run(source, runner, _run_requests, "requests")


def _resource_summary(lhr: Mapping[str, Any]) -> pd.DataFrame:
    totals: dict[tuple[str, Any], list[int]] = {}
    parties = entity_parties(lhr)
    for item in table_items(lhr, "network-requests"):
        url = str(item.get("url") or "")
        kind = resource_type(item.get("resourceType"))
        if not _is_network(url) or (kind == "other" and url.endswith("/favicon.ico")):
            continue
        party = parties.get(str(item.get("entity")))
        entry = totals.setdefault((kind, party), [0, 0, 0])
        entry[0] += 1
        entry[1] += _size(item.get("transferSize"))
        entry[2] += _size(item.get("resourceSize"))
    order = {kind: i for i, kind in enumerate(RESOURCE_TYPES)}
    rows = [
        {"resource_type": kind, "party": party, "requests": n, "transfer_bytes": transfer,
         "resource_bytes": size}
        for (kind, party), (n, transfer, size) in sorted(
            totals.items(), key=lambda kv: (order[kv[0][0]], str(kv[0][1])))
    ]
    return typed_frame(rows, RESOURCE_SUMMARY_COLUMNS)


def resource_summary(source: Source, *, runner: LhrReader | None = None) -> pd.DataFrame:
    """Requests and bytes per resource type and party, per run (columns in
    :data:`RESOURCE_SUMMARY_COLUMNS`; the module's docstring says what each holds)."""
    return _per_run(source, runner, _resource_summary, "resource_summary")


def _url_entities(lhr: Mapping[str, Any]) -> dict[str, str]:
    return {str(item.get("url")): str(item["entity"])
            for item in table_items(lhr, "network-requests") if item.get("entity")}


def _third_parties(lhr: Mapping[str, Any]) -> pd.DataFrame:
    parties = entity_parties(lhr)
    by_url = _url_entities(lhr)
    rows: dict[str, dict[str, Any]] = {
        name: {"entity": name, "party": party, "requests": 0, "transfer_bytes": 0,
               "main_thread_ms": 0.0, "blocking_ms": 0.0}
        for name, party in parties.items()
    }

    def row(name: str) -> dict[str, Any]:
        return rows.setdefault(name, {
            "entity": name, "party": parties.get(name), "requests": 0, "transfer_bytes": 0,
            "main_thread_ms": 0.0, "blocking_ms": 0.0})

    for item in table_items(lhr, "network-requests"):
        if item.get("entity") and _is_network(str(item.get("url") or "")):
            entry = row(str(item["entity"]))
            entry["requests"] += 1
            entry["transfer_bytes"] += _size(item.get("transferSize"))
    from_insight = set()
    for item in table_items(lhr, "third-parties-insight"):
        name = item.get("entity")
        if isinstance(name, Mapping):  # an entity link in some versions
            name = name.get("text")
        if name:
            row(str(name))["main_thread_ms"] = _ms(item.get("mainThreadTime"))
            from_insight.add(str(name))
    for item in table_items(lhr, "bootup-time"):
        name = by_url.get(str(item.get("url")))
        if name is not None and name not in from_insight:
            row(name)["main_thread_ms"] += _ms(item.get("total"))
    audit = lhr["audits"].get("long-tasks")
    debug = ((audit or {}).get("details") or {}).get("debugData") if isinstance(
        audit, Mapping) else None
    if isinstance(debug, Mapping):
        found = debug.get("urls")
        urls: list[Any] = found if isinstance(found, list) else []
        for task in debug.get("tasks") or []:
            index = task.get("urlIndex") if isinstance(task, Mapping) else None
            if isinstance(index, int) and 0 <= index < len(urls):
                name = by_url.get(str(urls[index]))
                if name is not None:
                    row(name)["blocking_ms"] += max(
                        0.0, _ms(task.get("duration")) - _BLOCKING_THRESHOLD_MS)
    ordered = sorted(rows.values(), key=lambda r: (-r["transfer_bytes"], r["entity"]))
    return typed_frame(ordered, THIRD_PARTY_COLUMNS)


def third_parties(source: Source, *, runner: LhrReader | None = None) -> pd.DataFrame:
    """Bytes, main-thread time and blocking time per entity (first and third parties), per
    run, by Lighthouse's own entity classification (columns in
    :data:`THIRD_PARTY_COLUMNS`)."""
    return _per_run(source, runner, _third_parties, "third_parties")


def _main_thread(lhr: Mapping[str, Any]) -> pd.DataFrame:
    rows = [
        {"category": item.get("group"), "label": item.get("groupLabel"),
         "time_ms": _ms(item.get("duration"))}
        for item in table_items(lhr, "mainthread-work-breakdown") if item.get("group")
    ]
    return typed_frame(rows, MAIN_THREAD_COLUMNS)


def main_thread(source: Source, *, runner: LhrReader | None = None) -> pd.DataFrame:
    """Main-thread time by category, per run (columns in :data:`MAIN_THREAD_COLUMNS`)."""
    return _per_run(source, runner, _main_thread, "main_thread")


def _user_timings(lhr: Mapping[str, Any]) -> pd.DataFrame:
    items = table_items(lhr, "user-timings")
    values = user_timing_values([dict(item) for item in items])
    rows = []
    for item in items:
        kind = str(item.get("timingType", "")).lower()
        if kind not in ("mark", "measure") or not item.get("name"):
            continue
        rows.append({"name": item["name"], "kind": kind, "start_ms": _ms(item.get("startTime")),
                     "duration_ms": _ms(item.get("duration")),
                     "value_ms": values.get(f"{USER_TIMING_PREFIX}{item['name']}", math.nan)})
    return typed_frame(rows, USER_TIMING_COLUMNS)


def user_timings(source: Source, *, runner: LhrReader | None = None) -> pd.DataFrame:
    """The page's ``performance.mark`` / ``measure`` entries, per run (columns in
    :data:`USER_TIMING_COLUMNS`)."""
    return _per_run(source, runner, _user_timings, "user_timings")
