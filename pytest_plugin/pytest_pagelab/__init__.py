"""pytest-pagelab: performance budgets as pytest assertions (registered as ``pagelab``).

The hooks live in :mod:`pytest_pagelab.plugin`; see ``docs/pytest-plugin.md``.
"""

from ._errors import BudgetWarning, EngineFailure

__all__ = ["BudgetWarning", "EngineFailure"]

# Shown (and pickled) as ``pytest_pagelab.BudgetWarning``, the name to filter warnings by.
BudgetWarning.__module__ = EngineFailure.__module__ = __name__
