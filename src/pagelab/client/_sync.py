"""The synchronous client."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

import httpx

from pagelab._closing import Closing
from pagelab.models import (
    DEFAULT_DEPTH,
    DEFAULT_MAX_PAGES,
    DEFAULT_PER_TEMPLATE,
    BatchReport,
    BatchType,
    BuildInput,
    Credits,
    LocationInfo,
    SiteDiscovery,
    TestReport,
    TTFBRegion,
    TTFBResult,
)

from ._core import (
    BaseClient,
    Call,
    ConfigInput,
    ProgressCallback,
    RetryPolicy,
    TimeInput,
    Waiter,
    report_id,
)

__all__ = ["Client"]

T = TypeVar("T")


class Client(BaseClient, Closing):
    """A client of any server of the Web Performance Testing API, over ``httpx.Client``.

    Methods return typed models and raise :class:`~pagelab.APIError` subclasses for error
    answers, :class:`~pagelab.TransportError` when the server cannot be reached. Use as a
    context manager, or call :meth:`close`::

        with Client("http://127.0.0.1:8000", api_key) as client:
            report = client.wait_test(client.create_test("https://example.com/"))
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout | None = None,
        retry: RetryPolicy | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        super().__init__(base_url, api_key, timeout=timeout, retry=retry)
        #: The underlying httpx client (pass your own for proxies, TLS or transports).
        self.http = http_client or httpx.Client()
        self.http.base_url = httpx.URL(self.base_url)
        self.http.headers.update(self.headers)
        self.http.timeout = self.timeout

    def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            try:
                response = self.http.request(
                    call.method, call.path, **self._request_kwargs(call)
                )
            except httpx.HTTPError as exc:
                delay = self._retry_delay(call, attempt, exc=exc)
                if delay is None:
                    raise self._transport_error(exc, call) from exc
            else:
                delay = self._retry_delay(call, attempt, response=response)
                if delay is None:
                    return self._result(call, response)
            time.sleep(delay)
            attempt += 1

    # -- endpoints ---------------------------------------------------------------------

    def create_test(
        self, url: str, device: str = "mobile", location: str = "us", config: ConfigInput = None,
        *, build: BuildInput = None,
    ) -> TestReport:
        """``POST /v1/lighthouse-tests``: queue a test (returned ``idle``); ``build``: the
        build it measures (pagelab's extension, docs/history.md)."""
        return self._send(self._create_test_call(url, device, location, config, build))

    def create_batch(
        self,
        urls: Sequence[str],
        devices: Sequence[str],
        locations: Sequence[str],
        batch_type: BatchType | str,
        config: ConfigInput = None,
        *,
        build: BuildInput = None,
    ) -> BatchReport:
        """``POST /v1/lighthouse-batch-tests``: queue one test per item (each of ``build``)."""
        call = self._create_batch_call(urls, devices, locations, batch_type, config, build)
        return self._send(call)

    def create_ttfb_test(
        self, url: str, region: str, *, timeout: float = 300.0
    ) -> TTFBResult:
        """``POST /v1/ttfb-tests``: measured while the request waits (``timeout`` s)."""
        return self._send(self._create_ttfb_call(url, region, timeout))

    def discover(
        self,
        url: str,
        *,
        max_pages: int = DEFAULT_MAX_PAGES,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        depth: int = DEFAULT_DEPTH,
        per_template: int = DEFAULT_PER_TEMPLATE,
        seed: int = 0,
        timeout: float = 300.0,
    ) -> SiteDiscovery:
        """``POST /v1/discoveries`` (a pagelab extension): the server discovers the site's
        pages under its own egress rules, groups them by template and samples each, while
        the request waits (``timeout`` s). docs/api.md."""
        return self._send(self._discover_call(
            url, max_pages, include, exclude, depth, per_template, seed, timeout))

    def get_test(self, test_id: str) -> TestReport:
        """``GET /v1/lighthouse-tests/{id}``."""
        return self._send(self._get_test_call(test_id))

    def get_batch(self, batch_id: str) -> BatchReport:
        """``GET /v1/lighthouse-batch-tests/{id}``."""
        return self._send(self._get_batch_call(batch_id))

    def list_tests(
        self,
        page: int = 1,
        per_page: int = 10,
        *,
        created_at_gt: TimeInput = None,
        created_at_gte: TimeInput = None,
        created_at_lt: TimeInput = None,
        created_at_lte: TimeInput = None,
        branch: str | None = None,
        commit: str | None = None,
    ) -> list[TestReport]:
        """``GET /v1/lighthouse-tests``: one page, newest first (``branch`` / ``commit``:
        only that branch's or build's tests, pagelab's extension)."""
        return self._send(self._list_tests_call(
            page, per_page, created_at_gt, created_at_gte, created_at_lt, created_at_lte,
            branch, commit,
        ))

    def iter_tests(
        self,
        *,
        per_page: int = 100,
        created_at_gt: TimeInput = None,
        created_at_gte: TimeInput = None,
        created_at_lt: TimeInput = None,
        created_at_lte: TimeInput = None,
    ) -> Iterator[TestReport]:
        """Every test matching the filters, newest first, page after page."""
        page = 1
        while batch := self.list_tests(
            page, per_page, created_at_gt=created_at_gt, created_at_gte=created_at_gte,
            created_at_lt=created_at_lt, created_at_lte=created_at_lte,
        ):
            yield from batch
            page += 1

    def get_resource(self, test_id: str, resource_name: str) -> str:
        """``GET /v1/lighthouse-tests/{id}/resources/{resource_name}``: one string
        (``lighthouse-json``, ``html-report``, ``screenshot``, ``filmstrip``, ``video``)."""
        return self._send(self._get_resource_call(test_id, resource_name))

    def get_credits(self) -> Credits:
        """``GET /v1/account/credits``."""
        return self._send(self._credits_call())

    def list_locations(self) -> list[LocationInfo]:
        """``GET /v1/locations``."""
        return self._send(self._locations_call())

    def list_ttfb_regions(self) -> list[TTFBRegion]:
        """``GET /v1/ttfb-regions``."""
        return self._send(self._ttfb_regions_call())

    def health(self) -> dict[str, Any]:
        """``GET /healthz`` (pagelab servers)."""
        return self._send(self._health_call())

    # -- waiting -----------------------------------------------------------------------

    def wait_test(
        self,
        test: TestReport | str,
        *,
        timeout: float | None = 900.0,
        poll_interval: float = 2.0,
        progress: ProgressCallback | None = None,
    ) -> TestReport:
        """Poll until the test is ``success`` or ``failed``;
        :class:`~pagelab.RequestTimeoutError` after ``timeout`` seconds (None: no limit)."""
        waiter: Waiter[TestReport] = Waiter(
            report_id(test), timeout=timeout, poll_interval=poll_interval, progress=progress
        )
        # A report passed in is the first observation: no request if it is already final.
        report = test if isinstance(test, TestReport) else self.get_test(waiter.id)
        while not waiter.observe(report):
            time.sleep(waiter.next_sleep())
            report = self.get_test(waiter.id)
        return report

    def wait_batch(
        self,
        batch: BatchReport | str,
        *,
        timeout: float | None = 3600.0,
        poll_interval: float = 2.0,
        progress: ProgressCallback | None = None,
    ) -> BatchReport:
        """Poll until every item of the batch is final (whatever the batch status says)."""
        waiter: Waiter[BatchReport] = Waiter(
            report_id(batch), timeout=timeout, poll_interval=poll_interval, progress=progress
        )
        # A report passed in is the first observation: no request if it is already final.
        report = batch if isinstance(batch, BatchReport) else self.get_batch(waiter.id)
        while not waiter.observe(report):
            time.sleep(waiter.next_sleep())
            report = self.get_batch(waiter.id)
        return report

    # -- lifetime ----------------------------------------------------------------------

    def close(self) -> None:
        self.http.close()


