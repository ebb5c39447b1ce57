"""Baselines: save the runs of a build, later fail on a regression against them.

A baseline file is JSON (``pagelab-baseline/2``): where and when it was measured (the commit
when known, pagelab's version) and per cell (URL x device x location x connection, the
connection null for the device's default and in files written before it was recorded) every
successful run's metrics (``values``: metric -> one value per run, None where a run gave
none), their aggregates, the number of runs, the Lighthouse and Chrome versions, the
throttling method and the device profile. Files of format 1 (aggregates only) still load;
their cells are compared by the fixed threshold, with a warning. A regression limit is
relative (``10%`` of the baseline) or absolute (``5`` in the metric's unit); times and CLS
regress upward, the score downward. Whether a difference counts is the gate's
(:mod:`._gate`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagelab._build import resolve_build
from pagelab._cells import CellKey, cell_keys, cell_label
from pagelab._exceptions import InvalidInputError
from pagelab.models import METRIC_NAMES, unfit_runs_note

from ._evaluate import aggregate_cells
from ._gate import DEFAULT_ALPHA, GateRule, RegressionResult, decide, fixed_threshold
from ._limits import RegressionLimit, parse_regression_limits
from ._sequential import look_level

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BASELINE_FORMAT",
    "Baseline",
    "BaselineCell",
    "BaselineComparison",
    "RegressionLimit",
    "compare_baseline",
    "current_commit",
    "load_baseline",
    "make_baseline",
    "parse_regression_limits",
    "save_baseline",
]

#: The ``format`` field of a baseline file.
BASELINE_FORMAT = "pagelab-baseline/2"
#: Files of this format keep aggregates only (no runs): still read, compared as before.
_AGGREGATES_ONLY_FORMAT = "pagelab-baseline/1"
#: Per-cell facts of the runs' environment kept beside them (wide-frame columns).
_ENVIRONMENT_COLUMNS = ("chrome_version", "throttling_method", "vantage")


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
    """One cell's runs: ``values`` (metric -> each successful run's value, None where it
    gave none; empty in a format-1 file) and their aggregates ``metrics``."""

    url: str
    device: str
    location: str
    runs: int
    metrics: dict[str, float | None]
    lighthouse_version: str | None = None
    device_profile: dict[str, Any] | None = None
    #: None: the device's default connection.
    connection: str | None = None
    values: dict[str, list[float | None]] = field(default_factory=dict)
    #: chrome_version, throttling_method, vantage of the runs (the last run's).
    environment: dict[str, str | None] = field(default_factory=dict)

    @property
    def key(self) -> CellKey:
        """The cell as :data:`pagelab.frames.CellKey`."""
        return (self.url, self.device, self.location, self.connection)

    @property
    def has_runs(self) -> bool:
        """Whether the per-run values are kept (format 2), so significance can be tested."""
        return bool(self.values)


@dataclass(frozen=True, slots=True)
class Baseline:
    """The runs of one build, to compare later runs with."""

    aggregation: str
    cells: list[BaselineCell]
    created_at: str = ""
    #: The commit measured (GITHUB_SHA, CI_COMMIT_SHA or ``git rev-parse HEAD``), if known.
    commit: str | None = None
    #: pagelab's version, Python's, the platform.
    environment: dict[str, str] = field(default_factory=dict)
    #: The file's format: format-1 files have no runs.
    format: str = BASELINE_FORMAT

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
            "commit": self.commit,
            "environment": self.environment,
            "aggregation": self.aggregation,
            "cells": [asdict(c) for c in self.cells],
        }


def current_commit(cwd: str | PathLike[str] | None = None) -> str | None:
    """The commit being measured, by the one build rule (``PAGELAB_COMMIT``, the CI's
    variables, else git in ``cwd``: docs/history.md, "Build context"); None when none is
    known."""
    build = resolve_build(git=True, cwd=cwd)
    return None if build is None else build.commit


def _environment() -> dict[str, str]:
    import platform
    from importlib.metadata import PackageNotFoundError, version

    try:
        pagelab_version = version("pagelab")
    except PackageNotFoundError:  # run from a source tree that was never installed
        pagelab_version = "unknown"
    return {"pagelab": pagelab_version, "python": platform.python_version(),
            "platform": platform.platform(terse=True)}


def _clean(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _cell_rows(frame: pd.DataFrame, keys: Sequence[CellKey], key: CellKey) -> pd.DataFrame:
    """The rows of cell ``key`` (``keys``: each row's, from :func:`cell_keys`), in run order."""
    rows = frame[[k == key for k in keys]]
    if "run" in rows.columns:
        rows = rows.sort_values("run", kind="stable", na_position="last")
    return rows


def _successful(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["status"].astype(str) == "success"] if "status" in rows.columns else rows


def _last(rows: pd.DataFrame, column: str) -> str | None:
    if column not in rows.columns:
        return None
    found = rows[column].dropna().astype(str).tolist()
    return found[-1] if found else None


def make_baseline(
    frame: pd.DataFrame, *, aggregation: str = "median", commit: str | None = None
) -> Baseline:
    """The baseline of the runs in ``frame``: per cell every successful run's metrics and
    their aggregates. ``commit`` defaults to :func:`current_commit`."""
    summary = aggregate_cells(frame, aggregation, METRIC_NAMES)
    cells: list[BaselineCell] = []
    keys = cell_keys(frame)
    for key, row in summary.items():
        url, device, location, connection, flow, _ = key
        if flow is not None:
            continue  # a baseline holds pages' cells; flow steps are not kept (docs/flows.md)
        rows = _cell_rows(frame, keys, key)
        ok = _successful(rows)
        cells.append(
            BaselineCell(
                url=str(url),
                device=str(device),
                location=str(location),
                runs=int(row.get("runs", len(rows))),
                metrics={name: _clean(row.get(name)) for name in METRIC_NAMES},
                lighthouse_version=_last(rows, "lighthouse_version"),
                device_profile=_device_profile(str(device)),
                connection=connection,
                values={name: [_clean(v) for v in ok[name].tolist()]
                        for name in METRIC_NAMES if name in ok.columns},
                environment={name: _last(rows, name) for name in _ENVIRONMENT_COLUMNS},
            )
        )
    return Baseline(aggregation, cells, datetime.now(UTC).isoformat(timespec="seconds"),
                    commit=commit if commit is not None else current_commit(),
                    environment=_environment())


def too_few_baseline_runs(baseline: Baseline, alpha: float = DEFAULT_ALPHA) -> list[str]:
    """One line per cell whose runs are too few for a comparison with as many runs ever to
    show a difference at ``alpha`` (:func:`pagelab.stats.too_few_runs`): ``baseline for
    mobile/us http://… saved with 3 runs: 3 vs 3 runs cannot show a difference at alpha
    0.05: at least 4 a side``."""
    from pagelab.stats import too_few_runs

    lines = []
    for cell in baseline.cells:
        runs = max((sum(v is not None for v in values) for values in cell.values.values()),
                   default=0)
        why = too_few_runs(runs, runs, alpha) if runs else None
        if why is not None:
            lines.append(f"baseline for {cell_label(cell.key)} saved with {runs} run"
                         f"{'s' if runs != 1 else ''}: {why}")
    return lines


def save_baseline(
    data: pd.DataFrame | Baseline, path: str | PathLike[str], *, aggregation: str = "median",
    alpha: float = DEFAULT_ALPHA,
) -> Baseline:
    """Write the baseline of ``data`` (a wide frame of runs, or a :class:`Baseline`) as JSON.

    A cell with too few runs for a comparison with as many to show a difference at
    ``alpha`` (the gate's false-alarm rate) is saved all the same, with a ``UserWarning``
    naming it and the runs needed (:func:`too_few_baseline_runs`)."""
    import warnings

    baseline = data if isinstance(data, Baseline) else make_baseline(data, aggregation=aggregation)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(baseline.to_dict(), indent=2) + "\n", encoding="utf-8")
    for line in too_few_baseline_runs(baseline, alpha):
        warnings.warn(line, UserWarning, stacklevel=2)
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
    formats = (BASELINE_FORMAT, _AGGREGATES_ONLY_FORMAT)
    if not isinstance(data, dict) or data.get("format") not in formats:
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
                values={str(k): [_clean(v) for v in list(vs)]
                        for k, vs in dict(c.get("values") or {}).items()},
                environment={str(k): None if v is None else str(v)
                             for k, v in dict(c.get("environment") or {}).items()},
            )
            for c in data.get("cells", [])
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"{source}: malformed baseline cell ({exc})") from exc
    commit = data.get("commit")
    return Baseline(
        str(data.get("aggregation", "median")), cells, str(data.get("created_at", "")),
        commit=None if commit is None else str(commit),
        environment={str(k): str(v) for k, v in dict(data.get("environment") or {}).items()},
        format=str(data["format"]),
    )


