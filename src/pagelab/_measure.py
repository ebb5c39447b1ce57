"""Repeated runs over a matrix: :func:`measure` and the :class:`Results` it returns.

A *cell* is one URL x device x location x connection (for a user flow, each of its steps on
a device x location x connection). :func:`measure` runs every cell ``runs`` times,
interleaved (run 1 of every cell, then run 2, ...), so drift over time (a warming cache, a
busy machine) spreads over every cell instead of biasing one. How the cells
run is the runner's business (:meth:`pagelab.runners.Runner.run_matrix`: the API submits
ahead, the local engine runs one test at a time). Decisions: ``docs/analysis.md``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import TypeAdapter, ValidationError

from pagelab._build import resolve_build
from pagelab._cells import CellKey, cell_key
from pagelab._exceptions import InvalidInputError, PagelabError
from pagelab._progress import ProgressBar
from pagelab._public import publish, renamed_keyword
from pagelab.models import (
    Build,
    BuildInput,
    ConfigInput,
    Connection,
    Device,
    DeviceId,
    Flow,
    FlowReport,
    FlowStep,
    Location,
    PageUrl,
    ProgressCallback,
    TestReport,
    coerce_config,
    invalid_input,
)
from pagelab.runners import FlowCell, MatrixCell, Runner, connect

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from pagelab._readable import Comparison, Summary
    from pagelab.stats import Explanation

__all__ = ["Results", "measure"]

#: What a :class:`Results` built from a frame needs at least.
_FRAME_REQUIRED = ("url", "device", "location", "status")

#: The regression limits ``runs="auto"`` decides on when none are given.
_AUTO_LIMITS = "largest_contentful_paint:10%"

_URL: TypeAdapter[str] = TypeAdapter(PageUrl)
_DEVICE: TypeAdapter[Device] = TypeAdapter(DeviceId)

E = TypeVar("E", Device, Location, Connection)


# -- the matrix ------------------------------------------------------------------------------


def _as_list(value: object, name: str) -> list[object]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Iterable):
        raise InvalidInputError(f"{name}: expected a string or a list of them, got {value!r}")
    items = list(value)
    if not items:
        raise InvalidInputError(f"{name}: give at least one value (the list is empty)")
    return items


def _urls(value: object) -> list[str]:
    urls: list[str] = []
    for i, item in enumerate(_as_list(value, "urls")):
        try:
            urls.append(_URL.validate_python(item))
        except ValidationError as exc:
            raise invalid_input(exc, f"urls[{i}]") from exc
    return list(dict.fromkeys(urls))  # a URL given twice is the same cell


def _choices(value: object, name: str, kind: type[E],
             adapter: TypeAdapter[Any] | None = None) -> list[E]:
    out: list[E] = []
    for i, item in enumerate(_as_list(value, name)):
        try:
            out.append(kind((adapter or TypeAdapter(kind)).validate_python(item)))
        except ValidationError as exc:
            # The translator's words, as a runner's device= or a budget file's devices.
            raise invalid_input(exc, f"{name}[{i}]") from None
    return list(dict.fromkeys(out))


def _split_flows(value: object) -> tuple[object, list[Flow]]:
    """``urls`` without its flows (None when only flows were given), and the flows, each
    checked here, once: a flow that cannot run is refused before anything runs, and its
    :class:`~pagelab.runners.FlowCell` goes to the runner as it is."""
    if isinstance(value, Flow):
        return None, [value.check()]
    if isinstance(value, str) or not isinstance(value, Iterable):
        return value, []
    items = list(value)
    flows = [item.check() for item in items if isinstance(item, Flow)]
    names = [flow.name for flow in flows]
    if len(set(names)) != len(names):
        raise InvalidInputError(
            f"urls: two flows named {next(n for n in names if names.count(n) > 1)!r}: a flow's "
            "name is part of its cells, give each its own")
    pages = [item for item in items if not isinstance(item, Flow)]
    return (pages if pages or not flows else None), flows


def _cells(
    urls: object, devices: object, locations: object, connections: object, config: ConfigInput,
    build: Build | None = None,
) -> list[MatrixCell]:
    """Every cell, URL-major, each with the config it runs with, measuring ``build``."""
    return _matrix(_urls(urls), devices, locations, connections, config, build)


def _matrix(
    items: Sequence[Any], devices: object, locations: object, connections: object,
    config: ConfigInput, build: Build | None = None,
) -> list[Any]:
    """Every (item, device, location, config) of ``items`` (URLs or flows), item-major,
    each measuring ``build``."""
    base = coerce_config(config)
    url_list = list(items)
    device_list = _choices(devices, "devices", Device, _DEVICE)
    location_list = _choices(locations, "locations", Location)
    if connections is None:
        configs = [base]  # the config's connection, or each device's default when unset
    else:
        configs = [
            base.model_copy(update={"connection": connection})
            for connection in _choices(connections, "connections", Connection)
        ]
    return [
        MatrixCell(item, device, location, cell_config, build) if isinstance(item, str)
        else FlowCell(item, device, location, cell_config, build)
        for item, device, location, cell_config in itertools.product(
            url_list, device_list, location_list, configs
        )
    ]


# -- collecting finished runs ----------------------------------------------------------------


class _Collector:
    """Finished runs in arrival order, reported to a progress bar or callback."""

    def __init__(self, total: int, progress: bool | ProgressCallback | None) -> None:
        self.reports: list[TestReport | FlowReport] = []
        self.order: list[tuple[int, int]] = []  # (run, cell index) of each report
        self.failed = 0
        self.total = total
        self._callback: ProgressCallback | None = None
        self._bar: ProgressBar | None = None
        if callable(progress):
            self._callback = progress
        elif progress:
            self._bar = ProgressBar(total)

    def add(self, report: TestReport | FlowReport, run: int, cell: int) -> None:
        # Kept before anyone is told: an interrupt raised by the callback keeps this run.
        self.reports.append(report)
        self.order.append((run, cell))
        if report.status.value == "failed":
            self.failed += 1
        if self._bar is not None:
            self._bar.add(report)
        if self._callback is not None:
            self._callback(report)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


# -- the public face -------------------------------------------------------------------------


def measure(
    urls: str | Flow | Sequence[str | Flow],
    devices: str | Sequence[str] = ("mobile",),
    locations: str | Sequence[str] = ("us",),
    connections: str | Sequence[str] | None = None,
    runs: int | str = 5,
    config: ConfigInput = None,
    runner: Runner | None = None,
    progress: bool | ProgressCallback = True,
    *,
    against: Any = None,
    limits: str | Sequence[str] = _AUTO_LIMITS,
    build: BuildInput = None,
) -> Results:
    """Run every cell (URL x device x location x connection) ``runs`` times, interleaved.

    ``runs="auto"`` (or ``"auto:MIN-MAX"``) with ``against`` (a
    :class:`pagelab.budgets.Baseline`, a baseline file's path, or earlier :class:`Results` or
    their wide frame): 5 runs of every cell, then one more run per undecided cell at a
    time, up to 15, until the comparison with ``against`` under the regression ``limits``
    (default ``largest_contentful_paint:10%``) is decided: regressed, or clearly inside the
    limits (the gate of ``--pagelab-runs=auto``; ``docs/pytest-plugin.md``), never below
    the runs that can decide against ``against``'s. ``Results.notes`` then says where each
    cell stopped and the power its runs reached. No progress bar is shown then (the total
    is not known); a ``progress`` callable still hears of every run.

    ``urls``, ``devices``, ``locations`` and ``connections`` each take one value or a list
    (repeats are dropped). ``urls`` may hold user flows (:class:`~pagelab.Flow`, local
    engine only): each runs as a cell of its own, one fresh browser context per run, and
    its steps are cells in the frame (``flow`` and ``step`` columns), so every analysis
    works per step. ``connections=None`` runs with ``config``'s connection, or each
    device's default when it has none; a listed connection replaces ``config``'s. ``runner``
    defaults to :func:`pagelab.connect` (closed afterwards; a runner you pass stays open).
    ``progress``: True shows a ``tqdm.auto`` bar, False nothing, a callable is called with
    each finished :class:`~pagelab.TestReport` (or :class:`~pagelab.FlowReport`).

    ``build``: the build every run measures (a :class:`~pagelab.models.Build` or a dict of
    ``commit``, ``branch``, ``commit_time``, ``build_url``, ``pull_request``); None reads it
    from ``PAGELAB_COMMIT`` or the CI's variables (docs/history.md, "Build context"). It is
    stored with each run and is the frame's ``commit`` and ``branch``.

    A failed run is kept with its error code. An interrupt (Ctrl-C, a kernel interrupt, or
    :class:`KeyboardInterrupt` raised by the callback) stops submitting and returns every
    finished run with ``interrupted=True``; every run is in the runner's store as well. Any
    other error propagates, with a note saying how many runs had finished. Bad arguments
    raise :class:`~pagelab.InvalidInputError` before any test is created.
    """
    pages, flows = _split_flows(urls)
    measured = resolve_build(build)
    if flows and isinstance(runs, str):
        raise InvalidInputError("runs='auto' measures pages only; give flows a number of runs")
    if isinstance(runs, str):
        return _measure_auto(cast(Any, urls), devices, locations, connections, runs, config, runner,
                             progress, against, limits, measured)
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise InvalidInputError(f"runs: expected a positive integer or 'auto', got {runs!r}")
    if not (isinstance(progress, bool) or callable(progress)):
        raise InvalidInputError(f"progress: expected True, False or a callable, got {progress!r}")
    if runner is not None and not isinstance(runner, Runner):
        raise InvalidInputError(f"runner: expected a pagelab Runner, got {type(runner).__name__}")
    cells = ([] if pages is None
             else _cells(pages, devices, locations, connections, config, measured))
    flow_cells = (_matrix(flows, devices, locations, connections, config, measured)
                  if flows else [])
    owned = runner is None
    if runner is None:
        runner = connect()
    collector = _Collector((len(cells) + len(flow_cells)) * runs, progress)
    interrupted = False
    try:
        # Page cells first, then flows: run 0 of every cell, then run 1...
        runner.run_matrix([*cells, *flow_cells], runs, collector.add)
    except KeyboardInterrupt:
        interrupted = True
    except PagelabError as exc:
        exc.add_note(
            f"pagelab.measure: {len(collector.reports)} of {collector.total} runs had finished; "
            "they are in the runner's store (pagelab.stats.history)"
        )
        raise
    finally:
        collector.close()
        if owned:
            runner.close()
    # Run-major, cells in matrix order: the order they were meant to run in.
    order = sorted(range(len(collector.reports)), key=collector.order.__getitem__)
    return Results(
        [collector.reports[i] for i in order], [collector.order[i][0] for i in order],
        runner=runner, interrupted=interrupted,
    )


def _baseline_of(against: Any) -> Any:
    """``against`` as a :class:`pagelab.budgets.Baseline`."""
    import pandas as pd

    from pagelab.budgets import Baseline, load_baseline, make_baseline

    if isinstance(against, Baseline):
        return against
    if isinstance(against, str | os.PathLike):
        return load_baseline(against)
    if isinstance(against, Results):
        return make_baseline(against.frame)
    if isinstance(against, pd.DataFrame):
        return make_baseline(against)
    raise InvalidInputError(
        "against: expected a baseline (pagelab.budgets.Baseline or a baseline file's path) "
        f"or earlier Results, got {type(against).__name__}"
    )


def _cell_key(cell: MatrixCell) -> CellKey:
    connection = cell.config.connection
    return cell_key({"url": str(cell.url), "device": cell.device.value,
                     "location": cell.location.value,
                     "connection": None if connection is None else connection.value})


def _measure_auto(
    urls: str | Sequence[str],
    devices: str | Sequence[str],
    locations: str | Sequence[str],
    connections: str | Sequence[str] | None,
    runs: str,
    config: ConfigInput,
    runner: Runner | None,
    progress: bool | ProgressCallback,
    against: Any,
    limits: str | Sequence[str],
    build: Build | None,
) -> Results:
    """:func:`measure` with ``runs="auto"``: the adaptive runs of :class:`AutoRuns`."""

    from pagelab.budgets import measure_auto, parse_auto_runs, parse_regression_limits

    rule = parse_auto_runs(runs)
    if rule is None:
        raise InvalidInputError(f"runs: expected a positive integer or 'auto', got {runs!r}")
    if against is None:
        raise InvalidInputError(
            "runs='auto' needs against= (a baseline or earlier Results) to decide when to stop"
        )
    baseline = _baseline_of(against)
    parsed = parse_regression_limits(limits)
    # Keyed by each cell's CELL values as its runs' frame will show them.
    by_key = {_cell_key(c): c
              for c in _cells(urls, devices, locations, connections, config, build)}
    owned = runner is None
    active = connect() if runner is None else runner
    # The total is not known in advance: a callback hears of every run, no bar is shown.
    callback = progress if callable(progress) else None

    def measure_some(keys: Sequence[CellKey], count: int) -> pd.DataFrame:
        collector = _Collector(len(keys) * count, callback)
        try:
            active.run_matrix([by_key[key] for key in keys], count, collector.add)
        finally:
            collector.close()
        order = sorted(range(len(collector.reports)), key=collector.order.__getitem__)
        return Results([collector.reports[i] for i in order]).frame

    try:
        frame, notes = measure_auto(measure_some, list(by_key), rule, baseline=baseline,
                                    limits=parsed)
    finally:
        if owned:
            active.close()
    results = Results.from_frame(frame)
    results.runner = active
    results.notes = notes
    return results


class Results:
    """The runs of a :func:`measure` (or any reports), with the analysis as methods.

    ``Results(reports, runs=None)`` wraps :class:`~pagelab.TestReport` and
    :class:`~pagelab.FlowReport` objects (``runs``: each one's repetition index, 0-based, or
    None); :meth:`from_frame` wraps a wide frame. The frame is built once, on first use
    (a flow run gives a row per step). Metric units: ms; CLS unitless; score 0-100.
    """

    def __init__(
        self,
        reports: Iterable[TestReport | FlowReport],
        runs: Sequence[int | None] | None = None,
        *,
        runner: Runner | None = None,
        interrupted: bool = False,
    ) -> None:
        items = list(reports)
        for report in items:
            if not isinstance(report, TestReport | FlowReport):
                raise InvalidInputError(
                    f"reports: expected TestReport or FlowReport objects, "
                    f"got {type(report).__name__}"
                )
        if runs is not None and len(runs) != len(items):
            raise InvalidInputError(
                f"runs: {len(runs)} run indices for {len(items)} reports"
            )
        self._items: list[TestReport | FlowReport] = items
        self._reports: list[TestReport] | None = [
            r for r in items if isinstance(r, TestReport)]
        #: The user flows' runs (:class:`~pagelab.FlowReport`), run-major; empty when built
        #: from a frame (their steps are in :attr:`frame`).
        self.flow_reports: list[FlowReport] = [r for r in items if isinstance(r, FlowReport)]
        self._runs: list[int | None] | None = list(runs) if runs is not None else None
        self._frame: pd.DataFrame | None = None
        self._lhrs: dict[str, dict[str, Any]] = {}
        #: The runner the runs came from (closed if :func:`measure` opened it), or None.
        self.runner = runner
        #: True when an interrupt stopped :func:`measure` before every run was done.
        self.interrupted = interrupted
        #: ``runs="auto"``: where each cell stopped and the power its runs reached
        #: (``desktop/us http://…/ decided after 6 runs; power 48 % for a true
        #: largest_contentful_paint:10% (CV 7 %)``), and a run range raised to what can
        #: decide; empty otherwise.
        self.notes: list[str] = []

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, interrupted: bool = False) -> Results:
        """Results over a wide frame (:func:`pagelab.frames.to_frame`'s columns)."""
        import pandas as pd

        if not isinstance(frame, pd.DataFrame):
            raise InvalidInputError(
                f"frame: expected the wide DataFrame of runs, got {type(frame).__name__}"
            )
        missing = [column for column in _FRAME_REQUIRED if column not in frame.columns]
        if missing:
            raise InvalidInputError(f"frame: not a wide frame of runs (no {', '.join(missing)})")
        results = cls([], interrupted=interrupted)
        results._reports = None  # rebuilt from the frame when asked for
        results._items = []
        results._frame = frame.reset_index(drop=True)
        return results

    # -- data -----------------------------------------------------------------------------

    @property
    def reports(self) -> list[TestReport]:
        """The page runs' reports, run-major (from a frame: rebuilt, error messages are
        codes); user flows' runs are :attr:`flow_reports`."""
        if self._reports is None:
            assert self._frame is not None
            from pagelab.frames import to_reports

            self._reports = to_reports(self._frame)
        return self._reports

    @property
    def frame(self) -> pd.DataFrame:
        """The wide frame (one row per run, ``run`` filled); built once, do not modify."""
        if self._frame is None:
            import pandas as pd

            from pagelab.frames import row_count, to_frame

            frame = to_frame(self._items)
            if self._runs is not None:
                frame["run"] = pd.array(
                    [run for run, report in zip(self._runs, self._items, strict=True)
                     for _ in range(row_count(report))], dtype="Int64")
            self._frame = frame
        return self._frame

    @property
    def long(self) -> pd.DataFrame:
        """The tidy frame: one row per (run, metric) with ``metric``, ``value``, ``unit``."""
        from pagelab.frames import to_long

        return to_long(self.frame)

    def lhr(self, report: TestReport | FlowStep | str) -> dict[str, Any]:
        """One run's full Lighthouse result (a report, a stored flow step or its ``lt_…``
        id), read through the runner the runs came from and kept (each LHR is read once)."""
        test_id = report.id if isinstance(report, TestReport | FlowStep) else report
        if not isinstance(test_id, str):
            raise InvalidInputError(
                f"report: expected a TestReport, a stored FlowStep or a test id, got {report!r}")
        if test_id not in self._lhrs:
            if self.runner is None:
                raise InvalidInputError(
                    "these Results have no runner to read LHRs from (built from a frame): "
                    "set results.runner to the runner that stored the runs"
                )
            self._lhrs[test_id] = self.runner.lhr(test_id)
        return self._lhrs[test_id]

    # -- per-run breakdowns (pagelab.frames) ------------------------------------------------

    def requests(self) -> pd.DataFrame:
        """Every successful run's network requests (:func:`pagelab.frames.requests`)."""
        from pagelab.frames import requests

        return requests(self)

    def resource_summary(self) -> pd.DataFrame:
        """Requests and bytes per run x resource type x party
        (:func:`pagelab.frames.resource_summary`)."""
        from pagelab.frames import resource_summary

        return resource_summary(self)

    def third_parties(self) -> pd.DataFrame:
        """Bytes, main-thread and blocking time per run x entity
        (:func:`pagelab.frames.third_parties`)."""
        from pagelab.frames import third_parties

        return third_parties(self)

    def main_thread(self) -> pd.DataFrame:
        """Main-thread time per run x category (:func:`pagelab.frames.main_thread`)."""
        from pagelab.frames import main_thread

        return main_thread(self)

    def visual_progress(self) -> pd.DataFrame:
        """How complete each successful run's page looked over time, as Speed Index measures
        it: one row per screenshot, ``id``, ``run``, the cell columns, ``time_ms`` (ms since
        navigation start) and ``progress`` (percent, non-decreasing, 100 at the last
        screenshot). Computed from every screenshot of the run's trace (the ``screenshots``
        resource), or the LHR's thumbnails for a run stored without them; the method is
        in docs/analysis.md (visual progress)."""
        from pagelab.frames import visual_progress

        return visual_progress(self)

    # -- analysis (pagelab.stats, pagelab.plots, pagelab.export) ----------------------------

    def summary(
        self,
        by: str | Sequence[str] | None = None,
        aggregation: str = "median",
        metrics: str | Iterable[str] | None = None,
        *,
        agg: str | None = None,
    ) -> Summary:
        """One row per cell: runs, failed runs, ``aggregation`` per metric, CV,
        representative run (:func:`pagelab.stats.summarize`; ``agg`` is deprecated).

        A :class:`pandas.DataFrame` that a notebook displays as a readable table (units,
        rounding, rating colours, empty columns left out); ``.frame`` is the plain frame."""
        from pagelab._readable import Summary
        from pagelab.stats import summarize

        aggregation = renamed_keyword("agg", agg, "aggregation", aggregation)
        return Summary(summarize(self.frame, by=by, aggregation=aggregation, metrics=metrics))

    def describe(
        self,
        by: str | Sequence[str] | None = None,
        metrics: str | Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """Tidy statistics per (cell, metric) (:func:`pagelab.stats.describe`)."""
        from pagelab.stats import describe

        return describe(self.frame, by=by, metrics=metrics)

    def compare(
        self,
        by: str | Sequence[str],
        a: object,
        b: object,
        metrics: str | Iterable[str] | None = None,
        *,
        within: str | Sequence[str] | None = None,
        resamples: int = 10_000,
        seed: int | None = 0,
        confidence: float = 0.95,
    ) -> Comparison:
        """Whether the runs where ``by == b`` differ from those where ``by == a``, per metric,
        within each cell ``by`` does not name (one comparison per device, location and
        connection; ``within=[]`` pools): :func:`pagelab.stats.compare`.

        A :class:`pandas.DataFrame` that a notebook displays as a readable table (the sides
        named, units, significant verdicts coloured); ``.frame`` is the plain frame."""
        from pagelab._readable import Comparison
        from pagelab.stats import compare

        compared = Comparison(compare(self.frame, by, a, b, metrics, within=within,
                                      resamples=resamples, seed=seed, confidence=confidence))
        compared.attrs.update(by=by, a=a, b=b)
        return compared

    def changes(self, metrics: str | Iterable[str] | None = None,
                alpha: float = 0.05) -> pd.DataFrame:  # change_points' ALPHA (a test pins it)
        """Where each metric's level changed over the builds the runs measured (their
        ``commit``), per cell: one row per change with the commit that starts the new level,
        the medians before and after, ``rel_change`` (%), its interval, ``p_value`` and
        ``direction`` (:func:`pagelab.stats.change_points`; ``metrics`` None: every metric).
        Runs without a commit are an :class:`~pagelab.InvalidInputError`."""
        from pagelab.stats import change_points

        return change_points(self.frame, metrics, alpha)

    def explain(
        self,
        by: str | Sequence[str],
        a: object,
        b: object,
        *,
        within: str | Sequence[str] | None = None,
    ) -> Explanation:
        """Why the runs where ``by == b`` differ from those where ``by == a``: requests,
        entities, resource types, main thread and user timings, ranked
        (:func:`pagelab.stats.explain`)."""
        from pagelab.stats import explain

        return explain(self, by, a, b, within=within)

    def versus_field(self, fallback: str | None = "origin", *, api_key: str | None = None,
                     refresh: bool = False) -> pd.DataFrame:
        """Lab beside field: per cell and metric the lab median and the Chrome UX Report's
        p75 of the page on the device's form factor (phones and ``mobile``: phone; laptops
        and ``desktop``: desktop; tablets: tablet), both ratings and ``ratio`` = lab / field.
        A page without its own record falls back to its origin (``field_level="origin"``;
        ``fallback=None``: no fallback). A DataFrame displayed readably in a notebook; key,
        cache and errors as :func:`pagelab.field.record`'s (docs/field.md)."""
        from pagelab.field import versus_field

        return versus_field(self.frame, fallback=fallback, api_key=api_key, refresh=refresh)

    def export(self, path: str | os.PathLike[str], **options: Any) -> Path:
        """Write the runs to ``path`` by its suffix (:func:`pagelab.export.export`; the
        ``options`` ``by``, ``a``, ``b``, ``title``, ``explain``, ``field`` shape the HTML
        report); returns the path."""
        from pagelab.export import export

        return export(self, path, **options)

    def plot(self, metric: str, by: str | Sequence[str] | None = None,
             ax: Axes | None = None) -> Axes:
        """Every run of ``metric`` as a point per group, the median marked
        (:func:`pagelab.plots.metric_by_group`)."""
        from pagelab.plots import metric_by_group

        return metric_by_group(self, metric, by=by, ax=ax)

    # -- display ----------------------------------------------------------------------------

    def __len__(self) -> int:
        """The number of rows of :attr:`frame`: runs of pages and steps of flow runs."""
        if self._frame is None and not self.flow_reports and self._reports is not None:
            return len(self._reports)
        return len(self.frame)

    def __repr__(self) -> str:
        from pagelab._cells import cell_keys

        frame = self.frame
        cells = set(cell_keys(frame))
        failed = int((frame["status"].astype(str) == "failed").sum())
        note = ", interrupted" if self.interrupted else ""
        what = f"{len(frame)} runs"
        if "flow" in frame.columns and frame["flow"].notna().any():
            what += f" (steps of {frame['flow'].nunique()} flows)"
        return f"<Results: {what} in {len(cells)} cells, {failed} failed{note}>"

    def _repr_html_(self) -> str:
        """The runs' summary per cell and the failed runs, as readable tables."""
        from pagelab._readable import runs_html

        title = repr(self).strip("<>")
        return runs_html(self.frame, title, self.summary() if len(self) else self.frame[:0])


# The root re-exports both (lazily): shown and pickled as pagelab.Results.
publish("pagelab", globals(), __all__)
