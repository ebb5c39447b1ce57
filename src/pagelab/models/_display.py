"""How reports show themselves: HTML fragments for notebooks, plain text for terminals.

Every piece of text that came from outside (URLs, error messages, ids) is escaped and the
only links are reports' addresses that pass the one safe-link rule (:mod:`pagelab._html`).
Colours are the metric registry's palette.

The renderers read the reports through the small protocols below, not the model classes:
the models call these renderers from their ``_repr_html_``, so the imports flow one way
(``_reports`` / ``_ttfb`` -> ``_display`` -> ``_metrics``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from pagelab._html import MISSING, Markup, escape, link, pill, table

from ._enums import BatchStatus, BatchType, DeviceId, Location, TestStatus, TTFBStatus
from ._interactions import INP_PHASES, InteractionBreakdown
from ._metrics import HEADLINE_METRICS, METRICS, RATING_COLOURS, Metric, Rating

__all__ = [
    "batch_html",
    "batch_text",
    "flow_html",
    "metric_value",
    "report_html",
    "report_text",
    "status_pill",
    "ttfb_html",
    "ttfb_text",
]

#: Colours of states that are not ratings (queued, running: neutral grey).
_NEUTRAL = ("#e8eaed", "#3c4043")
_STATUS_RATINGS: dict[str, Rating] = {"success": "good", "completed": "good", "pass": "good",
                                      "warn": "needs-improvement", "failed": "poor", "fail": "poor"}


def status_pill(status: str, detail: str | None = None, title: str = "") -> Markup:
    """A run's, batch's or check's status (``success``, ``failed``, ``pass``, ``warn``...)
    coloured by the palette; ``detail`` (an error code) follows it."""
    rating = _STATUS_RATINGS.get(status.lower())
    colours = RATING_COLOURS[rating] if rating else _NEUTRAL
    return pill(f"{status} {detail}" if detail else status, colours, title)


def metric_value(metric: Metric, value: float | None, *, unit: bool = True) -> Markup:
    """A metric's value formatted by the registry, on its rating's colour when it has one."""
    text = metric.format(value, unit=unit)
    rating = metric.rating(value)
    return pill(text, RATING_COLOURS[rating], rating) if rating else escape(text)


_BOX = Markup(
    "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;"
    "line-height:1.4;color:#202124;max-width:100%;overflow-x:auto"
)
_GREY = Markup("color:#5f6368")
_POOR_TEXT = Markup("color:#a50e0e;margin:4px 0")


class _Failure(Protocol):
    @property
    def code(self) -> str: ...
    @property
    def message(self) -> str: ...


class _Run(Protocol):
    """A :class:`TestReport` or a :class:`BatchItem`."""

    @property
    def id(self) -> str | None: ...
    @property
    def url(self) -> str: ...
    @property
    def device(self) -> DeviceId: ...
    @property
    def location(self) -> Location: ...
    @property
    def status(self) -> TestStatus: ...
    @property
    def vantage(self) -> str | None: ...
    @property
    def lighthouse_version(self) -> str | None: ...
    @property
    def report_url(self) -> str | None: ...
    @property
    def error(self) -> _Failure | None: ...
    @property
    def metrics(self) -> object | None: ...
    @property
    def environment(self) -> object | None: ...


def _noisy(report: _Run) -> str | None:
    """``noisy: CPU pressure 91 % above 60 %`` for a run the engine judged unfit."""
    if getattr(report.environment, "noisy", None) is not True:
        return None
    reasons = getattr(report.environment, "unfit_reasons", None) or []
    return "noisy: " + "; ".join(reasons) if reasons else "noisy"


class _Step(Protocol):
    @property
    def index(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def url(self) -> str | None: ...
    @property
    def metrics(self) -> object | None: ...
    @property
    def interaction(self) -> InteractionBreakdown | None: ...


class _FlowRun(Protocol):
    @property
    def flow(self) -> str: ...
    @property
    def status(self) -> TestStatus: ...
    @property
    def device(self) -> DeviceId: ...
    @property
    def location(self) -> Location | None: ...
    @property
    def error(self) -> _Failure | None: ...
    @property
    def failed_step(self) -> str | None: ...
    @property
    def lighthouse_version(self) -> str | None: ...
    @property
    def steps(self) -> Sequence[_Step]: ...


class _Batch(Protocol):
    @property
    def id(self) -> str | None: ...
    @property
    def batch_type(self) -> BatchType: ...
    @property
    def status(self) -> BatchStatus: ...
    @property
    def report_url(self) -> str | None: ...
    @property
    def reports(self) -> Sequence[_Run]: ...


class _ProbeData(Protocol):
    @property
    def timings(self) -> object: ...
    @property
    def http_version(self) -> float: ...
    @property
    def http_status(self) -> int: ...


class _Probe(Protocol):
    @property
    def location_id(self) -> str: ...
    @property
    def location_name(self) -> str: ...
    @property
    def status(self) -> TTFBStatus: ...
    @property
    def data(self) -> _ProbeData | None: ...
    @property
    def error(self) -> _Failure | None: ...


class _Probes(Protocol):
    @property
    def url(self) -> str: ...
    @property
    def region(self) -> str: ...
    @property
    def vantage(self) -> str | None: ...
    @property
    def result(self) -> Sequence[_Probe]: ...


def _value(metrics: object | None, m: Metric) -> float | None:
    value = getattr(metrics, m.name, None) if metrics is not None else None
    return value if isinstance(value, int | float) else None


def _shown_metrics(all_metrics: Iterable[object | None]) -> list[Metric]:
    """The headline metrics with a value somewhere (FMP is always null with Lighthouse
    >= 12.1), in the registry's reading order."""
    present = [m for m in all_metrics if m is not None]
    return [METRICS[name] for name in HEADLINE_METRICS
            if any(_value(m, METRICS[name]) is not None for m in present)]


