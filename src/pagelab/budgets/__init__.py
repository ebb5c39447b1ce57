"""Performance budgets: models, loaders, the pure evaluation and baselines.

    >>> from pagelab import budgets
    >>> results = budgets.evaluate({"largest_contentful_paint": 2500}, frame)
    >>> [r.message for r in results if not r.passed]

Budgets come from pagelab's YAML/JSON format, Lighthouse CI assertions or Lighthouse's
budget.json (:func:`load_budgets`); :func:`evaluate` turns budgets and a wide frame of runs
into :class:`BudgetResult` records, shared by the pytest plugin, ``pagelab check`` and plots.
"""

from ._baseline import (
    BASELINE_FORMAT,
    Baseline,
    BaselineCell,
    BaselineComparison,
    RegressionLimit,
    compare_baseline,
    load_baseline,
    make_baseline,
    parse_regression_limits,
    save_baseline,
)
from ._evaluate import (
    CELL_COLUMNS,
    STATUS_LABELS,
    BudgetResult,
    BudgetsInput,
    aggregate_cells,
    cell_label,
    evaluate,
    format_value,
    resolve_checks,
    run_failures,
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
from ._runs import frame_from_records, load_runs, runs_to_records

__all__ = [
    "AGGREGATION_NAMES",
    "BASELINE_FORMAT",
    "BUDGET_SUFFIXES",
    "CELL_COLUMNS",
    "PRESETS",
    "STATUS_LABELS",
    "UNMEASURED_METRICS",
    "Aggregation",
    "Baseline",
    "BaselineCell",
    "BaselineComparison",
    "BudgetFile",
    "BudgetResult",
    "BudgetsInput",
    "Check",
    "Level",
    "MetricLimit",
    "PageBudget",
    "RegressionLimit",
    "aggregate_cells",
    "budget_metric",
    "cell_label",
    "checks_from_mapping",
    "compare_baseline",
    "evaluate",
    "format_value",
    "frame_from_records",
    "from_budget_json",
    "from_lhci",
    "load_baseline",
    "load_budgets",
    "load_runs",
    "make_baseline",
    "parse_budgets",
    "parse_regression_limits",
    "resolve_checks",
    "run_failures",
    "runs_to_records",
    "save_baseline",
]
