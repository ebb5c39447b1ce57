"""Reports as pandas DataFrames.

The wide frame has one row per test and these columns (dtypes explicit, times in UTC):

==================  ====================  ==========================================
column              dtype                 meaning
==================  ====================  ==========================================
id                  string                ``lt_…`` test id
url                 string                tested page
device              category              device id (all 15 as categories)
location            category              location id (all 15 as categories)
status              category              idle / active / success / failed
error_code          string                Lighthouse's or pagelab's code when failed
created_at          datetime64[ns, UTC]   creation time
lighthouse_version  string
vantage             string                which machine measured it
chrome_version      string
benchmark_index     float64               Lighthouse's CPU benchmark of the machine
<nine metrics>      float64               spec names; units in :data:`UNITS`; NaN if null
==================  ====================  ==========================================
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from pagelab.models import (
    METRIC_NAMES,
    BatchItem,
    BatchReport,
    Device,
    Location,
    TestReport,
    TestStatus,
)

__all__ = ["COLUMNS", "METRICS", "UNITS", "to_frame", "to_long"]

#: The nine metrics, in the spec's order.
METRICS: tuple[str, ...] = METRIC_NAMES

#: Unit of each metric column.
UNITS: dict[str, str] = {
    name: "ms" for name in METRICS if name not in ("cumulative_layout_shift", "performance_score")
} | {"cumulative_layout_shift": "unitless", "performance_score": "percent"}

#: Column -> dtype of the wide frame, in column order.
COLUMNS: dict[str, Any] = {
    "id": "string",
    "url": "string",
    "device": pd.CategoricalDtype([d.value for d in Device]),
    "location": pd.CategoricalDtype([loc.value for loc in Location]),
    "status": pd.CategoricalDtype([s.value for s in TestStatus]),
    "error_code": "string",
    "created_at": "datetime64[ns, UTC]",
    "lighthouse_version": "string",
    "vantage": "string",
    "chrome_version": "string",
    "benchmark_index": "float64",
    **dict.fromkeys(METRICS, "float64"),
}

Reportish = TestReport | BatchReport | BatchItem


def _row(item: TestReport | BatchItem, batch: BatchReport | None = None) -> dict[str, Any]:
    env = item.environment
    metrics = item.metrics.model_dump() if item.metrics else {}
    created_at = item.created_at or (batch.created_at if batch else None)
    return {
        "id": item.id,
        "url": item.url,
        "device": item.device.value,
        "location": item.location.value,
        "status": item.status.value,
        "error_code": item.error.code if item.error else None,
        "created_at": pd.Timestamp(created_at) if created_at else pd.NaT,
        "lighthouse_version": item.lighthouse_version
        or (batch.lighthouse_version if batch else None),
        "vantage": item.vantage,
        "chrome_version": env.chrome_version if env else None,
        "benchmark_index": env.benchmark_index if env else None,
        **{name: metrics.get(name) for name in METRICS},
    }


def _rows(reports: Iterable[Reportish]) -> Iterable[dict[str, Any]]:
    for report in reports:
        if isinstance(report, BatchReport):
            for item in report.reports:
                yield _row(item, report)
        elif isinstance(report, TestReport | BatchItem):
            yield _row(report)
        else:
            raise TypeError(f"expected TestReport, BatchReport or BatchItem, got {report!r}")


def to_frame(reports: Iterable[Reportish] | Reportish) -> pd.DataFrame:
    """The wide frame of tests (a batch contributes one row per item)."""
    if isinstance(reports, TestReport | BatchReport | BatchItem):
        reports = [reports]
    frame = pd.DataFrame.from_records(list(_rows(reports)), columns=list(COLUMNS))
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True)
    return frame.astype(COLUMNS)


def to_long(frame: pd.DataFrame) -> pd.DataFrame:
    """The tidy frame: one row per (test, metric) with ``metric``, ``value`` and ``unit``."""
    id_columns = [c for c in frame.columns if c not in METRICS]
    long = frame.melt(id_vars=id_columns, value_vars=list(METRICS), var_name="metric")
    long["metric"] = long["metric"].astype(pd.CategoricalDtype(list(METRICS)))
    long["unit"] = long["metric"].map(UNITS).astype("string")
    return long
