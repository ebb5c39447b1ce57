"""The pure evaluation: budgets + a wide frame of runs -> one result record per check.

Modelled on Lighthouse CI's ``assertions.js``: every (cell, metric) limit gives a record with
the operator, the expected and actual values, the values it was aggregated from, the level
and whether it passed. Nothing is raised for a missing value: the record fails and says why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagelab._cells import CELL, CellKey, cell_key, cell_keys, cell_label
from pagelab._exceptions import InvalidInputError
from pagelab.models import METRICS, mode_measures, unknown_value
from pagelab.models import metric as registry_metric

from ._models import (
    AGGREGATION_NAMES,
    BudgetFile,
    BudgetResult,
    Check,
    checks_from_mapping,
    format_resource_value,
    is_resource_metric,
)
from ._resources import LhrReader, evaluate_resources, replayed_lhrs

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CELL_COLUMNS",
    "BudgetResult",
    "BudgetsInput",
    "aggregate_cells",
    "cell_label",
    "check_where",
    "evaluate",
    "format_tally",
    "format_value",
    "resolve_checks",
    "run_failures",
]

#: The columns that make a cell of budget evaluation: the one definition,
#: :data:`pagelab.frames.CELL` (URL x device x location x connection).
CELL_COLUMNS: tuple[str, ...] = CELL
#: The columns a frame of runs must have for budgets to name its cells.
_REQUIRED = ("url", "device", "location")

#: What :func:`evaluate` accepts as budgets.
BudgetsInput = BudgetFile | Mapping[str, Any] | Sequence[Check]

Cell = CellKey



def format_value(metric: str, value: float | None) -> str:
    """``3120 ms``, ``0.318``, ``54``: the registry's format without digit grouping, so a
    list of values stays readable; ``312.3 KB`` / ``4 requests`` for resource budgets."""
    if is_resource_metric(metric):
        return format_resource_value(metric, value)
    m = registry_metric(metric)
    if value is None or math.isnan(value):
        return "\u2013"
    text = format(value, m.spec.replace(",", ""))
    return f"{text} ms" if m.unit == "ms" else text


def check_where(cell: CellKey | Mapping[str, Any], template: str | None = None) -> str:
    """How messages and tables name a checked cell: its :func:`cell_label`, a scan
    template's as ``mobile/us template /product/*``."""
    if template is None:
        return cell_label(cell)
    return cell_label({**dict(zip(CELL, cell_key(cell), strict=True)),
                       "url": f"template {template}"})


def format_tally(statuses: Sequence[str], noun: str = "check") -> str:
    """``2 checks: 1 passed, 0 failed, 1 warned`` for :attr:`BudgetResult.status` values
    (``1 check: ...`` for one)."""
    counts = {status: sum(s.lower() == status for s in statuses)
              for status in ("pass", "fail", "warn")}
    total = len(statuses)
    return (f"{total} {noun}{'' if total == 1 else 's'}: {counts['pass']} passed, "
            f"{counts['fail']} failed, {counts['warn']} warned")


def resolve_checks(budgets: BudgetsInput, *, base_url: str | None = None) -> list[Check]:
    """The flat checks of any budgets input (a mapping applies to every cell)."""
    if isinstance(budgets, BudgetFile):
        return budgets.checks(base_url)
    if isinstance(budgets, Mapping):
        return checks_from_mapping(budgets)
    checks = list(budgets)
    for check in checks:
        if not isinstance(check, Check):
            raise InvalidInputError(
                "budgets: expected a BudgetFile, a mapping of metric limits or Checks"
            )
    return checks


def _check_aggregation(name: str) -> str:
    if name not in AGGREGATION_NAMES:
        raise InvalidInputError(
            f"aggregation: {unknown_value(name, AGGREGATION_NAMES)}"
        )
    return name


def aggregate_cells(
    frame: pd.DataFrame, aggregation: str, metrics: Sequence[str]
) -> dict[Cell, dict[str, Any]]:
    """Per cell: each metric aggregated over successful runs, the representative run's
    report URL, run and failure counts (through :func:`pagelab.stats.summarize`)."""
    from pagelab import stats

    if frame.empty:
        return {}
    by = [c for c in CELL if c in frame.columns]
    summary = stats.summarize(frame, by=by, aggregation=aggregation, metrics=list(metrics))
    return {
        cell_key(row): {str(key): value for key, value in row.items()}
        for row in summary.to_dict("records")
    }


