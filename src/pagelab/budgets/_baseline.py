"""Baselines: save aggregated results, later fail on a regression against them.

A baseline file is JSON: per cell (URL x device x location x connection, the connection null
for the device's default and in files written before it was recorded) the aggregated metrics, the
number of runs, the Lighthouse version and the device profile used. A regression limit is
relative (``10%`` of the baseline) or absolute (``5`` in the metric's unit); times and CLS
regress upward, the score downward.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagelab._cells import CellKey, cell_keys, cell_label
from pagelab._exceptions import InvalidInputError
from pagelab.models import METRIC_NAMES, METRICS

from ._evaluate import BudgetResult, aggregate_cells, evaluate, format_value
from ._models import Check, budget_metric

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BASELINE_FORMAT",
    "Baseline",
    "BaselineCell",
    "BaselineComparison",
    "RegressionLimit",
    "compare_baseline",
    "load_baseline",
    "make_baseline",
    "parse_regression_limits",
    "save_baseline",
]

#: The ``format`` field of a baseline file.
BASELINE_FORMAT = "pagelab-baseline/1"


def _device_profile(device: str) -> dict[str, Any] | None:
    from pagelab.catalog import DEVICES
    from pagelab.models import Device

    try:
        profile = DEVICES[Device(device)]
    except (ValueError, KeyError):
        return None
    data = asdict(profile)
    data["id"] = profile.id.value
    return data


@dataclass(frozen=True, slots=True)
class BaselineCell:
    """One cell's aggregated metrics (None where no run gave a value)."""

    url: str
    device: str
    location: str
    runs: int
    metrics: dict[str, float | None]
    lighthouse_version: str | None = None
    device_profile: dict[str, Any] | None = None
    #: None: the device's default connection.
    connection: str | None = None

    @property
    def key(self) -> CellKey:
        """The cell as :data:`pagelab.frames.CellKey`."""
        return (self.url, self.device, self.location, self.connection)


@dataclass(frozen=True, slots=True)
class Baseline:
    """Aggregated results to compare later runs with."""

    aggregation: str
    cells: list[BaselineCell]
    created_at: str = ""

    def cell(self, url: str, device: str, location: str,
             connection: str | None = None) -> BaselineCell | None:
        wanted = (url, device, location, connection)
        for cell in self.cells:
            if cell.key == wanted:
                return cell
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": BASELINE_FORMAT,
            "created_at": self.created_at,
            "aggregation": self.aggregation,
            "cells": [asdict(c) for c in self.cells],
        }


def _clean(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def make_baseline(frame: pd.DataFrame, *, aggregation: str = "median") -> Baseline:
    """The baseline of the runs in ``frame``, aggregated per cell."""
    summary = aggregate_cells(frame, aggregation, METRIC_NAMES)
    cells: list[BaselineCell] = []
    keys = cell_keys(frame)
    for key, row in summary.items():
        url, device, location, connection = key
        rows = frame.iloc[[i for i, k in enumerate(keys) if k == key]]
        versions = rows["lighthouse_version"].dropna().astype(str).unique().tolist()
        cells.append(
            BaselineCell(
                url=str(url),
                device=str(device),
                location=str(location),
                runs=int(row.get("runs", len(rows))),
                metrics={name: _clean(row.get(name)) for name in METRIC_NAMES},
                lighthouse_version=versions[-1] if versions else None,
                device_profile=_device_profile(str(device)),
                connection=connection,
            )
        )
    return Baseline(aggregation, cells, datetime.now(UTC).isoformat(timespec="seconds"))


def save_baseline(
    data: pd.DataFrame | Baseline, path: str | PathLike[str], *, aggregation: str = "median"
) -> Baseline:
    """Write the baseline of ``data`` (a wide frame of runs, or a :class:`Baseline`) as JSON."""
    baseline = data if isinstance(data, Baseline) else make_baseline(data, aggregation=aggregation)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(baseline.to_dict(), indent=2) + "\n", encoding="utf-8")
    return baseline


