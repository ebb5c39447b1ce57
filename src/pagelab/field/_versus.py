"""Lab beside field: each cell's lab medians next to the field p75 of its page and form
factor (:meth:`pagelab.Results.versus_field`)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from pagelab._exceptions import InvalidInputError
from pagelab.catalog import DEVICES
from pagelab.models import FIELD_METRICS, METRICS, Device
from pagelab.stats import summarize

from ._api import origin_of, query_for, record_of
from ._client import CruxClient
from ._errors import FieldNotFoundError
from ._parse import FORM_FACTOR_NAMES
from ._tables import LabVersusField

__all__ = ["FALLBACKS", "VERSUS_COLUMNS", "field_form_factor", "versus_field"]

FALLBACKS = ("origin", None)
#: The frame's columns after the cell's.
VERSUS_COLUMNS = ("form_factor", "metric", "lab_median", "lab_rating", "field_p75",
                  "field_rating", "ratio", "field_level", "field_target", "first_date",
                  "last_date")
_CELL_COLUMNS = ("url", "device", "location", "connection")


def field_form_factor(device: object) -> str | None:
    """The API's form factor a pagelab device stands for (the device catalog's); None
    (every form factor) without a device."""
    if device is None or device is pd.NA or (isinstance(device, float) and math.isnan(device)):
        return None
    try:
        return DEVICES[Device(str(device))].field_form_factor
    except ValueError:
        raise InvalidInputError(f"device: unknown {device!r}") from None


def _field(client: CruxClient, url: str, form: str | None, fallback: str | None,
           refresh: bool) -> pd.DataFrame | None:
    """The page's record, else (``fallback="origin"``) its origin's, else None."""
    try:
        return record_of(client, query_for(url, None, form), refresh=refresh)
    except FieldNotFoundError:
        if fallback != "origin":
            return None
    try:
        return record_of(client, query_for(None, origin_of(url), form), refresh=refresh)
    except FieldNotFoundError:
        return None


def versus_field(frame: pd.DataFrame, *, fallback: str | None = "origin",
                 api_key: str | None = None, refresh: bool = False) -> pd.DataFrame:
    """One row per cell and field metric: the lab median and the field p75, both ratings,
    ``ratio`` = lab median / field p75, and which field data it is (``field_level``:
    ``page``, ``origin`` when the page had none of its own, NA when neither had any)."""
    if fallback not in FALLBACKS:
        raise InvalidInputError(f"fallback: expected 'origin' or None, got {fallback!r}")
    cells = [c for c in _CELL_COLUMNS if c in frame.columns and frame[c].notna().any()]
    if "url" not in cells:
        raise InvalidInputError("versus_field: the runs have no URL (user flows only?)")
    names = [m.name for m in FIELD_METRICS.values() if m.name in frame.columns]
    summary = summarize(frame, by=cells, metrics=names)
    client = CruxClient(api_key)
    answers: dict[tuple[str, str | None], pd.DataFrame | None] = {}
    rows: list[dict[str, Any]] = []
    for cell in summary.to_dict("records"):
        url = cell["url"]
        if not isinstance(url, str):
            continue
        form = field_form_factor(cell.get("device"))
        if (url, form) not in answers:
            answers[url, form] = _field(client, url, form, fallback, refresh)
        field = answers[url, form]
        by_metric = {} if field is None else {r["metric"]: r for r in field.to_dict("records")}
        for name in [m for m in METRICS if m in names]:
            m = METRICS[name]
            lab = _value(cell.get(name))
            got = by_metric.get(name, {})
            p75 = _value(got.get("p75"))
            if math.isnan(lab) and math.isnan(p75):
                continue
            rows.append({
                **{c: cell[c] for c in cells},
                "form_factor": FORM_FACTOR_NAMES[form],
                "metric": name,
                "lab_median": lab,
                "lab_rating": m.rating(lab),
                "field_p75": p75,
                "field_rating": m.rating(p75),
                "ratio": lab / p75 if p75 and not math.isnan(p75) else math.nan,
                "field_level": None if field is None else str(field["level"].iloc[0]),
                "field_target": None if field is None else str(field["target"].iloc[0]),
                "first_date": got.get("first_date", pd.NaT),
                "last_date": got.get("last_date", pd.NaT),
            })
    out = pd.DataFrame(rows, columns=[*cells, *VERSUS_COLUMNS])
    for column in ("form_factor", "metric", "lab_rating", "field_rating", "field_level",
                   "field_target"):
        out[column] = out[column].astype("string")
    for column in ("lab_median", "field_p75", "ratio"):
        out[column] = out[column].astype("float64")
    for column in ("first_date", "last_date"):
        out[column] = pd.to_datetime(out[column])
    return LabVersusField(out)


def _value(value: object) -> float:
    if value is None or value is pd.NA:
        return math.nan
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
