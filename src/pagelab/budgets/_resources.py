"""Resource budgets: bytes and request counts per resource type, from each run's LHR.

``resource_size={"script": 300_000}`` (transfer bytes), ``resource_count={"image": 10}``,
``third_party_size=...`` and ``third_party_count=...`` limit the values Lighthouse's
``resource-summary`` audit gives per run (types: :data:`RESOURCE_TYPES`; ``third-party``
and ``total`` included), aggregated over a cell's runs like every budget. A missed limit's
message names the type, the bytes and the largest requests of that type in the run nearest
the aggregate (from the ``network-requests`` audit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagelab._cells import CELL, CellKey, cell_keys, cell_label
from pagelab._exceptions import InvalidInputError, PagelabError
from pagelab.models import read_report_lhr
from pagelab.models import resource_type as chromium_resource_type

from ._models import (
    RESOURCE_KEYWORDS,
    RESOURCE_TYPES,
    BudgetResult,
    Level,
    ResourceLimit,
    format_resource_value,
    resource_limits,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "RESOURCE_KEYWORDS",
    "RESOURCE_TYPES",
    "ResourceLimit",
    "evaluate_resources",
    "largest_note",
    "replayed_lhrs",
    "resource_limits",
]


LhrReader = Callable[[str], Mapping[str, Any]]


def replayed_lhrs(frame: pd.DataFrame) -> LhrReader | None:
    """A reader of replayed runs' LHRs (by test id) from their ``report_url``, or None
    when a successful run has none (a CSV, a run whose artifacts live in the database).

    Lighthouse's HTML report embeds the LHR, so runs saved with their report links (a
    pytest-pagelab results JSON, the wide frame's CSV) can be checked on bytes, requests
    and any audit while those reports still open (a LocalRunner's files, the service's
    links). A report gone by then raises :class:`~pagelab.InvalidInputError` saying so."""
    if frame.empty or not {"id", "report_url", "status"} <= set(frame.columns):
        return None
    ok = frame[frame["status"].astype(str) == "success"]
    links = {str(test_id): link for test_id, link in zip(ok["id"], ok["report_url"],
                                                         strict=True)
             if isinstance(test_id, str) and isinstance(link, str) and link}
    if len(links) < len(ok):
        return None

    def read(test_id: str) -> Mapping[str, Any]:
        try:
            return read_report_lhr(links.get(test_id), test_id)
        except PagelabError as exc:
            raise InvalidInputError(
                f"{exc}; resource budgets and Lighthouse CI audits beyond the metrics need "
                "each replayed run's Lighthouse result, read from its report: measure again, "
                "or replay runs whose reports are still there") from exc

    return read


def _summary_value(lhr: Mapping[str, Any], limit: ResourceLimit) -> float | None:
    items = ((lhr.get("audits") or {}).get("resource-summary") or {}).get("details", {})
    for item in (items or {}).get("items") or []:
        if item.get("resourceType") == limit.resource_type:
            value = item.get("transferSize" if limit.kind == "size" else "requestCount")
            return float(value) if isinstance(value, int | float) else None
    return None


def largest_requests(lhr: Mapping[str, Any], resource_type: str, count: int = 3
                     ) -> list[tuple[str, float]]:
    """The ``count`` largest requests (URL, transfer bytes) of ``resource_type`` in ``lhr``."""
    audits = lhr.get("audits") or {}
    requests = ((audits.get("network-requests") or {}).get("details") or {}).get("items") or []
    first_party = {e.get("name") for e in lhr.get("entities") or [] if e.get("isFirstParty")}

    def matches(request: Mapping[str, Any]) -> bool:
        if resource_type == "total":
            return True
        if resource_type == "third-party":
            return request.get("entity") not in first_party
        return chromium_resource_type(request.get("resourceType")) == resource_type

    sized = [(str(r.get("url")), float(r.get("transferSize") or 0)) for r in requests
             if matches(r)]
    return sorted(sized, key=lambda item: -item[1])[:count]


def largest_note(lhrs: Sequence[Mapping[str, Any]], per_run: Sequence[float | None],
                 actual: float, resource_type: str) -> str | None:
    """``largest script: <url> (312.3 KB), ...``: the largest requests of ``resource_type``
    in the run whose value is nearest ``actual`` (the aggregate), which show what makes up
    the bytes; None when no run has a value or the run has no such request."""
    measured = [i for i, v in enumerate(per_run) if v is not None and v == v]
    if not measured:
        return None
    nearest = min(measured, key=lambda i: abs((per_run[i] or 0.0) - actual))
    largest = largest_requests(lhrs[nearest], resource_type)
    if not largest:
        return None
    return "largest {}: {}".format(
        resource_type if resource_type != "total" else "requests",
        ", ".join(f"{url} ({format_resource_value(f'resource_size:{resource_type}', size)})"
                  for url, size in largest))


def _aggregate(values: list[float], aggregation: str) -> float:
    import pandas as pd

    series = pd.Series(values, dtype="float64")
    quantiles = {"p75": 0.75, "p90": 0.9}
    if aggregation in quantiles:
        return float(series.quantile(quantiles[aggregation]))
    return float(getattr(series, aggregation)())


def evaluate_resources(
    limits: Sequence[ResourceLimit],
    frame: pd.DataFrame,
    read_lhr: LhrReader,
    *,
    aggregation: str = "median",
    level: Level = "error",
) -> list[BudgetResult]:
    """One :class:`BudgetResult` per (cell, limit) over the successful runs' LHRs."""
    from pagelab import stats

    if not limits or frame.empty:
        return []
    ok = frame[frame["status"].astype(str) == "success"]
    keys = cell_keys(ok)
    results: list[BudgetResult] = []
    for cell in dict.fromkeys(keys):
        if cell[CELL.index("flow")] is not None:
            continue  # a flow step has no run of its own to read requests from
        # Of the limits on one type and kind that apply here, the last (a page's) wins.
        applying: dict[str, ResourceLimit] = {}
        for limit in limits:
            if limit.matches(str(cell[0]), str(cell[1]), str(cell[2])):
                applying.pop(limit.metric, None)
                applying[limit.metric] = limit
        if not applying:
            continue
        rows = ok.iloc[[i for i, key in enumerate(keys) if key == cell]]
        lhrs = [read_lhr(str(test_id)) for test_id in rows["id"].tolist()]
        for limit in applying.values():
            agg = limit.aggregation or aggregation
            per_run = [_summary_value(lhr, limit) for lhr in lhrs]
            values = [v for v in per_run if v is not None]
            if agg == "representative":
                label = stats.representative_run(rows)
                position = list(rows.index).index(label) if label is not None else None
                chosen = per_run[position] if position is not None else None
                actual = chosen
            else:
                actual = _aggregate(values, agg) if values else None
            results.append(_result(limit, cell, actual, values, per_run, lhrs, agg,
                                   limit.level or level))
    return results


