"""How reports show themselves: self-contained HTML for notebooks, plain text for terminals.

Every piece of text that came from outside (URLs, error messages, ids) is escaped; the only
link is the report's own address, and only when it is ``http(s)`` or ``file``. No style sheet,
script, font or image is loaded from anywhere: colours are inline styles, read from the metric
registry's ratings (good / needs improvement / poor).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ._metrics import METRIC_NAMES, METRICS, Metric, Rating

if TYPE_CHECKING:
    from ._reports import BatchItem, BatchReport, Metrics, TestReport
    from ._ttfb import TTFBResult

__all__ = [
    "RATING_COLOURS",
    "batch_html",
    "batch_text",
    "report_html",
    "report_text",
    "ttfb_html",
    "ttfb_text",
]

#: Rating -> (background, text) colours, web-vitals' green / amber / red with readable text.
RATING_COLOURS: dict[str, tuple[str, str]] = {
    "good": ("#e6f4ea", "#0d652d"),
    "needs-improvement": ("#fef3e0", "#8a4b00"),
    "poor": ("#fce8e6", "#a50e0e"),
}

_BOX = (
    "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;"
    "line-height:1.4;color:#202124;max-width:100%;overflow-x:auto"
)
_TABLE = "border-collapse:collapse;margin:6px 0"
_TH = (
    "text-align:right;padding:3px 8px;border-bottom:1px solid #dadce0;font-weight:600;"
    "white-space:nowrap"
)
_TH_LEFT = _TH.replace("text-align:right", "text-align:left")
_TD = "text-align:right;padding:3px 8px;white-space:nowrap"
_TD_LEFT = "text-align:left;padding:3px 8px;white-space:nowrap"
_TD_URL = "text-align:left;padding:3px 8px;min-width:14em;max-width:32em;overflow-wrap:anywhere"
_STATUS_COLOURS = {
    "success": RATING_COLOURS["good"],
    "failed": RATING_COLOURS["poor"],
    "completed": RATING_COLOURS["good"],
}
_PENDING = ("#e8eaed", "#3c4043")
_LINK_SCHEMES = ("http://", "https://", "file://")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _pill(text: str, colours: tuple[str, str], title: str = "") -> str:
    background, foreground = colours
    tip = f' title="{_e(title)}"' if title else ""
    return (
        f'<span{tip} style="background:{background};color:{foreground};border-radius:3px;'
        f'padding:1px 6px;white-space:nowrap">{_e(text)}</span>'
    )


def _link(url: str | None, text: str) -> str:
    """A link to the hosted report; nothing for a missing or non-web address."""
    if not url or not url.lower().startswith(_LINK_SCHEMES):
        return ""
    return f'<a href="{_e(url)}" target="_blank" rel="noopener noreferrer">{_e(text)}</a>'


def _value_cell(metric: Metric, value: float | None, *, unit: bool = True) -> str:
    rating: Rating | None = metric.rating(value)
    text = metric.format(value, unit=unit)
    if rating is None:
        return f'<td style="{_TD}">{_e(text)}</td>'
    return f'<td style="{_TD}">{_pill(text, RATING_COLOURS[rating], rating)}</td>'


def _shown_metrics(all_metrics: Iterable[Metrics | None]) -> list[Metric]:
    """The metrics with a value somewhere (FMP is always null with Lighthouse >= 12.1);
    the score first, then the spec's order."""
    present = [m for m in all_metrics if m is not None]
    names = [
        name for name in METRIC_NAMES
        if any(getattr(m, name) is not None for m in present)
    ]
    names.sort(key=lambda name: name != "performance_score")
    return [METRICS[name] for name in names]


def _header_cell(metric: Metric, *, unit: bool = True) -> str:
    """The metric's label (with its unit when the cells below leave it out)."""
    text = metric.header if unit else metric.label
    return f'<th style="{_TH}" title="{_e(metric.title)}">{_e(text)}</th>'


def _status(status: str, error_code: str | None = None, message: str | None = None) -> str:
    colours = _STATUS_COLOURS.get(status, _PENDING)
    text = f"{status} {error_code}" if error_code else status
    return _pill(text, colours, message or "")


# -- one test ----------------------------------------------------------------------------


