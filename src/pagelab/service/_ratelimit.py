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

from pagelab.store import (
    KEY_PREFIX_LENGTH,
    KeyCheck,
    KeyRead,
    PgConnection,
    check_key,
    take_rate_token,
)

from ._key_reads import KeyReads

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


#: How long a server keeps the tokens it took for a key. Unspent ones lapse (returning them
#: would be a write), which can only make the limit stricter, never looser.
LEASE_SECONDS = 1.0
#: The most tokens a server takes for one key at once.
MAX_LEASE = 100


@dataclass(slots=True)
class _Lease:
    """Tokens a server took from a key's shared bucket, spent here without a write."""

    #: Left to spend (one is reserved before the read that checks the key, and given back
    #: if the key is wrong).
    tokens: int = 0
    #: The bucket's tokens after the last take (for ``X-RateLimit-Remaining``).
    shared: float = 0.0
    #: When the tokens left lapse (the clock's seconds).
    expires: float = 0.0
    #: What the next top-up asks for; how many were spent since the last take.
    size: int = 1
    spent: int = 0
    #: Whether a take asking for ``size`` is in flight (then no other request starts one).
    taking: bool = False


class SharedRateLimiter(RateLimiter):
    """:class:`RateLimiter`'s buckets kept in the PostgreSQL store, so the limit holds per
    key across every server. ``connection`` gives the calling thread's connection (one
    short upsert, on the database's clock); ``loop_connection`` one of the event loop's,
    for :meth:`check_key`.

    A busy key's tokens are taken in leases, so that most of its requests only read. A
    request that finds the lease half spent takes the next one in its own round trip,
    asking for twice as much as last time (up to a second's refill, at most
    :data:`MAX_LEASE`); after a lease lapsed unspent the next asks for what it served.
    Every request still has its key checked by the database (a revocation is seen at
    once), and the shared bucket is charged before a token is spent, so the servers
    together never admit more than the limit. The checks that only read are batched
    (:class:`~._key_reads.KeyReads`).
    """

    def __init__(
        self, limit_per_minute: int, *, name: str, connection: Callable[[], PgConnection],
        loop_connection: Callable[[], AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(limit_per_minute, clock=clock)
        self._name = name
        self._connection = connection
        self._loop_connection = loop_connection
        self._reads = KeyReads(loop_connection)
        # By key prefix: the database checks the whole key on every request. Only the
        # event loop's coroutines use it, so it needs no lock.
        self._leases: dict[str, _Lease] = {}
        self._most_per_lease = max(1, min(MAX_LEASE,
                                          math.floor(limit_per_minute * LEASE_SECONDS / 60)))

    def check(self, caller: str) -> RateDecision:
        allowed, tokens = take_rate_token(self._connection(), f"{self._name}:{caller}",
                                          self.limit)
        return self.decision(allowed, tokens)

    async def check_key(self, key: str, *, test_id: str | None = None,
                        report_url: Any = None) -> tuple[KeyCheck, RateDecision | None]:
        """The key's account and the decision for its bucket (None: no such active key,
        nothing spent) and, with ``test_id``, the account's test: one round trip,
        awaited."""
        now = self._clock()
        lease = self._lease(key[:KEY_PREFIX_LENGTH], now)
        reserved = lease.tokens >= 1
        if reserved:
            lease.tokens -= 1  # other requests may spend the rest during the round trip
        # Without a token this request must take one; with one, it takes the next lease
        # once this one is half spent, unless another request already does.
        leading = not lease.taking and (not reserved or 2 * lease.tokens < lease.size)
        take = lease.size if leading else 0 if reserved else 1
        lease.taking |= leading
        try:
            if take:
                async with self._loop_connection() as conn:
                    check = await check_key(conn, key, bucket=f"{self._name}:",
                                            limit_per_minute=self.limit, take=take,
                                            test_id=test_id, report_url=report_url)
            else:  # only reads: shares its round trip with the requests beside it
                check = await self._reads.read(KeyRead(key, test_id, report_url))
        except BaseException:
            self._settle(lease, reserved=reserved, leading=leading, granted=0)
            raise
        if check.account is None:  # a wrong key with a right prefix spends nothing
            self._settle(lease, reserved=reserved, leading=leading, granted=0)
            return check, None
        self._settle(lease, reserved=reserved, leading=leading, granted=check.granted,
                     shared=check.tokens, spent=reserved or check.granted > 0)
        if not reserved and check.granted == 0:
            return check, self.decision(False, check.tokens)
        return check, self.decision(True, lease.shared + lease.tokens)

    def _lease(self, prefix: str, now: float) -> _Lease:
        lease = self._leases.get(prefix)
        if lease is None:
            if len(self._leases) >= 10_000:
                self._leases = {p: kept for p, kept in self._leases.items()
                                if kept.expires > now or kept.taking}
            lease = self._leases[prefix] = _Lease(expires=now)
        elif now >= lease.expires and lease.tokens and not lease.taking:
            # Lapsed unspent: the key is quieter here; ask for what the last one served.
            lease.tokens, lease.size = 0, max(1, min(lease.size, lease.spent))
        return lease

    def _settle(self, lease: _Lease, *, reserved: bool, leading: bool, granted: int,
                shared: float = 0.0, spent: bool = False) -> None:
        """Record a request's outcome: its reserved token spent or given back, what its
        take granted added to the lease (one of them for itself when it had none)."""
        if reserved and not spent:
            lease.tokens += 1
        lease.spent += spent
        if leading:
            lease.taking = False
            if granted == lease.size:  # all it asked for: twice as much next time
                lease.size = min(self._most_per_lease, 2 * lease.size)
        if granted:
            lease.tokens += granted - (0 if reserved else 1)
            lease.shared, lease.spent = shared, 0
            lease.expires = self._clock() + LEASE_SECONDS


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
