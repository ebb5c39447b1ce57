"""The terminal summary: a table of the budget checks, one of the regression checks against
a baseline, then warnings and errors."""

from __future__ import annotations

from ._state import PagelabState

__all__ = ["summary_lines"]

#: Setting -> what it writes, for the closing lines.
_WRITTEN = {"results": "results", "save_baseline": "baseline",
            "markdown": "Markdown summary", "codequality": "Code Quality report"}


def summary_lines(state: PagelabState) -> list[str]:
    """The table of every budgeted check (metric, budget, actual, status), then the table of
    the regression checks against the baseline, the baseline warnings, the engine errors
    and where the results went."""
    from pagelab.budgets import check_table, regression_table

    budget = [c for c in state.checks if c.get("kind", "budget") in ("budget", "lhci")]
    regression = [c for c in state.checks if c.get("kind") == "baseline"]
    lines: list[str] = []
    if budget:
        lines.extend(check_table(budget, "budget check"))
    if regression:
        if lines:
            lines.append("")
        lines.append(f"baseline comparison ({state.baseline_name()})")
        lines.extend(regression_table(regression))
    lines.extend(f"baseline warning: {warning}" for warning in state.warnings)
    lines.extend(dict.fromkeys(state.notes))
    lines.extend(f"engine error: {e['nodeid']}: {e['message']}" for e in state.errors)
    return lines + [f"{what} written to {state.setting(name)}"
                    for name, what in _WRITTEN.items() if state.setting(name)]