def report_html(report: TestReport | BatchItem) -> str:
    """One test as an HTML fragment: status or error, URL, device, location, vantage, the
    metrics with units and rating colours, the report link."""
    error = report.error
    parts = [f'<div class="pagelab-report" style="{_BOX}">']
    title = f"<strong>{_e(report.url)}</strong>"
    where = " &middot; ".join(
        _e(v) for v in (report.device.value, report.location.value,
                        f"vantage {report.vantage}" if report.vantage else None) if v
    )
    parts.append(
        f"<div>{title} <span style=\"color:#5f6368\">{where}</span> "
        f"{_status(report.status.value, error.code if error else None)}</div>"
    )
    if error is not None:
        parts.append(
            f'<div style="color:{RATING_COLOURS["poor"][1]};margin:4px 0">'
            f"<code>{_e(error.code)}</code>: {_e(error.message)}</div>"
        )
    shown = _shown_metrics([report.metrics])
    if report.metrics is not None and shown:
        # One row: every value carries its unit, so the headers are bare labels.
        head = "".join(_header_cell(m, unit=False) for m in shown)
        cells = "".join(_value_cell(m, getattr(report.metrics, m.name)) for m in shown)
        parts.append(
            f'<table style="{_TABLE}"><thead><tr>{head}</tr></thead>'
            f"<tbody><tr>{cells}</tr></tbody></table>"
        )
    footer = [
        _e(v) for v in (report.id, f"Lighthouse {report.lighthouse_version}"
                        if report.lighthouse_version else None) if v
    ]
    link = _link(report.report_url, "Lighthouse report")
    if link:
        footer.append(link)
    if footer:
        parts.append(f'<div style="color:#5f6368">{" &middot; ".join(footer)}</div>')
    parts.append("</div>")
    return "".join(parts)


def _metrics_text(metrics: Metrics | None) -> str:
    if metrics is None:
        return ""
    return "  ".join(
        f"{m.label} {m.format(getattr(metrics, m.name))}" for m in _shown_metrics([metrics])
    )


def report_text(report: TestReport | BatchItem) -> str:
    """One test as plain text (a few lines) for terminals."""
    head = f"{report.url}  {report.device.value}/{report.location.value}  {report.status.value}"
    lines = [f"{report.id}  {head}" if report.id else head]
    if report.error is not None:
        lines.append(f"  {report.error.code}: {report.error.message}")
    metrics = _metrics_text(report.metrics)
    if metrics:
        lines.append(f"  {metrics}")
    if report.report_url:
        lines.append(f"  report: {report.report_url}")
    return "\n".join(lines)


# -- a batch -----------------------------------------------------------------------------


