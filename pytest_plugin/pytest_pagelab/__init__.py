"""pytest-pagelab: performance budgets as pytest assertions (registered as ``pagelab``).

The hooks live in :mod:`pytest_pagelab.plugin`; see ``docs/pytest-plugin.md``.
"""

from ._errors import BudgetWarning, EngineFailure

__all__ = ["BudgetWarning", "EngineFailure"]
