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
commit              string                the build's commit (``TestReport.build``);
                                          missing when unknown
branch              string                the build's branch; missing when unknown
lighthouse_version  string
vantage             string                which machine measured it
chrome_version      string
benchmark_index     float64               Lighthouse's CPU benchmark of the machine
load_average        float64               1-minute load average when the run started
cpu_pressure        float64               % of the last 10 s some task waited for a CPU
noisy               boolean               the machine was unfit to measure (its fitness
                                          rule: benchmark index, load, pressure, CPU
                                          share); NA when not judged
report_url          string                the hosted HTML report (success only)
<nine metrics>      float64               spec names; ms, CLS unitless, score 0-100
user_timing:<name>  float64               the page's User Timing marks (start) and
                                          measures (duration), ms; one column per name
                                          any run recorded, only where present
==================  ====================  ==========================================

A frame holding runs of user flows (:class:`~pagelab.FlowReport`, one row per step) has
four more columns after ``url`` (:data:`FLOW_COLUMNS`; missing in a page run's row):
``flow`` (string, the flow's name), ``step`` (string, the step's name), ``step_index``
(Int64, 1-based) and ``mode`` (category: navigation / timespan / snapshot). A flow step's
``url`` is the page's URL when the step ended. A failed flow run keeps a row per step it
measured and adds one ``failed`` row for the step it failed at (its ``url`` the page it was
on, its ``mode`` missing). ``flow`` and ``step`` are part of the cell
(:data:`~pagelab.frames.CELL`).

Such a frame also has :data:`INTERACTION_COLUMNS` after the metric columns, a timespan
step's slowest interaction (the one its INP reports; missing in other rows, and where the
step had none):

==================  ====================  ==========================================
inp_event           string                its event whose handlers ran longest
                                          (``click``, ``keydown``...)
inp_target          string                that event's target, Lighthouse's CSS
                                          selector of the node (``button#add-slow``)
inp_input_delay     float64               ms from the input to the first handler
inp_processing      float64               ms in its event handlers
inp_presentation    float64               ms from the handlers' end to the next paint
==================  ====================  ==========================================
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from itertools import chain, repeat, zip_longest
from operator import itemgetter, methodcaller
from typing import Any, cast

import numpy as np
import pandas as pd

from pagelab.models import (
    ENGINE_FAILURE_CODES,
    METRIC_NAMES,
    METRICS,
    BatchItem,
    BatchReport,
    Connection,
    Device,
    FlowReport,
    FlowStepRef,
    InteractionBreakdown,
    Location,
    TestReport,
    TestStatus,
    ThrottlingMethod,
    metric,
    metric_columns,
)

__all__ = ["COLUMNS", "UNITS", "to_frame", "to_long", "with_template"]

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
    "commit": "string",
    "branch": "string",
    "lighthouse_version": "string",
    "vantage": "string",
    "chrome_version": "string",
    "benchmark_index": "float64",
    "load_average": "float64",
    "cpu_pressure": "float64",
    "noisy": "boolean",
    "report_url": "string",
    **dict.fromkeys(METRIC_NAMES, "float64"),
}

#: The columns that come from a report's ``environment`` (the fields of the same names).
ENVIRONMENT_COLUMNS = ("chrome_version", "benchmark_index", "load_average", "cpu_pressure",
                       "noisy")

#: The columns a frame of flow runs adds after ``url``, with their dtypes.
FLOW_COLUMNS: dict[str, Any] = {
    "flow": "string",
    "step": "string",
    "step_index": "Int64",
    "mode": pd.CategoricalDtype(["navigation", "timespan", "snapshot"]),
}

#: The columns of a timespan's slowest interaction (in a frame holding flow runs), with
#: their dtypes, and the :class:`~pagelab.models.InteractionBreakdown` field each reads.
INTERACTION_COLUMNS: dict[str, Any] = {
    "inp_event": "string",
    "inp_target": "string",
    "inp_input_delay": "float64",
    "inp_processing": "float64",
    "inp_presentation": "float64",
}
_INTERACTION_FIELDS = ("event", "target", "input_delay", "processing", "presentation")

Reportish = TestReport | BatchReport | BatchItem | FlowReport

_NAN = float("nan")
# Epoch microseconds below this in magnitude are exact floats (2 ** 53, about 285 years).
_EXACT_MICROS = 9_007_199_254_740_992
# The wide frame is built from tuples of fields read in C (itemgetter on the models'
# __dict__, where pydantic keeps every field), one tuple per row, transposed by zip; nested
# parts likewise, a missing one (no metrics, no environment...) reading as Nones. Python runs
# once per report, not once per value, and every model is visited once: 100 000 reports in
# a fraction of a second (benchmarks/frames.py).
_ITEM_FIELDS = (
    "id", "url", "device", "location", "status", "error", "created_at",
    "lighthouse_version", "vantage", "environment", "report_url", "metrics", "build",
)
_ROW_FIELDS = (*_ITEM_FIELDS, "batch_id", "config")
_test_fields = itemgetter(*_ROW_FIELDS)
_item_fields = itemgetter(*_ITEM_FIELDS)
_timestamp = methodcaller("timestamp")


