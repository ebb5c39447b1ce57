"""Saved runs: the wide frame as JSON records and back, so budgets can be re-checked later
(``pytest --pagelab-replay``, ``pagelab check --replay``) without measuring again."""

from __future__ import annotations

import json
import math
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagelab._exceptions import InvalidInputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["frame_from_records", "load_runs", "runs_to_records"]


def runs_to_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The wide frame as JSON-ready dicts: ISO 8601 UTC times, None for missing values."""
    import pandas as pd

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


def frame_from_records(records: list[dict[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """A wide frame with :data:`pagelab.frames.COLUMNS`' dtypes from records (or a frame
    read from CSV); missing columns are filled with missing values."""
    import pandas as pd

    from pagelab.frames import COLUMNS

    raw = records if isinstance(records, pd.DataFrame) else pd.DataFrame.from_records(records)
    data: dict[str, Any] = {}
    for name, dtype in COLUMNS.items():
        column = raw[name] if name in raw.columns else pd.Series([None] * len(raw))
        if name == "created_at":
            data[name] = pd.to_datetime(column, utc=True, format="ISO8601").astype(dtype)
        elif name == "engine_failure":
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
    return pd.DataFrame(data, columns=list(COLUMNS))


def load_runs(path: str | PathLike[str]) -> pd.DataFrame:
    """Runs saved as a pytest-pagelab results JSON (its ``runs``), a JSON list of run records,
    or a CSV of the wide frame. Raises :class:`InvalidInputError` naming the file."""
    import pandas as pd

    source = Path(path)
    if not source.is_file():
        raise InvalidInputError(f"{source}: no such runs file")
    try:
        if source.suffix.lower() == ".csv":
            return frame_from_records(pd.read_csv(source, dtype=object, keep_default_na=True))
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{source}: cannot read runs ({exc})") from exc
    records = data.get("runs") if isinstance(data, dict) else data
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise InvalidInputError(
            f"{source}: expected a results file with 'runs' or a list of run records"
        )
    try:
        return frame_from_records(records)
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(f"{source}: malformed runs ({exc})") from exc