@dataclass(frozen=True, slots=True)
class BaselineComparison:
    """The regression checks and warnings for the summary."""

    results: list[RegressionResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _cell_warnings(base: BaselineCell, rows: pd.DataFrame, where: str) -> list[str]:
    """What makes a baseline cell a poor match for these runs."""
    found: list[str] = []
    versions = set(rows["lighthouse_version"].dropna().astype(str))
    if base.lighthouse_version and versions and versions != {base.lighthouse_version}:
        found.append(
            f"baseline for {where} was measured with Lighthouse {base.lighthouse_version}, "
            f"these runs with {', '.join(sorted(versions))}"
        )
    profile = _device_profile(base.device)
    if base.device_profile is not None and profile != base.device_profile:
        found.append(f"baseline for {where} used another {base.device} device profile")
    return found


def compare_baseline(
    baseline: Baseline,
    frame: pd.DataFrame,
    limits: Mapping[str, RegressionLimit],
    *,
    rule: GateRule | None = None,
    adaptive: bool = False,
) -> BaselineComparison:
    """Check the runs in ``frame`` against ``baseline`` with the regression ``limits``: one
    :class:`RegressionResult` per (cell, limited metric), decided by the gate
    (:func:`pagelab.budgets.decide`: significant **and** beyond the limit) at ``level``
    (default ``rule.alpha``).

    Cells or metrics the baseline lacks are warnings, not failures (nothing to compare); a
    baseline from another Lighthouse version or device profile is a warning too, and so is a
    baseline without runs (format 1), whose cells are compared by the fixed threshold, and
    run counts that can never show a difference at the level (the gate cannot fail them).
    """
    rule = rule or GateRule()
    results: list[RegressionResult] = []
    warnings: list[str] = []
    if frame.empty or not limits:
        return BaselineComparison()
    if baseline.format != BASELINE_FORMAT:
        warnings.append(
            f"the baseline ({baseline.format}) has no per-run values: compared by the fixed "
            "threshold as before, without a significance test; save it again to keep the runs"
        )
    reports = aggregate_cells(frame, "median", list(limits))
    keys = cell_keys(frame)
    for key in dict.fromkeys(keys):
        url, device, location, connection, flow, _ = key
        where = cell_label(key)
        if flow is not None:
            warnings.append(f"baselines hold pages, not flow steps: {where} not compared")
            continue
        base = baseline.cell(str(url), str(device), str(location), connection)
        if base is None:
            warnings.append(f"baseline has no runs for {where}: not compared")
            continue
        rows = _cell_rows(frame, keys, key)
        warnings.extend(_cell_warnings(base, rows, where))
        ok = _successful(rows)
        report_url = reports.get(key, {}).get("representative_report_url")
        report_url = report_url if isinstance(report_url, str) and report_url else None
        noisy = (ok["noisy"].astype("boolean").fillna(False).tolist()
                 if "noisy" in ok.columns else None)
        if noisy and any(noisy):
            warnings.append(f"{where}: {unfit_runs_note(sum(noisy), len(noisy))}")
        for name, limit in limits.items():
            values = [_clean(v) for v in ok[name].tolist()] if name in ok.columns else []
            base_value = base.metrics.get(name)
            if base.has_runs:
                base_values = base.values.get(name, [])
                if not any(v is not None for v in base_values):
                    warnings.append(f"baseline has no {name} for {where}: not compared")
                    continue
                level = rule.alpha
                if adaptive:
                    n_base = sum(v is not None for v in base_values)
                    level = look_level(rule.alpha, n_base, rule.min_runs, rule.max_runs)
                result = decide(name, base_values, values, limit, cell=key, level=level,
                                rule=rule, report_url=report_url, noisy=noisy)
                results.append(result)
                if result.too_few_runs:
                    warnings.append(f"{name} {where}: {result.too_few_runs}; the gate cannot "
                                    "fail it")
            elif base_value is None:
                warnings.append(f"baseline has no {name} for {where}: not compared")
            else:
                results.append(fixed_threshold(name, base_value, values, limit, cell=key,
                                               n_baseline=base.runs, report_url=report_url))
    return BaselineComparison(results, warnings)