def _status(status: str, failure: _Failure | None = None, *, tip: bool = True) -> Markup:
    return status_pill(status, failure.code if failure else None,
                       failure.message if failure and tip else "")


def _joined(parts: Iterable[str | Markup | None]) -> Markup:
    return Markup(" &middot; ").join(p for p in parts if p)


# -- one test ----------------------------------------------------------------------------


def report_html(report: _Run) -> str:
    """One test as an HTML fragment: status or error, URL, device, location, vantage, the
    metrics with units and rating colours, the report link."""
    error = report.error
    where = _joined((report.device.value, report.location.value,
                     f"vantage {report.vantage}" if report.vantage else None))
    parts = [Markup('<div><strong>{}</strong> <span style="{}">{}</span> {}</div>').format(
        report.url, _GREY, where, _status(report.status.value, error, tip=False))]
    if error is not None:
        parts.append(Markup('<div style="{}"><code>{}</code>: {}</div>').format(
            _POOR_TEXT, error.code, error.message))
    noisy = _noisy(report)
    if noisy:
        parts.append(Markup("<div>{}</div>").format(
            pill(noisy, RATING_COLOURS["needs-improvement"],
                 "the machine was unfit to measure: its figures are to doubt")))
    shown = _shown_metrics([report.metrics])
    if shown:
        # One row: every value carries its unit, so the headers are bare labels.
        parts.append(table([m.label for m in shown],
                           [[metric_value(m, _value(report.metrics, m)) for m in shown]],
                           align=["right"] * len(shown), titles=[m.title for m in shown]))
    footer = _joined((report.id, f"Lighthouse {report.lighthouse_version}"
                      if report.lighthouse_version else None,
                      link(report.report_url, "Lighthouse report")))
    if footer:
        parts.append(Markup('<div style="{}">{}</div>').format(_GREY, footer))
    return str(Markup('<div class="pagelab-report" style="{}">{}</div>').format(
        _BOX, Markup("").join(parts)))


def flow_html(report: _FlowRun) -> str:
    """One flow run as an HTML fragment: the flow, device, location and status, the error
    naming the step it failed at, and a row per step with the metrics it measured (INP
    first: what only a flow measures)."""
    error = report.error
    where = _joined((report.device.value, report.location.value if report.location else None))
    parts = [Markup('<div><strong>{}</strong> <span style="{}">{}</span> {}</div>').format(
        report.flow, _GREY, where, _status(report.status.value, error, tip=False))]
    if error is not None:
        parts.append(Markup('<div style="{}"><code>{}</code>: {}</div>').format(
            _POOR_TEXT, error.code, error.message))
    steps = list(report.steps)
    shown = [m for m in (METRICS["interaction_to_next_paint"],
                         *_shown_metrics(s.metrics for s in steps))
             if any(_value(s.metrics, m) is not None for s in steps)]
    rows = [[str(s.index), s.name, s.mode,
             *[metric_value(m, v) if (v := _value(s.metrics, m)) is not None else MISSING
               for m in shown], s.url or MISSING] for s in steps]
    if rows:
        parts.append(table(["#", "step", "mode", *[m.label for m in shown], "URL"], rows,
                           align=["right", "left", "left", *["right"] * len(shown), "left"],
                           titles=["", "", "", *[m.title for m in shown], ""],
                           wrap=[False, True, False, *[False] * len(shown), True]))
    parts += [_interaction_html(s.index, s.name, s.interaction) for s in steps
              if s.interaction is not None]
    if report.lighthouse_version:
        parts.append(Markup('<div style="{}">{}</div>').format(
            _GREY, f"Lighthouse {report.lighthouse_version} user flow"))
    return str(Markup('<div class="pagelab-report" style="{}">{}</div>').format(
        _BOX, Markup("").join(parts)))


def _interaction_html(index: int, name: str, interaction: InteractionBreakdown) -> Markup:
    """``Step 2 'add', slowest interaction: click on button#add-slow (Add to cart): input
    delay 4 ms · processing 311 ms · presentation delay 11 ms``."""
    what = " on ".join(t for t in (interaction.event, interaction.target) if t)
    label = f" ({interaction.target_label})" if interaction.target_label else ""
    phases = " \u00b7 ".join(
        f"{words} {value:,.0f} ms" for field, _, words in INP_PHASES
        if (value := getattr(interaction, field)) is not None)
    return Markup('<div style="{}">{}</div>').format(
        _GREY, f"Step {index} {name!r}, slowest interaction: {what or 'unknown'}{label}"
        + (f": {phases}" if phases else ""))