def batch_html(batch: BatchReport) -> str:
    """A batch as an HTML fragment: its status and a table of its items."""
    done = sum(item.status.is_final for item in batch.reports)
    parts = [f'<div class="pagelab-batch" style="{_BOX}">']
    header = " &middot; ".join(
        _e(v) for v in (batch.id, batch.batch_type.value,
                        f"{done}/{len(batch.reports)} final") if v
    )
    link = _link(batch.report_url, "comparison page")
    parts.append(
        f"<div><strong>Batch</strong> {header} {_status(batch.status.value)}"
        f"{' &middot; ' + link if link else ''}</div>"
    )
    shown = _shown_metrics(item.metrics for item in batch.reports)
    head = "".join(
        f'<th style="{_TH_LEFT}">{name}</th>' for name in ("URL", "device", "location", "status")
    ) + "".join(_header_cell(m) for m in shown) + f'<th style="{_TH_LEFT}">report</th>'
    rows = []
    for item in batch.reports:
        error = item.error
        status = _status(item.status.value, error.code if error else None,
                         error.message if error else None)
        cells = [
            f'<td style="{_TD_URL}">{_e(item.url)}</td>',
            f'<td style="{_TD_LEFT}">{_e(item.device.value)}</td>',
            f'<td style="{_TD_LEFT}">{_e(item.location.value)}</td>',
            f'<td style="{_TD_LEFT}">{status}</td>',
        ]
        cells += [
            # A column per metric: the unit is in its header, ``LCP (ms)``.
            _value_cell(m, getattr(item.metrics, m.name) if item.metrics else None,
                        unit=False)
            for m in shown
        ]
        cells.append(f'<td style="{_TD_LEFT}">{_link(item.report_url, "report")}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    parts.append(
        f'<table style="{_TABLE}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    parts.append("</div>")
    return "".join(parts)


def batch_text(batch: BatchReport) -> str:
    """A batch as plain text: a header line, then one block per item."""
    done = sum(item.status.is_final for item in batch.reports)
    lines = [
        f"{batch.id or 'batch'}  {batch.batch_type.value}  {batch.status.value}  "
        f"{done}/{len(batch.reports)} final"
    ]
    lines += ["  " + line for item in batch.reports for line in report_text(item).splitlines()]
    return "\n".join(lines)


# -- TTFB --------------------------------------------------------------------------------

_TTFB_PHASES: Sequence[tuple[str, str]] = (
    ("dns_lookup", "DNS"),
    ("tcp_connection", "TCP"),
    ("tls_handshake", "TLS"),
    ("server_processing", "server"),
    ("ttfb", "TTFB"),
    ("total", "total"),
)


def ttfb_html(result: TTFBResult) -> str:
    """A TTFB probe as an HTML table, one row per location, times in ms; the TTFB cell
    coloured by the TTFB metric's thresholds."""
    ttfb_metric = METRICS["server_response_time"]
    parts = [f'<div class="pagelab-ttfb" style="{_BOX}">']
    vantage = f" &middot; vantage {_e(result.vantage)}" if result.vantage else ""
    parts.append(
        f"<div><strong>TTFB</strong> {_e(result.url)} &middot; region "
        f"{_e(result.region)}{vantage}</div>"
    )
    head = (
        f'<th style="{_TH_LEFT}">location</th><th style="{_TH_LEFT}">status</th>'
        + "".join(f'<th style="{_TH}">{label} (ms)</th>' for _, label in _TTFB_PHASES)
        + f'<th style="{_TH}">HTTP</th><th style="{_TH}">code</th>'
    )
    rows = []
    for entry in result.result:
        failure = entry.error
        status = _status(entry.status.value, failure.code if failure else None,
                         failure.message if failure else None)
        cells = [
            f'<td style="{_TD_LEFT}">{_e(entry.location_name)} '
            f'<span style="color:#5f6368">{_e(entry.location_id)}</span></td>',
            f'<td style="{_TD_LEFT}">{status}</td>',
        ]
        data = entry.data
        for field, _ in _TTFB_PHASES:
            if data is None:
                cells.append(f'<td style="{_TD}">&ndash;</td>')
            elif field == "ttfb":
                rating = ttfb_metric.rating(data.timings.ttfb)
                text = f"{data.timings.ttfb:,.1f}"
                cells.append(f'<td style="{_TD}">'
                             f"{_pill(text, RATING_COLOURS[rating], rating) if rating else text}"
                             "</td>")
            else:
                cells.append(f'<td style="{_TD}">{getattr(data.timings, field):,.1f}</td>')
        cells.append(f'<td style="{_TD}">{_e(data.http_version) if data else "&ndash;"}</td>')
        cells.append(f'<td style="{_TD}">{_e(data.http_status) if data else "&ndash;"}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    parts.append(
        f'<table style="{_TABLE}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    return "".join(parts)


def ttfb_text(result: TTFBResult) -> str:
    """A TTFB probe as plain text, one line per location (ms)."""
    lines = [f"TTFB {result.url}  region {result.region}"]
    for entry in result.result:
        if entry.data is None:
            error = f"{entry.error.code}: {entry.error.message}" if entry.error else ""
            lines.append(f"  {entry.location_id:<14} {entry.status.value}  {error}")
            continue
        t = entry.data.timings
        lines.append(
            f"  {entry.location_id:<14} TTFB {t.ttfb:,.1f} ms  (DNS {t.dns_lookup:,.1f}, "
            f"TCP {t.tcp_connection:,.1f}, TLS {t.tls_handshake:,.1f}, server "
            f"{t.server_processing:,.1f}; total {t.total:,.1f} ms)"
        )
    return "\n".join(lines)
