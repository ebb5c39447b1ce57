"""The measurement fleet on real parts: redis-server, `pagelab serve --broker` and two
`pagelab worker` processes (de and us) on the real engine; the server's store is SQLite or
a team store on a real PostgreSQL (the fleet fixture runs on both)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fleet_env import (
    FLEET_ENV,
    RedisServer,
    ServerProcess,
    WorkerProcess,
    api,
    create_key,
    issue_worker_key,
    wait_for,
)

from pagelab.fleet import RESULTS_QUEUE, FleetKeys, WorkerKeys, fleet_app, results_queue
from pagelab.store import FleetWorkerKey

# What these tests measure is not Lighthouse's doing: the short quiet window (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")

pytest.importorskip("celery")

#: Short, so a killed worker's test comes back within the test's patience.
VISIBILITY = "6"


class Fleet:
    def __init__(self, root: Path, database: str | None = None) -> None:
        self.root = root
        #: The server's PostgreSQL store (None: SQLite in root / "data").
        self.database = database
        self.redis = RedisServer(root / "redis").start()
        self.server = ServerProcess(
            root / "data", root / "server.log", "--broker", self.redis.url, "--max-attempts", "1",
            "--visibility-timeout", VISIBILITY, "--queue-timeout", "240",
            env=FLEET_ENV, database=database,
        )
        self.workers: dict[str, WorkerProcess] = {}

    def worker(self, locations: str, name: str) -> WorkerProcess:
        worker = WorkerProcess(self.redis.url, locations, name, self.root / f"{name}.log",
                               "--visibility-timeout", VISIBILITY, data_dir=self.root / "data",
                               database=self.database)
        self.workers[name] = worker.start()
        return worker

    def key(self, *, lighthouse: int) -> str:
        return create_key(self.root / "data", lighthouse=lighthouse, database=self.database)

    def worker_key(self, name: str, locations: str) -> str:
        return issue_worker_key(self.root / "data", name, locations, self.database)

    def log(self) -> str:
        return (self.root / "server.log").read_text(errors="replace")

    def close(self) -> None:
        for worker in self.workers.values():
            worker.stop()
        self.server.stop()
        self.redis.stop()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def fleet(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
          ) -> Iterator[Fleet]:
    database = (str(request.getfixturevalue("postgres").new_database())
                if request.param == "postgresql" else None)
    running = Fleet(tmp_path_factory.mktemp("fleet"), database)
    try:
        running.server.start()
        running.worker("de", "fra-1")
        running.worker("us", "iad-1")
        yield running
    finally:
        running.close()


def _create(client: Any, url: str, location: str) -> str:
    response = client.post("/v1/lighthouse-tests",
                           json={"url": url, "device": "desktop", "location": location})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _final(client: Any, test_id: str, timeout: float = 240) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        body: dict[str, Any] = client.get(f"/v1/lighthouse-tests/{test_id}").json()
        return body if body["status"] in ("success", "failed") else None

    result: dict[str, Any] = wait_for(done, timeout, f"test {test_id} to finish", 0.5)
    return result


def _lighthouse_credits(client: Any) -> int:
    return int(client.get("/v1/account/credits").json()["lighthouse"]["available_credits"])


@pytest.mark.engine
def test_each_location_is_measured_by_its_worker(fleet: Fleet, demo_url: str) -> None:
    key = fleet.key(lighthouse=10)
    with api(fleet.server, key) as client:
        de = _create(client, f"{demo_url}/fast", "de")
        us = _create(client, f"{demo_url}/fast", "us")
        de_report, us_report = _final(client, de), _final(client, us)
        assert (de_report["status"], de_report["vantage"]) == ("success", "fra-1")
        assert (us_report["status"], us_report["vantage"]) == ("success", "iad-1")
        assert de_report["metrics"]["first_contentful_paint"] > 0
        lhr = client.get(f"/v1/lighthouse-tests/{de}/resources/lighthouse-json")
        assert lhr.status_code == 200
        assert '"lighthouseVersion"' in lhr.json()
        assert _lighthouse_credits(client) == 8
    print(f"de: {de_report['metrics']['performance_score']} on {de_report['vantage']}, "
          f"us: {us_report['metrics']['performance_score']} on {us_report['vantage']}")


def _publish(broker: str, envelope: Any) -> None:
    app = fleet_app(broker)
    queue = results_queue()
    with app.producer_or_acquire() as producer:
        producer.publish(envelope, exchange=queue.exchange, routing_key=RESULTS_QUEUE,
                         declare=[queue], serializer="json")


def test_forged_results_are_refused_and_a_result_is_written_once(fleet: Fleet) -> None:
    # 'jp' has no running worker: the test stays queued while results are forged for it.
    key = fleet.key(lighthouse=10)
    tokyo = WorkerKeys(fleet.worker_key("tyo-1", "jp"))
    with api(fleet.server, key) as client:
        test_id = _create(client, "http://127.0.0.1:9/", "jp")
        assert _lighthouse_credits(client) == 9
        wait_for(lambda: fleet.redis.client().llen("pagelab.loc.jp"), 10,
                 "the test to be dispatched")
        result = {
            "kind": "result", "test_id": test_id, "status": "success",
            "lighthouse_version": "12.0.0", "metrics": {"performance_score": 100},
            "error": None, "environment": None, "engine_failure": False,
            "started_at": 1, "finished_at": 2, "artifacts": {},
        }
        signed = tokyo.sign(result)
        tampered = {**signed, "body": {**signed["body"], "status": "failed"}}
        # Signed by the server's key, not a worker's: a worker key of another fleet.
        foreign = WorkerKeys(FleetKeys("another-secret-of-16+chars").credential(
            FleetWorkerKey(name="tyo-1", generation=1, locations=("jp",), issued_at=0)))
        for envelope in ({"body": signed["body"]}, foreign.sign(result), tampered):
            _publish(fleet.redis.url, envelope)
        wait_for(lambda: fleet.log().count("refused a fleet message") >= 3, 20,
                 "the server to refuse three forged results")
        assert client.get(f"/v1/lighthouse-tests/{test_id}").json()["status"] == "idle"
        # A genuine engine failure, delivered twice: written once, refunded once.
        genuine = tokyo.sign({**result, "status": "failed", "metrics": None,
                              "lighthouse_version": None, "engine_failure": True,
                              "error": {"code": "ENGINE_CRASHED", "message": "lost"}})
        _publish(fleet.redis.url, tokyo.sign({"kind": "taken", "test_id": test_id,
                                              "attempt": 1}))
        _publish(fleet.redis.url, genuine)
        _publish(fleet.redis.url, genuine)
        report = _final(client, test_id, timeout=20)
        wait_for(lambda: f"duplicate result for {test_id}" in fleet.log(), 20,
                 "the second delivery to be seen as a duplicate")
        assert (report["vantage"], report["error"]["code"]) == ("tyo-1", "ENGINE_CRASHED")
        assert _lighthouse_credits(client) == 10


@pytest.mark.engine
# The store's part (a refund on a failed delivery) is the forged-results test's on both.
@pytest.mark.parametrize("fleet", ["sqlite"], indirect=True)
def test_a_worker_killed_mid_run_fails_the_test_once_refunded(fleet: Fleet,
                                                              demo_url: str) -> None:
    key = fleet.key(lighthouse=10)
    with api(fleet.server, key) as client:
        test_id = _create(client, f"{demo_url}/slow?ms=60000", "de")
        wait_for(
            lambda: client.get(f"/v1/lighthouse-tests/{test_id}").json()["status"] == "active",
            180, "the de worker to start the test",
        )
        fleet.workers["fra-1"].kill()
        killed_at = time.monotonic()
        # Another de machine comes up; the lost delivery reaches it after the visibility
        # timeout and, past --max-attempts 1, fails the test (refunded) without a run.
        fleet.worker("de", "fra-2")
        report = _final(client, test_id, timeout=90)
        assert report["status"] == "failed"
        assert report["error"]["code"] == "ENGINE_CRASHED"
        assert _lighthouse_credits(client) == 10
    print(f"killed worker's test failed ENGINE_CRASHED after {time.monotonic() - killed_at:.1f} s")
