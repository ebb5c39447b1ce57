"""Performance budgets: models, loaders, the pure evaluation and baselines.

    >>> from pagelab import budgets
    >>> results = budgets.evaluate({"largest_contentful_paint": 2500}, frame)
    >>> [r.message for r in results if not r.passed]

Budgets come from pagelab's YAML/JSON format, Lighthouse CI assertions or Lighthouse's
budget.json (:func:`load_budgets`); :func:`evaluate` turns budgets and a wide frame of runs
into :class:`BudgetResult` records, shared by the pytest plugin, ``pagelab check`` and plots.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._aa import AACount, aa_check
from ._adaptive import AutoRuns, median_interval, parse_auto_runs
from ._baseline import (
    BASELINE_FORMAT,
    Baseline,
    BaselineCell,
    BaselineComparison,
    RegressionLimit,
    compare_baseline,
    current_commit,
    load_baseline,
    make_baseline,
    parse_regression_limits,
    save_baseline,
)
from ._evaluate import (
    CELL_COLUMNS,
    BudgetResult,
    BudgetsInput,
    aggregate_cells,
    cell_label,
    evaluate,
    format_tally,
    format_value,
    resolve_checks,
    run_failures,
)
from ._gate import (
    DEFAULT_ALPHA,
    VERDICTS,
    GateRule,
    RegressionResult,
    Verdict,
    decide,
    format_difference,
)
from ._load import BUDGET_SUFFIXES, from_budget_json, from_lhci, load_budgets, parse_budgets
from ._models import (
    AGGREGATION_NAMES,
    PRESETS,
    UNMEASURED_METRICS,
    Aggregation,
    BudgetFile,
    Check,
    Level,
    MetricLimit,
    PageBudget,
    budget_metric,
    checks_from_mapping,
)
from ._sequential import SimulatedGate, look_level, simulate_gate

if TYPE_CHECKING:
    from pagelab.frames import from_records as frame_from_records
    from pagelab.frames import read_runs as load_runs
    from pagelab.frames import to_records as runs_to_records

__all__ = [
    "AGGREGATION_NAMES",
    "BASELINE_FORMAT",
    "BUDGET_SUFFIXES",
    "CELL_COLUMNS",
    "DEFAULT_ALPHA",
    "PRESETS",
    "UNMEASURED_METRICS",
    "VERDICTS",
    "AACount",
    "Aggregation",
    "AutoRuns",
    "Baseline",
    "BaselineCell",
    "BaselineComparison",
    "BudgetFile",
    "BudgetResult",
    "BudgetsInput",
    "Check",
    "GateRule",
    "Level",
    "MetricLimit",
    "PageBudget",
    "RegressionLimit",
    "RegressionResult",
    "SimulatedGate",
    "Verdict",
    "aa_check",
    "aggregate_cells",
    "budget_metric",
    "cell_label",
    "checks_from_mapping",
    "compare_baseline",
    "current_commit",
    "decide",
    "evaluate",
    "format_difference",
    "format_tally",
    "format_value",
    "frame_from_records",
    "from_budget_json",
    "from_lhci",
    "load_baseline",
    "load_budgets",
    "load_runs",
    "look_level",
    "make_baseline",
    "median_interval",
    "parse_auto_runs",
    "parse_budgets",
    "parse_regression_limits",
    "resolve_checks",
    "run_failures",
    "runs_to_records",
    "save_baseline",
    "simulate_gate",
]

# Saved runs are the frames codec's (pagelab.frames): these names stay for the plugin and
# `pagelab check`, loaded on first use so importing budgets does not import pandas.
_FROM_FRAMES = {
    "frame_from_records": "from_records",
    "load_runs": "read_runs",
    "runs_to_records": "to_records",
}


def __getattr__(name: str) -> Any:
    if name in _FROM_FRAMES:
        return getattr(importlib.import_module("pagelab.frames"), _FROM_FRAMES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
