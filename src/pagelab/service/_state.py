"""The resources the service shares between requests: created in the lifespan, closed at
shutdown."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from pagelab.catalog import TTFB_REGIONS
from pagelab.store import Store, link_secrets

from ._ratelimit import ConcurrencyGate, RateLimiter
from ._settings import Settings

__all__ = ["ConnectionPool", "ReportLinks", "Services"]

_MAX_REGION_SIZE = max(len(region.locations) for region in TTFB_REGIONS.values())


class ConnectionPool:
    """Migrated SQLite connections reused across request threads.

    Opening a store connection runs the migration check under a write lock, too costly
    per request. Idle connections are kept (up to ``max_idle``); a request borrows one for
    its duration. At most ``max_open`` are open at once (each holds file descriptors for
    the database, its WAL and shared memory): a borrower past that waits. SQLite
    serialises writers itself (WAL, busy timeout).
    """

    def __init__(self, store: Store, *, max_idle: int = 8, max_open: int = 16) -> None:
        self._store = store
        self._max_idle = min(max_idle, max_open)
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._open = threading.BoundedSemaphore(max_open)
        self._closed = False

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        self._open.acquire()
        try:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                conn = self._store.connect()
            try:
                yield conn
            finally:
                if conn.in_transaction:  # an error escaped a transaction block
                    conn.rollback()
                with self._lock:
                    keep = not self._closed and len(self._idle) < self._max_idle
                    if keep:
                        self._idle.append(conn)
                if not keep:
                    conn.close()
        finally:
            self._open.release()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


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
    pool: ConnectionPool
    limiter: RateLimiter
    links: ReportLinks
    #: Set by the creation endpoints so the worker starts at once instead of at its next poll.
    work_available: threading.Event
    #: TTFB tests in progress (per account and in all), and the threads their probes use:
    #: never the request thread pool.
    ttfb_gate: ConcurrencyGate
    ttfb_executor: ThreadPoolExecutor

    @classmethod
    def open(cls, settings: Settings) -> Services:
        store = Store(settings.data_dir, retention=settings.retention)
        pool = ConnectionPool(store, max_open=settings.max_db_connections)
        with pool.connection() as conn:
            secrets = link_secrets(settings.data_dir, conn)
        return cls(
            settings=settings,
            store=store,
            pool=pool,
            limiter=RateLimiter(settings.rate_limit_per_minute),
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
