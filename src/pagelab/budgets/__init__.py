"""Performance budgets: models, loaders, the pure evaluation and baselines.

    >>> from pagelab import budgets
    >>> results = budgets.evaluate({"largest_contentful_paint": 2500}, frame)
    >>> [r.message for r in results if not r.passed]

Budgets come from pagelab's YAML/JSON format, Lighthouse CI assertions or Lighthouse's
budget.json (:func:`load_budgets`); :func:`evaluate` turns budgets and a wide frame of runs
into :class:`BudgetResult` records, shared by the pytest plugin, ``pagelab check`` and plots.
The CI reports (Markdown summary, GitHub annotations, GitLab Code Quality) render those
records for the plugin and ``pagelab check`` (their options, docs/pytest-plugin.md).
A lighthouserc's assertions (``BudgetFile.lhci``) are evaluated on the runs' LHRs as
``lhci assert`` does: :func:`assert_runs` (per cell) and :func:`assert_lhrs` give
:class:`AssertionResult` records.
"""

from pagelab._public import publish

from ._baseline import (
    Baseline,
    BaselineComparison,
    compare_baseline,
    load_baseline,
    make_baseline,
    save_baseline,
)
from ._evaluate import BudgetResult, evaluate
from ._lhci import AssertionResult, assert_lhrs
from ._lhci_runs import assert_runs
from ._load import load_budgets, parse_budgets
from ._models import BudgetFile, Check, MetricLimit, PageBudget

# isort: split
# For the pytest plugin, ``pagelab check``, ``pagelab gate-check`` and ``pagelab.measure``
# only (not public API, not in __all__).
from ._aa import aa_check as aa_check
from ._adaptive import AutoRuns as AutoRuns
from ._adaptive import parse_auto_runs as parse_auto_runs
from ._baseline import current_commit as current_commit
from ._baseline import too_few_baseline_runs as too_few_baseline_runs
from ._ci import budget_source_line as budget_source_line
from ._ci import code_quality_issues as code_quality_issues
from ._ci import markdown_summary as markdown_summary
from ._ci import workflow_commands as workflow_commands
from ._evaluate import check_where as check_where
from ._evaluate import format_tally as format_tally
from ._evaluate import format_value as format_value
from ._evaluate import run_failures as run_failures
from ._gate import GateRule as GateRule
from ._gate import RegressionResult as RegressionResult
from ._gate import decide as decide
from ._history_baseline import HistoryBaseline as HistoryBaseline
from ._history_baseline import baseline_from_history as baseline_from_history
from ._history_baseline import compare_history as compare_history
from ._history_baseline import history_baseline as history_baseline
from ._history_baseline import history_build as history_build
from ._lhci_runs import format_lhci as format_lhci
from ._lhci_runs import lhci_results_json as lhci_results_json
from ._lhci_runs import select_runs as select_runs
from ._limits import RegressionLimit as RegressionLimit
from ._limits import parse_regression_limits as parse_regression_limits
from ._models import AGGREGATION_NAMES as AGGREGATION_NAMES
from ._models import checks_from_mapping as checks_from_mapping
from ._pipeline import EngineFailureError as EngineFailureError
from ._pipeline import SampleTemplates as SampleTemplates
from ._pipeline import Target as Target
from ._pipeline import TemplateScan as TemplateScan
from ._pipeline import check_frame as check_frame
from ._pipeline import check_lhci as check_lhci
from ._pipeline import check_resources as check_resources
from ._pipeline import discovered_once as discovered_once
from ._pipeline import failure_lines as failure_lines
from ._pipeline import keyword_limits as keyword_limits
from ._pipeline import lhci_record as lhci_record
from ._pipeline import matrix_measure as matrix_measure
from ._pipeline import measure_auto as measure_auto
from ._pipeline import measure_target as measure_target
from ._pipeline import parse_connections as parse_connections
from ._pipeline import parse_gate_rule as parse_gate_rule
from ._pipeline import parse_runs as parse_runs
from ._pipeline import plan_targets as plan_targets
from ._pipeline import replayed_target as replayed_target
from ._pipeline import session_build as session_build
from ._pipeline import source_line as source_line
from ._pipeline import source_text as source_text
from ._pipeline import target_checks as target_checks
from ._pipeline import target_urls as target_urls
from ._publish import publish_ci_reports as publish_ci_reports
from ._publish import write_results as write_results
from ._sequential import DETECTION_POWER as DETECTION_POWER
from ._sequential import detectable_shift as detectable_shift
from ._sequential import look_level as look_level
from ._sequential import rank_test_power as rank_test_power
from ._sequential import simulate_gate as simulate_gate
from ._tables import check_table as check_table
from ._tables import regression_table as regression_table

__all__ = [
    "AssertionResult",
    "Baseline",
    "BaselineComparison",
    "BudgetFile",
    "BudgetResult",
    "Check",
    "MetricLimit",
    "PageBudget",
    "assert_lhrs",
    "assert_runs",
    "compare_baseline",
    "evaluate",
    "load_baseline",
    "load_budgets",
    "make_baseline",
    "parse_budgets",
    "save_baseline",
]

publish(__name__, globals(), __all__)
