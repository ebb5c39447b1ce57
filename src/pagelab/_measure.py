"""Repeated runs over a matrix: :func:`measure` and the :class:`Results` it returns.

A *cell* is one URL x device x location x connection. :func:`measure` runs every cell
``runs`` times, interleaved (run 1 of every cell, then run 2, ...), so drift over time (a
warming cache, a busy machine) spreads over every cell instead of biasing one. On an
:class:`~pagelab.ApiRunner` it submits ahead (a spec batch where one fits) and polls; on any
other runner it runs one test at a time (the local engine serialises machine-wide anyway).
Decisions: ``docs/analysis.md``.
"""

from __future__ import annotations

import collections
import itertools
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from pagelab._exceptions import APIError, InvalidInputError, PagelabError, TimeoutError
from pagelab.models import (
    METRIC_NAMES,
    BatchType,
    ConfigInput,
    Connection,
    Device,
    DeviceId,
    EngineEnvironment,
    LighthouseConfig,
    LighthouseError,
    Location,
    Metrics,
    PageUrl,
    ProgressCallback,
    TestReport,
    coerce_config,
    invalid_input,
)
from pagelab.runners import ApiRunner, Runner

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from pagelab._readable import Comparison, Summary

__all__ = ["MAX_IN_FLIGHT", "Results", "measure"]

#: Tests an :class:`~pagelab.ApiRunner` keeps submitted but unfinished at once (a batch
#: larger than this is still submitted whole, alone). Enough to keep a server's queue busy
#: without flooding it, or anyone else's credits, ahead of an interrupt.
MAX_IN_FLIGHT = 20

#: What a :class:`Results` built from a frame needs at least.
_FRAME_REQUIRED = ("url", "device", "location", "status")

_URL: TypeAdapter[str] = TypeAdapter(PageUrl)
_DEVICE: TypeAdapter[Device] = TypeAdapter(DeviceId)

E = TypeVar("E", Device, Location, Connection)


# -- the matrix ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Cell:
    url: str
    device: Device
    location: Location
    config: LighthouseConfig


@dataclass(frozen=True, slots=True)
class _Unit:
    """What one request submits: one test, or a spec batch varying one dimension."""

    run: int
    cells: tuple[_Cell, ...]
    batch_type: BatchType | None


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
        except (ValidationError, ValueError):
            valid = ", ".join(member.value for member in kind)
            raise InvalidInputError(
                f"{name}[{i}]: unknown {str(item)[:100]!r}; valid: {valid}"
            ) from None
    return list(dict.fromkeys(out))


def _cells(
    urls: object, devices: object, locations: object, connections: object, config: ConfigInput
) -> list[_Cell]:
    """Every cell, URL-major, each with the config it runs with."""
    base = coerce_config(config)
    url_list = _urls(urls)
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
        _Cell(url, device, location, cell_config)
        for url, device, location, cell_config in itertools.product(
            url_list, device_list, location_list, configs
        )
    ]


def _units(cells: Sequence[_Cell], run: int) -> list[_Unit]:
    """One round's requests: per config, a batch over the dimension with the most values
    (one batch per combination of the others), or single tests when nothing varies."""
    units: list[_Unit] = []
    by_config: dict[str, list[_Cell]] = {}
    for cell in cells:
        by_config.setdefault(cell.config.model_dump_json(), []).append(cell)
    for group in by_config.values():
        values: dict[BatchType, list[object]] = {
            BatchType.MULTIPLE_URLS: list(dict.fromkeys(c.url for c in group)),
            BatchType.MULTIPLE_DEVICES: list(dict.fromkeys(c.device for c in group)),
            BatchType.MULTIPLE_LOCATIONS: list(dict.fromkeys(c.location for c in group)),
        }
        # Ties go to URLs, then devices (dict order).
        batch_type = max(values, key=lambda kind: len(values[kind]))
        if len(values[batch_type]) == 1:
            units.extend(_Unit(run, (cell,), None) for cell in group)
            continue
        others: dict[tuple[object, ...], list[_Cell]] = {}
        for cell in group:
            key = tuple(
                value for kind, value in (
                    (BatchType.MULTIPLE_URLS, cell.url),
                    (BatchType.MULTIPLE_DEVICES, cell.device),
                    (BatchType.MULTIPLE_LOCATIONS, cell.location),
                ) if kind is not batch_type
            )
            others.setdefault(key, []).append(cell)
        units.extend(_Unit(run, tuple(part), batch_type) for part in others.values())
    return units


