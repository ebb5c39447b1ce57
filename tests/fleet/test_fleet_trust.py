"""Issue 22, findings 7-9, and issue 34, points 1, 7 and 8: a fleet that trusts no
message. Real redis-server, a real `pagelab serve --broker` and `pagelab worker`; no engine
(results are published as a worker would, and the workers here have no engine installed:
a run fails at once, ENGINE_UNAVAILABLE)."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fleet_env import (
    FLEET_ENV,
    FLEET_SECRET,
    RedisServer,
    ServerProcess,
    WorkerProcess,
    api,
    create_key,
    issue_worker_key,
    peak_rss_mb,
    run_cli_with_secret,
    wait_for,
)

from pagelab.fleet import (
    RESULTS_QUEUE,
    FleetKeys,
    WorkerKeys,
    canonical_json,
    fleet_app,
    results_queue,
)

# What these tests measure is not Lighthouse's doing: the short quiet window (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")

pytest.importorskip("celery")


class Server:
    def __init__(self, root: Path, *extra: str, database: str | None = None) -> None:
        self.root = root
        self.database = database
        self.redis = RedisServer(root / "redis").start()
        self.server = ServerProcess(
            root / "data", root / "server.log", "--broker", self.redis.url,
            "--queue-timeout", "600", *extra, env=FLEET_ENV, database=database,
        ).start()

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def key(self) -> str:
        return create_key(self.data_dir, lighthouse=10, database=self.database)

    def worker_keys(self, name: str, locations: str) -> WorkerKeys:
        return WorkerKeys(issue_worker_key(self.data_dir, name, locations, self.database))

    def worker(self, locations: str, name: str) -> WorkerProcess:
        """A real `pagelab worker` without an engine (its runs fail ENGINE_UNAVAILABLE
        at once, so no Lighthouse runs here)."""
        return WorkerProcess(
            self.redis.url, locations, name, self.root / f"{name}.log", data_dir=self.data_dir,
            database=self.database, env={"PAGELAB_CACHE_DIR": str(self.root / "no-engine")},
        ).start()

    def log(self) -> str:
        return (self.root / "server.log").read_text(errors="replace")

    def close(self) -> None:
        self.server.stop()
        self.redis.stop()


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Server]:
    running = Server(tmp_path)
    try:
        yield running
    finally:
        running.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def fleet_on_store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    """The server on each store: SQLite in its data dir, or PostgreSQL."""
    database = (str(request.getfixturevalue("postgres").new_database())
                if request.param == "postgresql" else None)
    running = Server(tmp_path, database=database)
    try:
        yield running
    finally:
        running.close()


def _publish_raw(broker: str, payload: Any, **options: Any) -> None:
    app = fleet_app(broker)
    queue = results_queue()
    with app.producer_or_acquire() as producer:
        producer.publish(payload, exchange=queue.exchange, routing_key=RESULTS_QUEUE,
                         declare=[queue], **options)


def _create_queued(fleet: Server, client: Any, location: str = "jp") -> str:
    """A test no running worker takes: it stays dispatched (on the broker) and queued."""
    queued = fleet.redis.client().llen(f"pagelab.loc.{location}")
    response = client.post("/v1/lighthouse-tests", json={
        "url": "http://127.0.0.1:9/", "device": "desktop", "location": location})
    assert response.status_code == 201, response.text
    wait_for(lambda: fleet.redis.client().llen(f"pagelab.loc.{location}") > queued, 10,
             "the test to be dispatched")
    return str(response.json()["id"])


def _result(test_id: str, **changes: Any) -> dict[str, Any]:
    return {
        "kind": "result", "test_id": test_id, "status": "failed",
        "lighthouse_version": None, "metrics": None, "environment": None,
        "error": {"code": "ENGINE_CRASHED", "message": "lost"}, "engine_failure": True,
        "started_at": 1, "finished_at": 2, "artifacts": {}, **changes,
    }


def _taken(test_id: str, attempt: int = 1) -> dict[str, Any]:
    """What a worker sends once it holds a delivery of the test, before any outcome."""
    return {"kind": "taken", "test_id": test_id, "attempt": attempt}


def _status(client: Any, test_id: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/v1/lighthouse-tests/{test_id}").json()
    return body


def test_a_poison_message_is_skipped_and_the_next_result_is_ingested(fleet: Server) -> None:
    key = create_key(fleet.data_dir, lighthouse=10)
    tokyo = WorkerKeys(issue_worker_key(fleet.data_dir, "tyo-1", "jp"))
    with api(fleet.server, key) as client:
        test_id = _create_queued(fleet, client)
        assert fleet.server.health()["status"] == "ok"
        # Not JSON at all, then a pickle (never loaded): both used to stop the consumer,
        # which took them again and again while the results behind them waited.
        _publish_raw(fleet.redis.url, b"{not json", content_type="application/json",
                     content_encoding="utf-8")
        _publish_raw(fleet.redis.url, b"\x80\x04K\x01.",
                     content_type="application/x-python-serialize", content_encoding="binary")
        _publish_raw(fleet.redis.url, tokyo.sign(_taken(test_id)), serializer="json")
        _publish_raw(fleet.redis.url, tokyo.sign(_result(test_id)), serializer="json")

        def final() -> dict[str, Any] | None:
            body: dict[str, Any] = client.get(f"/v1/lighthouse-tests/{test_id}").json()
            return body if body["status"] == "failed" else None

        report = wait_for(final, 30, "the signed result behind the poison messages")
        assert report["vantage"] == "tyo-1"
    health = fleet.server.health()
    assert health["fleet"]["refused"] == 2
    assert health["fleet"]["ingested"] == 1
    assert health["status"] == "degraded"
    assert any("refused 2 message(s)" in warning for warning in health["warnings"])
    assert fleet.log().count("refused a fleet message: undecodable") == 2
    # Nothing is left behind on the queue.
    assert fleet.redis.client().llen(RESULTS_QUEUE) == 0


def test_remote_control_from_outside_does_nothing(fleet: Server) -> None:
    # Finding 8: anyone reaching Redis could ping, inspect, add_consumer (a worker takes
    # another location's tests) or shut workers down, with no secret at all.
    worker = WorkerProcess(fleet.redis.url, "de", "fra-1", fleet.root / "fra-1.log",
                           data_dir=fleet.data_dir).start()
    try:
        outsider = fleet_app(fleet.redis.url, name="outsider")
        assert outsider.control.ping(timeout=3) == []
        assert outsider.control.inspect(timeout=3).active_queues() is None
        assert outsider.control.add_consumer("pagelab.loc.jp", reply=True, timeout=3) == []
        outsider.control.shutdown()
        outsider.control.broadcast("pool_restart", arguments={"reload": True})
        time.sleep(5)
        assert worker.process is not None
        assert worker.process.poll() is None, "the worker obeyed a shutdown from outside"
        assert "pagelab.loc.jp" not in worker.log_path.read_text()
    finally:
        worker.stop()


def test_a_result_counts_only_from_the_worker_that_took_the_test(fleet: Server) -> None:
    # Finding 9: any holder of the shared secret could forge a result for any test, and a
    # captured message could be replayed. Now each worker has its own key, for its
    # locations; a test is bound to the worker that took it; messages expire.
    key = create_key(fleet.data_dir, lighthouse=10)
    tokyo = WorkerKeys(issue_worker_key(fleet.data_dir, "tyo-1", "jp"))
    osaka = WorkerKeys(issue_worker_key(fleet.data_dir, "osa-1", "jp"))
    frankfurt = WorkerKeys(issue_worker_key(fleet.data_dir, "fra-1", "de"))
    with api(fleet.server, key) as client:
        test_id = _create_queued(fleet, client)
        refused = 0

        def send(envelope: dict[str, Any], why: str) -> None:
            nonlocal refused
            refused += 1
            _publish_raw(fleet.redis.url, envelope, serializer="json")
            wait_for(lambda: fleet.server.health()["fleet"]["refused"] >= refused, 20, why)
            assert _status(client, test_id)["status"] in ("idle", "active"), why

        # The shared secret itself signs nothing a server accepts any more.
        server_signed = FleetKeys(FLEET_SECRET).sign(_result(test_id, worker="tyo-1"))
        send(server_signed, "a result signed with the fleet's own key")
        # Another location's worker.
        send(frankfurt.sign(_result(test_id)), "a result from a worker of another location")
        # tyo-1 takes the test (started now: an old start is swept as a lost worker); then
        # osa-1 (same location, its own key) cannot finish it.
        _publish_raw(fleet.redis.url, tokyo.sign(
            {"kind": "started", "test_id": test_id, "attempt": 1,
             "started_at": int(time.time() * 1000)}),
            serializer="json")
        wait_for(lambda: _status(client, test_id)["status"] == "active", 20, "started")
        send(osaka.sign(_result(test_id)), "a result forged with another worker's key")
        # tyo-1's own message, replayed after the freshness window (6 h by default); and
        # the same with its sent_at moved forward (sent_at is inside the signature).
        captured = {**_result(test_id), "worker": "tyo-1", "key_generation": 1,
                    "sent_at": int(time.time() * 1000) - 7 * 3600 * 1000}
        worker_key = FleetKeys(FLEET_SECRET).worker_key("tyo-1", 1)
        stale = {"body": captured, "sig": hmac.new(worker_key, canonical_json(captured),
                                                   hashlib.sha256).hexdigest()}
        send(stale, "a replayed message")
        send({**stale, "body": {**captured, "sent_at": int(time.time() * 1000)}},
             "a replayed message with a new sent_at")
        # A revoked key is dead at once.
        revoked = run_cli_with_secret("worker-key", "revoke", "osa-1", "--data-dir",
                                      str(fleet.data_dir))
        assert revoked.returncode == 0, revoked.stderr
        send(osaka.sign({"kind": "started", "test_id": test_id, "attempt": 9,
                         "started_at": int(time.time() * 1000)}),
             "a message signed with a revoked key")
        # The worker that took it: written, once.
        genuine = tokyo.sign(_result(test_id))
        _publish_raw(fleet.redis.url, genuine, serializer="json")
        _publish_raw(fleet.redis.url, genuine, serializer="json")
        report = wait_for(lambda: (r := _status(client, test_id))["status"] == "failed" and r,
                          20, "tyo-1's result")
        assert report["vantage"] == "tyo-1"
        wait_for(lambda: f"duplicate result for {test_id}" in fleet.log(), 20, "duplicate")
    log = fleet.log()
    for reason in ("no worker key named", "fra-1 does not serve jp", "but tyo-1 took it",
                   "stale message", "no key was issued to worker 'osa-1', or it was revoked"):
        assert reason in log, reason
    assert fleet.server.health()["fleet"]["ingested"] == 1


def test_healthz_shows_a_running_test_id_only_to_its_owner(fleet: Server) -> None:
    # Finding 12: /healthz named the running test to anyone.
    owner, other = (create_key(fleet.data_dir, lighthouse=10) for _ in range(2))
    tokyo = WorkerKeys(issue_worker_key(fleet.data_dir, "tyo-1", "jp"))
    with api(fleet.server, owner) as client:
        test_id = _create_queued(fleet, client)
    beat = tokyo.sign({"kind": "heartbeat", "test_id": "", "locations": ["jp"],
                       "current_test": test_id})
    fleet.redis.client().set("pagelab:worker:tyo-1", json.dumps(beat), ex=20)

    def seen(key: str | None) -> list[Any]:
        headers = {"X-API-KEY": key} if key else {}
        body = httpx.get(f"{fleet.server.base_url}/healthz", headers=headers, timeout=10).json()
        return [worker["current_test"] for worker in body["fleet"]["workers"]]

    assert seen(None) == [None]
    assert seen(other) == [None]
    assert seen(owner) == [test_id]


# -- issue 34: what someone who can write to Redis can still do ---------------------------


@functools.cache
def _gzip_bomb(expands_to: int = 1 << 30) -> bytes:
    """About 1 MB of zlib data (kombu's ``application/x-gzip``) that inflates to
    ``expands_to`` bytes."""
    packer = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    parts = [packer.compress(chunk) for _ in range(expands_to // len(chunk))]
    return b"".join(parts) + packer.flush()


#: How a compressed message is published (the body already compressed by the sender).
COMPRESSED = {"content_type": "application/json", "content_encoding": "utf-8",
              "headers": {"compression": "application/x-gzip"}}


def _publish_to_queue(broker: str, queue: str, payload: Any, **options: Any) -> None:
    """Straight into ``queue`` (the default exchange), as anyone reaching Redis can."""
    app = fleet_app(broker)
    with app.producer_or_acquire() as producer:
        producer.publish(payload, exchange="", routing_key=queue, **options)


def test_a_compressed_or_oversized_result_is_refused_before_it_is_decoded(
        tmp_path: Path) -> None:
    # Point 1: a 1 MB gzip bomb on pagelab.results made the server grow by 2 GB (kombu
    # inflated it before pagelab looked at it).
    fleet = Server(tmp_path, "--max-message-mb", "1")
    try:
        key = fleet.key()
        tokyo = fleet.worker_keys("tyo-1", "jp")
        assert fleet.server.process is not None
        server_pid = fleet.server.process.pid
        with api(fleet.server, key) as client:
            test_id = _create_queued(fleet, client)
            bomb = _gzip_bomb()
            assert len(bomb) < 2 << 20
            peak_before = peak_rss_mb(server_pid)
            _publish_raw(fleet.redis.url, bomb, **COMPRESSED)
            # Over --max-message-mb 1, and signed: refused before it is decoded too.
            _publish_raw(fleet.redis.url, tokyo.sign({**_result(test_id),
                                                      "padding": "x" * (2 << 20)}),
                         serializer="json")
            _publish_raw(fleet.redis.url, tokyo.sign(_taken(test_id)), serializer="json")
            _publish_raw(fleet.redis.url, tokyo.sign(_result(test_id)), serializer="json")
            report = wait_for(lambda: (r := _status(client, test_id))["status"] == "failed"
                              and r, 60, "the result behind the refused messages")
            assert report["vantage"] == "tyo-1"
        grown = peak_rss_mb(server_pid) - peak_before
        health = fleet.server.health()["fleet"]
        assert (health["refused"], health["ingested"]) == (2, 1)
        log = fleet.log()
        assert "refused a fleet message: undecodable (ForgedMessageError: compressed " \
               "(application/x-gzip)" in log
        assert "over the bound of 1048576: not decoded" in log
        # Inflated, the bomb is 1 GiB; refused undecoded, the server's peak barely moves.
        assert grown < 256, f"the server's peak memory grew by {grown:.0f} MiB"
        assert fleet.redis.client().llen(RESULTS_QUEUE) == 0
        print(f"server peak memory grew by {grown:.1f} MiB for a {len(bomb)} byte bomb")
    finally:
        fleet.close()


def test_a_worker_refuses_a_compressed_or_oversized_task_before_it_is_decoded(
        fleet: Server) -> None:
    # Point 1, the worker's side: its Lighthouse and TTFB queues.
    worker = fleet.worker("de", "fra-1")
    try:
        assert worker.process is not None
        peak_before = peak_rss_mb(worker.process.pid)
        for queue in ("pagelab.loc.de", "pagelab.ttfb.de"):
            _publish_to_queue(fleet.redis.url, queue, _gzip_bomb(), **COMPRESSED)
        _publish_to_queue(fleet.redis.url, "pagelab.loc.de", {"padding": "x" * (9 << 20)},
                          serializer="json")

        def log() -> str:
            return worker.log_path.read_text(errors="replace")

        refusals = (
            # Celery's own decode-error path (logged, acknowledged), then the TTFB queues'.
            "Can't decode message body: ForgedMessageError('compressed (application/x-gzip)",
            "refused a TTFB probe: undecodable (ForgedMessageError: compressed "
            "(application/x-gzip)",
            "bytes, over the bound of 8388608: not decoded')",
        )
        wait_for(lambda: all(refusal in log() for refusal in refusals), 60,
                 "the worker to refuse the three messages")
        grown = peak_rss_mb(worker.process.pid) - peak_before
        assert grown < 256, f"the worker's peak memory grew by {grown:.0f} MiB"
        client = fleet.redis.client()
        wait_for(lambda: client.llen("pagelab.loc.de") + client.llen("pagelab.ttfb.de")
                 + client.hlen("unacked") == 0, 20, "the refused messages to be acknowledged")
        assert worker.process.poll() is None
        print(f"worker peak memory grew by {grown:.1f} MiB")
    finally:
        worker.stop()


def test_a_result_counts_only_from_a_worker_holding_the_test(fleet_on_store: Server) -> None:
    # Point 7: a result signed by a worker of the location, for a test no worker took,
    # was stored as success.
    fleet = fleet_on_store
    tokyo = fleet.worker_keys("tyo-1", "jp")
    with api(fleet.server, fleet.key()) as client:
        test_id = _create_queued(fleet, client)
        success = _result(test_id, status="success", lighthouse_version="12.0.0",
                          metrics={"performance_score": 100}, error=None,
                          engine_failure=False)
        _publish_raw(fleet.redis.url, tokyo.sign(success), serializer="json")
        wait_for(lambda: fleet.server.health()["fleet"]["refused"] == 1, 20, "a refusal")
        assert _status(client, test_id)["status"] == "idle"
        assert f"a result for {test_id} from tyo-1, which no worker took" in fleet.log()
        # Once it said it holds a delivery of the test, its result counts.
        _publish_raw(fleet.redis.url, tokyo.sign(_taken(test_id)), serializer="json")
        _publish_raw(fleet.redis.url, tokyo.sign(success), serializer="json")
        report = wait_for(lambda: (r := _status(client, test_id))["status"] == "success"
                          and r, 20, "the holder's result")
        assert report["vantage"] == "tyo-1"
    assert fleet.server.health()["fleet"]["ingested"] == 1


def test_a_replayed_task_does_not_run_again(fleet: Server) -> None:
    # Point 8: a task pushed again by someone who can write to Redis ran Lighthouse again
    # within its signed expiry (the done mark, in Redis, is theirs to delete too).
    redis = fleet.redis.client()
    with api(fleet.server, fleet.key()) as client:
        test_id = _create_queued(fleet, client, "de")
        (captured,) = redis.lrange("pagelab.loc.de", 0, -1)
        runs: list[WorkerProcess] = []

        def replay_to(name: str) -> str:
            worker = fleet.worker("de", name)
            runs.append(worker)
            try:
                if len(runs) == 1:  # the genuine delivery first
                    report = wait_for(lambda: (r := _status(client, test_id))["status"]
                                      == "failed" and r, 60, "the first run")
                    assert report["error"]["code"] == "ENGINE_UNAVAILABLE"
                    assert report["vantage"] == name
                    # Its mark in Redis deleted too: the worker's own memory refuses it.
                    for mark in redis.scan_iter("pagelab:delivery:*"):
                        redis.delete(mark)
                redis.delete(f"pagelab:done:{test_id}")
                redis.lpush("pagelab.loc.de", captured)
                wait_for(lambda: "already ran or is held" in worker.log_path.read_text(), 60,
                         f"{name} to refuse the replay")
                return worker.log_path.read_text()
            finally:
                worker.stop()

        # Refused by the worker that ran it, and by another worker of the location (the
        # delivery's mark in Redis).
        first, second = replay_to("fra-1"), replay_to("fra-2")
    assert first.count(f"test {test_id} cannot run") == 1
    assert "cannot run" not in second
    assert redis.get(f"pagelab:attempts:{test_id}") == b"1"
    assert fleet.log().count(f"test {test_id} taken by") == 1
