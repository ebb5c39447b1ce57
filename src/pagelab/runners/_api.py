"""The runner over any server of the Web Performance Testing API."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from types import TracebackType
from typing import Self

import httpx
from pydantic import ValidationError

from pagelab._exceptions import APINotFoundError, NotFoundError
from pagelab.client import Client, RetryPolicy
from pagelab.models import (
    BatchReport,
    BatchType,
    ConfigInput,
    LighthouseTestRequest,
    LocationInfo,
    ProgressCallback,
    TestReport,
    TimeInput,
    TTFBRegion,
    TTFBResult,
    check_paging,
    coerce_config,
    epoch_ms_or_none,
    invalid_input,
)

from ._batch import plan_batch
from ._resources import ResourceReader

__all__ = ["ApiRunner"]


class ApiRunner(ResourceReader):
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

    def lighthouse(
        self,
        url: str,
        device: str = "mobile",
        location: str = "us",
        config: ConfigInput = None,
        *,
        progress: ProgressCallback | None = None,
    ) -> TestReport:
        try:
            # The LocalRunner's own check, so bad input fails alike before any request.
            request = LighthouseTestRequest.model_validate(
                {"url": url, "device": device, "location": location,
                 "config": coerce_config(config)}
            )
        except ValidationError as exc:
            raise invalid_input(exc) from exc
        created = self.client.create_test(url, device, location, request.config)
        return self.client.wait_test(
            created, timeout=self.wait_timeout, poll_interval=self.poll_interval,
            progress=progress,
        )

    def batch(
        self,
        urls: Sequence[str],
        devices: Sequence[str],
        locations: Sequence[str],
        batch_type: BatchType | str = BatchType.MULTIPLE_URLS,
        config: ConfigInput = None,
        *,
        progress: ProgressCallback | None = None,
    ) -> BatchReport:
        plan_batch(urls, devices, locations, batch_type)  # the spec's rules, checked alike
        created = self.client.create_batch(
            urls, devices, locations, batch_type, coerce_config(config)
        )
        return self.client.wait_batch(
            created, timeout=self.wait_timeout, poll_interval=self.poll_interval,
            progress=progress,
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

    def list(
        self,
        page: int = 1,
        per_page: int = 10,
        created_at_gt: TimeInput = None,
        created_at_gte: TimeInput = None,
        created_at_lt: TimeInput = None,
        created_at_lte: TimeInput = None,
    ) -> builtins.list[TestReport]:
        """A page of tests, newest first (``per_page`` 1-100)."""
        check_paging(page, per_page)
        return self.client.list_tests(
            page, per_page,
            created_at_gt=epoch_ms_or_none(created_at_gt, "created_at_gt"),
            created_at_gte=epoch_ms_or_none(created_at_gte, "created_at_gte"),
            created_at_lt=epoch_ms_or_none(created_at_lt, "created_at_lt"),
            created_at_lte=epoch_ms_or_none(created_at_lte, "created_at_lte"),
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

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