# -- collecting finished runs ----------------------------------------------------------------


class _Collector:
    """Finished runs in arrival order, reported to a progress bar or callback."""

    def __init__(self, total: int, progress: bool | ProgressCallback | None) -> None:
        self.reports: list[TestReport] = []
        self.order: list[tuple[int, int]] = []  # (run, cell index) of each report
        self.failed = 0
        self.total = total
        self._callback: ProgressCallback | None = None
        self._bar: Any = None
        if callable(progress):
            self._callback = progress
        elif progress:
            from tqdm.auto import tqdm  # a widget in notebooks, a bar on stderr elsewhere

            self._bar = tqdm(total=total, desc="pagelab", unit="run", dynamic_ncols=True)

    def add(self, report: TestReport, run: int, cell: int) -> None:
        # Kept before anyone is told: an interrupt raised by the callback keeps this run.
        self.reports.append(report)
        self.order.append((run, cell))
        if report.status.value == "failed":
            self.failed += 1
        if self._bar is not None:
            self._bar.set_postfix_str(
                f"failed={self.failed}" if self.failed else "", refresh=False
            )
            self._bar.update(1)
        if self._callback is not None:
            self._callback(report)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _run_one_at_a_time(runner: Runner, cells: Sequence[_Cell], runs: int,
                       collector: _Collector) -> None:
    for run in range(runs):
        for index, cell in enumerate(cells):
            report = runner.lighthouse(
                cell.url, cell.device.value, cell.location.value, cell.config
            )
            collector.add(report, run, index)


def _submit(runner: ApiRunner, unit: _Unit) -> list[tuple[str, _Cell]]:
    """Create the unit's tests on the server: (test id, cell) in submission order."""
    client = runner.client
    first = unit.cells[0]
    if unit.batch_type is None:
        created = client.create_test(
            first.url, first.device.value, first.location.value, first.config
        )
        if created.id is None:
            raise APIError(201, "unexpected_response", "the server created a test without an id")
        return [(created.id, first)]
    batch = client.create_batch(
        list(dict.fromkeys(c.url for c in unit.cells)),
        list(dict.fromkeys(c.device.value for c in unit.cells)),
        list(dict.fromkeys(c.location.value for c in unit.cells)),
        unit.batch_type,
        first.config,
    )
    by_target = {(c.url, c.device, c.location): c for c in unit.cells}
    submitted: list[tuple[str, _Cell]] = []
    for item in batch.reports:
        cell = by_target.pop((item.url, item.device, item.location), None)
        if cell is None or item.id is None:
            raise APIError(201, "unexpected_response",
                           f"batch {batch.id}: an item the request did not ask for, or no id")
        submitted.append((item.id, cell))
    if by_target:
        raise APIError(201, "unexpected_response",
                       f"batch {batch.id}: the server dropped {len(by_target)} of the tests")
    return submitted


def _run_on_api(runner: ApiRunner, cells: Sequence[_Cell], runs: int,
                collector: _Collector) -> None:
    """Submit ahead (at most :data:`MAX_IN_FLIGHT` tests unfinished), poll oldest first."""
    queue = collections.deque(unit for run in range(runs) for unit in _units(cells, run))
    index = {id(cell): i for i, cell in enumerate(cells)}
    pending: dict[str, tuple[int, int]] = {}  # test id -> (run, cell index), oldest first
    last_progress = time.monotonic()
    while queue or pending:
        while queue and (not pending or len(pending) + len(queue[0].cells) <= MAX_IN_FLIGHT):
            unit = queue.popleft()
            for test_id, cell in _submit(runner, unit):
                pending[test_id] = (unit.run, index[id(cell)])
        # A server's queue is first in, first out: only the oldest test is worth asking
        # about until it is final, so a poll costs one request, not one per test.
        finished = False
        for test_id in list(pending):
            report = runner.client.get_test(test_id)
            if not report.status.is_final:
                break
            collector.add(report, *pending.pop(test_id))
            finished = True
        if finished:
            last_progress = time.monotonic()
            continue
        waited = time.monotonic() - last_progress
        if runner.wait_timeout is not None and waited > runner.wait_timeout:
            raise TimeoutError(
                f"no test finished for {waited:.0f} s (the runner's wait_timeout); "
                f"{len(pending)} still unfinished on the server"
            )
        time.sleep(runner.poll_interval)


