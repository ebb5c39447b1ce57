"""Two ``pagelab serve`` processes on one PostgreSQL database (a team store): what one
server writes the other serves, credits stay exact under parallel creations spread over
both, each queued test runs exactly once, and a test of a server killed mid-run is
finished by the other once its lease has run out. Real servers, real PostgreSQL, and the
real engine where tests run."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import ServerProcess, create_key

from pagelab.models import TestStatus
from pagelab.store import Store, finish_test, transaction

# These tests read no paint, only where and how often runs ran: navigations end at the
# load event (conftest.py, LOAD_ONLY_WINDOW_MS).
pytestmark = pytest.mark.usefixtures("load_only_navigation")

# Another process may hold the engine lock for a while: waits are generous.
WAIT = 900.0


@pytest.fixture
def database(postgres: Any) -> str:
    return str(postgres.new_database())


@pytest.fixture
def two_servers(tmp_path: Path, database: str) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two servers on one database, each with its own data dir, queue workers off."""
    servers = [
        ServerProcess(tmp_path / f"data-{n}", tmp_path / f"server-{n}.log", "--no-worker",
                      database=database).start()
        for n in range(2)
    ]
    yield servers[0], servers[1]
    for server in servers:
        server.stop()


def _client(server: ServerProcess, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.base_url, headers={"X-API-KEY": key}, timeout=60)


def test_a_test_created_on_one_server_is_read_listed_and_reported_on_the_other(
    tmp_path: Path, database: str, two_servers: tuple[ServerProcess, ServerProcess]
) -> None:
    one, other = two_servers
    key = create_key(tmp_path, database=database)
    with _client(one, key) as first, _client(other, key) as second:
        created = first.post("/v1/lighthouse-tests", json={
            "url": "https://example.com/", "device": "desktop", "location": "de"})
        assert created.status_code == 201, created.text
        test_id = created.json()["id"]
        assert second.get(f"/v1/lighthouse-tests/{test_id}").json()["status"] == "idle"
        listed = second.get("/v1/lighthouse-tests").json()["data"]
        assert [item["id"] for item in listed] == [test_id]
        # Finished with its report, as a worker would: the artifact lives in the database.
        store = Store(tmp_path, database=database)
        with store.connection() as conn, transaction(conn):
            store.artifacts.write(conn, test_id, "html-report",
                                  b"<html><body>the team report</body></html>")
            finish_test(conn, test_id, status=TestStatus.SUCCESS, lighthouse_version="12",
                        metrics=None, error=None, vantage="local", environment=None)
        report_url = first.get(f"/v1/lighthouse-tests/{test_id}").json()["report_url"]
        # A link signed by one server opens on the other (the secret is the database's).
        on_other = report_url.replace(one.base_url, other.base_url)
        page = httpx.get(on_other, timeout=60)
        assert page.status_code == 200, page.text
        assert "the team report" in page.text
        forged = httpx.get(on_other.rsplit("token=", 1)[0] + "token=" + "0" * 32, timeout=60)
        assert forged.status_code in (403, 404)
        resource = second.get(f"/v1/lighthouse-tests/{test_id}/resources/html-report")
        assert "the team report" in resource.json()
    for server in two_servers:
        assert "the team report" not in server.log_path.read_text()


def test_parallel_creations_over_two_servers_take_exactly_the_credits_there_are(
    tmp_path: Path, database: str, two_servers: tuple[ServerProcess, ServerProcess]
) -> None:
    key = create_key(tmp_path, database=database, lighthouse=5)
    clients = [_client(server, key) for server in two_servers]

    def create(n: int) -> int:
        response = clients[n % 2].post("/v1/lighthouse-tests", json={
            "url": f"https://example.com/{n}", "device": "mobile", "location": "us"})
        return response.status_code

    with ThreadPoolExecutor(max_workers=25) as pool:
        statuses = Counter(pool.map(create, range(50)))
    assert statuses == {201: 5, 402: 45}
    for client in clients:
        credits = client.get("/v1/account/credits").json()
        assert credits["lighthouse"]["available_credits"] == 0
        assert len(client.get("/v1/lighthouse-tests", params={"per_page": 100}).json()
                   ["data"]) == 5
        client.close()


def test_the_rate_limit_of_a_key_holds_across_servers(tmp_path: Path, database: str) -> None:
    servers = [
        ServerProcess(tmp_path / f"data-{n}", tmp_path / f"server-{n}.log", "--no-worker",
                      "--rate-limit", "6", database=database).start()
        for n in range(2)
    ]
    try:
        key = create_key(tmp_path, database=database)
        clients = [_client(server, key) for server in servers]
        statuses = [clients[n % 2].get("/v1/account/credits").status_code for n in range(10)]
        # Six tokens in the bucket both servers share (a trickle refills during the run).
        assert statuses.count(200) in (6, 7), statuses
        assert statuses[-1] == 429
        for client in clients:
            client.close()
    finally:
        for server in servers:
            server.stop()


