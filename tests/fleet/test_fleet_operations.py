"""Operating a fleet on real parts (redis-server, `pagelab serve --broker`, `pagelab worker`
processes): /healthz and /v1/locations fields, NO_WORKER, TTFB through workers, a server
restart and a Redis restart with tests queued, and the whole fleet over rediss:// (TLS)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fleet_env import (
    FLEET_ENV,
    FLEET_SECRET,
    RedisServer,
    ServerProcess,
    WorkerProcess,
    api,
    create_key,
    wait_for,
)

# These tests read no paint, only where and how often runs ran: navigations end at the
# load event (conftest.py, LOAD_ONLY_WINDOW_MS).
pytestmark = pytest.mark.usefixtures("load_only_navigation")

pytest.importorskip("celery")


class Fleet:
    """One redis-server, one server with ``--broker`` and the workers a test starts."""

    def __init__(self, root: Path, *server_args: str, tls: bool = False) -> None:
        self.root = root
        self.redis = RedisServer(root / "redis", tls=tls).start()
        self.server = ServerProcess(
            root / "data", root / "server.log", "--broker", self.redis.url, *server_args,
            env=FLEET_ENV,
        )
        self.workers: dict[str, WorkerProcess] = {}

    def worker(self, locations: str, name: str, *extra: str) -> WorkerProcess:
        worker = WorkerProcess(self.redis.url, locations, name, self.root / f"{name}.log",
                               *extra, data_dir=self.root / "data")
        self.workers[name] = worker.start()
        return worker

    def log(self) -> str:
        return (self.root / "server.log").read_text(errors="replace")

    def worker_log(self, name: str) -> str:
        return (self.root / f"{name}.log").read_text(errors="replace")

    def close(self) -> None:
        for worker in self.workers.values():
            worker.stop()
        self.server.stop()
        self.redis.stop()


def _create(client: Any, url: str, location: str) -> str:
    response = client.post("/v1/lighthouse-tests",
                           json={"url": url, "device": "desktop", "location": location})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _final(client: Any, test_id: str, timeout: float = 240) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        try:
            body: dict[str, Any] = client.get(f"/v1/lighthouse-tests/{test_id}").json()
        except Exception:  # the server may be restarting
            return None
        return body if body["status"] in ("success", "failed") else None

    result: dict[str, Any] = wait_for(done, timeout, f"test {test_id} to finish", 0.5)
    return result


def _credits(client: Any, kind: str) -> int:
    return int(client.get("/v1/account/credits").json()[kind]["available_credits"])


# -- a fleet with a short queue timeout and one worker for au / au-east (no engine) ------


@pytest.fixture(scope="module")
def short_fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    running = Fleet(tmp_path_factory.mktemp("fleet-short"), "--queue-timeout", "4")
    try:
        running.server.start()
        running.worker("au,au-east", "syd-1")
        yield running
    finally:
        running.close()


def test_healthz_and_locations_show_the_broker_and_the_live_workers(short_fleet: Fleet) -> None:
    health = wait_for(lambda: (h := short_fleet.server.health())["fleet"]["workers"] and h, 30,
                      "the worker's heartbeat on /healthz")
    assert health["status"] == "ok"
    fleet = health["fleet"]
    assert fleet["broker_reachable"] is True
    assert fleet["broker"] == short_fleet.redis.url
    assert [(w["name"], w["locations"]) for w in fleet["workers"]] == [
        ("syd-1", ["au", "au-east"])]
    assert fleet["workers"][0]["last_seen"] > (time.time() - 60) * 1000
    with api(short_fleet.server, create_key(short_fleet.root / "data")) as client:
        locations = {loc["id"]: loc for loc in client.get("/v1/locations").json()["data"]}
    assert locations["au"]["live_workers"] == ["syd-1"]
    assert locations["de"]["live_workers"] == []


def test_a_location_without_a_worker_fails_no_worker_refunded(short_fleet: Fleet) -> None:
    key = create_key(short_fleet.root / "data", lighthouse=5)
    with api(short_fleet.server, key) as client:
        test_id = _create(client, "http://127.0.0.1:9/", "jp")
        assert _credits(client, "lighthouse") == 4
        started = time.monotonic()
        report = _final(client, test_id, timeout=30)
        assert report["status"] == "failed"
        assert report["error"]["code"] == "NO_WORKER"
        assert _credits(client, "lighthouse") == 5
    print(f"NO_WORKER after {time.monotonic() - started:.1f} s (--queue-timeout 4)")


def test_ttfb_locations_are_probed_by_their_workers(short_fleet: Fleet, demo_url: str) -> None:
    key = create_key(short_fleet.root / "data", ttfb=5)
    with api(short_fleet.server, key) as client:
        started = time.monotonic()
        response = client.post("/v1/ttfb-tests",
                               json={"url": f"{demo_url}/fast", "region": "oceania"})
        elapsed = time.monotonic() - started
        assert response.status_code == 200, response.text
        body = response.json()
        by_location = {r["location_id"]: r for r in body["result"]}
        assert by_location["au-east"]["status"] == "success"
        assert by_location["au-east"]["data"]["timings"]["ttfb"] > 0
        assert by_location["au-south"]["status"] == "failed"
        assert by_location["au-south"]["error"]["code"] == "NO_WORKER"
        assert body["vantage"] == "syd-1"
        wait_for(lambda: "TTFB probe for au-east: success" in short_fleet.worker_log("syd-1"),
                 10, "the worker to log its probe")
        # No location was waited out: one that was would be TIMEOUT, not NO_WORKER.
        assert by_location["au-south"]["error"]["message"] == "no live worker serves au-south"
        assert _credits(client, "ttfb") == 4
        # A region with no worker at all: failed at once (NO_WORKER, decided before any
        # request is sent; a waited-out one is TIMEOUT), and the credit comes back.
        africa = client.post("/v1/ttfb-tests", json={"url": f"{demo_url}/fast",
                                                     "region": "africa"}).json()
        assert [(r["status"], r["error"]["code"]) for r in africa["result"]] == [
            ("failed", "NO_WORKER")]
        assert _credits(client, "ttfb") == 4
    print(f"TTFB through the au-east worker: {by_location['au-east']['data']['timings']}"
          f" answered in {elapsed:.2f} s")


def test_healthz_is_degraded_while_the_broker_is_down(short_fleet: Fleet) -> None:
    short_fleet.redis.stop()
    try:
        health = short_fleet.server.health()
        assert health["status"] == "degraded"
        assert health["fleet"]["broker_reachable"] is False
        assert any("broker is unreachable" in w for w in health["warnings"])
    finally:
        short_fleet.redis.start()
    wait_for(lambda: short_fleet.server.health()["status"] == "ok", 30,
             "the server to see the broker again")


# -- restarts with tests queued, on the real engine --------------------------------------


@pytest.fixture(scope="module")
def restart_fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    running = Fleet(tmp_path_factory.mktemp("fleet-restart"), "--queue-timeout", "600")
    try:
        running.server.start()
        running.worker("de", "fra-1")
        yield running
    finally:
        running.close()


def _written_once(fleet: Fleet, ids: list[str], client: Any) -> None:
    for test_id in ids:
        report = _final(client, test_id)
        assert (report["status"], report["vantage"]) == ("success", "fra-1"), report
        # The server logs the write after committing it: the line may follow the status.
        line = f"test {test_id} success on fra-1"
        wait_for(lambda line=line: line in fleet.log(), 60, f"the server to log {line!r}")
        assert fleet.log().count(line) == 1


@pytest.mark.engine
def test_a_server_restart_with_tests_queued(restart_fleet: Fleet, demo_url: str) -> None:
    key = create_key(restart_fleet.root / "data", lighthouse=10)
    with api(restart_fleet.server, key) as client:
        ids = [_create(client, f"{demo_url}/fast", "de") for _ in range(3)]
        restart_fleet.server.stop()
        # The worker measures on while the server is down; its results wait in Redis.
        wait_for(lambda: f"test {ids[0]} success" in restart_fleet.worker_log("fra-1"), 180,
                 "the worker to finish a test while the server is down")
        restart_fleet.server.start()
        _written_once(restart_fleet, ids, client)
        assert _credits(client, "lighthouse") == 7


@pytest.mark.engine
def test_a_redis_restart_with_tests_queued(restart_fleet: Fleet, demo_url: str) -> None:
    key = create_key(restart_fleet.root / "data", lighthouse=10)
    with api(restart_fleet.server, key) as client:
        ids = [_create(client, f"{demo_url}/fast", "de") for _ in range(3)]
        wait_for(
            lambda: client.get(f"/v1/lighthouse-tests/{ids[0]}").json()["status"] == "active",
            180, "the worker to start the first test",
        )
        restart_fleet.redis.restart()  # AOF: the queued tasks and results survive
        _written_once(restart_fleet, ids, client)
        assert _credits(client, "lighthouse") == 7
        # A task whose ack was lost (the connection went with Redis) comes back after the
        # visibility timeout: delivered again now, the worker skips it, as the server
        # marked the test done, instead of measuring it a second time.
        _redeliver(restart_fleet, ids[0], demo_url)
        wait_for(lambda: f"test {ids[0]}: already finished, delivery skipped"
                 in restart_fleet.worker_log("fra-1"), 60,
                 "the redelivered first test to be skipped")
        assert restart_fleet.worker_log("fra-1").count(f"test {ids[0]} success") == 1
        assert _credits(client, "lighthouse") == 7
        health = wait_for(lambda: (h := restart_fleet.server.health())["status"] == "ok" and h,
                          30, "the server to see the broker again")
        assert health["fleet"]["broker_reachable"] is True


def _redeliver(fleet: Fleet, test_id: str, demo_url: str) -> None:
    """The task of ``test_id`` once more on ``pagelab.loc.de``, signed as the server does."""
    from pagelab.fleet import FleetKeys
    from pagelab.fleet._app import fleet_app
    from pagelab.fleet._protocol import RUN_LIGHTHOUSE_TASK
    from pagelab.models import LighthouseConfig

    wait_for(lambda: fleet.redis.client().exists(f"pagelab:done:{test_id}"), 10,
             f"the server to mark {test_id} done on the broker")
    keys = FleetKeys(FLEET_SECRET)
    now = int(time.time() * 1000)
    body = {"kind": "lighthouse", "test_id": test_id, "url": f"{demo_url}/fast",
            "device": "desktop", "location": "de",
            "config": keys.seal(LighthouseConfig().model_dump_json(), "de"),
            "target_policy": {"allow_private": True, "allowed": []}, "max_attempts": 2,
            "dispatched_at": now, "expires_at": now + 600_000,
            "delivery_id": secrets.token_hex(16)}
    fleet_app(fleet.redis.url).send_task(RUN_LIGHTHOUSE_TASK, args=[keys.sign(body)],
                                         queue="pagelab.loc.de", routing_key="pagelab.loc.de")


# -- the whole fleet over TLS --------------------------------------------------------------


@pytest.mark.engine
def test_a_fleet_over_rediss(tmp_path: Path, demo_url: str) -> None:
    import redis

    fleet = Fleet(tmp_path, "--queue-timeout", "600", tls=True)
    try:
        assert fleet.redis.url.startswith("rediss://")
        # TLS only, and verified: plain Redis and a client without the CA are turned away.
        port = fleet.redis.port
        with pytest.raises((redis.ConnectionError, redis.TimeoutError)):
            redis.Redis(host="127.0.0.1", port=port, socket_timeout=5).ping()
        with pytest.raises(redis.ConnectionError, match="certificate verify failed"):
            redis.Redis.from_url(f"rediss://127.0.0.1:{port}/0", socket_timeout=5).ping()
        fleet.server.start()
        fleet.worker("de,de-central", "fra-tls")
        key = create_key(tmp_path / "data", lighthouse=2, ttfb=2)
        with api(fleet.server, key) as client:
            report = _final(client, _create(client, f"{demo_url}/fast", "de"))
            assert (report["status"], report["vantage"]) == ("success", "fra-tls")
            ttfb = client.post("/v1/ttfb-tests",
                               json={"url": f"{demo_url}/fast", "region": "europe"}).json()
            by_location = {r["location_id"]: r["status"] for r in ttfb["result"]}
            assert by_location["de-central"] == "success"
            assert ttfb["vantage"] == "fra-tls"
        health = fleet.server.health()
        assert health["fleet"]["broker_reachable"] is True
        assert [w["name"] for w in health["fleet"]["workers"]] == ["fra-tls"]
    finally:
        fleet.close()
