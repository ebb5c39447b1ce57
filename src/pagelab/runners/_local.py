"""LocalRunner: tests run on this machine's engine, history in the local store."""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Sequence
from pathlib import Path

from pagelab._closing import Closing
from pagelab._exceptions import NotFoundError
from pagelab.catalog import LOCATIONS, TTFB_REGIONS
from pagelab.engine import Engine, run_ttfb
from pagelab.models import (
    MAX_STRING_LENGTH,
    BatchReport,
    Build,
    FlowReport,
    LighthouseConfig,
    LighthouseError,
    LocationInfo,
    ProgressCallback,
    TestReport,
    TestStatus,
    TTFBRegion,
    TTFBResult,
)
from pagelab.store import (
    Store,
    TestQuery,
    create_batch,
    create_test,
    delete_expired,
    finish_test,
    get_batch,
    get_test,
    list_tests,
    resource_string,
    transaction,
)

from ._base import FlowCell, MatrixCell, ReportSink, Runner
from ._batch import BatchPlan
from ._execute import execute_test
from ._flows import store_flow_run
from ._resources import ResourceReader

__all__ = ["INTERRUPTED", "LocalRunner"]

#: Error code of a local test whose run an interrupt (or an error) stopped before the end.
INTERRUPTED = "INTERRUPTED"


