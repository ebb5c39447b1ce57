"""Lighthouse CI assertions on measured runs: per cell, on the runs' LHRs, printed the way
``lhci assert`` prints them.

Each cell (:data:`pagelab.frames.CELL`) is asserted on its own, so mobile and desktop runs
of one URL are never mixed (``lhci assert`` groups by URL only). Runs whose page failed have
no LHR and are reported as failed pages, as for every budget. Without LHRs (replayed runs),
each run becomes a minimal LHR of its metrics and performance score; when an assertion
needs more, the LHRs are read from the runs' reports (``report_url``: Lighthouse's HTML
report embeds its LHR), and without reports such an assertion is refused, named.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pagelab._cells import CellKey, cell_keys, cell_label
from pagelab._exceptions import InvalidInputError
from pagelab.models import METRICS

from ._lhci import AssertionResult, _kebab_case, _normalize, _resolve, assert_lhrs
from ._resources import largest_note, replayed_lhrs

if TYPE_CHECKING:
    import pandas as pd

    from ._models import BudgetFile

__all__ = ["assert_runs", "format_lhci", "lhci_results_json", "select_runs"]

LhrReader = Callable[[str], Mapping[str, Any]]


def _asserted(options: Mapping[str, Any]) -> set[str]:
    keys: set[str] = set()
    for base in list(options.get("assertMatrix") or [options]):
        for key, value in (_resolve(base).get("assertions") or {}).items():
            if _normalize(value)[0] != "off":
                keys.add(_kebab_case(key))
    return keys


def _minimal_lhr(row: Mapping[Any, Any]) -> dict[str, Any]:
    """The part of an LHR a wide-frame row holds: metric audits' numericValue and the
    performance score on Lighthouse's 0-1 scale."""
    audits: dict[str, Any] = {}
    for name, metric in METRICS.items():
        value = row.get(name)
        if metric.audit_id is not None and isinstance(value, int | float) and not math.isnan(
                value):
            audits[metric.audit_id] = {"id": metric.audit_id, "numericValue": float(value)}
    score = row.get("performance_score")
    fraction = score / 100 if isinstance(score, int | float) and not math.isnan(score) else None
    return {"finalUrl": str(row.get("url")), "audits": audits,
            "categories": {"performance": {"score": fraction}}}


#: What a run's metrics answer without its LHR (:func:`_minimal_lhr`).
_METRICS_ONLY = frozenset({"categories:performance", *(
    m.audit_id for m in METRICS.values() if m.audit_id is not None)})


def _beyond_metrics(options: Mapping[str, Any]) -> list[str]:
    """The asserted keys a run's metrics cannot answer (they need its LHR)."""
    return sorted(k for k in _asserted(options)
                  if k not in _METRICS_ONLY and k.split(":")[0] not in _METRICS_ONLY)


def _check_minimal(options: Mapping[str, Any]) -> None:
    needs = _beyond_metrics(options)
    if needs:
        raise InvalidInputError(
            f"replayed runs without reports (a CSV of metrics) hold metrics only: "
            f"{', '.join(needs)} need(s) the runs' LHRs; measure, or replay runs saved with "
            "their report_url (a results JSON of measured runs)")


def select_runs(budget_file: BudgetFile, frame: pd.DataFrame, base_url: str | None = None
                ) -> tuple[pd.DataFrame, list[str]]:
    """The runs a lighthouserc asserts (its pages, on its device and locations) and the
    cells it names that have no run (``mobile/us http://...``)."""
    urls = [budget_file.page_url(p, base_url) for p in budget_file.pages if "*" not in p.url]
    devices = [d.value for d in budget_file.devices]
    locations = [loc.value for loc in budget_file.locations]
    keep = frame["device"].astype(str).isin(devices) & frame["location"].astype(str).isin(
        locations)
    if urls:
        keep &= frame["url"].astype(str).isin(urls)
    chosen = frame[keep]
    measured = {(str(u), str(d), str(loc)) for u, d, loc in zip(
        chosen["url"], chosen["device"], chosen["location"], strict=True)}
    missing = [cell_label((u, d, loc, None)) for u in urls for d in devices for loc in locations
               if (u, d, loc) not in measured]
    return chosen, missing