class _Codes(dict[Any, int]):
    """Category code by value; anything else (None) is -1, missing."""

    def __missing__(self, key: Any) -> int:
        return -1


_CODES: dict[str, _Codes] = {
    name: _Codes({value: code for code, value in enumerate(dtype.categories)})
    for name, dtype in COLUMNS.items()
    if isinstance(dtype, pd.CategoricalDtype)
}


class _FlowConfig:
    """What a flow step's row reads from a config: the connection (None: the device's)."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.throttling_method = None


#: (flow, step, step_index, mode) of a flow step's row.
_FlowRow = tuple[str, str, int, str | None]


def flow_rows(report: FlowReport) -> list[tuple[tuple[Any, ...], _FlowRow]]:
    """A flow run's rows: one per measured step, and a ``failed`` one for the step it
    failed at; each as (``_ROW_FIELDS`` tuple, flow values)."""
    config = _FlowConfig(report.connection)
    common = (report.device, report.location)
    rows: list[tuple[tuple[Any, ...], _FlowRow]] = []
    for step in report.steps:
        fields: tuple[Any, ...] = (
                  step.id, step.url, *common, TestStatus.SUCCESS, None, report.started_at,
                  report.lighthouse_version, None, report.environment, step.report_url,
                  step.metrics, report.build, None, config)
        rows.append((fields, _flow_values(report.ref(step))))
    failed = report.failed_ref()
    if failed is not None:
        url = report.steps[-1].url if report.steps else None
        fields = (None, url, *common, report.status, report.error, report.started_at,
                  report.lighthouse_version, None, report.environment, None, None,
                  report.build, None, config)
        rows.append((fields, _flow_values(failed)))
    return rows


def _flow_values(ref: FlowStepRef) -> _FlowRow:
    return (ref.flow, ref.step, ref.step_index, ref.mode)


def row_count(report: Reportish) -> int:
    """How many rows ``report`` gives in the wide frame."""
    if isinstance(report, FlowReport):
        return len(report.steps) + (report.status is TestStatus.FAILED)
    return len(report.reports) if isinstance(report, BatchReport) else 1


def _rows(
    reports: Iterable[Reportish],
) -> tuple[list[tuple[Any, ...]], list[tuple[int, BatchReport]], dict[int, _FlowRow],
           dict[int, InteractionBreakdown]]:
    """One tuple of ``_ROW_FIELDS`` per test or batch item (batches flattened in order, an
    item's batch_id and config are its batch's) or flow step, (row, batch) for each batch's
    item, each flow step row's flow values by row, and its slowest interaction."""
    rows: list[tuple[Any, ...]] = []
    batch_rows: list[tuple[int, BatchReport]] = []
    flow_values: dict[int, _FlowRow] = {}
    interactions: dict[int, InteractionBreakdown] = {}
    for report in reports:
        if isinstance(report, TestReport):
            if report.flow_step is not None:  # a stored flow step (runner.list())
                flow_values[len(rows)] = _flow_values(report.flow_step)
            rows.append(_test_fields(report.__dict__))
        elif isinstance(report, BatchReport):
            batch_rows += ((len(rows) + k, report) for k in range(len(report.reports)))
            batch = (report.id, report.config)
            rows += [_item_fields(item.__dict__) + batch for item in report.reports]
        elif isinstance(report, BatchItem):
            rows.append((*_item_fields(report.__dict__), None, None))
        elif isinstance(report, FlowReport):
            # The steps' rows come first, in order; a failed run's last row has no step.
            for (fields, values), step in zip_longest(flow_rows(report), report.steps):
                flow_values[len(rows)] = values
                if step is not None and step.interaction is not None:
                    interactions[len(rows)] = step.interaction
                rows.append(fields)
        else:
            raise TypeError(
                f"expected TestReport, BatchReport, BatchItem or FlowReport, got {report!r}")
    return rows, batch_rows, flow_values, interactions


def _nested_rows(models: Sequence[Any], names: Sequence[str]) -> Iterator[Any]:
    """The fields ``names`` of each of ``models`` (a tuple, or the value for one name),
    None where a model is None."""
    missing = dict.fromkeys(names)
    return map(itemgetter(*names), map(getattr, models, repeat("__dict__"), repeat(missing)))


def _nested(models: Sequence[Any], names: Sequence[str]) -> list[Sequence[Any]]:
    """Columns of the fields ``names`` (two or more) of ``models``."""
    return list(zip(*_nested_rows(models, names), strict=True)) or [() for _ in names]


