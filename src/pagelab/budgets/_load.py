"""Reading budgets: pagelab's YAML/JSON format, Lighthouse CI assertions, Lighthouse budget.json.

Foreign formats are mapped onto :class:`BudgetFile`; whatever has no pagelab meaning (an
audit's score, a resource-size budget, a preset) is refused with its name, never dropped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from pagelab._exceptions import InvalidInputError
from pagelab.models import METRICS

from ._models import UNMEASURED_METRICS, BudgetFile, MetricLimit, PageBudget

__all__ = [
    "BUDGET_SUFFIXES",
    "LHCI_SCORE_KEY",
    "from_budget_json",
    "from_lhci",
    "load_budgets",
    "parse_budgets",
]

#: File suffixes :func:`load_budgets` reads.
BUDGET_SUFFIXES = (".yaml", ".yml", ".json")

#: The Lighthouse CI assertion on the performance score (``minScore``, 0-1).
LHCI_SCORE_KEY = "categories:performance"
#: Lighthouse CI ``aggregationMethod`` -> pagelab aggregation (optimistic / pessimistic
#: depend on the metric's direction; see :func:`_lhci_aggregation`).
_LHCI_AGGREGATIONS = {"median": "median", "median-run": "representative"}
#: ``ci.assert`` keys without effect on what is checked.
_LHCI_HARMLESS = {"assertions", "includePassedAssertions", "lhr"}


def load_budgets(path: str | PathLike[str]) -> BudgetFile:
    """Read a budget file (``.yaml``, ``.yml`` or ``.json``) in any of the three formats.

    Raises :class:`InvalidInputError` naming the file and what is wrong.
    """
    file = Path(path)
    if file.suffix.lower() not in BUDGET_SUFFIXES:
        raise InvalidInputError(
            f"{file}: budget files end in {', '.join(BUDGET_SUFFIXES)}"
        )
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInputError(f"{file}: cannot read ({exc.strerror or exc})") from exc
    if file.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(
                f"{file}: not valid JSON (line {exc.lineno}: {exc.msg})"
            ) from exc
    else:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}: " if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc)
            raise InvalidInputError(f"{file}: not valid YAML ({where}{problem})") from exc
    return parse_budgets(data, source=str(file))


def parse_budgets(data: Any, source: str = "budgets") -> BudgetFile:
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


def _lhci_aggregation(method: Any, metric: str, where: str) -> str:
    if method in _LHCI_AGGREGATIONS:
        return _LHCI_AGGREGATIONS[method]
    lower = METRICS[metric].lower_is_better
    if method == "optimistic":
        return "min" if lower else "max"
    if method == "pessimistic":
        return "max" if lower else "min"
    raise InvalidInputError(
        f"{where}: aggregationMethod {method!r} cannot be mapped (median, median-run, "
        "optimistic, pessimistic)"
    )


def from_lhci(data: Mapping[str, Any], source: str = "lighthouserc") -> BudgetFile:
    """A Lighthouse CI config (``{"ci": {"assert": ..., "collect": ...}}`` or the bare
    ``assert`` object) as pagelab budgets.

    ``maxNumericValue`` on a metric's audit id is a maximum; ``minScore`` on
    ``categories:performance`` is a minimum score (x100). ``ci.collect.url`` gives the pages
    and ``numberOfRuns`` the runs; without URLs the budgets apply to every measured page.
    """
    ci = data.get("ci", {}) if "ci" in data else {"assert": data}
    if not isinstance(ci, Mapping):
        raise InvalidInputError(f"{source}: ci: expected a mapping")
    assert_part = ci.get("assert", {})
    collect = ci.get("collect", {}) or {}
    if not isinstance(assert_part, Mapping) or not isinstance(collect, Mapping):
        raise InvalidInputError(f"{source}: ci.assert and ci.collect must be mappings")
    for key in assert_part:
        if key not in _LHCI_HARMLESS:
            raise InvalidInputError(
                f"{source}: ci.assert.{key} cannot be mapped to pagelab budgets "
                "(only 'assertions' with maxNumericValue / minScore)"
            )
    assertions = assert_part.get("assertions", {})
    if not isinstance(assertions, Mapping):
        raise InvalidInputError(f"{source}: assertions: expected a mapping")
    budgets: dict[str, MetricLimit] = {}
    for key, value in assertions.items():
        where = f"{source}: assertions.{key}"
        level, options = (value, {}) if isinstance(value, str) else (
            (value[0], value[1] if len(value) > 1 else {})
            if isinstance(value, list) and value
            else (None, None)
        )
        if level == "off":
            continue
        if level not in ("warn", "error") or not isinstance(options, Mapping):
            raise InvalidInputError(
                f"{where}: expected 'off', 'warn', 'error' or [level, options]"
            )
        if key.startswith("categories:"):
            if key != LHCI_SCORE_KEY:
                raise InvalidInputError(
                    f"{where}: only {LHCI_SCORE_KEY} can be mapped (performance_score)"
                )
            name, option, scale = "performance_score", "minScore", 100.0
        else:
            name, option, scale = _metric_for_audit(key, where), "maxNumericValue", 1.0
        unknown = set(options) - {option, "aggregationMethod"}
        if unknown or option not in options:
            bad = ", ".join(sorted(unknown)) if unknown else f"no {option}"
            raise InvalidInputError(
                f"{where}: {bad} cannot be mapped; use {option} on {key}"
            )
        limit = options[option]
        if isinstance(limit, bool) or not isinstance(limit, int | float):
            raise InvalidInputError(f"{where}: {option} must be a number")
        aggregation = _lhci_aggregation(
            options.get("aggregationMethod", "optimistic"), name, where
        )
        budgets[name] = MetricLimit(
            limit=float(limit) * scale, level=level, aggregation=aggregation
        )
    urls = collect.get("url", [])
    urls = [urls] if isinstance(urls, str) else urls
    if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
        raise InvalidInputError(f"{source}: ci.collect.url: expected a URL or a list of URLs")
    runs = collect.get("numberOfRuns")
    pages = [PageBudget(url=u) for u in urls] or [PageBudget(url="*")]
    return BudgetFile.parse(
        {"runs": runs, "budgets": budgets, "pages": pages}, source
    )


def from_budget_json(data: list[Any], source: str = "budget.json") -> BudgetFile:
    """Lighthouse's budget.json (a list of ``{path, timings, ...}``) as pagelab budgets.

    Only ``timings`` map (metric audit id -> maximum); a ``path`` without ``*`` is one page
    (``$`` dropped), ``/*`` or no path applies to every measured page. Where several entries
    match a page the last one wins, as in Lighthouse.
    """
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
