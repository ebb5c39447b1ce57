"""The resources the service shares between requests: created in the lifespan, closed at
shutdown."""

from __future__ import annotations

import hashlib
import hmac
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal
from urllib.parse import quote

from pagelab.catalog import TTFB_REGIONS
from pagelab.engine import dns_server_resolver
from pagelab.store import ConnectionPool, PgConnection, PgPool, Store, link_secrets

from ._guard import TargetGuard
from ._ratelimit import ConcurrencyGate, RateLimiter, SharedRateLimiter
from ._settings import Settings

__all__ = ["ReportLinks", "Services"]

_MAX_REGION_SIZE = max(len(region.locations) for region in TTFB_REGIONS.values())
#: Discoveries (``POST /v1/discoveries``) in progress at once on the server; one per key.
_DISCOVERIES = 2


ReportKind = Literal["lighthouse-tests", "lighthouse-batch-tests"]

_DAY_S = 86_400


class ReportLinks:
    """Signed links to the hosted report pages, which expire.

    A browser cannot send ``X-API-KEY``, so a report page is opened by its link alone. The
    link carries its expiry and an HMAC of the id and the expiry under a server secret:
    ids alone are not enough to open another account's report, links stay valid across
    restarts until they expire (``lifetime``, rounded up to a whole day so a report's link
    stays the same all day), and the page also checks that the owner's key is not revoked.
    """

    def __init__(self, secrets: list[bytes], *, lifetime: timedelta) -> None:
        # The first signs; all verify (a rotation may keep the previous one for a while).
        self._secrets = secrets
        self._lifetime_s = max(1, int(lifetime.total_seconds()))

    def _digest(self, key: bytes, kind: ReportKind, report_id: str, expires: int) -> str:
        digest = hmac.new(key, f"{kind}/{report_id}/{expires}".encode(), hashlib.sha256)
        return digest.hexdigest()[:32]

    def token(self, kind: ReportKind, report_id: str, *, now: float | None = None) -> str:
        at = time.time() if now is None else now
        expires = math.ceil((at + self._lifetime_s) / _DAY_S) * _DAY_S
        return f"{expires}-{self._digest(self._secrets[0], kind, report_id, expires)}"

    def verify(self, kind: ReportKind, report_id: str, token: str,
               *, now: float | None = None) -> bool:
        expires_text, _, digest = token.partition("-")
        if not expires_text.isdigit() or len(expires_text) > 12:
            return False
        expires = int(expires_text)
        if expires <= (time.time() if now is None else now):
            return False
        # Bytes: compare_digest refuses non-ASCII text, and a token is whatever was sent.
        sent = digest.encode()
        return any(
            hmac.compare_digest(self._digest(key, kind, report_id, expires).encode(), sent)
            for key in self._secrets
        )

    def url(self, base_url: str, kind: ReportKind, report_id: str) -> str:
        """Absolute URL of the page, e.g. ``http://host/reports/lighthouse-tests/lt_…?token=…``."""
        path = f"reports/{kind}/{quote(report_id, safe='')}"
        return f"{base_url.rstrip('/')}/{path}?token={self.token(kind, report_id)}"


@dataclass(slots=True)
class Services:
    """Everything a request may need, on ``app.state.services``."""

    settings: Settings
    store: Store
    pool: ConnectionPool | PgPool
    limiter: RateLimiter
    #: Unknown keys per client address (a separate, small budget: guessing is slow).
    failed_keys: RateLimiter
    links: ReportLinks
    #: Set by the creation endpoints so the worker starts at once instead of at its next poll.
    work_available: threading.Event
    #: TTFB tests in progress (per account and in all), and the threads their probes use:
    #: never the request thread pool.
    ttfb_gate: ConcurrencyGate
    ttfb_executor: ThreadPoolExecutor
    #: The SSRF guard of the creation endpoints (its look-ups have threads of their own).
    guard: TargetGuard
    #: Discoveries in progress (one per key), and the threads they run on.
    discovery_gate: ConcurrencyGate
    discovery_executor: ThreadPoolExecutor

    @classmethod
    def open(cls, settings: Settings) -> Services:
        store = Store(settings.data_dir, retention=settings.retention,
                      database=settings.database_url, artifacts_dir=settings.artifacts_dir)
        # Kept open, sized to the requests that may hold one at once (see Settings).
        pool = store.pool(size=settings.max_db_connections, warm=2)
        with pool.connection() as conn:
            secrets = link_secrets(settings.data_dir, conn)
        limiter, failed_keys = (
            RateLimiter(settings.rate_limit_per_minute),
            RateLimiter(settings.failed_key_limit_per_minute),
        )
        if isinstance(pool, PgPool):  # one budget per key across every server
            def relaxed() -> PgConnection:
                return pool.thread_connection(relaxed=True)

            limiter = SharedRateLimiter(settings.rate_limit_per_minute, name="requests",
                                        connection=relaxed,
                                        loop_connection=pool.loop_connection)
            failed_keys = SharedRateLimiter(settings.failed_key_limit_per_minute,
                                            name="unknown-keys", connection=relaxed,
                                            loop_connection=pool.loop_connection)
        return cls(
            settings=settings,
            store=store,
            pool=pool,
            limiter=limiter,
            failed_keys=failed_keys,
            links=ReportLinks(secrets, lifetime=settings.report_link_lifetime),
            work_available=threading.Event(),
            ttfb_gate=ConcurrencyGate(
                per_caller=settings.ttfb_concurrency_per_account, total=settings.ttfb_concurrency
            ),
            # Each TTFB test probes its region's locations at once.
            ttfb_executor=ThreadPoolExecutor(
                max_workers=settings.ttfb_concurrency * _MAX_REGION_SIZE,
                thread_name_prefix="pagelab-ttfb",
            ),
            guard=TargetGuard(
                settings.target_policy,
                **({"resolver": dns_server_resolver(settings.dns_server,
                                                    timeout=settings.guard_dns_timeout)}
                   if settings.dns_server else {}),
                threads=settings.guard_dns_threads,
                timeout=settings.guard_dns_timeout,
                per_caller=settings.guard_dns_per_caller,
            ),
            discovery_gate=ConcurrencyGate(per_caller=1, total=_DISCOVERIES),
            discovery_executor=ThreadPoolExecutor(max_workers=_DISCOVERIES,
                                                  thread_name_prefix="pagelab-discovery"),
        )

    async def open_loop(self) -> None:
        """Open what the event loop's coroutines use (in the loop that serves requests)."""
        if isinstance(self.pool, PgPool):
            await self.pool.open_loop_pool(self.settings.max_db_connections)

    async def close_loop(self) -> None:
        if isinstance(self.pool, PgPool):
            await self.pool.close_loop_pool()

    def close(self) -> None:
        self.ttfb_executor.shutdown(wait=False, cancel_futures=True)
        self.discovery_executor.shutdown(wait=False, cancel_futures=True)
        self.guard.close()
        self.pool.close()
