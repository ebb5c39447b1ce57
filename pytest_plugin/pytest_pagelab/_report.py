"""The terminal summary: one table row per budgeted check, then warnings and errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._state import PagelabState

__all__ = ["summary_lines"]

_HEADERS = ("check", "metric", "budget", "actual", "status")


def _row(check: Mapping[str, Any]) -> tuple[str, ...]:
    from pagelab.budgets import format_value

    metric = str(check["metric"])
    status = str(check["label"])
    return (
        f"{check['device']}/{check['location']} {check['url']}",
        metric,
        f"{check['operator']} {format_value(metric, check['expected'])}",
        format_value(metric, check["actual"]),
        status,
    )


def summary_lines(state: PagelabState) -> list[str]:
    """The table of every budgeted check (metric, budget, actual, status), the baseline
    warnings, the engine errors and where the results went."""
    rows = [_row(check) for check in state.checks]
    lines: list[str] = []
    if rows:
        widths = [max(len(r[i]) for r in [_HEADERS, *rows]) for i in range(len(_HEADERS))]
        for row in [_HEADERS, *rows]:
            lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                         .rstrip())
        from pagelab.budgets import STATUS_LABELS

        counts = {status: sum(r[4] == label for r in rows)
                  for status, label in STATUS_LABELS.items()}
        lines.append(f"{len(rows)} checks: {counts['pass']} passed, {counts['fail']} failed, "
                     f"{counts['warn']} warned")
    for warning in state.warnings:
        lines.append(f"baseline warning: {warning}")
    for error in state.errors:
        lines.append(f"engine error: {error['nodeid']}: {error['message']}")
    for name in ("results", "save_baseline"):
        path = state.setting(name)
        if path:
            lines.append(f"{'results' if name == 'results' else 'baseline'} written to {path}")
    return lines
