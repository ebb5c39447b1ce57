"""The worker's side of a fleet (``pagelab worker``): a Celery worker that consumes its
locations' queues one task at a time and runs each test on its own engine, as the
server's in-process worker does, then sends the signed outcome and artifacts back.

A worker needs the broker URL and its own key (``pagelab worker-key issue`` on the
server), never the fleet secret nor the database.
"""

from __future__ import annotations

import base64
import json
import logging
import socket
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from pagelab._exceptions import EngineError, InvalidInputError
from pagelab.engine import (
    ENGINE_CRASHED,
    Engine,
    LazyEngine,
    RunResult,
    TargetPolicy,
    parse_networks,
)
from pagelab.models import ENGINE_UNAVAILABLE, Device, LighthouseConfig, LighthouseError, TestStatus

from ._app import DEFAULT_VISIBILITY_TIMEOUT, consume, fleet_app, results_queue
from ._heartbeats import HEARTBEAT_INTERVAL, HEARTBEAT_TTL, WORKER_KEY_PREFIX
from ._keys import WorkerKeys
from ._protocol import (
    DELIVERY_KEY_PREFIX,
    DONE_KEY_PREFIX,
    MAX_TASK_BYTES,
    RESULTS_QUEUE,
    RUN_LIGHTHOUSE_TASK,
    ForgedMessageError,
    location_queue,
    now_ms,
)
from ._ttfb import reply_ttfb, ttfb_request_queue

__all__ = ["FleetWorker", "policy_from_wire", "run_worker"]

logger = logging.getLogger("pagelab.fleet.worker")

#: The value of a delivery key once its delivery ran (else: the holding worker's name).
DELIVERY_RAN = "ran"
#: TTFB probes one worker runs at once (beside its one Lighthouse run).
TTFB_CONCURRENCY = 4


def policy_from_wire(wire: Any) -> TargetPolicy:
    if not isinstance(wire, dict):
        raise ForgedMessageError("target_policy: not an object")
    return TargetPolicy(
        allow_private=bool(wire.get("allow_private", False)),
        allowed=parse_networks([str(n) for n in wire.get("allowed", [])]),
    )


