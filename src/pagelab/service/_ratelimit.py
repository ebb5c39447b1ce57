"""Per-key rate limiting: a token bucket per caller, in memory (one server) or in the
PostgreSQL store (every server of a team store counts one budget)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pagelab.store import KeyCheck, PgConnection, check_key, take_rate_token

if TYPE_CHECKING:
    import psycopg

__all__ = ["ConcurrencyGate", "RateDecision", "RateLimiter", "SharedRateLimiter"]


@dataclass(frozen=True, slots=True)
class RateDecision:
    """The outcome for one request, with what the ``X-RateLimit-*`` headers report."""

    allowed: bool
    limit: int
    remaining: int
    #: Seconds until the bucket is full again.
    reset: int
    #: Seconds until one request is allowed (0 when allowed).
    retry_after: int

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers


class RateLimiter:
    """``limit`` requests per minute per caller, with bursts up to ``limit``.

    A token bucket rather than fixed windows: a caller cannot send twice the limit across a
    window edge, and a caller that waits ``Retry-After`` seconds is always let through.
    State is per process, which is enough for the one-process server.
    """

    def __init__(self, limit_per_minute: int, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit_per_minute
        self._rate = limit_per_minute / 60.0  # tokens per second
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # caller -> (tokens, at)
        self._lock = threading.Lock()

    def check(self, caller: str) -> RateDecision:
        """Take one token for ``caller`` if there is one."""
        with self._lock:
            now = self._clock()
            tokens, at = self._buckets.get(caller, (float(self.limit), now))
            tokens = min(float(self.limit), tokens + (now - at) * self._rate)
            allowed = tokens >= 1.0
            if allowed:
                tokens -= 1.0
            self._buckets[caller] = (tokens, now)
            if len(self._buckets) > 10_000:
                self._forget_full_buckets(now)
        return self.decision(allowed, tokens)

    def decision(self, allowed: bool, tokens: float) -> RateDecision:
        """The decision of a check that left ``tokens`` in the bucket."""
        return RateDecision(
            allowed=allowed,
            limit=self.limit,
            remaining=math.floor(tokens),
            reset=math.ceil((self.limit - tokens) / self._rate),
            retry_after=0 if allowed else max(1, math.ceil((1.0 - tokens) / self._rate)),
        )

    def _forget_full_buckets(self, now: float) -> None:
        # A bucket that has refilled is the same as no bucket: keeps memory bounded.
        self._buckets = {
            caller: (tokens, at)
            for caller, (tokens, at) in self._buckets.items()
            if tokens + (now - at) * self._rate < self.limit
        }


class SharedRateLimiter(RateLimiter):
    """:class:`RateLimiter`'s buckets kept in the PostgreSQL store, so the limit holds per
    key across every server. ``connection`` gives the calling thread's connection (one
    short upsert, on the database's clock); ``loop_connection`` one of the event loop's,
    for :meth:`check_key`."""

    def __init__(
        self, limit_per_minute: int, *, name: str, connection: Callable[[], PgConnection],
        loop_connection: Callable[[], AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]],
    ) -> None:
        super().__init__(limit_per_minute)
        self._name = name
        self._connection = connection
        self._loop_connection = loop_connection

    def check(self, caller: str) -> RateDecision:
        allowed, tokens = take_rate_token(self._connection(), f"{self._name}:{caller}",
                                          self.limit)
        return self.decision(allowed, tokens)

    async def check_key(self, key: str, *, test_id: str | None = None,
                        report_url: Any = None) -> tuple[KeyCheck, RateDecision | None]:
        """The key's account and the decision for its bucket (None: no such active key,
        nothing taken) and, with ``test_id``, the account's test: one round trip,
        awaited."""
        async with self._loop_connection() as conn:
            check = await check_key(conn, key, bucket=f"{self._name}:",
                                    limit_per_minute=self.limit, test_id=test_id,
                                    report_url=report_url)
        if check.account is None:
            return check, None
        return check, self.decision(check.allowed, check.tokens)


class ConcurrencyGate:
    """At most ``per_caller`` requests of one caller and ``total`` of all in progress.

    Entering never waits: a request past either bound is refused at once (the caller is
    told to retry), so slow work such as TTFB probes cannot pile up inside the server.
    """

    def __init__(self, *, per_caller: int, total: int) -> None:
        self.per_caller = per_caller
        self.total = total
        self._active: dict[str, int] = {}
        self._lock = threading.Lock()

    def enter(self, caller: str) -> Literal["ok", "caller", "total"]:
        """``ok`` (then call :meth:`leave`), or which bound is reached."""
        with self._lock:
            if sum(self._active.values()) >= self.total:
                return "total"
            if self._active.get(caller, 0) >= self.per_caller:
                return "caller"
            self._active[caller] = self._active.get(caller, 0) + 1
            return "ok"

    def leave(self, caller: str) -> None:
        with self._lock:
            left = self._active.get(caller, 0) - 1
            if left > 0:
                self._active[caller] = left
            else:
                self._active.pop(caller, None)
