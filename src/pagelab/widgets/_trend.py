"""TrendExplorer: one metric of one page over the history kept by the runner's store or
service, with the good/poor thresholds drawn; over builds, with the change points marked,
when the runs name their commits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from pagelab._change_points import has_commits
from pagelab._html import table
from pagelab._readable import changes_table
from pagelab.catalog import DEVICES
from pagelab.models import METRICS, metric_value

from ._common import Panel, figure_png

if TYPE_CHECKING:
    import pandas as pd

    from pagelab.runners import Runner

__all__ = ["TrendExplorer"]

#: Time windows offered, in days (None: everything kept).
WINDOWS: tuple[tuple[str, float | None], ...] = (
    ("last hour", 1 / 24),
    ("last 24 hours", 1.0),
    ("last 7 days", 7.0),
    ("last 30 days", 30.0),
    ("everything kept", None),
)


class TrendExplorer(Panel):
    """Read past tests of ``url`` (empty: every URL) on ``device`` (empty: every device)
    from the runner's history and plot ``metric`` over time, or over builds when the runs
    name their commits (:func:`pagelab.plots.trend`); then, with "mark change points" on
    (the default), each change of level is marked on the plot and listed under it
    (:func:`pagelab.stats.change_points`).

    ``.frame`` holds the wide frame read (newest last); nothing is run, so Run is cheap.
    """

    _title = "pagelab: trend over the history"

    def __init__(
        self,
        runner: Runner | None = None,
        *,
        url: str = "",
        device: str = "",
        metric: str = "largest_contentful_paint",
        window_days: float | None = 7.0,
        mark_changes: bool = True,
    ) -> None:
        super().__init__(runner)
        w = self._w
        self.frame: pd.DataFrame | None = None
        self.url = w.Text(value=url, placeholder="every URL", description="URL",
                          layout=w.Layout(width="100%"))
        self.device = w.Dropdown(
            options=[("every device", "")] + [(f"{p.label} ({d.value})", d.value)
                                              for d, p in DEVICES.items()],
            value=device, description="Device",
        )
        self.metric = w.Dropdown(options=[(m.header, name) for name, m in METRICS.items()],
                                 value=metric, description="Metric")
        self.window = w.Dropdown(options=list(WINDOWS), value=window_days, description="Window")
        self.run_button.description = "Load"
        self.table = w.HTML(value="")
        self.table.add_class("pagelab-trend-box")
        self.mark_changes = w.Checkbox(value=mark_changes, description="mark change points",
                                       indent=False)
        #: The change points of the metric shown (a table), when the runs have commits.
        self.changes = w.HTML(value="")
        self.changes.add_class("pagelab-trend-changes")
        self.metric.observe(lambda _change: self._redraw(), names="value")
        self.mark_changes.observe(lambda _change: self._redraw(), names="value")
        self._build(
            w.HBox([self.url]),
            w.HBox([self.device, self.metric, self.window]),
            w.HBox([self.run_button, self.stop_button, self.mark_changes, self.status]),
            self.error_box,
            self.table,
            self.plot_area,
            self.changes,
        )

    def _prepare(self) -> None:
        days = self.window.value
        self._since = None if days is None else datetime.now(UTC) - timedelta(days=days)
        self._url: str | None = self.url.value.strip() or None
        self._device: str | None = self.device.value or None
        self._set_status("Reading the history…")

    def _work(self) -> pd.DataFrame:
        from pagelab import stats

        return stats.history(self.runner, since=self._since, url=self._url, device=self._device)

    def _show(self, frame: pd.DataFrame) -> None:
        self.frame = frame.sort_values("created_at") if "created_at" in frame else frame
        self._set_status(f"{len(frame)} tests found.")
        self._redraw()

    def _redraw(self) -> None:
        frame = self.frame
        if frame is None:
            return
        m = METRICS[self.metric.value]
        self.changes.value = ""
        if frame.empty:
            self.table.value = "<i>No test in this window.</i>"
            self._set_plot(None)
            return
        values = frame.loc[frame["status"] == "success", m.name].dropna()
        latest = values.iloc[-1] if len(values) else float("nan")
        median = values.median() if len(values) else float("nan")
        rows = [[
            m.header, str(len(frame)), str(len(values)), metric_value(m, median, unit=False),
            metric_value(m, latest, unit=False), m.rating(float(latest)) or "\u2013",
            m.format(m.good, unit=False) if m.good is not None else "\u2013",
            m.format(m.poor, unit=False) if m.poor is not None else "\u2013",
        ]]
        self.table.value = str(table(
            ["metric", "tests", "with a value", "median", "latest", "latest rating",
             "good up to", "poor from"],
            rows, css_class="pagelab-trend", row_keys=[m.name],
            align=["left", "right", "right", "right", "right", "left", "right", "right"],
        ))
        from pagelab import plots

        found = self._changes(frame, m.name)
        self._set_plot(figure_png(lambda ax: plots.trend(
            frame, m.name, ax=ax, changes=found if found is not None else False)))

    def _changes(self, frame: pd.DataFrame, name: str) -> pd.DataFrame | None:
        """The metric's change points, listed under the plot, when asked for and the runs
        have commits; else None."""
        if not self.mark_changes.value or not has_commits(frame):
            return None
        from pagelab import stats

        found = stats.change_points(frame, name)
        self.changes.value = (str(changes_table(found)) if len(found) else
                              "<i>No change point over these builds.</i>")
        return found
