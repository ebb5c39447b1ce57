"""The terminal summary: a table of the budget checks, one of the regression checks against
a baseline, then warnings and errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._state import PagelabState

__all__ = ["summary_lines"]

_HEADERS = ("check", "metric", "budget", "actual", "status")
_BASELINE_HEADERS = ("check", "metric", "baseline", "median", "difference (interval)", "p",
                     "n", "verdict", "status")
#: Setting -> what it writes, for the closing lines.
_WRITTEN = {"results": "results", "save_baseline": "baseline",
            "markdown": "Markdown summary", "codequality": "Code Quality report"}


def _row(check: Mapping[str, Any]) -> tuple[str, ...]:
    from pagelab.budgets import format_value
    from pagelab.frames import cell_label

    metric = str(check["metric"])
    if check.get("kind") == "lhci":
        # A Lighthouse CI assertion: any audit, so plain numbers (scores on 0-1).
        def shown(value: Any) -> str:
            return "\u2013" if value is None else f"{value:g}"
    else:
        def shown(value: Any) -> str:
            return format_value(metric, value)
    return (
        cell_label(check),
        metric,
        f"{check['operator']} {shown(check['expected'])}",
        shown(check["actual"]),
        str(check["label"]),
    )


def _regression_row(check: Mapping[str, Any]) -> tuple[str, ...]:
    from pagelab.budgets import format_difference, format_value
    from pagelab.frames import cell_label

    metric = str(check["metric"])
    difference = format_difference(metric, check.get("difference"))
    interval = check.get("interval")
    if interval:
        difference += (f" ({format_difference(metric, interval[0])} to "
                       f"{format_difference(metric, interval[1])})")
    p_value = check.get("p_value")
    return (
        cell_label(check),
        metric,
        format_value(metric, check.get("baseline_median")),
        format_value(metric, check.get("median", check["actual"])),
        difference,
        "\u2013" if p_value is None else f"{p_value:.2g}",
        f"{check.get('n', len(check['values']))} vs {check.get('n_baseline', '?')}",
        # The verdict, and why it could not decide: an unfit machine, or run counts that
        # never can.
        ": ".join(filter(None, [str(check.get("verdict", "")), check.get("unfit"),
                                check.get("too_few_runs")])),
        str(check["label"]),
    )


def _table(headers: tuple[str, ...], checks: list[dict[str, Any]], noun: str) -> list[str]:
    from pagelab.budgets import format_tally

    make = _regression_row if headers == _BASELINE_HEADERS else _row
    rows = [make(check) for check in checks]
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in [headers, *rows]]
    lines.append(format_tally([row[-1] for row in rows], noun))
    return lines


def summary_lines(state: PagelabState) -> list[str]:
    """The table of every budgeted check (metric, budget, actual, status), then the table of
    the regression checks against the baseline, the baseline warnings, the engine errors
    and where the results went."""
    budget = [c for c in state.checks if c.get("kind", "budget") in ("budget", "lhci")]
    regression = [c for c in state.checks if c.get("kind") == "baseline"]
    lines: list[str] = []
    if budget:
        lines.extend(_table(_HEADERS, budget, "budget check"))
    if regression:
        if lines:
            lines.append("")
        lines.append(f"baseline comparison ({state.setting('compare')})")
        lines.extend(_table(_BASELINE_HEADERS, regression, "regression check"))
    for warning in state.warnings:
        lines.append(f"baseline warning: {warning}")
    lines.extend(dict.fromkeys(state.notes))
    for error in state.errors:
        lines.append(f"engine error: {error['nodeid']}: {error['message']}")
    for name, what in _WRITTEN.items():
        path = state.setting(name)
        if path:
            lines.append(f"{what} written to {path}")
    return lines