def _expected_cells(checks: Sequence[Check], template: str | None = None) -> list[Cell]:
    """The cells the checks name, on their devices and locations: an absolute page URL's,
    or the template's (its runs pooled under its name)."""
    cells: list[Cell] = []
    for check in checks:
        url = template or check.url
        if url is None or (template is None and (check.is_pattern or url.startswith("/"))):
            continue
        if check.devices is None or check.locations is None:
            continue
        for device in check.devices:
            for location in check.locations:
                cells.append(cell_key({"url": url, "device": device, "location": location}))
    return cells


def _number(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _step_modes(frame: pd.DataFrame, row_cells: Sequence[Cell]) -> dict[Cell, str]:
    """Each flow step's cell -> its mode (a budget naming no step applies to the steps
    whose mode measures its metric: INP is not checked on a navigation)."""
    if "mode" not in frame.columns:
        return {}
    modes: dict[Cell, str] = {}
    for cell, mode in zip(row_cells, frame["mode"].astype(object), strict=True):
        if isinstance(mode, str):
            modes.setdefault(cell, mode)
    return modes


def run_failures(frame: pd.DataFrame) -> dict[Cell, list[str]]:
    """Per cell, the error codes of runs whose page failed (engine failures left out: they
    say nothing about the page)."""
    if frame.empty:
        return {}
    failed = frame[(frame["status"].astype(str) == "failed")
                   & ~frame["engine_failure"].fillna(False).astype(bool)]
    found: dict[Cell, list[str]] = {}
    for cell, code in zip(cell_keys(failed), failed["error_code"].astype(object), strict=True):
        found.setdefault(cell, []).append(str(code) if isinstance(code, str) else "UNKNOWN")
    return found


def evaluate(
    budgets: BudgetsInput,
    frame: pd.DataFrame,
    *,
    aggregation: str = "median",
    base_url: str | None = None,
    read_lhr: LhrReader | None = None,
) -> list[BudgetResult]:
    """Check ``budgets`` against the runs in ``frame`` (the wide frame of
    :func:`pagelab.frames.to_frame`), one :class:`BudgetResult` per (cell, metric).

    A budget file's byte and request limits per resource type (``resource_size``,
    ``resource_count``, ``third_party_size``, ``third_party_count`` under ``budgets``) are
    read from each successful run's LHR through ``read_lhr`` (``runner.lhr``), after the
    metric results (``evaluate_resources`` in ``budgets/_resources.py``); without ``read_lhr``, from
    the LHR each run's ``report_url`` report embeds (replayed runs), and where a run has none,
    such a file is :class:`~pagelab.InvalidInputError`, never silently unchecked.

    ``aggregation`` (median, mean, p75, p90, min, max, representative) applies where a
    budget names none. A cell a budget names but ``frame`` lacks, or whose runs gave no value,
    yields a failed record saying so. Where several checks of one metric match a cell, the
    last wins (page overrides come after file defaults; budget.json's last match wins).
    """
    _check_aggregation(aggregation)
    if isinstance(budgets, BudgetFile) and budgets.lhci is not None:
        # Never silently nothing: Lighthouse CI assertions need the runs' LHRs.
        raise InvalidInputError(
            "this budget file holds Lighthouse CI assertions: check them with "
            "budgets.assert_runs(budget_file.lhci, frame, read_lhr=runner.lhr)")
    checks = resolve_checks(budgets, base_url=base_url)
    resource_limits = (budgets.resource_limits(base_url) if isinstance(budgets, BudgetFile)
                       else [])
    if resource_limits and read_lhr is None:
        read_lhr = replayed_lhrs(frame)
        if read_lhr is None:
            raise InvalidInputError(
                "this budget file limits bytes or requests per resource type, read from each "
                "run's LHR: pass read_lhr=runner.lhr (replayed runs without a report_url, "
                "such as a CSV of metrics, have no LHRs)")
    for check in checks:
        if check.aggregation is not None:
            _check_aggregation(check.aggregation)
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise InvalidInputError(f"frame: missing column(s) {', '.join(missing)}")
    results = _cell_results([c for c in checks if c.template is None], frame, aggregation)
    results += _template_results([c for c in checks if c.template is not None], frame,
                                 aggregation)
    if resource_limits and read_lhr is not None:
        results.extend(evaluate_resources(resource_limits, frame, read_lhr,
                                          aggregation=aggregation))
    return results


def _template_results(checks: Sequence[Check], frame: pd.DataFrame, aggregation: str,
                      ) -> list[BudgetResult]:
    """Each template's checks on its runs (the rows whose ``template`` column names it),
    pooled over its pages: one cell per device x location, named by the template. A
    template without runs gets failed records saying so."""
    results: list[BudgetResult] = []
    for name in dict.fromkeys(str(c.template) for c in checks):
        rows = (frame[frame["template"].astype(object) == name] if "template" in frame.columns
                else frame.iloc[:0])
        results += _cell_results([c for c in checks if c.template == name],
                                 rows.assign(url=name), aggregation, template=name)
    return results


def _cell_results(checks: Sequence[Check], frame: pd.DataFrame, aggregation: str,
                  template: str | None = None) -> list[BudgetResult]:
    """The checks on every cell of ``frame`` they match (``template``: the frame is that
    template's runs, pooled under its name)."""
    results: list[BudgetResult] = []
    if not checks:
        return results
    row_cells = cell_keys(frame)
    # A cell a budget names counts as measured on any connection the runs used.
    measured = {cell[:3] for cell in row_cells}
    expected = [cell for cell in _expected_cells(checks, template)
                if cell[:3] not in measured]
    cells = list(dict.fromkeys([*row_cells, *expected]))
    # The registry's order, then user timings by name.
    order = list(METRICS)
    metrics = sorted({c.metric for c in checks},
                     key=lambda n: (order.index(n) if n in METRICS else len(order), n))
    summaries: dict[str, dict[Cell, dict[str, Any]]] = {}
    failures = run_failures(frame)
    modes = _step_modes(frame, row_cells)
    for cell in cells:
        chosen: dict[str, Check] = {}
        url, device, location = cell[:3]
        flow, step = cell[4:6]
        for check in checks:
            if check.matches(str(url), str(device), str(location), flow=flow, step=step,
                             template=template) and (
                    check.step is not None or mode_measures(modes.get(cell), check.metric)):
                chosen.pop(check.metric, None)
                chosen[check.metric] = check
        if not chosen:
            continue
        rows = frame.iloc[[i for i, key in enumerate(row_cells) if key == cell]]
        if "run" in rows.columns:
            rows = rows.sort_values("run", kind="stable", na_position="last")
        ok = rows[rows["status"].astype(str) == "success"] if "status" in rows else rows
        for check in chosen.values():
            agg = check.aggregation or aggregation
            if agg not in summaries:
                summaries[agg] = aggregate_cells(frame, agg, metrics)
            summary = summaries[agg].get(cell, {})
            values = tuple(
                float(v) for v in ok[check.metric].tolist() if _number(v) is not None
            ) if check.metric in ok.columns else ()
            actual = _number(summary.get(check.metric)) if values else None
            report_url = summary.get("representative_report_url")
            report_url = report_url if isinstance(report_url, str) and report_url else None
            results.append(
                _result(check, cell, actual, values, agg, report_url, len(rows),
                        failures.get(cell, []))
            )
    return results


def _result(
    check: Check,
    cell: Cell,
    actual: float | None,
    values: tuple[float, ...],
    aggregation: str,
    report_url: str | None,
    runs: int,
    failed_codes: list[str],
) -> BudgetResult:
    url, device, location, connection, flow, step = cell
    name = check.metric
    where = check_where(cell, check.template)
    if actual is None:
        passed = False
        if runs == 0:
            why = "no runs" if check.template is None else (
                f"no runs: no page of template {check.template} was measured")
        else:
            codes = ", ".join(sorted(set(failed_codes)))
            why = f"no value in {runs} run{'s' if runs != 1 else ''}" + (
                f" (failed: {codes})" if codes else ""
            )
        message = (
            f"{name} {why}, budget {check.operator} {format_value(name, check.limit)} {where}"
        )
    else:
        passed = actual <= check.limit if check.operator == "<=" else actual >= check.limit
        shown_op = check.operator if passed else (">" if check.operator == "<=" else "<")
        label = "representative run" if aggregation == "representative" else aggregation
        listed = ", ".join(
            format(v, registry_metric(name).spec.replace(",", "")) for v in sorted(values)
        )
        message = (
            f"{name} {format_value(name, actual)} {shown_op} {format_value(name, check.limit)}"
            f" ({label} of {len(values)}: {listed}) {where}"
        )
        if failed_codes:
            message += f" ({len(failed_codes)} failed: {', '.join(sorted(set(failed_codes)))})"
        if report_url:
            message += f" report: {report_url}"
    return BudgetResult(
        url=str(url),
        device=str(device),
        location=str(location),
        connection=connection,
        metric=name,
        operator=check.operator,
        expected=check.limit,
        actual=actual,
        values=values,
        aggregation=aggregation,
        passed=passed,
        level=check.level,
        report_url=report_url,
        message=message,
        flow=flow,
        step=step,
        template=check.template,
    )
