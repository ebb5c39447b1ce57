"""Reading budgets: pagelab's YAML/JSON format, Lighthouse CI assertions, Lighthouse budget.json.

Foreign formats are mapped onto :class:`BudgetFile`; whatever has no pagelab meaning (an
audit's score, a resource-size budget, a preset) is refused with its name, never dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from pagelab._exceptions import InvalidInputError
from pagelab.models import DATA_FILE_SUFFIXES, METRICS, Flow, read_data_file

from ._lhci import budget_json_to_assertions, validate_options
from ._lhci_config import collect_settings, lhci_assert_options
from ._models import UNMEASURED_METRICS, BudgetFile, PageBudget

__all__ = [
    "BUDGET_SUFFIXES",
    "LHCI_SCORE_KEY",
    "from_budget_json",
    "from_lhci",
    "load_budgets",
    "parse_budgets",
]

#: File suffixes :func:`load_budgets` reads.
BUDGET_SUFFIXES = DATA_FILE_SUFFIXES

#: The Lighthouse CI assertion on the performance score (``minScore``, 0-1).
LHCI_SCORE_KEY = "categories:performance"


def load_budgets(path: str | PathLike[str]) -> BudgetFile:
    """Read a budget file (``.yaml``, ``.yml`` or ``.json``) in any of the three formats.

    Raises :class:`InvalidInputError` naming the file and what is wrong.
    """
    file = Path(path)
    if file.suffix.lower() not in BUDGET_SUFFIXES:
        raise InvalidInputError(
            f"{file}: budget files end in {', '.join(BUDGET_SUFFIXES)}"
        )
    data = read_data_file(file, "budget file")
    budget_file = parse_budgets(data, source=str(file))
    for index, flow in enumerate(budget_file.flows):
        # A flow file is read once, relative to the budget file, and refused as a flow is.
        try:
            flow._flow = Flow.from_file(file.parent / flow.file).check()
        except InvalidInputError as exc:
            raise InvalidInputError(f"{file}: flows[{index}]: {exc}") from exc
    names = [flow.flow.name for flow in budget_file.flows]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise InvalidInputError(f"{file}: two flows named {twice[0]!r}: a flow's name is part "
                                "of its cells, give each its own")
    return budget_file


def parse_budgets(data: Any, source: str = "budget file") -> BudgetFile:
    """Budgets from parsed YAML/JSON: a list is Lighthouse's budget.json, a mapping with
    ``ci`` or ``assertions`` is a Lighthouse CI config, any other mapping pagelab's format."""
    if isinstance(data, BudgetFile):
        return data
    if isinstance(data, list):
        return from_budget_json(data, source)
    if isinstance(data, Mapping) and ("ci" in data or "assertions" in data):
        return from_lhci(data, source)
    if not isinstance(data, Mapping):
        raise InvalidInputError(
            f"{source}: expected a mapping of budgets (or a budget.json list), "
            f"got {type(data).__name__}"
        )
    return BudgetFile.parse(data, source)


def _metric_for_audit(audit_id: str, source: str) -> str:
    for name, m in METRICS.items():
        if m.audit_id == audit_id:
            if name in UNMEASURED_METRICS:
                raise InvalidInputError(f"{source}: {audit_id}: {UNMEASURED_METRICS[name]}")
            return name
    mapped = ", ".join(m.audit_id for m in METRICS.values() if m.audit_id is not None)
    raise InvalidInputError(
        f"{source}: {audit_id!r} cannot be mapped to a pagelab metric (mapped audits: "
        f"{mapped}, {LHCI_SCORE_KEY})"
    )


def from_lhci(data: Mapping[str, Any], source: str = "lighthouserc") -> BudgetFile:
    """A Lighthouse CI config (``{"ci": {"assert": ..., "collect": ...}}`` or the bare
    ``assert`` object) as a budget file whose ``lhci`` options are evaluated on the runs'
    LHRs exactly as ``lhci assert`` does (:mod:`pagelab.budgets._lhci`).

    ``ci.collect.url`` gives the pages, ``numberOfRuns`` the runs, ``settings`` the device,
    connection and the categories to run (:mod:`._lhci_config`); without URLs the
    assertions apply to every measured page.
    """
    ci = data.get("ci", {}) if "ci" in data else {"assert": data}
    if not isinstance(ci, Mapping):
        raise InvalidInputError(f"{source}: ci: expected a mapping")
    unknown = sorted(set(ci) - {"assert", "collect", "upload", "server", "wizard"})
    if unknown:
        raise InvalidInputError(f"{source}: ci.{unknown[0]} cannot be mapped")
    assert_part = ci.get("assert", {})
    collect = ci.get("collect", {}) or {}
    if not isinstance(assert_part, Mapping) or not isinstance(collect, Mapping):
        raise InvalidInputError(f"{source}: ci.assert and ci.collect must be mappings")
    options = lhci_assert_options(assert_part, source)
    settings = collect_settings(collect, options, source)
    pages = [PageBudget(url=u) for u in settings["urls"]] or [PageBudget(url="*")]
    return BudgetFile.parse(
        {"runs": settings["runs"], "devices": settings["devices"], "config": settings["config"],
         "notes": settings["notes"], "lhci": options, "pages": pages}, source
    )


def from_budget_json(data: list[Any], source: str = "budget.json") -> BudgetFile:
    """Lighthouse's budget.json (a list of ``{path, timings, ...}``) as pagelab budgets.

    ``timings`` map to metric budgets (audit id -> maximum); a file with ``resourceSizes``
    (KiB) or ``resourceCounts`` is evaluated on the LHRs as Lighthouse CI evaluates it as a
    ``budgetsFile`` (``resource-summary:<type>:size|count``). A ``path`` without ``*`` is one page
    (``$`` dropped), ``/*`` or no path applies to every measured page. Where several entries
    match a page the last one wins, as in Lighthouse.
    """
    if any(isinstance(e, Mapping) and (e.get("resourceSizes") or e.get("resourceCounts"))
           for e in data):
        # Byte and request budgets live in the LHR's resource-summary: the whole file is
        # evaluated as Lighthouse CI evaluates a budgetsFile (one assertMatrix entry a path).
        options = budget_json_to_assertions(data, source)
        validate_options(options, source)
        paths = [str(e.get("path") or "/*").removesuffix("$") for e in data
                 if isinstance(e, Mapping)]
        return BudgetFile.parse({"lhci": options, "pages": [
            PageBudget(url=path) for path in dict.fromkeys(paths)]}, source)
    pages: list[PageBudget] = []
    for index, entry in enumerate(data):
        where = f"{source}: [{index}]"
        if not isinstance(entry, Mapping):
            raise InvalidInputError(f"{where}: expected a mapping")
        for key, value in entry.items():
            if key not in ("path", "timings") and value:
                raise InvalidInputError(
                    f"{where}.{key} cannot be mapped to pagelab budgets (only timings)"
                )
        budgets: dict[str, float] = {}
        for item in entry.get("timings") or []:
            if not isinstance(item, Mapping) or set(item) - {"metric", "budget"}:
                raise InvalidInputError(f"{where}.timings: expected {{metric, budget}} items")
            name = _metric_for_audit(str(item.get("metric")), f"{where}.timings")
            budget = item.get("budget")
            if isinstance(budget, bool) or not isinstance(budget, int | float):
                raise InvalidInputError(f"{where}.timings: {item.get('metric')}: budget must "
                                        "be a number")
            budgets[name] = float(budget)
        path = str(entry.get("path") or "/*").removesuffix("$")
        pages.append(PageBudget(url=path, budgets=budgets))
    return BudgetFile.parse({"pages": pages}, source)