class FleetWorker:
    """One measuring machine's worker: the engine (started on the first test), the
    heartbeat and the outcome messages."""

    def __init__(self, broker_url: str, keys: WorkerKeys, *,
                 locations: Sequence[str] | None = None,
                 visibility_timeout: float = DEFAULT_VISIBILITY_TIMEOUT) -> None:
        """``locations``: a part of the key's (default: all of them)."""
        self.keys = keys
        self.name = keys.name
        self.locations = list(locations) if locations else list(keys.locations)
        if not self.locations:
            raise InvalidInputError("--locations: name at least one location, e.g. de,uk")
        if not keys.serves(self.locations):
            raise InvalidInputError(
                f"--locations: the key of {keys.name} covers {','.join(keys.locations)} only"
            )
        self.queues = [location_queue(loc) for loc in self.locations]
        self.app = fleet_app(broker_url, visibility_timeout=visibility_timeout,
                             max_message_bytes=MAX_TASK_BYTES)
        self.broker_url = broker_url
        self.current_test: str | None = None
        self._engine = LazyEngine(Engine)
        #: The delivery this worker holds (its key is refreshed with the heartbeat), and
        #: those it ran with their tasks' expiry (epoch ms): a replay is refused here even
        #: when someone deleted the delivery's key in Redis.
        self._holding: str | None = None
        self._ran: dict[str, int] = {}
        self._holding_lock = threading.Lock()
        self._stop = threading.Event()
        self._ttfb_pool = ThreadPoolExecutor(TTFB_CONCURRENCY, thread_name_prefix="pagelab-ttfb")
        import redis

        self._redis = redis.Redis.from_url(broker_url, socket_timeout=10)
        self.app.task(name=RUN_LIGHTHOUSE_TASK, bind=False)(self.run_task)

    # -- heartbeat ---------------------------------------------------------------------

    def _beat(self) -> None:
        body = {"kind": "heartbeat", "test_id": "", "locations": self.locations,
                "current_test": self.current_test}
        self._redis.set(f"{WORKER_KEY_PREFIX}{self.name}", json.dumps(self.keys.sign(body)),
                        ex=HEARTBEAT_TTL)
        with self._holding_lock:
            if self._holding is not None:
                self._redis.set(f"{DELIVERY_KEY_PREFIX}{self._holding}", self.name, xx=True,
                                ex=HEARTBEAT_TTL)

    def _heartbeat_loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._beat()
            except Exception as exc:  # the broker may be restarting: try again
                logger.warning("heartbeat failed: %s", exc)
            self._stop.wait(HEARTBEAT_INTERVAL)

    # -- TTFB --------------------------------------------------------------------------

    def _ttfb_loop(self) -> None:
        """Consume the locations' TTFB queues; each probe runs on the small pool."""
        def on_decode_error(message: Any, exc: Exception) -> None:
            # Not JSON, compressed or too large (_transport.py): never decoded, dropped.
            logger.warning("refused a TTFB probe: undecodable (%s: %s)", type(exc).__name__,
                           exc)
            message.ack()

        def on_message(envelope: Any, message: Any) -> None:
            message.ack()  # a probe is never handed out again: past its deadline it is useless
            try:
                body = self.keys.open(envelope)
                if body.get("kind") != "ttfb" or str(body["location"]) not in self.locations:
                    raise ForgedMessageError("not a TTFB probe of this worker's locations")
                remaining = int(body["deadline"]) / 1000 - time.time()
                policy = policy_from_wire(body["target_policy"])
                url, timeout = str(body["url"]), float(body["timeout"])
            except (ForgedMessageError, KeyError, ValueError, TypeError) as exc:
                logger.warning("refused a TTFB probe: %s", exc)
                return
            if remaining <= 0.5:
                logger.info("TTFB probe for %s dropped: past its deadline", body["location"])
                return
            self._ttfb_pool.submit(self._probe, body, url, min(timeout, remaining - 0.5),
                                   policy)

        consume(self.app, [ttfb_request_queue(location) for location in self.locations],
                on_message=on_message, on_decode_error=on_decode_error,
                prefetch_count=TTFB_CONCURRENCY, stop=self._stop, logger=logger,
                what="TTFB queues")

    def _probe(self, body: dict[str, Any], url: str, timeout: float,
               policy: TargetPolicy) -> None:
        from pagelab.engine import probe

        try:
            data, error = probe(url, timeout=timeout, policy=policy)
            reply_ttfb(self._redis, self.keys, body, data, error)
            logger.info("TTFB probe for %s: %s", body["location"],
                        "success" if data else error.code if error else "?")
        except Exception:
            logger.exception("TTFB probe for %s failed", body.get("location"))

    # -- messages ----------------------------------------------------------------------

    def _send(self, body: dict[str, Any]) -> None:
        queue = results_queue()
        with self.app.producer_or_acquire() as producer:
            producer.publish(
                self.keys.sign(body), exchange=queue.exchange, routing_key=RESULTS_QUEUE,
                declare=[queue], serializer="json", delivery_mode=2, retry=True,
                retry_policy={"max_retries": 30, "interval_start": 0.5, "interval_step": 1,
                              "interval_max": 5},
            )

    def _result_body(self, test_id: str, attempt: int, result: RunResult) -> dict[str, Any]:
        return {
            "kind": "result", "test_id": test_id, "attempt": attempt,
            "status": result.status.value, "lighthouse_version": result.lighthouse_version,
            "metrics": result.metrics.model_dump(mode="json") if result.metrics else None,
            "error": result.error.model_dump(mode="json") if result.error else None,
            "environment": (
                result.environment.model_dump(mode="json") if result.environment else None
            ),
            "engine_failure": result.engine_failure,
            "started_at": int(result.started_at.timestamp() * 1000),
            "finished_at": int(result.finished_at.timestamp() * 1000),
            "artifacts": {
                name: base64.b64encode(data).decode("ascii")
                for name, data in result.artifacts.items()
            },
        }

    def _failure(self, code: str, message: str) -> RunResult:
        now = datetime.now(UTC)
        return RunResult(
            status=TestStatus.FAILED, lighthouse_version=None, metrics=None,
            error=LighthouseError(code=code, message=message[:1000]), environment=None,
            started_at=now, finished_at=now, engine_failure=True,
        )

    # -- the task ----------------------------------------------------------------------

    def _engine_instance(self) -> Engine:
        return self._engine.get()

    def _close_engine(self) -> None:
        self._engine.close()

    def run_task(self, envelope: Any) -> None:
        """The Celery task: verify, hold the delivery, count the attempt, run, send the
        outcome."""
        try:
            body = self.keys.open(envelope)
            test_id, location = str(body["test_id"]), str(body["location"])
            delivery_id, expires_at = str(body["delivery_id"]), int(body["expires_at"])
            if location not in self.locations:
                raise ForgedMessageError(f"a task of {location}, not of this worker")
            if expires_at < now_ms():
                raise ForgedMessageError(f"test {test_id}: the task expired (a replay?)")
            config = LighthouseConfig.model_validate_json(
                self.keys.unseal(body["config"], location)
            )
            policy = policy_from_wire(body["target_policy"])
            url, device = str(body["url"]), Device(body["device"])
            max_attempts = int(body.get("max_attempts", 2))
        except (ForgedMessageError, KeyError, ValueError, TypeError, InvalidInputError) as exc:
            # Never run a task the server did not sign: it could aim the engine anywhere.
            logger.warning("refused a task: %s", exc)
            return
        if self._redis.exists(f"{DONE_KEY_PREFIX}{test_id}"):
            # A delivery whose ack was lost (the broker restarted mid-run): the server
            # already has the outcome, so running it again would only cost a run.
            logger.info("test %s: already finished, delivery skipped", test_id)
            return
        if not self._hold(delivery_id, test_id):
            return
        try:
            self._run_held(test_id, url, device, config, policy, max_attempts)
        finally:
            self._ran_delivery(delivery_id, expires_at)

    def _hold(self, delivery_id: str, test_id: str) -> bool:
        """Take the delivery: True for its first delivery, or a later one whose holder was
        lost (its hold lapsed with its heartbeat); False, refused and logged, for a
        delivery that already ran or that a live worker holds (a replay)."""
        self._ran = {d: exp for d, exp in self._ran.items() if exp >= now_ms()}
        if delivery_id in self._ran:  # its mark in Redis may have been deleted: set again
            self._mark_ran(delivery_id, self._ran[delivery_id])
        key = f"{DELIVERY_KEY_PREFIX}{delivery_id}"
        give_up = time.monotonic() + HEARTBEAT_TTL + 1
        while delivery_id not in self._ran:
            with self._holding_lock:
                if self._redis.set(key, self.name, nx=True, ex=HEARTBEAT_TTL):
                    self._holding = delivery_id
                    return True
            holder = self._redis.get(key)
            if holder == DELIVERY_RAN.encode() or time.monotonic() >= give_up:
                break
            # Held: by a live worker (a replay), or by a lost one whose hold lapses within
            # HEARTBEAT_TTL, and then this is Redis handing the task out again.
            if self._stop.wait(0.5):
                break
        logger.warning("refused a task: test %s, delivery %s already ran or is held by a "
                       "live worker (a replay?)", test_id, delivery_id)
        return False

    def _ran_delivery(self, delivery_id: str, expires_at: int) -> None:
        with self._holding_lock:
            self._holding = None
        self._ran[delivery_id] = expires_at
        self._mark_ran(delivery_id, expires_at)

    def _mark_ran(self, delivery_id: str, expires_at: int) -> None:
        """Mark the delivery as run until its task expires (its signature refuses it then)."""
        self._redis.set(f"{DELIVERY_KEY_PREFIX}{delivery_id}", DELIVERY_RAN,
                        px=max(expires_at - now_ms(), 1000))

    def _run_held(self, test_id: str, url: str, device: Device,
                  config: LighthouseConfig, policy: TargetPolicy, max_attempts: int) -> None:
        """Count the attempt, tell the server this worker holds the test, run, send."""
        attempt = int(self._redis.incr(f"pagelab:attempts:{test_id}"))
        self._redis.expire(f"pagelab:attempts:{test_id}", 86400)
        # Before any outcome: the server takes a result only from the worker holding the
        # test (issue 34, point 7).
        self._send({"kind": "taken", "test_id": test_id, "attempt": attempt})
        if attempt > max_attempts:
            logger.error("test %s: delivery %d, past %d attempts: failed", test_id, attempt,
                         max_attempts)
            self._send(self._result_body(test_id, attempt, self._failure(
                ENGINE_CRASHED,
                f"the workers running this test were lost {attempt - 1} time(s); refunded",
            )))
            return
        self.current_test = test_id

        def started() -> None:
            self._send({"kind": "started", "test_id": test_id, "attempt": attempt,
                        "started_at": now_ms()})

        # As the server's in-process worker (service/_worker.py): the engine's own
        # failures are results; a missing engine and a crash become refundable failures.
        try:
            result = self._engine_instance().run(url, device, config, on_start=started,
                                                 target_policy=policy)
        except EngineError as exc:
            logger.error("test %s cannot run: %s", test_id, exc)
            self._close_engine()
            result = self._failure(ENGINE_UNAVAILABLE, str(exc))
        except Exception as exc:
            logger.exception("test %s crashed the engine", test_id)
            self._close_engine()
            result = self._failure(ENGINE_CRASHED, f"{type(exc).__name__}: {exc}")
        finally:
            self.current_test = None
        self._send(self._result_body(test_id, attempt, result))
        logger.info("test %s %s", test_id, result.status.value)

    # -- running -----------------------------------------------------------------------

    def run(self, *, log_level: str = "info") -> None:
        """Consume the queues until stopped (SIGTERM/SIGINT: Celery's warm shutdown, the
        running test finishes first)."""
        beat = threading.Thread(target=self._heartbeat_loop, name="pagelab-heartbeat",
                                daemon=True)
        beat.start()
        threading.Thread(target=self._ttfb_loop, name="pagelab-ttfb-queues",
                         daemon=True).start()
        try:
            self.app.worker_main([
                "worker", "--queues", ",".join(self.queues),
                "--hostname", f"{self.name}@{socket.gethostname()}",
                "--pool", "solo", "--concurrency", "1", "--prefetch-multiplier", "1",
                "--without-gossip", "--without-mingle", "--without-heartbeat",
                "--loglevel", log_level.upper(),
            ])
        finally:
            self._stop.set()
            self._ttfb_pool.shutdown(wait=False, cancel_futures=True)
            self._close_engine()
            try:
                self._redis.delete(f"{WORKER_KEY_PREFIX}{self.name}")
            except Exception:
                logger.warning("could not remove the heartbeat of %s", self.name)


def run_worker(broker_url: str, keys: WorkerKeys, *, locations: Sequence[str] | None = None,
               visibility_timeout: float = DEFAULT_VISIBILITY_TIMEOUT,
               log_level: str = "info") -> None:
    FleetWorker(broker_url, keys, locations=locations,
                visibility_timeout=visibility_timeout).run(log_level=log_level)
