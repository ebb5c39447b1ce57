"""Issue 36 point 3: the server and `pagelab workers` read the workers' heartbeats the one
way, with one maximum age (real Redis, keys issued by `pagelab worker-key issue`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fleet_env import FLEET_SECRET, RedisServer, issue_worker_key, run_cli_with_secret

import pagelab.fleet._keys
from pagelab.fleet import WORKER_KEY_PREFIX, FleetKeys, WorkerKeys, live_workers
from pagelab.fleet._heartbeats import HEARTBEAT_MAX_AGE_S, HEARTBEAT_TTL
from pagelab.store import Store, fleet_worker_key


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()


def test_a_stale_heartbeat_is_dead_for_the_server_and_the_cli_alike(
    redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "data"
    fresh = WorkerKeys(issue_worker_key(data_dir, "fra-1", "de"))
    stale = WorkerKeys(issue_worker_key(data_dir, "lon-1", "uk"))
    client = redis_server.client()
    beat = {"kind": "heartbeat", "test_id": "", "current_test": None}
    client.set(f"{WORKER_KEY_PREFIX}fra-1",
               json.dumps(fresh.sign({**beat, "locations": ["de"]})), ex=HEARTBEAT_TTL)
    # Signed longer ago than the one maximum age, though not as long as the CLI's old 60 s
    # (it listed this worker while the server did not).
    signed_at = pagelab.fleet._keys.now_ms() - int((HEARTBEAT_MAX_AGE_S + 15) * 1000)
    monkeypatch.setattr(pagelab.fleet._keys, "now_ms", lambda: signed_at)
    client.set(f"{WORKER_KEY_PREFIX}lon-1",
               json.dumps(stale.sign({**beat, "locations": ["uk"]})), ex=HEARTBEAT_TTL)
    monkeypatch.undo()

    store = Store(data_dir)

    def lookup(name: str) -> object:
        with store.connection() as conn:
            return fleet_worker_key(conn, name)

    server_view = live_workers(client, FleetKeys(FLEET_SECRET), lookup)  # type: ignore[arg-type]
    assert [(w["name"], w["locations"]) for w in server_view] == [("fra-1", ["de"])]

    done = run_cli_with_secret("workers", "--broker", redis_server.url,
                               "--data-dir", str(data_dir))
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.splitlines()[1:]]
    assert listed == ["fra-1"], done.stdout
