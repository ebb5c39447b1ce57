"""BatchComparison: pick URLs, devices, locations and runs, press Run, see what is faster
and whether the difference is real."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pagelab._exceptions import InvalidInputError
from pagelab._html import Markup, for_notebook
from pagelab._readable import comparison_table, summary_table
from pagelab.catalog import CONNECTIONS, DEVICES, LOCATIONS
from pagelab.models import METRICS, TestReport, TestStatus, ThrottlingMethod
from pagelab.stats import MIN_RUNS

from ._common import (
    Panel,
    bare_figure,
    error_html,
    error_message,
    figure_png,
    png_bytes,
    show_png,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from pagelab._measure import Results
    from pagelab.runners import Runner
    from pagelab.stats import Explanation

__all__ = ["BatchComparison"]

#: The column of the widget's comparison naming the cell compared with the baseline.
_CELL_COLUMN = "cell"
_EXPORT_FORMATS = (("CSV", ".csv"), ("Excel", ".xlsx"), ("HTML report", ".html"))


class BatchComparison(Panel):
    """Run a matrix of URLs x devices x locations several times and compare the cells.

    The controls preset from the arguments; ``runner`` defaults to :func:`pagelab.connect`.
    After a run, ``.results`` holds the :class:`~pagelab.Results` for the cells below, the
    summary table shows the ``agg`` of each metric per cell (units in the headers, the
    representative run's report linked), the plot shows every run of the chosen metric,
    the comparison tests every cell against the baseline cell, and for the cell chosen in
    ``explain_cell`` the explanation says why it differs from the baseline and, with
    ``filmstrips`` on, both cells' filmstrips are shown on one time axis. ``results`` shows
    runs already made (say a :func:`pagelab.scan`'s) as if the widget had run them; runs with
    a ``template`` column (a scan's) are compared by template, not by page, so the baseline
    and the cell explained are two templates. ``runs`` defaults to 5:
    one above :data:`pagelab.stats.MIN_RUNS` (4, the fewest a comparison can give a verdict
    from, and then only when every run of one side beats every run of the other), so one
    run out of place still allows a verdict (p = 0.016).
    Exports are written to ``export_dir`` (default: the working directory).
    """

    _title = "pagelab: batch comparison"

    def __init__(
        self,
        runner: Runner | None = None,
        *,
        urls: Sequence[str] = (),
        devices: Sequence[str] = ("mobile",),
        locations: Sequence[str] = ("us",),
        connection: str | None = None,
        throttling_method: str = "simulated",
        runs: int = MIN_RUNS + 1,
        metric: str = "largest_contentful_paint",
        export_dir: Path | str = ".",
        results: Results | None = None,
    ) -> None:
        super().__init__(runner)
        w = self._w
        self.results: Results | None = None
        self.summary: pd.DataFrame | None = None
        self.comparison: pd.DataFrame | None = None
        #: Why the cell in ``explain_cell`` differs from the baseline, once shown.
        self.explanation: Explanation | None = None
        self.export_dir = Path(export_dir)
        self._cells: dict[str, tuple[Any, ...]] = {}
        self._cell_columns: list[str] = []
        full = {"layout": w.Layout(width="100%")}
        self.urls = w.Textarea(
            value="\n".join(urls), placeholder="one URL per line",
            description="URLs", rows=3, **full,
        )
        self.devices = w.SelectMultiple(
            options=[(f"{profile.label} ({device.value})", device.value)
                     for device, profile in DEVICES.items()],
            value=tuple(devices), rows=6, description="Devices",
            layout=w.Layout(width="380px"),
        )
        self.locations = w.SelectMultiple(
            options=[(f"{info.full_name} ({location.value})", location.value)
                     for location, info in LOCATIONS.items()],
            value=tuple(locations), rows=6, description="Locations",
            layout=w.Layout(width="380px"),
        )
        self.connection = w.Dropdown(
            options=[("device default", "")] + [
                (f"{conn.value} ({profile.rtt_ms:.0f} ms RTT, "
                 f"{profile.down_kbps / 1000:g} Mbit/s)", conn.value)
                for conn, profile in CONNECTIONS.items()
            ],
            value=connection or "", description="Connection",
        )
        self.throttling_method = w.Dropdown(
            options=[method.value for method in ThrottlingMethod],
            value=throttling_method, description="Throttling",
        )
        self.runs = w.BoundedIntText(value=runs, min=1, max=100, description="Runs")
        self.metric = w.Dropdown(
            options=[(m.header, name) for name, m in METRICS.items()],
            value=metric, description="Metric",
        )
        self.baseline = w.Dropdown(options=[], description="Baseline")
        self.progress = w.IntProgress(value=0, min=0, max=1, description="Progress")
        self.table = w.HTML(value="")
        self.table.add_class("pagelab-summary-box")
        self.comparison_table = w.HTML(value="")
        self.comparison_table.add_class("pagelab-comparison-box")
        self.explain_cell = w.Dropdown(options=[], description="Explain")
        self.explanation_box = w.HTML(value="")
        self.explanation_box.add_class("pagelab-explanation-box")
        self.explanation_plot = w.Image(format="png", value=b"")
        self.explanation_plot.add_class("pagelab-explanation-plot")
        self._explanation_area = w.Box([])
        self.filmstrips = w.ToggleButton(
            value=False, description="Filmstrips", icon="film",
            tooltip="the baseline's and the chosen cell's filmstrips on one time axis")
        self.filmstrip_plot = w.Image(format="png", value=b"")
        self.filmstrip_plot.add_class("pagelab-filmstrip-plot")
        self.filmstrip_note = w.HTML(value="")
        self._filmstrip_area = w.Box([])
        self.export_buttons = []
        for label, suffix in _EXPORT_FORMATS:
            button = w.Button(description=label, icon="download", disabled=True)
            button.on_click(lambda _b, suffix=suffix: self.export(suffix))
            self.export_buttons.append(button)
        self.export_status = w.HTML(value="")
        self.metric.observe(lambda _change: self._redraw_plot(), names="value")
        self.baseline.observe(lambda _change: self._recompare(), names="value")
        self.explain_cell.observe(lambda _change: self._chosen_cell(), names="value")
        self.filmstrips.observe(lambda _change: self._refilm(), names="value")
        self._build(
            self.urls,
            w.HBox([self.devices, self.locations]),
            w.HBox([self.connection, self.throttling_method, self.runs]),
            w.HBox([self.run_button, self.stop_button, self.progress, self.status]),
            self.error_box,
            self.table,
            w.HBox([self.metric, self.baseline]),
            self.plot_area,
            self.comparison_table,
            w.HBox([self.explain_cell, self.filmstrips]),
            self.explanation_box,
            self._explanation_area,
            self._filmstrip_area,
            w.HBox([*self.export_buttons, self.export_status]),
        )
        if results is not None:
            from pagelab import _measure

            if not isinstance(results, _measure.Results):
                raise InvalidInputError(
                    f"results: expected pagelab Results, got {type(results).__name__}")
            self.progress.max = max(len(results.frame), 1)
            self._show(results)

    # -- run -------------------------------------------------------------------------------

    def _prepare(self) -> None:
        urls = [line.strip() for line in self.urls.value.splitlines() if line.strip()]
        if not urls:
            raise InvalidInputError("enter at least one URL (one per line)")
        if not self.devices.value:
            raise InvalidInputError("pick at least one device")
        if not self.locations.value:
            raise InvalidInputError("pick at least one location")
        connection = self.connection.value or None
        self._request: dict[str, Any] = {
            "urls": urls,
            "devices": list(self.devices.value),
            "locations": list(self.locations.value),
            "connections": [connection] if connection else None,
            "runs": int(self.runs.value),
            "config": {"throttling_method": self.throttling_method.value},
        }
        total = len(urls) * len(self.devices.value) * len(self.locations.value) * self.runs.value
        self.progress.max = total
        self.progress.value = 0
        self.progress.bar_style = ""
        for button in self.export_buttons:
            button.disabled = True
        # A new run replaces what was shown: no stale table next to a fresh progress bar.
        self.results = self.summary = self.comparison = None
        self.table.value = self.comparison_table.value = self.export_status.value = ""
        self._set_plot(None)
        self._set_explanation(None)
        few = (f" (a comparison needs {MIN_RUNS} runs per cell for a verdict)"
               if self.runs.value < MIN_RUNS else "")
        self._set_status(f"Starting {total} runs…{few}")

    def _work(self) -> Results:
        from pagelab import _measure

        self._done = 0
        return _measure.measure(**self._request, runner=self.runner, progress=self._on_progress)

    def _on_progress(self, report: TestReport) -> None:
        """Called by :func:`pagelab.measure` on the worker thread as each run finishes."""
        self._done += 1
        self.progress.value = self._done
        failed = " (failed)" if report.status == TestStatus.FAILED else ""
        self._set_status(f"{self._done} of {self.progress.max} runs done{failed}")
        if self._stop_event.is_set():
            # measure's documented way to stop: it keeps every finished run and returns
            # Results with interrupted=True.
            raise KeyboardInterrupt

    # -- show ------------------------------------------------------------------------------

    def _show(self, results: Results) -> None:
        self.results = results
        frame = results.frame
        done = len(frame)
        failed = int((frame["status"] == "failed").sum())
        total = self.progress.max
        self.progress.value = done
        if results.interrupted:
            self.progress.bar_style = "warning"
            self._set_status(f"Stopped: {done} of {total} runs kept ({failed} failed).")
        else:
            self.progress.bar_style = "success" if failed == 0 else "warning"
            self._set_status(f"Done: {done} runs ({failed} failed).")
        if done == 0:
            self.table.value = "<i>No run finished.</i>"
            return
        self._cell_columns = _varying(frame)
        summary = results.summary(by=self._cell_columns)
        self.summary = summary
        self.table.value = _summary_html(summary, self._cell_columns)
        self._cells = {
            _cell_label(row, self._cell_columns): tuple(row[c] for c in self._cell_columns)
            for _, row in summary.iterrows()
        }
        for button in self.export_buttons:
            button.disabled = False
        self._redraw_plot()
        # The baseline stays the cell it was when that cell is still there, else the first.
        _offer(self.baseline, list(self._cells), self._recompare)

    def _redraw_plot(self) -> None:
        results = self.results
        if results is None or results.frame.empty:
            return
        try:
            self._set_plot(figure_png(self._draw_plot, self._plot_size()))
        except Exception as exc:
            self.error_box.value = error_html(f"Could not draw the plot: {error_message(exc)}")

    def _draw_plot(self, ax: Axes) -> object:
        """The plot of the shown results: every run of the chosen metric per cell."""
        from pagelab import plots

        assert self.results is not None
        return plots.metric_by_group(self.results.frame, self.metric.value,
                                     by=self._cell_columns, ax=ax)

    def _plot_size(self) -> tuple[float, float]:
        return (8.0, min(1.6 + 0.8 * len(self._cells), 9.0))

    def _recompare(self) -> None:
        results, base = self.results, self.baseline.value
        if results is None or not base or len(self._cells) < 2:
            self.comparison_table.value = (
                "<i>Pick two or more cells (URLs, devices or locations) to compare them.</i>"
                if results is not None else ""
            )
            self.comparison = None
            self._set_explanation(None)
            return
        from pagelab import stats

        pd = _pandas()
        parts = []
        for label in self._cells:
            if label == base:
                continue
            # By every cell column that varies, so the two sides are two cells: nothing is
            # pooled (compared by a label column, the varying columns read as pooled).
            compared = stats.compare(results.frame, self._cell_columns, self._cells[base],
                                     self._cells[label], within=[])
            parts.append(compared.assign(**{_CELL_COLUMN: label}))
        self.comparison = pd.concat(parts, ignore_index=True)
        self.comparison_table.value = str(
            Markup("<b>Against the baseline {}</b>").format(base)
            + Markup(_comparison_html(self.comparison, base))
        )
        # The cell explained stays the one chosen while it is not the baseline.
        _offer(self.explain_cell, [label for label in self._cells if label != base],
               self._chosen_cell)

    def _chosen_cell(self) -> None:
        """The views of the cell chosen in ``explain_cell``: its explanation, its filmstrips."""
        self._reexplain()
        self._refilm()

    def _reexplain(self) -> None:
        """Why the chosen cell differs from the baseline (:func:`pagelab.stats.explain` over
        each run's LHR, read through the runner), as a table and a plot; an error (say, runs
        whose LHRs cannot be read) is shown in place of it. Run is disabled meanwhile."""
        results, base, other = self.results, self.baseline.value, self.explain_cell.value
        if results is None or base not in self._cells or other not in self._cells:
            self._set_explanation(None)
            return
        from pagelab import stats

        running = self.running
        self.run_button.disabled = True
        try:
            explanation = stats.explain(results, self._cell_columns, self._cells[base],
                                        self._cells[other], within=[])
            png = (figure_png(lambda ax: _contributions(explanation, ax),
                              (9.0, 1.2 + 0.4 * min(len(explanation.frame), 12)))
                   if len(explanation.frame) else None)
        except Exception as exc:
            self.error = exc
            self._set_explanation(None)
            self.explanation_box.value = error_html(
                f"Could not explain {other} against {base}: {error_message(exc)}")
            return
        finally:
            self.run_button.disabled = running
        self.explanation = explanation
        self.explanation_box.value = explanation._repr_html_()
        self._set_explanation_plot(png)

    def _set_explanation(self, explanation: Explanation | None) -> None:
        self.explanation = explanation
        self.explanation_box.value = ""
        self._set_explanation_plot(None)
        self._set_filmstrips(None)

    def _refilm(self) -> None:
        """With ``filmstrips`` on: the baseline's and the chosen cell's filmstrips on one time
        axis (:func:`pagelab.plots.filmstrip_compare`: each side's representative run, from
        its screenshots read through the runner); an error is shown in its place."""
        results, base, other = self.results, self.baseline.value, self.explain_cell.value
        if (not self.filmstrips.value or results is None or base not in self._cells
                or other not in self._cells):
            self._set_filmstrips(None)
            return
        from pagelab import plots

        try:
            png = png_bytes(plots.filmstrip_compare(
                results, self._cell_columns, self._cells[base], self._cells[other],
                figure=bare_figure()))
        except Exception as exc:
            self.error = exc
            self._set_filmstrips(None)
            self.filmstrip_note.value = error_html(
                f"Could not draw the filmstrips of {other} and {base}: {error_message(exc)}")
            return
        self._set_filmstrips(png)

    def _set_filmstrips(self, png: bytes | None) -> None:
        self.filmstrip_note.value = ""
        show_png(self._filmstrip_area, self.filmstrip_plot, png, [self.filmstrip_note])

    def _set_explanation_plot(self, png: bytes | None) -> None:
        show_png(self._explanation_area, self.explanation_plot, png, [])

    # -- export ----------------------------------------------------------------------------

    def export(self, suffix: str) -> Path | None:
        """Write the shown results to ``export_dir`` as ``.csv``, ``.xlsx`` or ``.html``."""
        if self.results is None:
            return None
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        path = self.export_dir / f"pagelab-{stamp}{suffix}"
        try:
            self.export_dir.mkdir(parents=True, exist_ok=True)
            self.results.export(path, **self._report_options(suffix))
        except Exception as exc:
            self.export_status.value = error_html(error_message(exc))
            return None
        self.export_status.value = str(
            Markup('Saved <code class="pagelab-export-path">{}</code>').format(str(path)))
        return path

    def _report_options(self, suffix: str) -> dict[str, Any]:
        """The HTML report compares the baseline with the next cell, as the widget shows."""
        base = self.baseline.value
        others = [label for label in self._cells if label != base]
        if suffix != ".html" or not base or base not in self._cells or not others:
            return {}
        return {"by": self._cell_columns, "a": self._cells[base], "b": self._cells[others[0]]}


def _offer(dropdown: Any, options: list[str], refresh: Callable[[], None]) -> None:
    """Offer ``options`` in ``dropdown``, keeping its value while offered, else the first;
    a new value fires the dropdown's observer, an unchanged one calls ``refresh``."""
    current = dropdown.value
    dropdown.options = options
    target = current if current in options else options[0]
    if dropdown.value != target:
        dropdown.value = target
    else:
        refresh()


def _contributions(explanation: Explanation, ax: Axes) -> object:
    from pagelab import plots

    return plots.contributions(explanation, ax=ax)


def _pandas() -> Any:
    import pandas as pd

    return pd


def _varying(frame: pd.DataFrame) -> list[str]:
    """The cell columns whose values differ between runs; the URL when none does. A scan's
    runs (a ``template`` column) are grouped by template in place of the URL: a template's
    pages are samples of one kind of page, compared as one."""
    from pagelab.frames import CELL

    by_template = "template" in frame and bool(frame["template"].notna().all())
    columns = [("template" if c == "url" and by_template else c) for c in CELL]
    varying = [c for c in columns if c in frame and frame[c].nunique(dropna=True) > 1]
    return varying or [columns[0]]


def _cell_text(column: str, value: Any) -> str:
    if _missing_scalar(value):
        return "default" if column == "connection" else "\u2013"
    text = str(value)
    if column == "url":
        parts = urlsplit(text)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return text


def _cell_label(row: Any, columns: Sequence[str]) -> str:
    return " · ".join(_cell_text(c, row[c]) for c in columns)


@for_notebook
def _summary_html(summary: pd.DataFrame, columns: Sequence[str]) -> str:
    """The notebook's summary table (:func:`pagelab._readable.summary_table`) over the cell
    columns that vary, each row keyed by its cell's label."""
    from pagelab.frames import CELL

    shown = summary.drop(columns=[c for c in CELL if c in summary and c not in columns])
    keys = [_cell_label(row, columns) for _, row in summary.iterrows()]
    return str(summary_table(shown, row_keys=keys))


def _comparison_html(comparison: pd.DataFrame, baseline: str) -> str:
    """The notebook's comparison table, one block of rows per cell against the baseline;
    the b side is named by its cell when there is one, else by the cell column."""
    cells = comparison[_CELL_COLUMN].unique()
    return str(comparison_table(comparison, a=baseline,
                                b=cells[0] if len(cells) == 1 else _CELL_COLUMN))


def _missing_scalar(value: Any) -> bool:
    return bool(_pandas().isna(value)) if not isinstance(value, str) else False
