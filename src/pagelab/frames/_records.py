"""The one codec of runs: the wide frame to and from JSON-ready records (files of saved runs)
and back to reports.

:func:`~pagelab.frames.to_frame` turns reports into the wide frame; :func:`to_reports` turns
a wide frame back into reports (``Results.from_frame``); :func:`to_records` and
:func:`from_records` carry the frame through JSON (the pytest plugin's results file, budgets
re-checked with ``pytest --pagelab-replay`` or ``pagelab check --replay``);
:func:`read_runs` reads such a file, or a CSV of the wide frame, back into the frame.
Round trips are exact (``tests/test_frames.py``).
"""

from __future__ import annotations

import json
import math
from os import PathLike
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from pagelab._exceptions import InvalidInputError
from pagelab.models import (
    METRIC_NAMES,
    USER_TIMING_PREFIX,
    Build,
    EngineEnvironment,
    LighthouseConfig,
    LighthouseError,
    Metrics,
    TestReport,
    invalid_input,
)

from ._wide import (
    COLUMNS,
    ENVIRONMENT_COLUMNS,
    FLOW_COLUMNS,
    INTERACTION_COLUMNS,
    add_flow_columns,
    add_interaction_columns,
    with_template,
)

__all__ = ["from_records", "read_runs", "to_records", "to_reports"]


def to_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The wide frame as JSON-ready dicts: ISO 8601 UTC times, None for missing values."""
    records: list[dict[str, Any]] = []
    for row in frame.astype(object).to_dict("records"):
        clean: dict[str, Any] = {}
        for key, value in row.items():
            if isinstance(value, pd.Timestamp):
                clean[str(key)] = value.isoformat()
            elif value is None or value is pd.NA or (
                isinstance(value, float) and math.isnan(value)
            ):
                clean[str(key)] = None
            elif hasattr(value, "item"):  # numpy scalars
                clean[str(key)] = value.item()
            else:
                clean[str(key)] = value
        records.append(clean)
    return records


def from_records(records: list[dict[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """A wide frame with :data:`pagelab.frames.COLUMNS`' dtypes from records (or a frame
    read from CSV); missing columns are filled with missing values."""
    raw = records if isinstance(records, pd.DataFrame) else pd.DataFrame.from_records(records)
    data: dict[str, Any] = {}
    for name, dtype in COLUMNS.items():
        column = raw[name] if name in raw.columns else pd.Series([None] * len(raw))
        if name == "created_at":
            data[name] = pd.to_datetime(column, utc=True, format="ISO8601").astype(dtype)
        elif dtype == "boolean":
            data[name] = column.map(
                lambda v: v if isinstance(v, bool) else
                (None if v is None or (isinstance(v, float) and math.isnan(v))
                 else str(v).strip().lower() == "true")
            ).astype(dtype)
        elif dtype == "string":
            data[name] = column.map(
                lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else v
            ).astype(dtype)
        elif dtype in ("float64", "Int64"):
            data[name] = pd.to_numeric(column, errors="coerce").astype(dtype)
        else:
            data[name] = column.astype(dtype)
    # The page's user timings, where it recorded any.
    for name in raw.columns:
        if str(name).startswith(USER_TIMING_PREFIX):
            data[str(name)] = pd.to_numeric(raw[name], errors="coerce").astype("float64")
    frame = pd.DataFrame(data, columns=list(data))
    if "template" in raw.columns:  # a scan's runs
        frame = with_template(frame, [v if isinstance(v, str) else None
                                      for v in raw["template"]])
    if "flow" in raw.columns:
        # Runs of user flows: their step columns, after url as to_frame puts them.
        def present(v: Any) -> Any:
            return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

        flows = [[present(v) for v in raw[name]] if name in raw.columns
                 else [None] * len(raw) for name in FLOW_COLUMNS]
        flows[2] = [None if v is None else int(v) for v in flows[2]]
        add_flow_columns(frame, [row if row[0] is not None else None
                                 for row in zip(*flows, strict=True)])
        add_interaction_columns(frame, {
            name: list(raw[name]) if dtype == "string" else
            pd.to_numeric(raw[name], errors="coerce").tolist()
            for name, dtype in INTERACTION_COLUMNS.items() if name in raw.columns})
    return frame


def read_runs(path: str | PathLike[str]) -> pd.DataFrame:
    """Runs saved as a pytest-pagelab results JSON (its ``runs``), a JSON list of run records,
    or a CSV of the wide frame. Raises :class:`InvalidInputError` naming the file."""
    source = Path(path)
    if not source.is_file():
        raise InvalidInputError(f"{source}: no such runs file")
    try:
        if source.suffix.lower() == ".csv":
            return from_records(pd.read_csv(source, dtype=object, keep_default_na=True))
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{source}: cannot read runs ({exc})") from exc
    records = data.get("runs") if isinstance(data, dict) else data
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise InvalidInputError(
            f"{source}: expected a results file with 'runs' or a list of run records"
        )
    try:
        return from_records(records)
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(f"{source}: malformed runs ({exc})") from exc


def to_reports(frame: pd.DataFrame) -> list[TestReport]:
    """Reports rebuilt from a wide frame's page-run rows (what the frame holds, nothing
    more: an error's message is its code). Rows of flow steps are not page tests and are
    left out."""
    def value(row: dict[Any, Any], name: str) -> Any:
        item = row.get(name)
        if item is None:
            return None
        try:
            return None if pd.isna(item) else item
        except (TypeError, ValueError):  # lists and arrays are values, not NA
            return item

    timing_columns = [str(c) for c in frame.columns if str(c).startswith(USER_TIMING_PREFIX)]
    reports: list[TestReport] = []
    if "flow" in frame.columns:
        frame = frame[frame["flow"].isna()]
    for row in frame.to_dict("records"):
        metrics = {name: value(row, name) for name in METRIC_NAMES}
        timings = {name: float(v) for name in timing_columns
                   if (v := value(row, name)) is not None}
        metrics["user_timings"] = timings or None
        code = value(row, "error_code")
        created = value(row, "created_at")
        commit = value(row, "commit")
        environment = {
            name: item for name in ENVIRONMENT_COLUMNS
            if (item := value(row, name)) is not None
        }
        try:
            reports.append(TestReport(
                id=value(row, "id"),
                batch_id=value(row, "batch_id"),
                url=str(row["url"]),
                device=str(row["device"]),
                location=str(row["location"]),
                config=LighthouseConfig(
                    connection=value(row, "connection"),
                    **({"throttling_method": t}
                       if (t := value(row, "throttling_method")) is not None else {}),
                ),
                status=str(row["status"]),
                lighthouse_version=value(row, "lighthouse_version"),
                metrics=Metrics(**metrics) if any(v is not None for v in metrics.values())
                else None,
                report_url=value(row, "report_url"),
                created_at=created.to_pydatetime() if isinstance(created, pd.Timestamp)
                else created,
                error=LighthouseError(code=str(code), message=str(code)) if code else None,
                vantage=value(row, "vantage"),
                environment=EngineEnvironment(**environment) if environment else None,
                # What the frame keeps of the build: its commit and branch.
                build=Build(commit=commit, branch=value(row, "branch")) if commit else None,
            ))
        except ValidationError as exc:
            raise invalid_input(exc, f"frame row {len(reports)}") from exc
    return reports