def _categorical(name: str, values: Sequence[Any]) -> pd.Categorical:
    # Enum members hash and compare as their values, so they index the codes directly.
    codes = np.fromiter(map(_CODES[name].__getitem__, values), np.int16, len(values))
    return pd.Categorical.from_codes(codes, dtype=COLUMNS[name])


def _strings(values: Sequence[Any]) -> Any:
    """``pd.array(values, dtype="string")``, built by pyarrow directly when that is the
    storage: the values are ``str`` or None, so pandas' conversion pass (``str()`` of each
    value) changes nothing and only costs time. Anything pyarrow refuses takes pandas' path."""
    dtype = pd.StringDtype()
    if dtype.storage == "pyarrow" and dtype.na_value is pd.NA:
        import pyarrow as pa  # type: ignore[import-untyped]

        try:
            array = pa.array(values, type=pa.large_string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
        else:
            return pd.arrays.ArrowStringArray(array)
    return pd.array(values, dtype="string")


def _epoch_ms(times: Sequence[datetime | None]) -> np.ndarray[Any, np.dtype[np.float64]]:
    if None in times:
        return np.array([t.timestamp() * 1000 if t else _NAN for t in times], dtype="float64")
    try:
        # pandas reads aware datetimes to exact epoch microseconds in C; from them, the
        # same float arithmetic as datetime.timestamp() (exact microseconds / 1e6, correctly
        # rounded), times 1000. Naive or mixed zones take the plain path below.
        index = pd.DatetimeIndex(cast(Any, times))
    except (TypeError, ValueError):
        index = None
    if index is not None and str(index.tz) == "UTC":
        micros = index.as_unit("us").asi8
        if micros.min() > -_EXACT_MICROS and micros.max() < _EXACT_MICROS:
            return micros.astype(np.float64) / 1e6 * 1000
    return np.fromiter(map(_timestamp, times), np.float64, len(times)) * 1000


def to_frame(reports: Iterable[Reportish] | Reportish) -> pd.DataFrame:
    """The wide frame of tests (a batch contributes one row per item, a flow run one row
    per step, with :data:`FLOW_COLUMNS`)."""
    if isinstance(reports, TestReport | BatchReport | BatchItem | FlowReport):
        reports = [reports]
    # The collector is paused while the frame is built: what is built here is a few
    # hundred thousand short-lived tuples, freed by reference counting, and with the
    # collector on they set off full collections over every object the caller holds
    # (100 000 reports: about 3x the time, benchmarks/frames.py). Restored as found.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _build(reports)
    finally:
        if paused:
            gc.enable()


def _build(reports: Iterable[Reportish]) -> pd.DataFrame:
    rows, batch_rows, flow_values, interactions = _rows(reports)
    n = len(rows)
    columns: dict[str, Sequence[Any]] = dict(
        zip(_ROW_FIELDS, list(zip(*rows, strict=True)) or [() for _ in _ROW_FIELDS],
            strict=True)
    )
    if batch_rows:
        # A batch's item without its own time or version has its batch's.
        created, versions = list(columns["created_at"]), list(columns["lighthouse_version"])
        for row, batch in batch_rows:
            created[row] = created[row] or batch.created_at
            versions[row] = versions[row] or batch.lighthouse_version
        columns["created_at"], columns["lighthouse_version"] = created, versions
    connections, throttling_methods = _nested(
        columns["config"], ("connection", "throttling_method")
    )
    chrome_versions, benchmark_indexes, load_averages, cpu_pressures, noisy = _nested(
        columns["environment"], ENVIRONMENT_COLUMNS)
    error_codes = list(_nested_rows(columns["error"], ("code",)))
    commits, branches = _nested(columns["build"], ("commit", "branch"))
    # Through an object array: numpy's cast reads None as NaN, and fromiter over the chained
    # rows is cheaper than np.array's shape discovery over 100 000 tuples.
    metric_values = (
        np.fromiter(
            chain.from_iterable(_nested_rows(columns["metrics"], METRIC_NAMES)),
            dtype=object,
            count=n * len(METRIC_NAMES),
        )
        .astype("float64")
        .reshape(n, len(METRIC_NAMES))
    )
    data: dict[str, Any] = {
        "id": _strings(columns["id"]),
        "batch_id": _strings(columns["batch_id"]),
        "url": _strings(columns["url"]),
        "device": _categorical("device", columns["device"]),
        "location": _categorical("location", columns["location"]),
        "connection": _categorical("connection", connections),
        "throttling_method": _categorical("throttling_method", throttling_methods),
        "run": pd.arrays.IntegerArray(np.zeros(n, dtype="int64"), np.ones(n, dtype=bool)),
        "status": _categorical("status", columns["status"]),
        "error_code": _strings(error_codes),
        # LighthouseError.is_engine_failure, read from the codes.
        "engine_failure": pd.arrays.BooleanArray(
            np.fromiter(map(ENGINE_FAILURE_CODES.__contains__, error_codes), bool, n),
            np.zeros(n, dtype=bool),
        ),
        "created_at": pd.to_datetime(
            _epoch_ms(columns["created_at"]).round(), unit="ms", utc=True
        ).astype(COLUMNS["created_at"]),
        "commit": _strings(commits),
        "branch": _strings(branches),
        "lighthouse_version": _strings(columns["lighthouse_version"]),
        "vantage": _strings(columns["vantage"]),
        "chrome_version": _strings(chrome_versions),
        "benchmark_index": np.array(benchmark_indexes, dtype="float64"),
        "load_average": np.array(load_averages, dtype="float64"),
        "cpu_pressure": np.array(cpu_pressures, dtype="float64"),
        "noisy": pd.array(list(noisy), dtype="boolean"),
        "report_url": _strings(columns["report_url"]),
    }
    for index, name in enumerate(METRIC_NAMES):
        data[name] = metric_values[:, index]
    data.update(_user_timing_columns(columns["metrics"]))
    frame = pd.DataFrame(data)
    if flow_values:
        add_flow_columns(frame, [flow_values.get(row) for row in range(n)])
        found = [interactions.get(row) for row in range(n)]
        add_interaction_columns(frame, {
            name: [getattr(i, field) if i is not None else None for i in found]
            for name, field in zip(INTERACTION_COLUMNS, _INTERACTION_FIELDS, strict=True)})
    return frame


def add_interaction_columns(frame: pd.DataFrame, values: Mapping[str, Sequence[Any]]) -> None:
    """Insert :data:`INTERACTION_COLUMNS` after the metric columns (in place) from their
    values by column (None or NaN: missing; a column not in ``values``: all missing)."""
    metrics = [c for c in frame.columns if c in METRICS]
    position = list(frame.columns).index(metrics[-1]) + 1 if metrics else len(frame.columns)
    empty = [None] * len(frame)
    for offset, (name, dtype) in enumerate(INTERACTION_COLUMNS.items()):
        column = [None if v is None or (isinstance(v, float) and math.isnan(v)) else v
                  for v in values.get(name, empty)]
        frame.insert(position + offset, name, pd.array(column, dtype=dtype))


def add_flow_columns(frame: pd.DataFrame, values: Sequence[Sequence[Any] | None]) -> None:
    """Insert :data:`FLOW_COLUMNS` after ``url`` (in place) from each row's (flow, step,
    step_index, mode), None for a page run's row."""
    position = list(frame.columns).index("url") + 1
    empty = (None,) * len(FLOW_COLUMNS)
    columns = list(zip(*(v or empty for v in values), strict=True)) or [
        () for _ in FLOW_COLUMNS]
    for offset, ((name, dtype), column) in enumerate(
            zip(FLOW_COLUMNS.items(), columns, strict=True)):
        array: Any = (pd.Categorical(list(column), dtype=dtype)
                      if isinstance(dtype, pd.CategoricalDtype)
                      else pd.array(list(column), dtype=dtype))
        frame.insert(position + offset, name, array)


def _user_timing_columns(metrics: Sequence[Any]) -> dict[str, np.ndarray[Any, Any]]:
    """A float64 column per user timing any run recorded (NaN where a run has none)."""
    timings = [getattr(m, "user_timings", None) for m in metrics]
    if not any(timings):
        return {}
    names = list(dict.fromkeys(name for t in timings if t for name in t))
    return {name: np.array([t.get(name, _NAN) if t else _NAN for t in timings],
                           dtype="float64") for name in names}


def to_long(frame: pd.DataFrame) -> pd.DataFrame:
    """The tidy frame: one row per (test, metric) with ``metric``, ``value`` and ``unit``."""
    value_vars = metric_columns(frame.columns)
    id_columns = [c for c in frame.columns if c not in value_vars]
    long = frame.melt(id_vars=id_columns, value_vars=value_vars, var_name="metric")
    long["metric"] = long["metric"].astype(pd.CategoricalDtype(
        [*METRIC_NAMES, *(n for n in value_vars if n not in METRICS)]))
    long["unit"] = long["metric"].map(
        {name: metric(name).unit for name in value_vars}).astype("string")
    return long


def with_template(frame: pd.DataFrame, template: str | Sequence[str | None]) -> pd.DataFrame:
    """``frame`` with a ``template`` column right after ``url`` (one name for every row,
    or one per row): how a scan's runs carry their template."""
    names = [template] * len(frame) if isinstance(template, str) else list(template)
    frame = frame.drop(columns="template", errors="ignore")
    frame.insert(list(frame.columns).index("url") + 1, "template",
                 pd.Series(names, index=frame.index, dtype="string"))
    return frame
