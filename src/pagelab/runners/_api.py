"""The runner over any server of the Web Performance Testing API."""

from __future__ import annotations

import builtins
import collections
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

import httpx

from pagelab._closing import Closing
from pagelab._exceptions import (
    APIError,
    APINotFoundError,
    InvalidInputError,
    NotFoundError,
    RequestTimeoutError,
)
from pagelab.client import Client, RetryPolicy
from pagelab.models import (
    BatchReport,
    BatchType,
    Build,
    LighthouseConfig,
    LocationInfo,
    ProgressCallback,
    TestReport,
    TTFBRegion,
    TTFBResult,
)
from pagelab.store import TestQuery

from ._base import FlowCell, MatrixCell, ReportSink, Runner
from ._batch import BatchPlan
from ._resources import ResourceReader

__all__ = ["MAX_IN_FLIGHT", "ApiRunner"]

#: Tests :meth:`ApiRunner.run_matrix` keeps submitted but unfinished at once (a batch larger
#: than this is still submitted whole, alone). Enough to keep a server's queue busy without
#: flooding it, or anyone else's credits, ahead of an interrupt.
MAX_IN_FLIGHT = 20


@dataclass(frozen=True, slots=True)
class _Unit:
    """What one request submits: one test, or a spec batch varying one dimension."""

    run: int
    cells: tuple[MatrixCell, ...]
    batch_type: BatchType | None


def _units(cells: Sequence[MatrixCell], run: int) -> list[_Unit]:
    """One round's requests: per config, a batch over the dimension with the most values
    (one batch per combination of the others), or single tests when nothing varies."""
    units: list[_Unit] = []
    by_config: dict[tuple[str, Build | None], list[MatrixCell]] = {}
    for cell in cells:
        # One request carries one config and one build.
        by_config.setdefault((cell.config.model_dump_json(), cell.build), []).append(cell)
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
        others: dict[tuple[object, ...], list[MatrixCell]] = {}
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