class LocalRunner(ResourceReader, Closing, Runner):
    """Runs tests with the local engine (real Lighthouse in Chromium) and keeps them in the
    store under ``data_dir`` (default ``$PAGELAB_DATA_DIR`` or the per-user data dir).

    Every location is measured from this machine: reports say ``vantage="local"``. A user
    flow runs in a fresh browser context; each measured step is stored as a test with its
    LHR and report: ``step.id``, ``step.report_url``, ``runner.list()`` (docs/flows.md).
    """

    vantage = "local"

    def __init__(
        self,
        data_dir: Path | str | None = None,
        *,
        engine: Engine | None = None,
        run_timeout: float = 150.0,
    ) -> None:
        self.store = Store(data_dir)
        self.engine = engine if engine is not None else Engine(run_timeout=run_timeout)
        self._owns_engine = engine is None
        with self.store.connection() as conn, transaction(conn):
            for test_id in delete_expired(conn):
                self.store.artifacts.remove(test_id)

    # -- running -----------------------------------------------------------------------

    def _run_test(self, cell: MatrixCell, progress: ProgressCallback | None) -> TestReport:
        """Store and run one test of checked input; its final report is read once, and its
        earlier states (queued, active) only when ``progress`` listens."""
        with self.store.connection() as conn, transaction(conn):
            test_id = create_test(
                conn, url=cell.url, device=cell.device, location=cell.location,
                config=cell.config, retention=self.store.retention, build=cell.build,
            )
        self._notify(progress, test_id)
        try:
            execute_test(self.store, self.engine, test_id, vantage=self.vantage,
                         on_start=lambda: self._notify(progress, test_id))
        except BaseException:
            self._abandon([test_id])
            raise
        report = self._test(test_id)
        if progress is not None:
            progress(report)
        return report

    def _run_flow(self, cell: FlowCell) -> FlowReport:
        report = self.engine.run_flow(cell.flow, cell.device, cell.config)
        report.location = cell.location  # every location is measured from this machine
        report.build = cell.build
        return store_flow_run(self.store, report, cell, vantage=self.vantage)

    def _run_batch(self, plan: BatchPlan, config: LighthouseConfig, build: Build | None,
                   progress: ProgressCallback | None) -> BatchReport:
        """One test after another."""
        with self.store.connection() as conn:
            with transaction(conn):
                batch_id, test_ids = create_batch(
                    conn, urls=plan.urls, devices=plan.devices, locations=plan.locations,
                    batch_type=plan.batch_type, config=config,
                    items=plan.items, retention=self.store.retention, build=build,
                )
            self._notify_batch(progress, batch_id)
            for position, test_id in enumerate(test_ids):
                try:
                    execute_test(self.store, self.engine, test_id, vantage=self.vantage,
                                 on_start=lambda: self._notify_batch(progress, batch_id))
                except BaseException:
                    self._abandon(test_ids[position:])
                    raise
                self._notify_batch(progress, batch_id)
        return self._batch(batch_id)

    def run_matrix(
        self, cells: Sequence[MatrixCell | FlowCell], runs: int, on_report: ReportSink
    ) -> None:
        """One test (or flow run) at a time: the engine's machine-wide lock serialises runs
        anyway, so nothing is gained by queueing ahead."""
        for run in range(runs):
            for index, cell in enumerate(cells):
                # The cells are checked input (measure built them): not validated again.
                if isinstance(cell, FlowCell):
                    on_report(self._run_flow(cell), run, index)
                else:
                    on_report(self._run_test(cell, None), run, index)

    def ttfb(self, url: str, region: str) -> TTFBResult:
        """Probe ``url`` once per location of ``region`` (all from this machine)."""
        return run_ttfb(url, region, vantage=self.vantage)

    # -- reading -----------------------------------------------------------------------

    def locations(self) -> builtins.list[LocationInfo]:
        return list(LOCATIONS.values())

    def ttfb_regions(self) -> builtins.list[TTFBRegion]:
        return list(TTFB_REGIONS.values())

    def get(self, id: str) -> TestReport | BatchReport:
        """A test (``lt_…``) or a batch (``lbt_…``) by id; :class:`NotFoundError` if none."""
        if not isinstance(id, str) or len(id) > MAX_STRING_LENGTH:
            raise NotFoundError(f"no test or batch with id {str(id)[:40]!r}")
        if id.startswith("lbt_"):
            return self._batch(id)
        return self._test(id)

    def _list_page(self, query: TestQuery) -> builtins.list[TestReport]:
        with self.store.connection() as conn:
            return list_tests(conn, query, report_url=self.store.report_file_url)

    def _read_resource(self, test_id: str, name: str) -> str | None:
        with self.store.connection() as conn:
            if get_test(conn, test_id) is None:
                raise NotFoundError(f"no test with id {test_id!r} (unknown or expired)")
            data = self.store.artifacts.read(conn, test_id, name)
        return None if data is None else resource_string(name, data)

    # -- helpers -----------------------------------------------------------------------

    def _batch(self, batch_id: str) -> BatchReport:
        with self.store.connection() as conn:
            report = get_batch(conn, batch_id, report_url=self.store.report_file_url)
        if report is None:
            raise NotFoundError(f"no batch with id {batch_id!r} (unknown or expired)")
        return report

    def _abandon(self, test_ids: Sequence[str]) -> None:
        """Record tests an interrupt (Ctrl-C) or an error left unfinished as failed with
        :data:`INTERRUPTED`: no process of this runner will ever run them, and an ``active``
        test that never ends would sit in the history for good."""
        error = LighthouseError(code=INTERRUPTED,
                                message="stopped before the run finished (interrupted)")
        # Best effort while an interrupt propagates: a store error must not replace it.
        with contextlib.suppress(Exception), self.store.connection() as conn, \
                transaction(conn):
            for test_id in test_ids:
                report = get_test(conn, test_id)
                if report is not None and not report.status.is_final:
                    finish_test(conn, test_id, status=TestStatus.FAILED,
                                lighthouse_version=None, metrics=None, error=error,
                                vantage=self.vantage, environment=None)

    def _test(self, test_id: str) -> TestReport:
        with self.store.connection() as conn:
            report = get_test(conn, test_id, report_url=self.store.report_file_url)
        if report is None:
            raise NotFoundError(f"no test with id {test_id!r} (unknown or expired)")
        return report

    def _notify(self, progress: ProgressCallback | None, test_id: str) -> None:
        """Hand ``progress`` the test's state now; nothing is read when no one listens."""
        if progress is not None:
            progress(self._test(test_id))

    def _notify_batch(self, progress: ProgressCallback | None, batch_id: str) -> None:
        if progress is not None:
            progress(self._batch(batch_id))

    def close(self) -> None:
        """Stop the engine's browser and driver (if this runner started them)."""
        if self._owns_engine:
            self.engine.close()


    def __repr__(self) -> str:
        return f"LocalRunner(data_dir={str(self.store.data_dir)!r})"