def load_baseline(path: str | PathLike[str]) -> Baseline:
    """Read a baseline written by :func:`save_baseline`; InvalidInputError when it is not one."""
    source = Path(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInputError(f"{source}: cannot read ({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{source}: not valid JSON (line {exc.lineno})") from exc
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise InvalidInputError(f"{source}: not a pagelab baseline (format {BASELINE_FORMAT})")
    try:
        cells = [
            BaselineCell(
                url=str(c["url"]),
                device=str(c["device"]),
                location=str(c["location"]),
                runs=int(c.get("runs", 0)),
                metrics={k: _clean(v) for k, v in dict(c.get("metrics", {})).items()},
                lighthouse_version=c.get("lighthouse_version"),
                device_profile=c.get("device_profile"),
                connection=None if c.get("connection") is None else str(c["connection"]),
            )
            for c in data.get("cells", [])
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"{source}: malformed baseline cell ({exc})") from exc
    return Baseline(str(data.get("aggregation", "median")), cells, str(data.get("created_at", "")))


@dataclass(frozen=True, slots=True)
class RegressionLimit:
    """How far a metric may regress: ``amount`` percent of the baseline when ``relative``,
    else ``amount`` in the metric's unit."""

    metric: str
    amount: float
    relative: bool

    def allowed(self, base: float) -> float:
        """The worst value that still passes, given the baseline value ``base``."""
        delta = abs(base) * self.amount / 100 if self.relative else self.amount
        return base + delta if METRICS[self.metric].lower_is_better else base - delta

    def __str__(self) -> str:
        amount = f"{self.amount:g}"
        return f"{self.metric}:{amount}%" if self.relative else f"{self.metric}:{amount}"


_LIMIT = re.compile(r"^\s*([A-Za-z_]+)\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*(%?)\s*$")


def parse_regression_limits(text: str | Sequence[str]) -> dict[str, RegressionLimit]:
    """``largest_contentful_paint:10%,performance_score:5`` -> limits by metric."""
    parts = [p for chunk in ([text] if isinstance(text, str) else text)
             for p in chunk.split(",") if p.strip()]
    limits: dict[str, RegressionLimit] = {}
    for part in parts:
        match = _LIMIT.match(part)
        if match is None:
            raise InvalidInputError(
                f"regression limit {part.strip()!r}: expected METRIC:N% or METRIC:N, "
                "e.g. largest_contentful_paint:10%"
            )
        name = budget_metric(match.group(1), "regression limit").name
        limits[name] = RegressionLimit(name, float(match.group(2)), bool(match.group(3)))
    return limits


@dataclass(frozen=True, slots=True)
class BaselineComparison:
    """The regression checks (as budget results) and warnings for the summary."""

    results: list[BudgetResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def compare_baseline(
    baseline: Baseline,
    frame: pd.DataFrame,
    limits: Mapping[str, RegressionLimit],
    *,
    aggregation: str | None = None,
) -> BaselineComparison:
    """Check the runs in ``frame`` against ``baseline`` with the regression ``limits``.

    Cells or metrics the baseline lacks are warnings, not failures (nothing to compare);
    a baseline from another Lighthouse version or device profile is a warning too.
    ``aggregation`` defaults to the baseline's own.
    """
    agg = aggregation or baseline.aggregation
    results: list[BudgetResult] = []
    warnings: list[str] = []
    if frame.empty:
        return BaselineComparison()
    keys = cell_keys(frame)
    for key in dict.fromkeys(keys):
        url, device, location, connection = key
        where = cell_label(key)
        base = baseline.cell(str(url), str(device), str(location), connection)
        if base is None:
            warnings.append(f"baseline has no runs for {where}: not compared")
            continue
        rows = frame.iloc[[i for i, k in enumerate(keys) if k == key]]
        versions = set(rows["lighthouse_version"].dropna().astype(str))
        if base.lighthouse_version and versions and versions != {base.lighthouse_version}:
            warnings.append(
                f"baseline for {where} was measured with Lighthouse {base.lighthouse_version}, "
                f"these runs with {', '.join(sorted(versions))}"
            )
        profile = _device_profile(str(device))
        if base.device_profile is not None and profile != base.device_profile:
            warnings.append(f"baseline for {where} used another {device} device profile")
        for name, limit in limits.items():
            base_value = base.metrics.get(name)
            if base_value is None:
                warnings.append(f"baseline has no {name} for {where}: not compared")
                continue
            check = Check(name, limit.allowed(base_value), "error", agg, str(url),
                          (str(device),), (str(location),))
            for result in evaluate([check], rows, aggregation=agg):
                note = f"(baseline {format_value(name, base_value)}, allowed {limit})"
                results.append(_with_note(result, note))
    return BaselineComparison(results, warnings)


def _with_note(result: BudgetResult, note: str) -> BudgetResult:
    # The note goes before the report link, which stays last on the line.
    head, sep, link = result.message.partition(" report: ")
    return replace(result, message=f"{head} {note}{sep}{link}")