class ApiRunner(ResourceReader, Closing, Runner):
    """:class:`~pagelab.runners.Runner` over HTTP: the tests run on the server.

    ``base_url`` defaults to ``$PAGELAB_API_URL`` and ``api_key`` to ``$PAGELAB_API_KEY``,
    so notebooks and the pytest plugin switch backends with two environment variables.
    ``lighthouse`` and ``batch`` block until every test is final, polling every
    ``poll_interval`` seconds for at most ``wait_timeout`` seconds (None: no limit).
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        poll_interval: float = 2.0,
        wait_timeout: float | None = 3600.0,
        timeout: float | httpx.Timeout | None = None,
        retry: RetryPolicy | None = None,
        client: Client | None = None,
    ) -> None:
        self.client = client or Client(base_url, api_key, timeout=timeout, retry=retry)
        self.poll_interval = poll_interval
        self.wait_timeout = wait_timeout

    def __repr__(self) -> str:
        return f"ApiRunner({self.client.base_url!r})"

    def _run_test(self, cell: MatrixCell, progress: ProgressCallback | None) -> TestReport:
        created = self.client.create_test(cell.url, cell.device.value, cell.location.value,
                                          cell.config, build=cell.build)
        return self.client.wait_test(
            created, timeout=self.wait_timeout, poll_interval=self.poll_interval,
            progress=progress,
        )

    def _run_batch(self, plan: BatchPlan, config: LighthouseConfig, build: Build | None,
                   progress: ProgressCallback | None) -> BatchReport:
        created = self.client.create_batch(
            plan.urls, [d.value for d in plan.devices], [loc.value for loc in plan.locations],
            plan.batch_type, config, build=build,
        )
        return self.client.wait_batch(
            created, timeout=self.wait_timeout, poll_interval=self.poll_interval,
            progress=progress,
        )

    def run_matrix(
        self, cells: Sequence[MatrixCell | FlowCell], runs: int, on_report: ReportSink
    ) -> None:
        """Submit ahead (at most :data:`MAX_IN_FLIGHT` tests unfinished, as spec batches
        where one fits) and poll the oldest unfinished test first. A :class:`FlowCell` is
        refused before anything is submitted (:meth:`flow`)."""
        for cell in cells:
            if isinstance(cell, FlowCell):
                self._run_flow(cell)
        pages = [cell for cell in cells if isinstance(cell, MatrixCell)]
        self._run_pages(pages, runs, on_report)

    def _run_pages(
        self, cells: Sequence[MatrixCell], runs: int, on_report: ReportSink
    ) -> None:
        queue = collections.deque(unit for run in range(runs) for unit in _units(cells, run))
        index = {id(cell): i for i, cell in enumerate(cells)}
        pending: dict[str, tuple[int, int]] = {}  # test id -> (run, cell index), oldest first
        last_progress = time.monotonic()
        while queue or pending:
            while queue and (not pending or len(pending) + len(queue[0].cells) <= MAX_IN_FLIGHT):
                unit = queue.popleft()
                for test_id, cell in self._submit(unit):
                    pending[test_id] = (unit.run, index[id(cell)])
            # A server's queue is first in, first out: only the oldest test is worth asking
            # about until it is final, so a poll costs one request, not one per test.
            finished = False
            for test_id in list(pending):
                report = self.client.get_test(test_id)
                if not report.status.is_final:
                    break
                on_report(report, *pending.pop(test_id))
                finished = True
            if finished:
                last_progress = time.monotonic()
                continue
            waited = time.monotonic() - last_progress
            if self.wait_timeout is not None and waited > self.wait_timeout:
                raise RequestTimeoutError(
                    f"no test finished for {waited:.0f} s (the runner's wait_timeout); "
                    f"{len(pending)} still unfinished on the server"
                )
            time.sleep(self.poll_interval)

    def _submit(self, unit: _Unit) -> builtins.list[tuple[str, MatrixCell]]:
        """Create the unit's tests on the server: (test id, cell) in submission order."""
        first = unit.cells[0]
        if unit.batch_type is None:
            created = self.client.create_test(
                first.url, first.device.value, first.location.value, first.config,
                build=first.build,
            )
            if created.id is None:
                raise APIError(201, "unexpected_response",
                               "the server created a test without an id")
            return [(created.id, first)]
        batch = self.client.create_batch(
            list(dict.fromkeys(c.url for c in unit.cells)),
            list(dict.fromkeys(c.device.value for c in unit.cells)),
            list(dict.fromkeys(c.location.value for c in unit.cells)),
            unit.batch_type,
            first.config,
            build=first.build,
        )
        by_target = {(c.url, c.device, c.location): c for c in unit.cells}
        submitted: builtins.list[tuple[str, MatrixCell]] = []
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

    def _run_flow(self, cell: FlowCell) -> NoReturn:
        """User flows need the local engine: the API has no flow endpoint yet."""
        raise InvalidInputError(
            f"flow {cell.flow.name!r}: user flows run on the local engine only (LocalRunner); "
            "the Web Performance Testing API has no flow endpoint (docs/flows.md)"
        )

    def ttfb(self, url: str, region: str) -> TTFBResult:
        return self.client.create_ttfb_test(url, region)

    def locations(self) -> builtins.list[LocationInfo]:
        return self.client.list_locations()

    def ttfb_regions(self) -> builtins.list[TTFBRegion]:
        return self.client.list_ttfb_regions()

    def get(self, id: str) -> TestReport | BatchReport:
        """A test (``lt_…``) or a batch (``lbt_…``) by id."""
        if id.startswith("lt_"):
            return self.client.get_test(id)
        if id.startswith("lbt_"):
            return self.client.get_batch(id)
        # As the LocalRunner: an id of neither kind names nothing that exists.
        raise NotFoundError(f"no test or batch with id {id[:100]!r} (ids start lt_ or lbt_)")

    def _list_page(self, query: TestQuery) -> builtins.list[TestReport]:
        return self.client.list_tests(
            query.page, query.per_page,
            created_at_gt=query.created_at_gt, created_at_gte=query.created_at_gte,
            created_at_lt=query.created_at_lt, created_at_lte=query.created_at_lte,
            branch=query.branch, commit=query.commit,
        )

    def _read_resource(self, test_id: str, name: str) -> str | None:
        try:
            return self.client.get_resource(test_id, name)
        except APINotFoundError:
            # 404 says "no such test" or "no such resource": asking for the test tells which
            # (it raises for an unknown test).
            self.client.get_test(test_id)
            return None

    def close(self) -> None:
        self.client.close()