def _result(limit: ResourceLimit, cell: CellKey, actual: float | None, values: list[float],
            per_run: list[float | None], lhrs: list[Mapping[str, Any]], aggregation: str,
            level: Level) -> BudgetResult:
    name = limit.metric
    where = cell_label(cell)
    expected = format_resource_value(name, limit.limit)
    if actual is None:
        passed = False
        message = (f"{name}: no resource-summary value in {len(lhrs)} run(s), budget <= "
                   f"{expected} {where}")
    else:
        passed = actual <= limit.limit
        listed = ", ".join(f"{v:.0f}" for v in sorted(values))
        message = (f"{name} {format_resource_value(name, actual)} "
                   f"{'<=' if passed else '>'} {expected} ({aggregation} of {len(values)}: "
                   f"{listed}) {where}")
        if not passed and limit.kind == "size":
            largest = largest_note(lhrs, per_run, actual, limit.resource_type)
            if largest:
                message += f"; {largest}"
    url, device, location, connection, flow, step = cell
    return BudgetResult(
        url=str(url), device=str(device), location=str(location), connection=connection,
        flow=flow, step=step,
        metric=name, operator="<=", expected=limit.limit, actual=actual,
        values=tuple(values), aggregation=aggregation, passed=passed, level=level,
        report_url=None, message=message,
    )
