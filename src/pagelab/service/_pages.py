"""HTML pages the service hosts: the batch comparison page and the not-found page."""

from __future__ import annotations

from datetime import datetime
from html import escape

from pagelab.models import METRICS, BatchItem, BatchReport, BatchStatus, Metric, Metrics, TestStatus

__all__ = ["batch_comparison_page", "message_page"]

#: Shown for a missing value (an en dash, as typeset tables do).
_MISSING = "\u2013"

# The page's metric columns, in reading order (labels, formats and directions: the registry).
_COLUMNS: tuple[Metric, ...] = tuple(
    METRICS[name]
    for name in (
        "performance_score", "first_contentful_paint", "largest_contentful_paint",
        "speed_index", "total_blocking_time", "cumulative_layout_shift",
        "time_to_interactive", "server_response_time",
    )
)

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #202124; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
p.meta { color: #5f6368; margin: 0 0 1.25rem; }
table { border-collapse: collapse; }
th, td { padding: .4rem .7rem; border-bottom: 1px solid #dadce0; text-align: right;
         white-space: nowrap; }
th { background: #f1f3f4; }
td.text, th.text { text-align: left; }
td.url { max-width: 28rem; overflow: hidden; text-overflow: ellipsis; }
td.best { font-weight: 600; background: #e6f4ea; }
.status-success { color: #188038; } .status-failed { color: #c5221f; }
.status-idle, .status-active { color: #5f6368; }
"""


def _page(title: str, body: str, *, refresh_seconds: int | None = None) -> str:
    refresh = (
        f'<meta http-equiv="refresh" content="{refresh_seconds}">' if refresh_seconds else ""
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"{refresh}<title>{escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def message_page(title: str, message: str) -> str:
    return _page(title, f"<h1>{escape(title)}</h1><p>{escape(message)}</p>")


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


def _metric_cells(metrics: Metrics | None, best: dict[str, float]) -> str:
    cells = []
    for metric in _COLUMNS:
        value = getattr(metrics, metric.name) if metrics is not None else None
        if value is None:
            cells.append(f"<td>{_MISSING}</td>")
        else:
            marker = ' class="best"' if best.get(metric.name) == value else ""
            cells.append(f"<td{marker}>{escape(metric.format(value))}</td>")
    return "".join(cells)


def _item_row(position: int, item: BatchItem, best: dict[str, float]) -> str:
    if item.status == TestStatus.SUCCESS and item.report_url:
        outcome = f'<a href="{escape(item.report_url)}">report</a>'
    elif item.error is not None:
        outcome = escape(f"{item.error.code}: {item.error.message}"[:300])
    else:
        outcome = ""
    return (
        f"<tr><td>{position}</td>"
        f'<td class="text url" title="{escape(item.url)}">{escape(item.url)}</td>'
        f'<td class="text">{escape(item.device.value)}</td>'
        f'<td class="text">{escape(item.location.value)}</td>'
        f'<td class="text status-{escape(item.status.value)}">{escape(item.status.value)}</td>'
        f"{_metric_cells(item.metrics, best)}"
        f'<td class="text">{outcome}</td></tr>'
    )


def _time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value is not None else _MISSING


def batch_comparison_page(batch: BatchReport) -> str:
    """The items of a batch side by side, best value per metric highlighted, with links to
    each item's report. Refreshes itself until the batch is completed."""
    best = _best_values(batch.reports)
    headers = "".join(
        f"<th>{escape(m.label)}{' ↓' if m.lower_is_better else ' ↑'}</th>" for m in _COLUMNS
    )
    rows = "".join(_item_row(i, item, best) for i, item in enumerate(batch.reports, start=1))
    done = sum(1 for item in batch.reports if item.status.is_final)
    meta = (
        f"{escape(batch.batch_type.value)} · status {escape(batch.status.value)} · "
        f"{done} of {len(batch.reports)} tests final · created {_time(batch.created_at)} · "
        f"Lighthouse {escape(batch.lighthouse_version or _MISSING)}"
    )
    body = (
        f"<h1>Batch {escape(batch.id or '')}</h1><p class=\"meta\">{meta}</p>"
        '<table id="comparison"><thead><tr><th>#</th><th class="text">URL</th>'
        '<th class="text">Device</th><th class="text">Location</th>'
        f'<th class="text">Status</th>{headers}<th class="text">Result</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        '<p class="meta">↓ lower is better, ↑ higher is better; the best value of each '
        "column is highlighted. Every location is measured from this server.</p>"
    )
    refresh = None if batch.status == BatchStatus.COMPLETED else 10
    return _page(f"Batch {batch.id} · pagelab", body, refresh_seconds=refresh)
