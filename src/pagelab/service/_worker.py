"""The in-process worker: runs queued tests on the local engine, one at a time, and keeps
the store tidy (expired tests deleted, engine failures refunded)."""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import filelock

from pagelab._exceptions import EngineError, StoreError
from pagelab.engine import (
    ENGINE_CRASHED,
    BrowserSandbox,
    Engine,
    LazyEngine,
    dns_server_resolver,
)
from pagelab.models import ENGINE_UNAVAILABLE, LighthouseError
from pagelab.runners import execute_test
from pagelab.store import (
    claim_queued_test,
    delete_expired,
    fail_unfinished_test,
    queue_counts,
    refund_engine_failures,
    renew_lease,
    requeue_interrupted,
    truncate_wal,
)

from ._settings import Settings
from ._state import Services

__all__ = ["Worker", "sandbox_warning"]

logger = logging.getLogger("pagelab.service.worker")


def sandbox_warning(browser: BrowserSandbox) -> str:
    """The operator's warning for a browser without its sandbox."""
    return (f"Chromium runs without its sandbox (--no-sandbox) as {browser.user}: "
            f"{browser.reason or 'unknown reason'} (docs/security.md, \"Browser sandbox\")")



class Worker:
    """A daemon thread. With ``run_tests`` on SQLite it owns the queue of the data dir: it
    takes a file lock (one queue owner per data dir), requeues tests a previous server left
    ``active``, then runs ``idle`` tests oldest first through the same code the LocalRunner
    uses, so the engine lock keeps every Lighthouse run on the machine serial.

    On PostgreSQL every server's worker takes from the one queue: each test is claimed
    with a lease (``FOR UPDATE SKIP LOCKED``, :func:`~pagelab.store.claim_queued_test`)
    that the worker renews while the test runs; a test whose server died is claimed again
    by another once its lease has run out. No file lock, no requeue at start (the other
    servers' running tests are theirs)."""

    def __init__(self, services: Services) -> None:
        self._services = services
        self.run_tests = services.settings.worker
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="pagelab-worker", daemon=True)
        self._queue_lock = filelock.FileLock(str(services.store.data_dir / "serve.lock"))
        self._shared_queue = services.store.is_postgres
        #: This server's name on the leases it holds (host, process, and a random part).
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._lease_ms = int(services.settings.lease_seconds * 1000)
        # The server's target policy goes with every run (SSRF guard, docs/security.md); the
        # engine's egress proxy asks the guard's name server when one is set.
        self._engine = LazyEngine(lambda: _make_engine(services.settings))
        #: The test being run now, and the last reason the engine could not run (for
        #: ``/healthz``).
        self.current_test: str | None = None
        self.engine_error: str | None = None
        #: Lasting conditions an operator should know about (shown by ``/healthz``).
        self.warnings: list[str] = []

    # -- lifetime ----------------------------------------------------------------------

    def start(self) -> None:
        if self.run_tests:
            browser = self.browser_sandbox()
            if browser is not None and not browser.sandboxed:
                logger.warning("%s", sandbox_warning(browser))
        if self.run_tests and not self._shared_queue:
            try:
                self._queue_lock.acquire(timeout=0)
            except filelock.Timeout:
                raise StoreError(
                    f"another `pagelab serve` runs the tests of {self._services.store.data_dir}"
                    ": stop it, use another --data-dir, or start this one with --no-worker"
                ) from None
            # Every write of the process queues on the pool's write lock (no busy sleeps).
            pool = self._services.pool
            with pool.connection() as conn, pool.write(conn):
                requeued = requeue_interrupted(conn)
            if requeued:
                logger.info("requeued %d test(s) interrupted by the last stop", len(requeued))
        self._thread.start()

    def stop(self, timeout: float) -> None:
        """Ask the thread to stop and wait up to ``timeout`` s for the running test. A test
        still running after that stays ``active`` and is run again at the next start."""
        self._stop.set()
        self._services.work_available.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            logger.warning("stopping with test %s unfinished: it runs again at the next start"
                           "%s", self.current_test,
                           " (or on another server once its lease ends)"
                           if self._shared_queue else "")
        else:
            self._close_engine()
        if self.run_tests and not self._shared_queue:
            self._queue_lock.release()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def browser_sandbox(self) -> BrowserSandbox | None:
        """How this server's Chromium runs (None: it runs no tests, or Chromium is missing)."""
        return Engine.sandbox_status() if self.run_tests else None

    def queue_counts(self) -> dict[str, int]:
        with self._services.pool.connection() as conn:
            return queue_counts(conn)

    # -- loop --------------------------------------------------------------------------

    def _loop(self) -> None:
        settings = self._services.settings
        wake = self._services.work_available
        next_sweep = 0.0
        while not self._stop.is_set():
            try:
                if time.monotonic() >= next_sweep:
                    self._sweep()
                    next_sweep = time.monotonic() + settings.sweep_interval
                # Clear before looking: a creation after this point sets it again, so the
                # wait below cannot sleep through it.
                wake.clear()
                test_id = self._next_test() if self.run_tests else None
                if test_id is None:
                    wake.wait(settings.poll_interval)
                    continue
                self._run(test_id)
            except Exception:
                # The loop must survive anything (a locked database, a full disk): log and
                # try again after a pause.
                logger.exception("worker iteration failed")
                self._stop.wait(settings.poll_interval)

    def _next_test(self) -> str | None:
        with self._services.pool.connection() as conn:
            return claim_queued_test(conn, owner=self.owner, lease_ms=self._lease_ms)

    @contextmanager
    def _leased(self, test_id: str) -> Iterator[None]:
        """Renew the lease of ``test_id`` every third of it while the block runs (a shared
        queue only)."""
        if not self._shared_queue:
            yield
            return
        done = threading.Event()

        def renew() -> None:
            while not done.wait(self._lease_ms / 3000):
                try:
                    with self._services.pool.connection() as conn:
                        if not renew_lease(conn, test_id, owner=self.owner,
                                           lease_ms=self._lease_ms):
                            logger.warning("lost the lease of test %s", test_id)
                            return
                except Exception:
                    logger.exception("cannot renew the lease of test %s", test_id)

        thread = threading.Thread(target=renew, name="pagelab-lease", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def _engine_instance(self) -> Engine:
        return self._engine.get()

    def _close_engine(self) -> None:
        self._engine.close()

    def _run(self, test_id: str) -> None:
        self.current_test = test_id
        if self._shared_queue:  # which server ran what, for the operators of a team store
            logger.info("running test %s", test_id)
        try:
            with self._leased(test_id):
                ran = execute_test(self._services.store, self._engine_instance(), test_id,
                                   vantage="local")
            if ran is None:
                logger.info("test %s was final before it started (its key was revoked): "
                            "not run", test_id)
            self.engine_error = None
        except EngineError as exc:
            self.engine_error = str(exc)
            logger.error("test %s cannot run: %s", test_id, exc)
            self._close_engine()
            self._fail(test_id, ENGINE_UNAVAILABLE, str(exc))
        except Exception as exc:
            logger.exception("test %s crashed the engine", test_id)
            self._close_engine()
            self._fail(test_id, ENGINE_CRASHED, f"{type(exc).__name__}: {exc}")
        finally:
            self.current_test = None
            self._after_test()

    def _fail(self, test_id: str, code: str, message: str) -> None:
        """Record an engine failure for a test the engine could not finish."""
        error = LighthouseError(code=code, message=message[:1000])
        pool = self._services.pool
        with pool.connection() as conn, pool.write(conn):
            fail_unfinished_test(conn, test_id, error, vantage="local")

    def _after_test(self) -> None:
        pool = self._services.pool
        with pool.connection() as conn:
            with pool.write(conn):
                refunded = refund_engine_failures(conn)
            if refunded:
                logger.info("refunded the credits of %d test(s) failed by the engine",
                            len(refunded))

    def _sweep(self) -> None:
        store = self._services.store
        pool = self._services.pool
        with pool.connection() as conn:
            with pool.write(conn):
                deleted = delete_expired(conn)
                refund_engine_failures(conn)
            for test_id in deleted:
                store.artifacts.remove(test_id)
            if deleted:
                logger.info("deleted %d expired test(s)", len(deleted))
            truncate_wal(conn)


def _make_engine(settings: Settings) -> Engine:
    """The worker's engine: the server's target policy, and its name server if it has one."""
    resolver = (dns_server_resolver(settings.dns_server, timeout=settings.guard_dns_timeout)
                if settings.dns_server else None)
    return Engine(target_policy=settings.target_policy, resolver=resolver)
