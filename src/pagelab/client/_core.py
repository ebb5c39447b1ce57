"""What the sync and async clients share, free of I/O: building calls, reading responses,
translating errors, deciding retries and tracking a wait.

:class:`~pagelab.client.Client` and :class:`~pagelab.client.AsyncClient` differ only in
how they send a request and how they sleep.
"""

from __future__ import annotations

import email.utils
import functools
import json
import math
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from pagelab import _exceptions as errors
from pagelab.models import (
    BatchReport,
    BatchType,
    BuildInput,
    ConfigInput,
    Credits,
    ErrorBody,
    LighthouseConfig,
    LocationInfo,
    ProgressCallback,
    SiteDiscovery,
    TestReport,
    TimeInput,
    TTFBRegion,
    TTFBResult,
    build_filters,
    coerce_build,
    epoch_ms_or_none,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "BaseClient",
    "Call",
    "ConfigInput",
    "ProgressCallback",
    "RetryPolicy",
    "TimeInput",
    "Waiter",
    "report_id",
]

T = TypeVar("T")
ModelT = TypeVar("ModelT", bound=BaseModel)
ReportT = TypeVar("ReportT", TestReport, BatchReport)


#: Per request: 30 s to answer (a TTFB test of a large region takes longer: see
#: ``create_ttfb_test``), 10 s to connect.
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)

_USER_AGENT = "pagelab-client/0.1.0"

_ERRORS_BY_STATUS: dict[int, type[errors.APIError]] = {
    400: errors.BadRequestError,
    401: errors.AuthenticationError,
    402: errors.InsufficientCreditsError,
    404: errors.APINotFoundError,
    429: errors.RateLimitedError,
}

# Exceptions raised before the request reached the server: always safe to send again.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When and how long to wait before sending a request again.

    Retried: connection failures before the request was sent, ``429`` (after
    ``Retry-After`` when the server gives it) and ``503``, for every method; for
    reads (GET) also other 5xx and failures after sending. A creation (POST) is not
    repeated when the server may have acted on it, so a test is never created or charged
    twice. Without ``Retry-After`` the wait is exponential with full jitter.
    """

    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    #: A ``Retry-After`` longer than this is not waited for: the error is raised.
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        if retry_after is not None:
            return retry_after
        return random.uniform(0, min(self.backoff_max, self.backoff_base * 2**attempt))


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds (it is either seconds or an HTTP date); None if absent."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One API request and how to read its answer."""

    method: str
    path: str
    #: Reads the answer's raw body (JSON bytes); raises ValueError or ValidationError.
    parse: Callable[[bytes], T]
    params: Mapping[str, str | int] | None = None
    json: Any = None
    #: Per-call timeout override (seconds), e.g. for a TTFB test.
    timeout: float | None = None

    @property
    def idempotent(self) -> bool:
        return self.method == "GET"


def _model(model: type[ModelT]) -> Callable[[bytes], ModelT]:
    return model.model_validate_json


class _ListBody(BaseModel, Generic[T]):
    """The list endpoints' envelope, ``{"data": [...]}`` (other keys ignored)."""

    data: list[T]


@functools.cache
def _listed(model: type[T]) -> Callable[[bytes], list[T]]:
    # One validate_json of the whole body with an adapter built once per item type: no
    # intermediate dicts from json.loads, no per-item call (100 000 reports: 1.8x faster,
    # benchmarks/frames.py).
    adapter: TypeAdapter[_ListBody[T]] = TypeAdapter(_ListBody[model])  # type: ignore[valid-type]

    def parse(body: bytes) -> list[T]:
        return adapter.validate_json(body).data

    return parse


def _string(body: bytes) -> str:
    value = json.loads(body)
    if not isinstance(value, str):
        raise ValueError("expected a JSON string")
    return value


def _config_json(config: ConfigInput) -> Any:
    if config is None:
        return None
    if isinstance(config, LighthouseConfig):
        return config.model_dump(mode="json", exclude_none=True)
    return dict(config)


def _path_id(value: str, name: str) -> str:
    if not isinstance(value, str) or not value or "/" in value:
        raise errors.InvalidInputError(f"{name}: expected an id such as lt_… or lbt_…")
    return value


def report_id(report: TestReport | BatchReport | str) -> str:
    """The id of a report, or the id itself."""
    value = report if isinstance(report, str) else report.id
    if not value:
        raise errors.InvalidInputError("the report has no id: pass one returned by the server")
    return value


