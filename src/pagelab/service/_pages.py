"""HTML pages the service hosts: the batch comparison page and the message (not-found) page,
rendered from the autoescaping templates ``batch.html.j2`` and ``message.html.j2``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pagelab._html import MISSING, Markup, escape, link, render
from pagelab.models import (
    HEADLINE_METRICS,
    METRICS,
    RATING_COLOURS,
    BatchItem,
    BatchReport,
    BatchStatus,
    Metric,
    TestStatus,
)

__all__ = ["batch_comparison_page", "message_page"]

#: The page's metric columns: the registry's headline metrics, in its reading order.
_COLUMNS: tuple[Metric, ...] = tuple(METRICS[name] for name in HEADLINE_METRICS)
#: An error message is cut here: a page row is no place for a stack trace.
_MESSAGE_CHARS = 300


@dataclass(frozen=True, slots=True)
class _Cell:
    text: str
    best: bool


@dataclass(frozen=True, slots=True)
class _Row:
    item: BatchItem
    cells: list[_Cell]
    outcome: Markup


def message_page(title: str, message: str) -> str:
    return render("message.html.j2", title=title, message=message)


def _best_values(items: list[BatchItem]) -> dict[str, float]:
    best: dict[str, float] = {}
    for metric in _COLUMNS:
        values = [
            value
            for item in items
            if item.metrics is not None
            and (value := getattr(item.metrics, metric.name)) is not None
        ]
        if len(values) > 1:
            best[metric.name] = min(values) if metric.lower_is_better else max(values)
    return best


def _row(item: BatchItem, best: dict[str, float]) -> _Row:
    cells = []
    for metric in _COLUMNS:
        value = getattr(item.metrics, metric.name) if item.metrics is not None else None
        cells.append(_Cell(metric.format(value), value is not None
                           and best.get(metric.name) == value))
    if item.status == TestStatus.SUCCESS and item.report_url:
        outcome = link(item.report_url, "report")
    elif item.error is not None:
        outcome = escape(f"{item.error.code}: {item.error.message}"[:_MESSAGE_CHARS])
    else:
        outcome = Markup("")
    return _Row(item, cells, outcome)


def _time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value is not None else MISSING


def batch_comparison_page(batch: BatchReport) -> str:
    """The items of a batch side by side, best value per metric highlighted, with links to
    each item's report. Refreshes itself until the batch is completed."""
    best = _best_values(batch.reports)
    return render(
        "batch.html.j2",
        title=f"Batch {batch.id} · pagelab",
        batch=batch,
        metrics=_COLUMNS,
        rows=[_row(item, best) for item in batch.reports],
        done=sum(1 for item in batch.reports if item.status.is_final),
        created=_time(batch.created_at),
        good=RATING_COLOURS["good"],
        poor=RATING_COLOURS["poor"],
        refresh_seconds=None if batch.status == BatchStatus.COMPLETED else 10,
    )
