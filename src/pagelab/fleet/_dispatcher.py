"""The server's side of a fleet: queued tests go to Celery queues by location, and the
workers' signed messages come back from the results queue into the store."""

from __future__ import annotations

import logging
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import filelock

from pagelab._exceptions import StoreError
from pagelab.engine import ENGINE_CRASHED, TargetPolicy
from pagelab.models import LighthouseError, TTFBError
from pagelab.store import (
    FleetWorkerKey,
    Store,
    ensure_fleet_tables,
    fail_waiting_tests,
    fleet_worker_key,
    forget_dispatches,
    mark_dispatched,
    refund_engine_failures,
    transaction,
    undispatched_tests,
)

from ._app import consume, fleet_app, results_queue
from ._heartbeats import live_workers
from ._ingest import ingest_message
from ._keys import FleetKeys
from ._protocol import (
    DONE_KEY_PREFIX,
    DONE_KEY_TTL,
    RUN_LIGHTHOUSE_TASK,
    location_queue,
    now_ms,
)
from ._settings import FleetSettings
from ._ttfb import TTFBAnswer, publish_ttfb_request, wait_ttfb_answers

__all__ = [
    "NO_WORKER",
    "REFUSED_DEGRADES_FOR_S",
    "FleetDispatcher",
    "target_policy_to_wire",
]

logger = logging.getLogger("pagelab.fleet.dispatcher")

#: Error code of a test no worker of its location took within the queue timeout.
NO_WORKER = "NO_WORKER"
#: ``/healthz`` is ``degraded`` this long after a fleet message was refused.
REFUSED_DEGRADES_FOR_S = 600


def target_policy_to_wire(policy: TargetPolicy) -> dict[str, Any]:
    return {"allow_private": policy.allow_private, "allowed": [str(n) for n in policy.allowed]}