def assert_runs(
    options: Mapping[str, Any],
    frame: pd.DataFrame,
    *,
    read_lhr: LhrReader | None = None,
) -> list[AssertionResult]:
    """Lighthouse CI's verdicts (passed ones too) per cell of ``frame``'s successful runs.

    ``read_lhr`` gives a run's LHR from its test id (a runner's ``lhr``); without it each
    run is reduced to its metrics (:func:`_minimal_lhr`) when they are enough, else read
    from the report its ``report_url`` opens (replayed runs), else refused, named.
    """
    if read_lhr is None and _beyond_metrics(options):
        # More than the metrics: the LHRs replayed runs' reports embed, else refused.
        read_lhr = replayed_lhrs(frame)
    if read_lhr is None:
        _check_minimal(options)
    if frame.empty:
        return []
    ok = frame[frame["status"].astype(str) == "success"] if "status" in frame else frame
    if "run" in ok.columns:
        ok = ok.sort_values("run", kind="stable", na_position="last")
    groups: dict[CellKey, list[Mapping[str, Any]]] = {}
    for cell, row in zip(cell_keys(ok), ok.to_dict("records"), strict=True):
        if read_lhr is not None and isinstance(row.get("id"), str):
            lhr = read_lhr(str(row["id"]))
        else:
            _check_minimal(options)
            lhr = _minimal_lhr(row)
        groups.setdefault(cell, []).append(lhr)
    return [_name_largest(dataclasses.replace(result, cell=cell), lhrs)
            for cell, lhrs in groups.items() for result in assert_lhrs(options, lhrs)]


def _name_largest(result: AssertionResult, lhrs: Sequence[Mapping[str, Any]]
                  ) -> AssertionResult:
    """A missed ``resource-summary:<type>:size`` names the largest requests of the type, as
    pagelab's own resource budgets do (``lhci assert`` gives no message there)."""
    kind = (result.audit_property or "").rpartition(".")
    if (result.passed or result.message is not None or result.audit_id != "resource-summary"
            or kind[2] != "size" or math.isnan(result.actual)):
        return result
    note = largest_note(lhrs, result.values, result.actual, kind[0])
    return dataclasses.replace(result, message=note) if note else result


def _number(value: float) -> str:
    return "NaN" if math.isnan(value) else f"{round(value * 10000) / 10000:g}"


def format_lhci(results: Sequence[AssertionResult]) -> list[str]:
    """The failed assertions as ``lhci assert`` prints them: per URL (cell), each with its
    audit id, level, assertion, title, documentation, expected, found and every run's
    value."""
    failed = [r for r in results if not r.passed]
    cells = list(dict.fromkeys(r.cell for r in results))
    lines = [f"Checking assertions against {len(cells)} URL(s)"]
    for cell in dict.fromkeys(r.cell for r in failed):
        mine = [r for r in failed if r.cell == cell]
        where = cell_label(cell) if cell is not None else mine[0].url
        lines += ["", f"{len(mine)} result(s) for {where} :"]
        for r in mine:
            icon = "\u26a0\ufe0f " if r.level == "warn" else "\u2718 "
            kind = "warning" if r.level == "warn" else "failure"
            prop = f".{r.audit_property}" if r.audit_property else ""
            lines += ["", f"  {icon} {r.audit_id}{prop} {kind} for {r.name} assertion"]
            if r.audit_title:
                lines.append(f"       {r.audit_title}")
            if r.audit_documentation_link:
                lines.append(f"       Documentation: {r.audit_documentation_link}")
            if r.message:
                lines.append(f"       {r.message}")
            lines += ["", f"        expected: {r.operator}{_number(r.expected)}",
                      f"           found: {_number(r.actual)}",
                      f"      all values: {', '.join(_number(v) for v in r.values)}"]
    if not failed:
        lines.append("All results processed!")
    return lines


def lhci_results_json(results: Sequence[AssertionResult], *, include_passed: bool = False
                      ) -> list[dict[str, Any]]:
    """``assertion-results.json`` as ``lhci assert`` writes it (failed results only unless
    ``include_passed``, as its ``includePassedAssertions``)."""
    return [r.to_lhci() for r in results if include_passed or not r.passed]