# -- the public face -------------------------------------------------------------------------


def measure(
    urls: str | Sequence[str],
    devices: str | Sequence[str] = ("mobile",),
    locations: str | Sequence[str] = ("us",),
    connections: str | Sequence[str] | None = None,
    runs: int = 5,
    config: ConfigInput = None,
    runner: Runner | None = None,
    progress: bool | ProgressCallback = True,
) -> Results:
    """Run every cell (URL x device x location x connection) ``runs`` times, interleaved.

    ``urls``, ``devices``, ``locations`` and ``connections`` each take one value or a list
    (repeats are dropped). ``connections=None`` runs with ``config``'s connection, or each
    device's default when it has none; a listed connection replaces ``config``'s. ``runner``
    defaults to :func:`pagelab.connect` (closed afterwards; a runner you pass stays open).
    ``progress``: True shows a ``tqdm.auto`` bar, False nothing, a callable is called with
    each finished :class:`~pagelab.TestReport`.

    A failed run is kept with its error code. An interrupt (Ctrl-C, a kernel interrupt, or
    :class:`KeyboardInterrupt` raised by the callback) stops submitting and returns every
    finished run with ``interrupted=True``; every run is in the runner's store as well. Any
    other error propagates, with a note saying how many runs had finished. Bad arguments
    raise :class:`~pagelab.InvalidInputError` before any test is created.
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise InvalidInputError(f"runs: expected a positive integer, got {runs!r}")
    if not (isinstance(progress, bool) or callable(progress)):
        raise InvalidInputError(f"progress: expected True, False or a callable, got {progress!r}")
    if runner is not None and not isinstance(runner, Runner):
        raise InvalidInputError(f"runner: expected a pagelab Runner, got {type(runner).__name__}")
    cells = _cells(urls, devices, locations, connections, config)
    owned = runner is None
    if runner is None:
        from pagelab import connect

        runner = connect()
    collector = _Collector(len(cells) * runs, progress)
    interrupted = False
    try:
        if isinstance(runner, ApiRunner):
            _run_on_api(runner, cells, runs, collector)
        else:
            _run_one_at_a_time(runner, cells, runs, collector)
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


class Results:
    """The runs of a :func:`measure` (or any reports), with the analysis as methods.

    ``Results(reports, runs=None)`` wraps :class:`~pagelab.TestReport` objects (``runs``: each
    one's repetition index, 0-based, or None); :meth:`from_frame` wraps a wide frame. The
    frame is built once, on first use. Metric units: ms; CLS unitless; score 0-100.
    """

    def __init__(
        self,
        reports: Iterable[TestReport],
        runs: Sequence[int | None] | None = None,
        *,
        runner: Runner | None = None,
        interrupted: bool = False,
    ) -> None:
        self._reports: list[TestReport] | None = list(reports)
        for report in self._reports:
            if not isinstance(report, TestReport):
                raise InvalidInputError(
                    f"reports: expected TestReport objects, got {type(report).__name__}"
                )
        if runs is not None and len(runs) != len(self._reports):
            raise InvalidInputError(
                f"runs: {len(runs)} run indices for {len(self._reports)} reports"
            )
        self._runs: list[int | None] | None = list(runs) if runs is not None else None
        self._frame: pd.DataFrame | None = None
        #: The runner the runs came from (closed if :func:`measure` opened it), or None.
        self.runner = runner
        #: True when an interrupt stopped :func:`measure` before every run was done.
        self.interrupted = interrupted

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
        results._frame = frame.reset_index(drop=True)
        return results

    # -- data -----------------------------------------------------------------------------

    @property
    def reports(self) -> list[TestReport]:
        """The runs' reports, run-major (from a frame: rebuilt, error messages are codes)."""
        if self._reports is None:
            assert self._frame is not None
            self._reports = _reports_from_frame(self._frame)
        return self._reports

    @property
    def frame(self) -> pd.DataFrame:
        """The wide frame (one row per run, ``run`` filled); built once, do not modify."""
        if self._frame is None:
            import pandas as pd

            from pagelab.frames import to_frame

            frame = to_frame(self.reports)
            if self._runs is not None:
                frame["run"] = pd.array(self._runs, dtype="Int64")
            self._frame = frame
        return self._frame

    @property
    def long(self) -> pd.DataFrame:
        """The tidy frame: one row per (run, metric) with ``metric``, ``value``, ``unit``."""
        from pagelab.frames import to_long

        return to_long(self.frame)

    # -- analysis (pagelab.stats, pagelab.plots, pagelab.export) ----------------------------

    def summary(
        self,
        by: str | Sequence[str] | None = None,
        agg: str = "median",
        metrics: str | Iterable[str] | None = None,
    ) -> Summary:
        """One row per cell: runs, failed runs, ``agg`` per metric, CV, representative run
        (:func:`pagelab.stats.summarize`).

        A :class:`pandas.DataFrame` that a notebook displays as a readable table (units,
        rounding, rating colours, empty columns left out); ``.frame`` is the plain frame."""
        from pagelab._readable import Summary
        from pagelab.stats import summarize

        return Summary(summarize(self.frame, by=by, agg=agg, metrics=metrics))

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
        resamples: int = 10_000,
        seed: int | None = 0,
        confidence: float = 0.95,
    ) -> Comparison:
        """Whether the runs where ``by == b`` differ from those where ``by == a``, per metric
        (:func:`pagelab.stats.compare`).

        A :class:`pandas.DataFrame` that a notebook displays as a readable table (the sides
        named, units, significant verdicts coloured); ``.frame`` is the plain frame."""
        from pagelab._readable import Comparison
        from pagelab.stats import compare

        compared = Comparison(compare(self.frame, by, a, b, metrics, resamples=resamples,
                                      seed=seed, confidence=confidence))
        compared.attrs.update(by=by, a=a, b=b)
        return compared

    def export(self, path: str | os.PathLike[str], **options: Any) -> Path:
        """Write the runs to ``path`` by its suffix (:func:`pagelab.export.export`; the
        ``options`` ``by``, ``a``, ``b``, ``title`` shape the HTML report); returns the path."""
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
        return len(self._reports) if self._reports is not None else len(self.frame)

    def __repr__(self) -> str:
        reports = self.reports
        cells = {(r.url, r.device, r.location, r.config.connection) for r in reports}
        failed = sum(r.status.value == "failed" for r in reports)
        note = ", interrupted" if self.interrupted else ""
        return f"<Results: {len(reports)} runs in {len(cells)} cells, {failed} failed{note}>"

    def _repr_html_(self) -> str:
        """The runs' summary per cell and the failed runs, as readable tables."""
        from pagelab._readable import runs_html

        title = repr(self).strip("<>")
        return runs_html(self.frame, title, self.summary() if len(self) else self.frame[:0])


