"""Issue 22, findings 7-9: a fleet that trusts no message. Real redis-server, a real
`pagelab serve --broker`; no engine (results are published as a worker would)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fleet_env import (
    FLEET_SECRET,
    RedisServer,
    ServerProcess,
    WorkerProcess,
    api,
    create_key,
    wait_for,
)

from pagelab.fleet import RESULTS_QUEUE, FleetKeys, fleet_app, results_queue

pytest.importorskip("celery")


class Server:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.redis = RedisServer(root / "redis").start()
        self.server = ServerProcess(
            root / "data", root / "server.log", "--broker", self.redis.url,
            "--fleet-secret", FLEET_SECRET, "--queue-timeout", "600",
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


def _publish_raw(broker: str, payload: Any, **options: Any) -> None:
    app = fleet_app(broker)
    queue = results_queue()
    with app.producer_or_acquire() as producer:
        producer.publish(payload, exchange=queue.exchange, routing_key=RESULTS_QUEUE,
                         declare=[queue], **options)


def _create_queued(client: Any) -> str:
    # 'jp' has no worker: the test stays queued.
    response = client.post("/v1/lighthouse-tests", json={
        "url": "http://127.0.0.1:9/", "device": "desktop", "location": "jp"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_a_poison_message_is_skipped_and_the_next_result_is_ingested(fleet: Server) -> None:
    key = create_key(fleet.root / "data", lighthouse=10)
    with api(fleet.server, key) as client:
        test_id = _create_queued(client)
        assert fleet.server.health()["status"] == "ok"
        # Not JSON at all, then a pickle (never loaded): both used to stop the consumer,
        # which took them again and again while the results behind them waited.
        _publish_raw(fleet.redis.url, b"{not json", content_type="application/json",
                     content_encoding="utf-8")
        _publish_raw(fleet.redis.url, b"\x80\x04K\x01.",
                     content_type="application/x-python-serialize", content_encoding="binary")
        result = {
            "kind": "result", "test_id": test_id, "worker": "tyo-1", "status": "failed",
            "lighthouse_version": None, "metrics": None, "environment": None,
            "error": {"code": "ENGINE_CRASHED", "message": "lost"}, "engine_failure": True,
            "started_at": 1, "finished_at": 2, "artifacts": {},
        }
        _publish_raw(fleet.redis.url, FleetKeys(FLEET_SECRET).sign(result), serializer="json")

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
    worker = WorkerProcess(fleet.redis.url, "de", "fra-1", fleet.root / "fra-1.log").start()
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
