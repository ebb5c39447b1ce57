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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pagelab._cells import CellKey, cell_keys, cell_label
from pagelab._exceptions import InvalidInputError

from ._models import AGGREGATION_NAMES, Level, MetricLimit, format_resource_value

if TYPE_CHECKING:
    import pandas as pd

    from ._evaluate import BudgetResult

__all__ = [
    "RESOURCE_KEYWORDS",
    "RESOURCE_TYPES",
    "ResourceLimit",
    "evaluate_resources",
    "resource_limits",
]

#: The types of Lighthouse's resource-summary audit.
RESOURCE_TYPES = ("document", "script", "stylesheet", "image", "media", "font", "other",
                  "third-party", "total")
#: Budget keywords -> (size or count, the fixed type for the third_party_* ones).
RESOURCE_KEYWORDS: dict[str, tuple[str, str | None]] = {
    "resource_size": ("size", None), "resource_count": ("count", None),
    "third_party_size": ("size", "third-party"), "third_party_count": ("count", "third-party"),
}
# network-requests' resourceType (DevTools) -> resource-summary's type.
_REQUEST_TYPES = {"Document": "document", "Script": "script", "Stylesheet": "stylesheet",
                  "Image": "image", "Media": "media", "Font": "font"}

LhrReader = Callable[[str], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class ResourceLimit:
    """A maximum on one resource type's transfer bytes (``size``) or requests (``count``)."""

    kind: str
    resource_type: str
    limit: float
    level: Level | None = None
    aggregation: str | None = None

    @property
    def metric(self) -> str:
        """``resource_size:script``: how results and tables name it."""
        return f"resource_{self.kind}:{self.resource_type}"


def _limit(raw: Any, where: str) -> MetricLimit:
    from pydantic import ValidationError

    from pagelab.models import invalid_input

    try:
        if isinstance(raw, MetricLimit):
            return raw
        return MetricLimit.model_validate(raw) if isinstance(raw, Mapping) else MetricLimit(
            limit=raw)
    except ValidationError as exc:
        raise InvalidInputError(f"{where}: {invalid_input(exc)}") from exc


def resource_limits(limits: Mapping[str, Any], where: str = "budget"
                    ) -> tuple[dict[str, Any], list[ResourceLimit]]:
    """Split ``limits`` into the metric limits and the :class:`ResourceLimit` s of its
    resource keywords (``resource_size={"script": 300_000}``, ``third_party_size=...``)."""
    rest: dict[str, Any] = {}
    found: list[ResourceLimit] = []
    for key, raw in limits.items():
        if key not in RESOURCE_KEYWORDS:
            rest[key] = raw
            continue
        kind, fixed = RESOURCE_KEYWORDS[key]
        if fixed is not None:
            per_type = {fixed: raw}
        elif isinstance(raw, Mapping) and not {"limit"} & set(raw):
            per_type = dict(raw)
        else:
            raise InvalidInputError(
                f"{where}: {key} takes a mapping of resource type -> limit, e.g. "
                f"{key}={{'script': 300_000}}; types: {', '.join(RESOURCE_TYPES)}")
        for resource_type, value in per_type.items():
            if resource_type not in RESOURCE_TYPES:
                raise InvalidInputError(f"{where}: {key}: unknown resource type "
                                        f"{resource_type!r}; valid: {', '.join(RESOURCE_TYPES)}")
            spec = _limit(value, f"{where}: {key}.{resource_type}")
            if spec.aggregation is not None and spec.aggregation not in AGGREGATION_NAMES:
                raise InvalidInputError(f"{where}: {key}.{resource_type}: unknown aggregation")
            found.append(ResourceLimit(kind, str(resource_type), float(spec.limit), spec.level,
                                       spec.aggregation))
    return rest, found


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
        return _REQUEST_TYPES.get(str(request.get("resourceType")), "other") == resource_type

    sized = [(str(r.get("url")), float(r.get("transferSize") or 0)) for r in requests
             if matches(r)]
    return sorted(sized, key=lambda item: -item[1])[:count]


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
        rows = ok.iloc[[i for i, key in enumerate(keys) if key == cell]]
        lhrs = [read_lhr(str(test_id)) for test_id in rows["id"].tolist()]
        for limit in limits:
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
    from ._evaluate import BudgetResult

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
            # The run nearest the aggregate shows which requests make up the bytes.
            nearest = min((i for i, v in enumerate(per_run) if v is not None),
                          key=lambda i: abs((per_run[i] or 0.0) - actual))
            largest = largest_requests(lhrs[nearest], limit.resource_type)
            if largest:
                message += "; largest {}: {}".format(
                    limit.resource_type if limit.resource_type != "total" else "requests",
                    ", ".join(f"{url} ({format_resource_value(name, size)})"
                              for url, size in largest))
    url, device, location, connection, flow, step = cell
    return BudgetResult(
        url=str(url), device=str(device), location=str(location), connection=connection,
        flow=flow, step=step,
        metric=name, operator="<=", expected=limit.limit, actual=actual,
        values=tuple(values), aggregation=aggregation, passed=passed, level=level,
        report_url=None, message=message,
    )
