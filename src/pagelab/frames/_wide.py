"""Reports as pandas DataFrames: the wide frame (one row per run) and the tidy frame.

The wide frame's columns (dtypes explicit, times in UTC; the metric columns' units come from
the metric registry, :data:`pagelab.models.METRICS`):

==================  ====================  ==========================================
column              dtype                 meaning
==================  ====================  ==========================================
id                  string                ``lt_…`` test id
batch_id            string                ``lbt_…`` when the test belongs to a batch
url                 string                tested page
device              category              device id (all 15 as categories)
location            category              location id (all 15 as categories)
connection          category              connection id; missing: the device's default
throttling_method   category              ``simulated`` or ``applied``
run                 Int64                 repetition index in a matrix (0-based); NA else
status              category              idle / active / success / failed
error_code          string                Lighthouse's or pagelab's code when failed
engine_failure      boolean               the engine failed (crash, timeout), not the page
created_at          datetime64[ns, UTC]   creation time
lighthouse_version  string
vantage             string                which machine measured it
chrome_version      string
benchmark_index     float64               Lighthouse's CPU benchmark of the machine
report_url          string                the hosted HTML report (success only)
<nine metrics>      float64               spec names; ms, CLS unitless, score 0-100
==================  ====================  ==========================================
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from pagelab.models import (
    METRIC_NAMES,
    METRICS,
    BatchItem,
    BatchReport,
    Connection,
    Device,
    Location,
    TestReport,
    TestStatus,
    ThrottlingMethod,
)

__all__ = ["COLUMNS", "UNITS", "to_frame", "to_long"]

#: Unit of each metric column (read from the metric registry).
UNITS: dict[str, str] = {name: m.unit for name, m in METRICS.items()}

#: Column -> dtype of the wide frame, in column order.
COLUMNS: dict[str, Any] = {
    "id": "string",
    "batch_id": "string",
    "url": "string",
    "device": pd.CategoricalDtype([d.value for d in Device]),
    "location": pd.CategoricalDtype([loc.value for loc in Location]),
    "connection": pd.CategoricalDtype([c.value for c in Connection]),
    "throttling_method": pd.CategoricalDtype([t.value for t in ThrottlingMethod]),
    "run": "Int64",
    "status": pd.CategoricalDtype([s.value for s in TestStatus]),
    "error_code": "string",
    "engine_failure": "boolean",
    "created_at": "datetime64[ns, UTC]",
    "lighthouse_version": "string",
    "vantage": "string",
    "chrome_version": "string",
    "benchmark_index": "float64",
    "report_url": "string",
    **dict.fromkeys(METRIC_NAMES, "float64"),
}

Reportish = TestReport | BatchReport | BatchItem

_NAN = float("nan")
_EMPTY_METRICS = dict.fromkeys(METRIC_NAMES)


def _items(reports: Iterable[Reportish]) -> Iterable[tuple[TestReport | BatchItem, Any]]:
    """(test or item, the batch it came from or None), batches flattened in order."""
    for report in reports:
        if isinstance(report, BatchReport):
            for item in report.reports:
                yield item, report
        elif isinstance(report, TestReport | BatchItem):
            yield report, None
        else:
            raise TypeError(f"expected TestReport, BatchReport or BatchItem, got {report!r}")


def to_frame(reports: Iterable[Reportish] | Reportish) -> pd.DataFrame:
    """The wide frame of tests (a batch contributes one row per item)."""
    if isinstance(reports, TestReport | BatchReport | BatchItem):
        reports = [reports]
    # Column-wise: one pass over the reports filling plain lists is several times faster than
    # a dict per row (100 000 reports: benchmarks/frames.py).
    cols: dict[str, list[Any]] = {name: [] for name in COLUMNS if name not in METRIC_NAMES}
    metric_cols: dict[str, list[Any]] = {name: [] for name in METRIC_NAMES}
    for item, batch in _items(reports):
        env = item.environment
        error = item.error
        config = batch.config if batch is not None else getattr(item, "config", None)
        created = item.created_at or (batch.created_at if batch is not None else None)
        cols["id"].append(item.id)
        cols["batch_id"].append(
            batch.id if batch is not None else getattr(item, "batch_id", None)
        )
        cols["url"].append(item.url)
        cols["device"].append(item.device.value)
        cols["location"].append(item.location.value)
        cols["connection"].append(
            config.connection.value if config is not None and config.connection else None
        )
        cols["throttling_method"].append(
            config.throttling_method.value if config is not None else None
        )
        cols["run"].append(None)
        cols["status"].append(item.status.value)
        cols["error_code"].append(error.code if error else None)
        cols["engine_failure"].append(error.is_engine_failure if error else False)
        cols["created_at"].append(created.timestamp() * 1000 if created else _NAN)
        cols["lighthouse_version"].append(
            item.lighthouse_version or (batch.lighthouse_version if batch is not None else None)
        )
        cols["vantage"].append(item.vantage)
        cols["chrome_version"].append(env.chrome_version if env else None)
        cols["benchmark_index"].append(
            env.benchmark_index if env and env.benchmark_index is not None else _NAN
        )
        cols["report_url"].append(item.report_url)
        values = item.metrics.__dict__ if item.metrics is not None else _EMPTY_METRICS
        for name, column in metric_cols.items():
            value = values[name]
            column.append(_NAN if value is None else value)
    data: dict[str, Any] = {}
    for name, dtype in COLUMNS.items():
        if name == "created_at":
            data[name] = pd.to_datetime(
                pd.Series(cols[name], dtype="float64").round(), unit="ms", utc=True
            ).astype(dtype)
        elif name in metric_cols:
            data[name] = pd.Series(metric_cols[name], dtype="float64")
        else:
            data[name] = pd.Series(cols[name], dtype=dtype)
    return pd.DataFrame(data, columns=list(COLUMNS))


def to_long(frame: pd.DataFrame) -> pd.DataFrame:
    """The tidy frame: one row per (test, metric) with ``metric``, ``value`` and ``unit``."""
    value_vars = [name for name in METRIC_NAMES if name in frame.columns]
    id_columns = [c for c in frame.columns if c not in METRIC_NAMES]
    long = frame.melt(id_vars=id_columns, value_vars=value_vars, var_name="metric")
    long["metric"] = long["metric"].astype(pd.CategoricalDtype(list(METRIC_NAMES)))
    long["unit"] = long["metric"].map(UNITS).astype("string")
    return long