#: The wide frame's columns that come from a report's ``environment``.
_ENVIRONMENT_COLUMNS = ("chrome_version", "benchmark_index", "load_average", "cpu_pressure")


def _reports_from_frame(frame: pd.DataFrame) -> list[TestReport]:
    """Reports rebuilt from a wide frame's rows (what the frame holds, nothing more)."""
    import pandas as pd

    def value(row: dict[Any, Any], name: str) -> Any:
        item = row.get(name)
        if item is None:
            return None
        try:
            return None if pd.isna(item) else item
        except (TypeError, ValueError):  # lists and arrays are values, not NA
            return item

    reports: list[TestReport] = []
    for row in frame.to_dict("records"):
        metrics = {name: value(row, name) for name in METRIC_NAMES}
        code = value(row, "error_code")
        created = value(row, "created_at")
        environment = {
            name: item for name in _ENVIRONMENT_COLUMNS
            if (item := value(row, name)) is not None
        }
        try:
            reports.append(TestReport(
                id=value(row, "id"),
                batch_id=value(row, "batch_id"),
                url=str(row["url"]),
                device=str(row["device"]),
                location=str(row["location"]),
                config=LighthouseConfig(
                    connection=value(row, "connection"),
                    **({"throttling_method": t}
                       if (t := value(row, "throttling_method")) is not None else {}),
                ),
                status=str(row["status"]),
                lighthouse_version=value(row, "lighthouse_version"),
                metrics=Metrics(**metrics) if any(v is not None for v in metrics.values())
                else None,
                report_url=value(row, "report_url"),
                created_at=created.to_pydatetime() if isinstance(created, pd.Timestamp)
                else created,
                error=LighthouseError(code=str(code), message=str(code)) if code else None,
                vantage=value(row, "vantage"),
                environment=EngineEnvironment(**environment) if environment else None,
            ))
        except ValidationError as exc:
            raise invalid_input(exc, f"frame row {len(reports)}") from exc
    return reports