class Waiter(Generic[ReportT]):
    """Tracks one wait: the deadline, the last statuses seen, the progress callback."""

    def __init__(
        self,
        id: str,
        *,
        timeout: float | None,
        poll_interval: float,
        progress: ProgressCallback | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if poll_interval <= 0:
            raise errors.InvalidInputError("poll_interval: must be positive")
        self.id = id
        self._clock = clock
        self._deadline = clock() + timeout if timeout is not None else math.inf
        self._poll_interval = poll_interval
        self._progress = progress
        self._last_seen: object = None
        self.last: ReportT | None = None

    @staticmethod
    def _signature(report: TestReport | BatchReport) -> object:
        if isinstance(report, BatchReport):
            return (report.status, tuple(item.status for item in report.reports))
        return report.status

    @staticmethod
    def _is_final(report: TestReport | BatchReport) -> bool:
        # A batch is final when every item is, whatever its own status says: some servers
        # of this API report "completed" late or never.
        if isinstance(report, BatchReport):
            return report.is_final
        return report.status.is_final

    def observe(self, report: ReportT) -> bool:
        """Record a fetched report (calling ``progress`` on a change); True when final."""
        self.last = report
        signature = self._signature(report)
        if signature != self._last_seen:
            self._last_seen = signature
            if self._progress is not None:
                self._progress(report)
        return self._is_final(report)

    def next_sleep(self) -> float:
        """Seconds to sleep before the next poll; raises RequestTimeoutError past the deadline."""
        remaining = self._deadline - self._clock()
        if remaining <= 0:
            status = self.last.status.value if self.last is not None else "unknown"
            raise errors.RequestTimeoutError(
                f"{self.id} is not final after the wait timeout (last status: {status})"
            )
        return min(self._poll_interval, remaining)


class BaseClient:
    """Configuration, request building and response reading shared by both clients.

    ``base_url`` defaults to ``$PAGELAB_API_URL`` and ``api_key`` to ``$PAGELAB_API_KEY``
    (no key: only the public endpoints answer).
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        url = base_url or os.environ.get("PAGELAB_API_URL")
        if not url:
            raise errors.InvalidInputError("base_url: not given, and PAGELAB_API_URL is not set")
        self.base_url = url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("PAGELAB_API_KEY")
        if isinstance(timeout, httpx.Timeout):
            self.timeout = timeout
        else:
            self.timeout = DEFAULT_TIMEOUT if timeout is None else httpx.Timeout(timeout)
        self.retry = retry or RetryPolicy()
        self.headers = {"User-Agent": _USER_AGENT, "Accept": "application/json"}
        if self.api_key:
            self.headers["X-API-KEY"] = self.api_key

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}({self.base_url!r})"

    # -- calls -------------------------------------------------------------------------

    @staticmethod
    def _create_test_call(
        url: str, device: str, location: str, config: ConfigInput, build: BuildInput = None,
    ) -> Call[TestReport]:
        body: dict[str, Any] = {"url": url, "device": str(device), "location": str(location)}
        if config is not None:
            body["config"] = _config_json(config)
        _add_build(body, build)
        return Call("POST", "/v1/lighthouse-tests", _model(TestReport), json=body)

    @staticmethod
    def _create_batch_call(
        urls: Sequence[str],
        devices: Sequence[str],
        locations: Sequence[str],
        batch_type: BatchType | str,
        config: ConfigInput,
        build: BuildInput = None,
    ) -> Call[BatchReport]:
        for name, values in (("urls", urls), ("devices", devices), ("locations", locations)):
            if isinstance(values, str):
                raise errors.InvalidInputError(f"{name}: expected a list, got a string")
        body: dict[str, Any] = {
            "urls": list(urls),
            "devices": [str(d) for d in devices],
            "locations": [str(loc) for loc in locations],
            "batch_type": str(batch_type),
        }
        if config is not None:
            body["config"] = _config_json(config)
        _add_build(body, build)
        return Call("POST", "/v1/lighthouse-batch-tests", _model(BatchReport), json=body)

    @staticmethod
    def _create_ttfb_call(url: str, region: str, timeout: float | None) -> Call[TTFBResult]:
        return Call(
            "POST", "/v1/ttfb-tests", _model(TTFBResult), json={"url": url, "region": region},
            timeout=timeout,
        )

    @staticmethod
    def _discover_call(
        url: str, max_pages: int, include: Sequence[str], exclude: Sequence[str],
        depth: int, per_template: int, seed: int, timeout: float | None,
    ) -> Call[SiteDiscovery]:
        for name, globs in (("include", include), ("exclude", exclude)):
            if isinstance(globs, str):
                raise errors.InvalidInputError(f"{name}: expected a list of globs, got a string")
        body: dict[str, Any] = {
            "url": url, "max_pages": max_pages, "include": list(include),
            "exclude": list(exclude), "depth": depth, "per_template": per_template,
            "seed": seed,
        }
        return Call("POST", "/v1/discoveries", _model(SiteDiscovery), json=body,
                    timeout=timeout)

    @staticmethod
    def _get_test_call(test_id: str) -> Call[TestReport]:
        return Call("GET", f"/v1/lighthouse-tests/{_path_id(test_id, 'id')}", _model(TestReport))

    @staticmethod
    def _get_batch_call(batch_id: str) -> Call[BatchReport]:
        path = f"/v1/lighthouse-batch-tests/{_path_id(batch_id, 'id')}"
        return Call("GET", path, _model(BatchReport))

    @staticmethod
    def _list_tests_call(
        page: int,
        per_page: int,
        created_at_gt: TimeInput,
        created_at_gte: TimeInput,
        created_at_lt: TimeInput,
        created_at_lte: TimeInput,
        branch: str | None = None,
        commit: str | None = None,
    ) -> Call[list[TestReport]]:
        params: dict[str, str | int] = {"page": page, "per_page": per_page}
        for name, text in zip(("branch", "commit"), build_filters(branch, commit), strict=True):
            if text is not None:
                params[name] = text
        for name, value in (
            ("created_at_gt", created_at_gt),
            ("created_at_gte", created_at_gte),
            ("created_at_lt", created_at_lt),
            ("created_at_lte", created_at_lte),
        ):
            ms = epoch_ms_or_none(value, name)
            if ms is not None:
                params[name] = ms
        return Call("GET", "/v1/lighthouse-tests", _listed(TestReport), params=params)

    @staticmethod
    def _get_resource_call(test_id: str, resource_name: str) -> Call[str]:
        path = (
            f"/v1/lighthouse-tests/{_path_id(test_id, 'id')}/resources/"
            f"{_path_id(resource_name, 'resource_name')}"
        )
        return Call("GET", path, _string)

    @staticmethod
    def _credits_call() -> Call[Credits]:
        return Call("GET", "/v1/account/credits", _model(Credits))

    @staticmethod
    def _locations_call() -> Call[list[LocationInfo]]:
        return Call("GET", "/v1/locations", _listed(LocationInfo))

    @staticmethod
    def _ttfb_regions_call() -> Call[list[TTFBRegion]]:
        return Call("GET", "/v1/ttfb-regions", _listed(TTFBRegion))

    @staticmethod
    def _health_call() -> Call[dict[str, Any]]:
        def parse(body: bytes) -> dict[str, Any]:
            value = json.loads(body)
            if not isinstance(value, dict):
                raise ValueError("expected an object")
            return value

        return Call("GET", "/healthz", parse)

    # -- responses ---------------------------------------------------------------------

    def _request_kwargs(self, call: Call[Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"params": call.params, "json": call.json}
        if call.timeout is not None:
            kwargs["timeout"] = httpx.Timeout(call.timeout, connect=self.timeout.connect)
        return kwargs

    def _retry_delay(
        self,
        call: Call[Any],
        attempt: int,
        response: httpx.Response | None = None,
        exc: httpx.HTTPError | None = None,
    ) -> float | None:
        """Seconds to wait before sending ``call`` again, or None to stop here."""
        if attempt >= self.retry.max_retries:
            return None
        if exc is not None:
            retriable = isinstance(exc, _NOT_SENT) or (
                call.idempotent and isinstance(exc, httpx.TransportError)
            )
            return self.retry.delay(attempt) if retriable else None
        assert response is not None
        status = response.status_code
        if status == 429 or status == 503 or (call.idempotent and status in (500, 502, 504)):
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            if retry_after is not None and retry_after > self.retry.max_retry_after:
                return None
            return self.retry.delay(attempt, retry_after)
        return None

    @staticmethod
    def _error(response: httpx.Response) -> errors.APIError:
        status = response.status_code
        try:
            body = ErrorBody.model_validate_json(response.content)
            code, message = body.code, body.message
        except ValidationError:
            code = f"http_{status}"
            message = response.text[:500].strip() or response.reason_phrase
        cls = _ERRORS_BY_STATUS.get(status, errors.ServerError if status >= 500 else
                                    errors.APIError)
        error = cls(status, code, message)
        if isinstance(error, errors.RateLimitedError):
            error.retry_after = parse_retry_after(response.headers.get("Retry-After"))
        return error

    def _result(self, call: Call[T], response: httpx.Response) -> T:
        if not response.is_success:
            raise self._error(response)
        try:
            return call.parse(response.content)
        except (ValueError, ValidationError) as exc:
            raise errors.APIError(
                response.status_code,
                "invalid_response",
                f"{call.method} {call.path}: the answer does not match the API ({exc})",
            ) from exc

    @staticmethod
    def _transport_error(exc: httpx.HTTPError, call: Call[Any]) -> errors.TransportError:
        where = f"{call.method} {call.path}"
        if isinstance(exc, httpx.TimeoutException):
            return errors.RequestTimeoutError(f"{where}: timed out ({type(exc).__name__})")
        return errors.TransportError(f"{where}: {type(exc).__name__}: {exc}")


def _add_build(body: dict[str, Any], build: BuildInput) -> None:
    """``body["build"]``, pagelab's extension, when a build is given (a client that sends
    none sends the spec's body)."""
    measured = coerce_build(build)
    if measured is not None:
        body["build"] = measured.model_dump(mode="json", exclude_none=True)
