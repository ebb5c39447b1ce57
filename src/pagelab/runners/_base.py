"""The runner interface every backend implements (local engine, HTTP API).

The input vocabulary (config, time bounds, progress callbacks, validation messages) lives in
:mod:`pagelab.models`, so both runners read every argument the same way.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self, runtime_checkable

from pydantic import ValidationError

from pagelab._build import resolve_build
from pagelab._exceptions import InvalidFlowError
from pagelab.models import (
    BatchReport,
    BatchType,
    Build,
    BuildInput,
    ConfigInput,
    Device,
    Flow,
    FlowReport,
    LighthouseConfig,
    LighthouseTestRequest,
    Location,
    LocationInfo,
    Navigate,
    ProgressCallback,
    TestReport,
    TimeInput,
    TTFBRegion,
    TTFBResult,
    build_filters,
    check_paging,
    coerce_config,
    epoch_ms_or_none,
    invalid_input,
)
from pagelab.store import TestQuery

from ._batch import BatchPlan, plan_batch
from ._resources import ReportRef

__all__ = ["FlowCell", "MatrixCell", "ReportSink", "Runner"]


@dataclass(frozen=True, slots=True)
class MatrixCell:
    """One cell of a matrix to run: a URL on a device from a location, with its config,
    measuring ``build`` (None: unknown)."""

    url: str
    device: Device
    location: Location
    config: LighthouseConfig
    build: Build | None = None


@dataclass(frozen=True, slots=True)
class FlowCell:
    """One user flow on a device from a location, with its config: what a flow run takes,
    checked once (:meth:`of`, or the matrix :func:`pagelab.measure` builds), typed from
    there to the engine."""

    flow: Flow
    device: Device
    location: Location
    config: LighthouseConfig
    build: Build | None = None

    @classmethod
    def of(cls, flow: Flow, device: Device | str, location: Location | str,
           config: ConfigInput, build: Build | None = None) -> FlowCell:
        """The cell of ``flow`` on ``device`` from ``location`` measuring ``build``: the
        flow checked (:meth:`Flow.check`), the rest read as a page test's; raises
        :class:`~pagelab.InvalidFlowError` / :class:`~pagelab.InvalidInputError`."""
        if not isinstance(flow, Flow):
            raise InvalidFlowError(f"flow: expected a pagelab Flow, got {type(flow).__name__}")
        flow.check()
        navigate = flow.steps[0]
        assert isinstance(navigate, Navigate)  # Flow refuses anything before a navigation
        try:
            request = LighthouseTestRequest.model_validate(
                {"url": navigate.url, "device": device, "location": location,
                 "config": coerce_config(config)}
            )
        except ValidationError as exc:
            raise invalid_input(exc) from exc
        return cls(flow, request.device, request.location, request.config, build)


#: Called by :meth:`Runner.run_matrix` with each final report (a :class:`FlowReport` for a
#: :class:`FlowCell`), its run (0-based repetition) and its cell's position in the list.
ReportSink = Callable[[TestReport | FlowReport, int, int], None]


@runtime_checkable
class Runner(Protocol):
    """Runs tests and reads history; :class:`LocalRunner` and :class:`ApiRunner` implement it.

    ``lighthouse`` and ``batch`` block until every test is ``success`` or ``failed``. Bad
    arguments raise :class:`~pagelab.InvalidInputError` on every runner: both inherit
    ``lighthouse``, ``batch``, ``flow`` and ``list`` from here, which check the arguments
    once and hand the checked input to the runner's own ``_run_test``, ``_run_batch``,
    ``_run_flow`` and ``_list_page``. A runner is a
    context manager: leaving it (or ``close()``) releases its browser or connections.

    A test's stored resources come through ``resource`` (the API's string) and its typed
    helpers ``lhr``, ``screenshot``, ``filmstrip`` and ``video``; each takes a
    :class:`TestReport`, a :class:`BatchItem` or a test id, and a resource the test does not
    have raises :class:`~pagelab.NotFoundError` naming it (``video`` returns None instead).

    ``run_matrix`` runs every cell ``runs`` times for :func:`pagelab.measure`, each runner in
    its own way (the local engine one test at a time, the API submitting ahead and polling).

    ``build=`` on ``lighthouse``, ``batch`` and ``flow`` names the build the tests measure
    (a :class:`~pagelab.models.Build` or a dict of its fields); None reads it from
    ``PAGELAB_COMMIT`` or the CI's variables (docs/history.md, "Build context"). Stored
    with each test (``TestReport.build``); ``list(branch=, commit=)`` reads one build's or
    branch's tests.

    ``flow`` runs a user flow once; a runner that stores its tests keeps each measured step
    as a test (``TestReport.flow_step``), listed and read like any other. A runner that
    cannot run flows (:class:`ApiRunner`: the API has no flow endpoint) raises
    :class:`~pagelab.InvalidInputError` saying so, from ``flow`` and from ``run_matrix``
    given a :class:`FlowCell`, before anything runs.
    """

    # -- what every runner does alike: check the arguments, then one primitive --------

    if TYPE_CHECKING:  # each runner's own; declared for the type checker only, so that
        # isinstance(x, Runner) asks for the public methods alone, as before them.

        def _run_test(self, cell: MatrixCell, progress: ProgressCallback | None
                      ) -> TestReport:
            """Run one test of checked input and return its final report."""
            ...

        def _run_batch(self, plan: BatchPlan, config: LighthouseConfig, build: Build | None,
                       progress: ProgressCallback | None) -> BatchReport:
            """Run a checked batch and return its final report."""
            ...

        def _run_flow(self, cell: FlowCell) -> FlowReport:
            """Run one checked user flow once and return its report."""
            ...

        def _list_page(self, query: TestQuery) -> builtins.list[TestReport]:
            """One page of tests as the checked ``query`` asks, newest first."""
            ...

    def lighthouse(
        self,
        url: str,
        device: str = "mobile",
        location: str = "us",
        config: ConfigInput = None,
        *,
        progress: ProgressCallback | None = None,
        build: BuildInput = None,
    ) -> TestReport:
        """Run one Lighthouse test and return its final report."""
        try:
            request = LighthouseTestRequest.model_validate(
                {"url": url, "device": device, "location": location,
                 "config": coerce_config(config)}
            )
        except ValidationError as exc:
            raise invalid_input(exc) from exc
        return self._run_test(MatrixCell(request.url, request.device, request.location,
                                         request.config, resolve_build(build)), progress)

    def batch(
        self,
        urls: Sequence[str],
        devices: Sequence[str],
        locations: Sequence[str],
        batch_type: BatchType | str = BatchType.MULTIPLE_URLS,
        config: ConfigInput = None,
        *,
        progress: ProgressCallback | None = None,
        build: BuildInput = None,
    ) -> BatchReport:
        """Run a batch under the spec's batch rules and return its final report."""
        plan = plan_batch(urls, devices, locations, batch_type)
        return self._run_batch(plan, coerce_config(config), resolve_build(build), progress)

    def flow(
        self,
        flow: Flow,
        device: Device | str = Device.MOBILE,
        location: Location | str = Location.US,
        config: ConfigInput = None,
        *,
        build: BuildInput = None,
    ) -> FlowReport:
        """Run a user flow once and return its report; a failed action gives a ``failed``
        report keeping the steps before it (docs/flows.md)."""
        return self._run_flow(FlowCell.of(flow, device, location, config,
                                          resolve_build(build)))

    def list(
        self,
        page: int = 1,
        per_page: int = 10,
        created_at_gt: TimeInput = None,
        created_at_gte: TimeInput = None,
        created_at_lt: TimeInput = None,
        created_at_lte: TimeInput = None,
        *,
        branch: str | None = None,
        commit: str | None = None,
    ) -> builtins.list[TestReport]:
        """A page of tests, newest first (``per_page`` 1-100); ``branch`` / ``commit``:
        only that branch's or build's tests."""
        check_paging(page, per_page)
        branch, commit = build_filters(branch, commit)
        return self._list_page(TestQuery(
            page=page,
            per_page=per_page,
            created_at_gt=epoch_ms_or_none(created_at_gt, "created_at_gt"),
            created_at_gte=epoch_ms_or_none(created_at_gte, "created_at_gte"),
            created_at_lt=epoch_ms_or_none(created_at_lt, "created_at_lt"),
            created_at_lte=epoch_ms_or_none(created_at_lte, "created_at_lte"),
            branch=branch,
            commit=commit,
        ))

    # -- what each runner does its own way ---------------------------------------------

    def run_matrix(
        self, cells: Sequence[MatrixCell | FlowCell], runs: int, on_report: ReportSink
    ) -> None:
        """Run every cell ``runs`` times, run 0 of every cell first, and hand each final
        report to ``on_report`` as it arrives (the order reports finish in)."""
        ...

    def ttfb(self, url: str, region: str) -> TTFBResult: ...

    def locations(self) -> builtins.list[LocationInfo]: ...

    def ttfb_regions(self) -> builtins.list[TTFBRegion]: ...

    def get(self, id: str) -> TestReport | BatchReport: ...

    def resource(self, report: ReportRef, name: str) -> str: ...

    def lhr(self, report: ReportRef) -> dict[str, Any]: ...

    def har(self, report: ReportRef) -> dict[str, Any]: ...

    def screenshot(self, report: ReportRef) -> bytes: ...

    def filmstrip(self, report: ReportRef) -> builtins.list[tuple[float, bytes]]: ...

    def screenshots(self, report: ReportRef) -> builtins.list[tuple[float, bytes]]: ...

    def video(self, report: ReportRef) -> bytes | None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...
