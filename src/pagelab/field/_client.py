"""The client of the Chrome UX Report API: the key, the endpoint, retries, errors, the cache.

The key goes in the ``X-Goog-Api-Key`` header, which Google's APIs read like the ``key=``
query parameter, so it is in no URL httpx logs or an error quotes; it is in no repr, no
message and no cached file.
"""

from __future__ import annotations

import os
import time
from typing import Any

import httpx
from pydantic import SecretStr

from pagelab.client import RetryPolicy, parse_retry_after

from ._cache import Answer, AnswerCache
from ._errors import (
    FieldError,
    FieldKeyError,
    FieldNotFoundError,
    FieldQuotaError,
    FieldTransportError,
)

__all__ = [
    "DEFAULT_ENDPOINT",
    "ENDPOINT_ENV",
    "HISTORY",
    "KEY_ENV",
    "RECORD",
    "CruxClient",
    "key_configured",
    "not_found",
]

#: The API's documented base URL.
DEFAULT_ENDPOINT = "https://chromeuxreport.googleapis.com/v1"
KEY_ENV = "PAGELAB_CRUX_API_KEY"
ENDPOINT_ENV = "PAGELAB_CRUX_ENDPOINT"
#: The two methods: the last 28 days, and the weekly history (about six months).
RECORD = "records:queryRecord"
HISTORY = "records:queryHistoryRecord"

_TIMEOUT = httpx.Timeout(20.0, connect=10.0)
#: Retried: the quota's short-term limit, and the server's passing failures.
_RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})


def key_configured() -> bool:
    """Whether ``PAGELAB_CRUX_API_KEY`` holds a key."""
    return bool(os.environ.get(KEY_ENV))


class CruxClient:
    """Asks the API one query at a time; answers of the day come from ``cache``."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        endpoint: str | None = None,
        cache: AnswerCache | None = None,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get(KEY_ENV)
        # A SecretStr shows as '**********' in any repr, vars() or traceback's locals.
        self._key = SecretStr(key) if key else None
        base = endpoint or os.environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT
        self.endpoint = base.rstrip("/")
        self.cache = cache if cache is not None else AnswerCache()
        self.retry = retry if retry is not None else RetryPolicy()
        self._transport = transport

    def __repr__(self) -> str:
        key = "set" if self._key else "missing"
        return f"<CruxClient endpoint={self.endpoint!r} key={key}>"

    def query(self, method: str, query: dict[str, Any], *, refresh: bool = False) -> Answer:
        """The answer to ``query`` (``url`` or ``origin``, ``formFactor``...) at ``method``:
        today's from the cache unless ``refresh``, else the API's (kept for the day). A 200
        or a 404 is returned; anything else raises a :class:`FieldError`."""
        if not refresh:
            saved = self.cache.get(method, query)
            if saved is not None:
                return saved
        answer = self._ask(method, query)
        self.cache.put(method, query, answer)
        return answer

    def _ask(self, method: str, query: dict[str, Any]) -> Answer:
        if self._key is None:
            raise FieldKeyError(
                f"no Chrome UX Report API key: pass api_key= or set {KEY_ENV} (a Google Cloud "
                "API key with the Chrome UX Report API enabled)")
        url = f"{self.endpoint}/{method}"
        headers = {"X-Goog-Api-Key": self._key.get_secret_value(),
                   "Accept": "application/json"}
        attempt = 0
        with httpx.Client(timeout=_TIMEOUT, transport=self._transport,
                          follow_redirects=False) as http:
            while True:
                try:
                    response = http.post(url, json=query, headers=headers)
                except httpx.TransportError as exc:
                    if attempt < self.retry.max_retries:
                        time.sleep(self.retry.delay(attempt))
                        attempt += 1
                        continue
                    raise FieldTransportError(
                        f"cannot reach the Chrome UX Report API at {self.endpoint} after "
                        f"{attempt + 1} attempts: {type(exc).__name__}") from exc
                if response.status_code in _RETRIED_STATUSES and attempt < self.retry.max_retries:
                    wait = parse_retry_after(response.headers.get("Retry-After"))
                    if wait is None or wait <= self.retry.max_retry_after:
                        time.sleep(self.retry.delay(attempt, wait))
                        attempt += 1
                        continue
                return self._answer(response, query)

    def _answer(self, response: httpx.Response, query: dict[str, Any]) -> Answer:
        status = response.status_code
        try:
            body = response.json()
        except ValueError:
            body = None
        if status == 200 and isinstance(body, dict):
            return Answer(200, body)
        if status == 404:
            return Answer(404, body if isinstance(body, dict) else {})
        error = body.get("error") if isinstance(body, dict) else None
        detail = error if isinstance(error, dict) else {}
        reason = _reason(detail)
        api_status = str(detail.get("status") or status)
        if status == 429:
            quota = FieldQuotaError(
                "the Chrome UX Report API key's quota is spent (429 "
                f"{api_status}); ask again later{_after(response)}")
            quota.retry_after = parse_retry_after(response.headers.get("Retry-After"))
            raise quota
        if status in (401, 403) or reason.startswith("API_KEY") or (
                status == 400 and "api key" in str(detail.get("message", "")).lower()):
            raise FieldKeyError(
                f"the Chrome UX Report API refused the API key ({status} "
                f"{reason or api_status}): check api_key= or {KEY_ENV}, and that the key's "
                "project has the Chrome UX Report API enabled")
        message = str(detail.get("message") or response.reason_phrase or "no message")
        raise FieldError(
            f"the Chrome UX Report API answered {status} {api_status} to "
            f"{_asked(query)}: {message[:300]}")


def _reason(detail: dict[str, Any]) -> str:
    """Google's ``ErrorInfo.reason`` (``API_KEY_INVALID``...) when the error body has one."""
    for item in detail.get("details") or []:
        if isinstance(item, dict) and isinstance(item.get("reason"), str):
            return str(item["reason"])
    return ""


def _after(response: httpx.Response) -> str:
    wait = parse_retry_after(response.headers.get("Retry-After"))
    return f" (Retry-After: {wait:g} s)" if wait is not None else ""


def _asked(query: dict[str, Any]) -> str:
    what = f"origin {query['origin']}" if "origin" in query else f"page {query.get('url')}"
    form = query.get("formFactor")
    return f"{what} ({form})" if form else what


def not_found(query: dict[str, Any]) -> FieldNotFoundError:
    """The error for a 404 to ``query``: which page or origin, and what to try instead."""
    form = query.get("formFactor")
    on = f" on {form}" if form else ""
    if "origin" in query:
        return FieldNotFoundError(
            f"the Chrome UX Report has no data for the origin {query['origin']}{on}: too few "
            "Chrome users in the last 28 days" + ("; try another form factor" if form else ""),
            level="origin", target=str(query["origin"]), form_factor=form)
    return FieldNotFoundError(
        f"the Chrome UX Report has no data for the page {query.get('url')}{on}: too few "
        "Chrome users in the last 28 days; try its origin (origin=..., or --origin)",
        level="page", target=str(query.get("url")), form_factor=form)