def _metrics_text(metrics: object | None) -> str:
    return "  ".join(f"{m.label} {m.format(_value(metrics, m))}"
                     for m in _shown_metrics([metrics]))


def report_text(report: _Run) -> str:
    """One test as plain text (a few lines) for terminals."""
    head = f"{report.url}  {report.device.value}/{report.location.value}  {report.status.value}"
    lines = [f"{report.id}  {head}" if report.id else head]
    if report.error is not None:
        lines.append(f"  {report.error.code}: {report.error.message}")
    metrics = _metrics_text(report.metrics)
    if metrics:
        lines.append(f"  {metrics}")
    noisy = _noisy(report)
    if noisy:
        lines.append(f"  {noisy}")
    if report.report_url:
        lines.append(f"  report: {report.report_url}")
    return "\n".join(lines)


# -- a batch -----------------------------------------------------------------------------


def batch_html(batch: _Batch) -> str:
    """A batch as an HTML fragment: its status and a table of its items."""
    done = sum(item.status.is_final for item in batch.reports)
    header = Markup("<div><strong>Batch</strong> {} {}{}</div>").format(
        _joined((batch.id, batch.batch_type.value, f"{done}/{len(batch.reports)} final")),
        status_pill(batch.status.value),
        Markup(" &middot; {}").format(page) if (page := link(batch.report_url,
                                                             "comparison page")) else "")
    shown = _shown_metrics(item.metrics for item in batch.reports)
    headers = ["URL", "device", "location", "status", *(m.header for m in shown), "report"]
    rows = [
        [item.url, item.device.value, item.location.value,
         _status(item.status.value, item.error),
         # A column per metric: the unit is in its header, ``LCP (ms)``.
         *(metric_value(m, _value(item.metrics, m), unit=False) for m in shown),
         link(item.report_url, "report")]
        for item in batch.reports
    ]
    body = table(headers, rows, align=["left"] * 4 + ["right"] * len(shown) + ["left"],
                 titles=["", "", "", "", *(m.title for m in shown), ""],
                 wrap=[True] + [False] * (len(headers) - 1))
    return str(Markup('<div class="pagelab-batch" style="{}">{}{}</div>').format(
        _BOX, header, body))


def batch_text(batch: _Batch) -> str:
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


def _timing(timings: object, field: str) -> float:
    value = getattr(timings, field)
    assert isinstance(value, int | float)
    return float(value)


def ttfb_html(result: _Probes) -> str:
    """A TTFB probe as an HTML table, one row per location, times in ms; the TTFB cell
    coloured by the TTFB metric's thresholds."""
    ttfb_metric = METRICS["server_response_time"]
    header = Markup("<div><strong>TTFB</strong> {}</div>").format(_joined((
        result.url, f"region {result.region}",
        f"vantage {result.vantage}" if result.vantage else None)))
    headers = ["location", "status", *(f"{label} (ms)" for _, label in _TTFB_PHASES),
               "HTTP", "code"]
    rows: list[list[object]] = []
    for entry in result.result:
        cells: list[object] = [
            Markup('{} <span style="{}">{}</span>').format(entry.location_name, _GREY,
                                                          entry.location_id),
            _status(entry.status.value, entry.error),
        ]
        data = entry.data
        for field, _ in _TTFB_PHASES:
            if data is None:
                cells.append(MISSING)
                continue
            value = _timing(data.timings, field)
            text = f"{value:,.1f}"
            rating = ttfb_metric.rating(value) if field == "ttfb" else None
            cells.append(pill(text, RATING_COLOURS[rating], rating) if rating else text)
        cells += [escape(data.http_version) if data else MISSING,
                  escape(data.http_status) if data else MISSING]
        rows.append(cells)
    body = table(headers, rows, align=["left", "left", *["right"] * (len(headers) - 2)])
    return str(Markup('<div class="pagelab-ttfb" style="{}">{}{}</div>').format(
        _BOX, header, body))


def ttfb_text(result: _Probes) -> str:
    """A TTFB probe as plain text, one line per location (ms)."""
    lines = [f"TTFB {result.url}  region {result.region}"]
    for entry in result.result:
        if entry.data is None:
            error = f"{entry.error.code}: {entry.error.message}" if entry.error else ""
            lines.append(f"  {entry.location_id:<14} {entry.status.value}  {error}")
            continue
        t = entry.data.timings
        ms = {field: _timing(t, field) for field, _ in _TTFB_PHASES}
        lines.append(
            f"  {entry.location_id:<14} TTFB {ms['ttfb']:,.1f} ms  (DNS {ms['dns_lookup']:,.1f}, "
            f"TCP {ms['tcp_connection']:,.1f}, TLS {ms['tls_handshake']:,.1f}, server "
            f"{ms['server_processing']:,.1f}; total {ms['total']:,.1f} ms)"
        )
    return "\n".join(lines)
