"""TTFBExplorer: probe a URL from every location of a region a few times and see where the
time to first byte goes (DNS, TCP, TLS, server processing)."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

from pagelab._exceptions import InvalidInputError
from pagelab._html import table
from pagelab.catalog import TTFB_REGIONS
from pagelab.models import TTFBResult, TTFBStatus

from ._common import Panel, figure_png

if TYPE_CHECKING:
    from pagelab.runners import Runner

__all__ = ["TTFBExplorer"]

#: The timings shown, in the order libcurl measures them (all in ms).
TIMINGS: tuple[tuple[str, str], ...] = (
    ("dns_lookup", "DNS (ms)"),
    ("tcp_connection", "TCP (ms)"),
    ("tls_handshake", "TLS (ms)"),
    ("server_processing", "Server processing (ms)"),
    ("ttfb", "TTFB (ms)"),
    ("total", "Total (ms)"),
)


class TTFBExplorer(Panel):
    """Probe ``url`` from each location of a TTFB region ``repeats`` times.

    Shows the median of each timing per location (ms) in a table and as stacked bars.
    ``.results`` holds the list of :class:`~pagelab.TTFBResult`, one per repeat.
    """

    _title = "pagelab: time to first byte by location"

    def __init__(
        self,
        runner: Runner | None = None,
        *,
        url: str = "",
        region: str = "europe",
        repeats: int = 3,
    ) -> None:
        super().__init__(runner)
        w = self._w
        self.results: list[TTFBResult] = []
        self.url = w.Text(value=url, placeholder="https://…", description="URL",
                          layout=w.Layout(width="100%"))
        self.region = w.Dropdown(
            options=[(f"{r.name} ({len(r.locations)} locations)", r.id)
                     for r in TTFB_REGIONS.values()],
            value=region, description="Region",
        )
        self.repeats = w.BoundedIntText(value=repeats, min=1, max=50, description="Repeats")
        self.progress = w.IntProgress(value=0, min=0, max=1, description="Progress")
        self.table = w.HTML(value="")
        self.table.add_class("pagelab-ttfb-box")
        self._build(
            self.url,
            w.HBox([self.region, self.repeats]),
            w.HBox([self.run_button, self.stop_button, self.progress, self.status]),
            self.error_box,
            self.table,
            self.plot_area,
        )

    def _prepare(self) -> None:
        url = self.url.value.strip()
        if not url:
            raise InvalidInputError("enter a URL")
        self._request = (url, str(self.region.value), int(self.repeats.value))
        self.progress.max = self._request[2]
        self.progress.value = 0
        self._set_status("Probing…")

    def _work(self) -> list[TTFBResult]:
        url, region, repeats = self._request
        results: list[TTFBResult] = []
        for done in range(repeats):
            if self._stop_event.is_set():
                break
            results.append(self.runner.ttfb(url, region))
            self.progress.value = done + 1
            self._set_status(f"{done + 1} of {repeats} probes done")
        return results

    def _show(self, results: list[TTFBResult]) -> None:
        self.results = results
        if not results:
            self._set_status("Stopped before the first probe.")
            return
        stopped = len(results) < self._request[2]
        self._set_status(
            f"{'Stopped' if stopped else 'Done'}: {len(results)} probes of "
            f"{len(results[0].result)} locations."
        )
        rows = median_timings(results)
        table_rows = [
            [row["location"], *(_ms(row[key]) for key, _ in TIMINGS),
             f"{row['ok']}/{row['probes']}", row["error"]]
            for row in rows
        ]
        self.table.value = str(table(
            ["location", *(header for _, header in TIMINGS), "ok", "error"], table_rows,
            css_class="pagelab-ttfb", row_keys=[row["location"] for row in rows],
            align=["left", *["right"] * (len(TIMINGS) + 1), "left"],
        ))
        from pagelab import frames, plots

        frame = frames.ttfb_frame(results)
        self._set_plot(figure_png(lambda ax: plots.ttfb(frame, ax=ax),
                                  size=(8.0, max(2.5, 0.8 + 0.45 * len(rows)))))


def median_timings(results: list[TTFBResult]) -> list[dict[str, Any]]:
    """Per location (in the region's order): the median of each timing over the successful
    probes (ms, NaN when none succeeded), the counts, and the last error message."""
    order: list[str] = []
    timings: dict[str, dict[str, list[float]]] = {}
    counts: dict[str, int] = {}
    errors: dict[str, str] = {}
    for result in results:
        for location in result.result:
            name = location.location_name
            if name not in timings:
                order.append(name)
                timings[name] = {key: [] for key, _ in TIMINGS}
                counts[name] = 0
            counts[name] += 1
            if location.status == TTFBStatus.SUCCESS and location.data is not None:
                for key, _ in TIMINGS:
                    timings[name][key].append(float(getattr(location.data.timings, key)))
            elif location.error is not None:
                errors[name] = f"{location.error.code}: {location.error.message}"
    rows = []
    for name in order:
        values = timings[name]
        row: dict[str, Any] = {
            key: statistics.median(values[key]) if values[key] else float("nan")
            for key, _ in TIMINGS
        }
        row.update(location=name, ok=len(values["ttfb"]), probes=counts[name],
                   error=errors.get(name, ""))
        rows.append(row)
    return rows


def _ms(value: float) -> str:
    return "\u2013" if value != value else f"{value:,.1f}"  # NaN != NaN
