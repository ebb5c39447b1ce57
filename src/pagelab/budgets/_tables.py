"""Check records -> the terminal tables ``pagelab check`` and the pytest summary print: one
of the budget checks (limits and Lighthouse CI assertions), one of the regression checks
against a baseline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pagelab._cells import cell_label

from ._evaluate import check_where, format_tally, format_value
from ._gate import format_difference

__all__ = ["check_table", "regression_table"]

_HEADERS = ("check", "metric", "budget", "actual", "status")
_REGRESSION_HEADERS = ("check", "metric", "baseline", "median", "difference (interval)", "p",
                       "n", "verdict", "status")
Record = Mapping[str, Any]


def _row(check: Record) -> tuple[str, ...]:
    metric = str(check["metric"])
    if check.get("kind") == "lhci":
        # A Lighthouse CI assertion: any audit, so plain numbers (scores on 0-1).
        def shown(value: Any) -> str:
            return "\u2013" if value is None or value != value else f"{value:g}"
    else:
        def shown(value: Any) -> str:
            return format_value(metric, value)
    return (check_where(check, check.get("template")), metric,
            f"{check['operator']} {shown(check['expected'])}",
            shown(check["actual"]), str(check["label"]))


def _regression_row(check: Record) -> tuple[str, ...]:
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


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in [headers, *rows]]


def check_table(checks: Sequence[Record], noun: str | None = None) -> list[str]:
    """The budget checks' table (check, metric, budget, actual, status); with ``noun`` its
    tally below (``3 budget checks: 2 passed, 1 failed, 0 warned``)."""
    rows = [_row(check) for check in checks]
    tally = [format_tally([row[-1] for row in rows], noun)] if noun else []
    return [*_table(_HEADERS, rows), *tally]


def regression_table(checks: Sequence[Record]) -> list[str]:
    """The regression checks' table (baseline and new medians, the difference and its
    interval, p, run counts, verdict) and its tally."""
    rows = [_regression_row(check) for check in checks]
    return [*_table(_REGRESSION_HEADERS, rows),
            format_tally([row[-1] for row in rows], "regression check")]
