"""What the plugin raises and warns: the bottom of its imports (pytest only)."""

from __future__ import annotations

# pytest.fail.Exception, importable for a subclass that mypy understands.
from _pytest.outcomes import Failed

__all__ = ["BudgetWarning", "EngineFailure"]


class BudgetWarning(UserWarning):
    """A warn-level budget was missed (or a baseline does not quite fit)."""


class EngineFailure(Failed):
    """The engine crashed or timed out twice on one run: the page is not to blame, so the
    test is reported as an error, not as a missed budget (shown without a traceback)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, pytrace=False)