def _wait_final(client: httpx.Client, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The reports of ``ids`` once all are final, polled with one list request a time (a
    request per test would spend the key's rate limit)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        listed = client.get("/v1/lighthouse-tests", params={"per_page": 100})
        assert listed.status_code == 200, listed.text
        reports = {r["id"]: r for r in listed.json()["data"] if r["id"] in ids}
        if len(reports) == len(ids) and all(
            r["status"] in ("success", "failed") for r in reports.values()
        ):
            return reports
        time.sleep(2)
    raise AssertionError(f"not finished within {WAIT} s")


@pytest.mark.engine
def test_twenty_queued_tests_are_each_run_exactly_once_by_two_servers(
    tmp_path: Path, database: str, demo_url: str
) -> None:
    """The issue's count: 20 tests queued over both servers, whose workers claim from the
    one queue at once (the real engine, on the demo's fast page; the machine's engine
    lock makes the runs serial, not the claims). Each test is run once, by one server, to
    success, and both servers' workers take part."""
    key = create_key(tmp_path, database=database, lighthouse=20)
    servers = [
        ServerProcess(tmp_path / f"data-{n}", tmp_path / f"server-{n}.log",
                      database=database).start()
        for n in range(2)
    ]
    try:
        clients = [_client(server, key) for server in servers]
        ids = []
        for n in range(20):
            created = clients[n % 2].post("/v1/lighthouse-tests", json={
                "url": f"{demo_url}/fast?n={n}", "device": "desktop", "location": "de"})
            assert created.status_code == 201, created.text
            ids.append(created.json()["id"])
        reports = _wait_final(clients[1], ids)
        for client in clients:
            client.close()
    finally:
        for server in servers:
            server.stop()
    assert {r["status"] for r in reports.values()} == {"success"}, reports
    runs = {server.process.pid if server.process else 0: Counter(
        test_id for test_id in ids
        if f"running test {test_id}" in server.log_path.read_text())
        for server in servers}
    total = Counter[str]()
    for counted in runs.values():
        total.update(counted)
    assert total == Counter(ids), total  # every test run, none by both servers
    for server in servers:
        log = server.log_path.read_text()
        assert all(log.count(f"running test {test_id}") <= 1 for test_id in ids)
        assert "lost the lease" not in log
    assert all(runs.values()), "each server's worker runs some of the tests"
    # The stored lease owner of each test is the server that ran it.
    with Store(tmp_path, database=database).connection() as conn:
        owners = {row["id"]: int(str(row["lease_owner"]).split(":")[1]) for row in
                  conn.execute("SELECT id, lease_owner FROM tests")}
    assert all(test_id in runs[owners[test_id]] for test_id in ids)


@pytest.mark.engine
def test_queued_tests_run_exactly_once_by_two_servers_and_a_killed_one_is_taken_over(
    tmp_path: Path, database: str, demo_url: str
) -> None:
    """Four queued tests, two servers whose workers run them (the real engine, so few
    tests); one server is killed with SIGKILL while it runs one: the other takes it over
    once its 5-second lease has run out, and every test is run exactly once to the end."""
    key = create_key(tmp_path, database=database, lighthouse=10)
    servers = [
        ServerProcess(tmp_path / f"data-{n}", tmp_path / f"server-{n}.log", "--lease", "5",
                      database=database).start()
        for n in range(2)
    ]
    try:
        with _client(servers[0], key) as client:
            ids = [
                client.post("/v1/lighthouse-tests", json={
                    "url": f"{demo_url}/fast?n={n}", "device": "desktop", "location": "de",
                }).json()["id"]
                for n in range(4)
            ]
            # Kill whichever server holds a running test first.
            store = Store(tmp_path, database=database)
            victim: ServerProcess | None = None
            deadline = time.monotonic() + WAIT
            while victim is None and time.monotonic() < deadline:
                with store.connection() as conn:
                    row = conn.execute(
                        "SELECT lease_owner FROM tests WHERE status = 'active' "
                        "AND lease_owner IS NOT NULL LIMIT 1").fetchone()
                if row is not None:
                    pid = int(str(row["lease_owner"]).split(":")[1])
                    victim = next(s for s in servers
                                  if s.process is not None and s.process.pid == pid)
                time.sleep(0.2)
            assert victim is not None
            victim.kill()
            survivor = next(s for s in servers if s is not victim)
            with _client(survivor, key) as other:
                reports = _wait_final(other, ids)
        assert {r["status"] for r in reports.values()} == {"success"}, reports
        with store.connection() as conn:
            owners = {row["id"]: row["lease_owner"] for row in conn.execute(
                "SELECT id, lease_owner FROM tests")}
        survivor_pid = str(survivor.process.pid if survivor.process else "")
        # The killed server's test ended under the survivor's lease; no test is left
        # active or ran twice to the end (each has one outcome and one owner).
        assert any(owner.split(":")[1] == survivor_pid for owner in owners.values())
        logs = survivor.log_path.read_text() + victim.log_path.read_text()
        runs = Counter({test_id: logs.count(f"running test {test_id}") for test_id in ids})
        killed = [test_id for test_id in ids if runs[test_id] == 2]
        # Each test run once; the killed server's one started again on the survivor only.
        assert sorted(runs.values()) == [1, 1, 1, 2], runs
        assert len(killed) == 1
        assert "lost the lease" not in logs
    finally:
        for server in servers:
            server.stop()
