"""The resources the service shares between requests: created in the lifespan, closed at
shutdown."""

from __future__ import annotations

import hashlib
import hmac
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from pagelab.catalog import TTFB_REGIONS
from pagelab.store import Connection, ConnectionPool, PgPool, Store, link_secrets

from ._ratelimit import ConcurrencyGate, RateLimiter, SharedRateLimiter
from ._settings import Settings

__all__ = ["ReportLinks", "Services"]

_MAX_REGION_SIZE = max(len(region.locations) for region in TTFB_REGIONS.values())


ReportKind = Literal["lighthouse-tests", "lighthouse-batch-tests"]


class ReportLinks:
    """Signed links to the hosted report pages.

    A browser cannot send ``X-API-KEY``, so a report page is opened by its link alone. The
    link carries an HMAC of the id under a server secret: ids alone are not enough to
    open another account's report, and links stay valid across restarts.
    """

    def __init__(self, secrets: list[bytes]) -> None:
        # The first signs; all verify (a rotation may keep the previous one for a while).
        self._secrets = secrets

    def token(self, kind: ReportKind, report_id: str, *, secret: bytes | None = None) -> str:
        key = self._secrets[0] if secret is None else secret
        digest = hmac.new(key, f"{kind}/{report_id}".encode(), hashlib.sha256)
        return digest.hexdigest()[:32]

    def verify(self, kind: ReportKind, report_id: str, token: str) -> bool:
        # Bytes: compare_digest refuses non-ASCII text, and a token is whatever was sent.
        sent = token.encode()
        return any(
            hmac.compare_digest(self.token(kind, report_id, secret=key).encode(), sent)
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
            def relaxed() -> Connection:
                return pool.thread_connection(relaxed=True)

            limiter = SharedRateLimiter(settings.rate_limit_per_minute, name="requests",
                                        connection=relaxed)
            failed_keys = SharedRateLimiter(settings.failed_key_limit_per_minute,
                                            name="unknown-keys", connection=relaxed)
        return cls(
            settings=settings,
            store=store,
            pool=pool,
            limiter=limiter,
            failed_keys=failed_keys,
            links=ReportLinks(secrets),
            work_available=threading.Event(),
            ttfb_gate=ConcurrencyGate(
                per_caller=settings.ttfb_concurrency_per_account, total=settings.ttfb_concurrency
            ),
            # Each TTFB test probes its region's locations at once.
            ttfb_executor=ThreadPoolExecutor(
                max_workers=settings.ttfb_concurrency * _MAX_REGION_SIZE,
                thread_name_prefix="pagelab-ttfb",
            ),
        )

    def close(self) -> None:
        self.ttfb_executor.shutdown(wait=False, cancel_futures=True)
        self.pool.close()