class FleetDispatcher:
    """Two daemon threads: one hands ``idle`` tests to the broker (woken by the creation
    endpoints through ``wake``) and fails those that waited past the queue timeout; one
    consumes the results queue. Owns the queue of the data dir (``serve.lock``), as the
    in-process worker does when there is no broker."""

    def __init__(self, store: Store, fleet: FleetSettings, *, target_policy: TargetPolicy,
                 wake: threading.Event) -> None:
        self._store = store
        self._fleet = fleet
        self._policy_wire = target_policy_to_wire(target_policy)
        self._wake = wake
        self._keys = FleetKeys(fleet.secret)
        self._app = fleet_app(fleet.broker_url, visibility_timeout=fleet.visibility_timeout,
                              max_message_bytes=fleet.max_message_mb << 20)
        self._stop = threading.Event()
        self._queue_lock = filelock.FileLock(str(Path(store.data_dir) / "serve.lock"))
        self._threads = [
            threading.Thread(target=self._dispatch_loop, name="pagelab-fleet-dispatch",
                             daemon=True),
            threading.Thread(target=self._results_loop, name="pagelab-fleet-results",
                             daemon=True),
        ]
        self._redis: Any = None
        #: Counters for ``/healthz``.
        self.dispatched = 0
        self.ingested = 0
        self.refused = 0
        #: When the last message was refused (epoch ms) and why: ``/healthz`` is
        #: ``degraded`` for :data:`REFUSED_DEGRADES_FOR_S` after one.
        self.last_refused_at: int | None = None
        self.last_refusal: str | None = None
        self.broker_error: str | None = None

    # -- lifetime ----------------------------------------------------------------------

    def start(self) -> None:
        try:
            self._queue_lock.acquire(timeout=0)
        except filelock.Timeout:
            raise StoreError(
                f"another `pagelab serve` dispatches the tests of {self._store.data_dir}"
            ) from None
        with self._store.connection() as conn, transaction(conn, immediate=True):
            ensure_fleet_tables(conn)
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout)
        self._queue_lock.release()

    @property
    def broker_url(self) -> str:
        return self._fleet.broker_url

    @property
    def alive(self) -> bool:
        return all(thread.is_alive() for thread in self._threads)

    # -- workers -----------------------------------------------------------------------

    def _redis_client(self) -> Any:
        if self._redis is None:
            import redis

            self._redis = redis.Redis.from_url(self._fleet.broker_url, socket_timeout=5,
                                               socket_connect_timeout=3)
        return self._redis

    def broker_status(self) -> str | None:
        """None when Redis answers PING, else why not (one line)."""
        try:
            self._redis_client().ping()
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"[:300]
        return None

    def live_workers_by_location(self) -> dict[str, list[str]]:
        """Location id -> names of the live workers that serve it (empty when the broker
        cannot be read)."""
        by_location: dict[str, list[str]] = {}
        try:
            seen = self.workers()
        except Exception:
            return by_location
        for worker in seen:
            for location in worker["locations"]:
                by_location.setdefault(str(location), []).append(str(worker["name"]))
        return by_location

    def workers(self) -> list[dict[str, Any]]:
        """The workers whose heartbeat is live (:func:`live_workers`)."""
        return live_workers(self._redis_client(), self._keys, self.worker_key)

    def worker_key(self, name: str) -> FleetWorkerKey | None:
        """``name``'s current key (None: never issued, or revoked)."""
        with self._store.connection() as conn:
            return fleet_worker_key(conn, name)

    # -- TTFB --------------------------------------------------------------------------

    def run_ttfb(self, url: str, locations: list[str], *, timeout: float,
                 wait: float) -> dict[str, TTFBAnswer]:
        """Probe ``url`` from a worker of each location (blocking, at most ``wait`` s):
        ``NO_WORKER`` at once for a location without a live worker, ``TIMEOUT`` for one
        whose worker did not answer in time."""
        live = self.live_workers_by_location()
        answers: dict[str, TTFBAnswer] = {}
        served: list[str] = []
        for location in locations:
            if live.get(location):
                served.append(location)
            else:
                answers[location] = TTFBAnswer(None, TTFBError(
                    code=NO_WORKER, message=f"no live worker serves {location}"), None)
        if served:
            deadline = time.monotonic() + wait
            reply_to = publish_ttfb_request(
                self._app, self._keys, url=url, locations=served, timeout=timeout,
                deadline_ms=now_ms() + int(wait * 1000), target_policy=self._policy_wire,
            )
            got = wait_ttfb_answers(self._redis_client(), self._keys, self.worker_key,
                                    reply_to, served, deadline)
            for location in served:
                answers[location] = got.get(location) or TTFBAnswer(None, TTFBError(
                    code="TIMEOUT",
                    message=f"no answer from a worker of {location} within {wait:.0f} s",
                ), None)
        return answers

    # -- dispatch ----------------------------------------------------------------------

    def _dispatch_loop(self) -> None:
        next_sweep = 0.0
        while not self._stop.is_set():
            try:
                self._wake.wait(self._fleet.poll_interval)
                self._wake.clear()
                if self._stop.is_set():
                    break
                self.dispatch_pending()
                if time.monotonic() >= next_sweep:
                    self._sweep()
                    next_sweep = time.monotonic() + min(5.0, self._fleet.queue_timeout / 4)
                self.broker_error = None
            except Exception as exc:
                self.broker_error = f"{type(exc).__name__}: {exc}"
                logger.exception("fleet dispatch failed")
                self._stop.wait(1.0)

    def dispatch_pending(self) -> int:
        """Send every undispatched ``idle`` test to its location's queue; returns how many."""
        sent = 0
        while not self._stop.is_set():
            with self._store.connection() as conn:
                tests = undispatched_tests(conn)
                if not tests:
                    return sent
                for test in tests:
                    queue = location_queue(test.location)
                    body = {
                        "kind": "lighthouse", "test_id": test.id, "url": test.url,
                        "device": test.device.value, "location": test.location,
                        "config": self._keys.seal(test.config.model_dump_json(),
                                                  test.location),
                        "target_policy": self._policy_wire,
                        "max_attempts": self._fleet.max_attempts,
                        "dispatched_at": now_ms(),
                        # A worker runs one delivery id once (issue 34, point 8).
                        "delivery_id": secrets.token_hex(16),
                        # Inside the signature: a captured task cannot be replayed later.
                        "expires_at": now_ms() + int(self._fleet.queue_timeout * 1000),
                    }
                    self._app.send_task(
                        RUN_LIGHTHOUSE_TASK, args=[self._keys.sign(body)], queue=queue,
                        routing_key=queue, expires=self._fleet.queue_timeout,
                    )
                    # Sent before marked: a crash between the two sends it twice, and the
                    # second delivery's result is a duplicate (written once).
                    with transaction(conn, immediate=True):
                        mark_dispatched(conn, test.id, queue)
                    sent += 1
                    self.dispatched += 1
        return sent

    def _sweep(self) -> None:
        now = now_ms()
        bound = int(self._fleet.queue_timeout * 1000)
        with self._store.connection() as conn, transaction(conn, immediate=True):
            failed = fail_waiting_tests(
                conn, idle_before=now - bound, active_before=now - bound,
                idle_error=LighthouseError(
                    code=NO_WORKER,
                    message=f"no worker of this location took the test within "
                    f"{self._fleet.queue_timeout:g} s; refunded",
                ),
                active_error=LighthouseError(
                    code=ENGINE_CRASHED,
                    message="the worker running the test was lost and no other worker "
                    "finished it in time; refunded",
                ),
            )
            refund_engine_failures(conn)
            forget_dispatches(conn)
        if failed:
            logger.warning("failed %d test(s) that waited too long for a worker", len(failed))

    # -- results -----------------------------------------------------------------------

    def _mark_done(self, envelope: Any) -> None:
        """Tell the workers the test is final (best effort: without the mark a later
        delivery runs again, and its result is a duplicate, written never)."""
        try:
            test_id = str(envelope["body"]["test_id"])
            self._redis_client().set(f"{DONE_KEY_PREFIX}{test_id}", "1", ex=DONE_KEY_TTL)
        except Exception as exc:
            logger.warning("could not mark a test done on the broker: %s", exc)

    def _refuse(self, reason: str) -> None:
        self.refused += 1
        self.last_refused_at = now_ms()
        self.last_refusal = reason[:200]

    @property
    def recently_refused(self) -> bool:
        """A message was refused within the last :data:`REFUSED_DEGRADES_FOR_S` s."""
        return (self.last_refused_at is not None
                and now_ms() - self.last_refused_at < REFUSED_DEGRADES_FOR_S * 1000)

    def _results_loop(self) -> None:
        def on_decode_error(message: Any, exc: Exception) -> None:
            # Not JSON, or a content type other than JSON (a pickle is never loaded): a
            # message nobody can read would otherwise come back forever and block the
            # queue behind it. Acknowledged, counted, logged.
            reason = f"undecodable ({type(exc).__name__}: {exc})"[:300]
            logger.warning("refused a fleet message: %s", reason)
            self._refuse(reason)
            message.ack()

        def on_message(body: Any, message: Any) -> None:
            try:
                outcome, reason = ingest_message(self._store, self._keys, body,
                                                 max_age_s=self._fleet.message_max_age)
            except (StoreError, sqlite3.OperationalError):
                raise  # the store, not the message: redelivered once it is back
            except Exception as exc:
                # Whatever else a message makes go wrong is the message's fault.
                logger.exception("refused a fleet message that could not be applied")
                outcome, reason = "refused", f"{type(exc).__name__}: {exc}"
            if outcome == "refused":
                self._refuse(reason or "refused")
            elif outcome == "written":
                self.ingested += 1
            if outcome in ("written", "duplicate", "unknown"):
                self._mark_done(body)
            # Acknowledged once written (or refused): a crash before this redelivers it.
            message.ack()

        def on_broker_error(exc: Exception) -> None:
            self.broker_error = f"{type(exc).__name__}: {exc}"

        consume(self._app, [results_queue()], on_message=on_message,
                on_decode_error=on_decode_error, prefetch_count=4, stop=self._stop,
                logger=logger, what="results queue", on_broker_error=on_broker_error)
