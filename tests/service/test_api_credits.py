"""Credits (atomic charges, 402, refunds, top-ups, refill date), TTFB tests and the keys CLI."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import httpx
import pytest
from live_server import LiveServer, StartServer

from fixtures_http import FixtureServer, closed_port
from pagelab.models import LighthouseError, TestStatus
from pagelab.store import finish_test, revoke_account, transaction


async def _create_concurrently(base_url: str, key: str, count: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(
        base_url=base_url, headers={"X-API-KEY": key}, timeout=60,
        limits=httpx.Limits(max_connections=count),
    ) as client:
        return await asyncio.gather(*(
            client.post("/v1/lighthouse-tests", json={"url": f"https://a.test/{i}"})
            for i in range(count)
        ))


def test_50_concurrent_creations_against_20_credits(server: LiveServer) -> None:
    key = server.key(lighthouse=20)
    started = time.perf_counter()
    responses = asyncio.run(_create_concurrently(server.base_url, key, 50))
    elapsed = time.perf_counter() - started
    statuses = sorted(r.status_code for r in responses)
    with server.client(key) as client:
        credits = client.get("/v1/account/credits").json()["lighthouse"]
        listed = client.get("/v1/lighthouse-tests", params={"per_page": 100}).json()["data"]
    print(f"50 concurrent creations, 20 credits: {statuses.count(201)} created, "
          f"{statuses.count(402)} refused in {elapsed:.2f} s")
    assert statuses == [201] * 20 + [402] * 30
    assert credits == {"available_credits": 0, "available_paid_credits": 0}
    assert len(listed) == 20
    for response in responses:
        if response.status_code == 402:
            assert response.json()["code"] == "insufficient_credits"


def test_credits_shape_and_refill_date(server: LiveServer) -> None:
    with server.client(server.key(lighthouse=7, ttfb=3)) as client:
        credits = client.get("/v1/account/credits").json()
    assert credits["lighthouse"] == {"available_credits": 7, "available_paid_credits": 0}
    assert credits["ttfb"] == {"available_credits": 3, "available_paid_credits": 0}
    refill = datetime.fromisoformat(credits["credits_refill_date"].replace("Z", "+00:00"))
    now = datetime.now(UTC)
    assert refill > now
    assert (refill.day, refill.hour, refill.minute) == (1, 0, 0)
    assert (refill - now).days <= 31


def test_plan_credits_are_spent_before_paid_ones(server: LiveServer) -> None:
    key = server.key(lighthouse=1)
    result = server.store_cli("keys", "credits", key[:11], "--lighthouse", "2")
    assert result.returncode == 0, result.stderr
    assert "1/1 + 2 paid" in result.stdout
    with server.client(key) as client:
        assert client.get("/v1/account/credits").json()["lighthouse"] == {
            "available_credits": 1, "available_paid_credits": 2}
        statuses = [client.post("/v1/lighthouse-tests", json={"url": "https://a.test/"})
                    .status_code for _ in range(4)]
        after_one = client.get("/v1/account/credits").json()["lighthouse"]
    assert statuses == [201, 201, 201, 402]
    assert after_one == {"available_credits": 0, "available_paid_credits": 0}


def test_an_engine_failure_gives_the_credit_back(start_server: StartServer) -> None:
    server = start_server(sweep_interval=0.1, poll_interval=0.05)
    key = server.key(lighthouse=2)
    with server.client(key) as client:
        crashed = client.post("/v1/lighthouse-tests", json={"url": "https://a.test/"}).json()
        page_failed = client.post("/v1/lighthouse-tests", json={"url": "https://b.test/"}).json()
        store = server.store
        # Recorded as the engine records them: a crash is the engine's fault, NO_FCP the page's.
        with store.connection() as conn, transaction(conn):
            finish_test(conn, crashed["id"], status=TestStatus.FAILED, lighthouse_version=None,
                        metrics=None, error=LighthouseError(code="ENGINE_CRASHED", message="x"),
                        vantage="local", environment=None, engine_failure=True)
            finish_test(conn, page_failed["id"], status=TestStatus.FAILED,
                        lighthouse_version="13.5.0", metrics=None,
                        error=LighthouseError(code="NO_FCP", message="y"), vantage="local",
                        environment=None)
        deadline = time.monotonic() + 30  # returns as soon as it happens; 30 s only if never
        while time.monotonic() < deadline:
            credits = client.get("/v1/account/credits").json()["lighthouse"]
            if credits["available_credits"] == 1:
                break
            time.sleep(0.05)
        time.sleep(0.3)  # several more sweeps: the refund happens once
        credits = client.get("/v1/account/credits").json()["lighthouse"]
    assert credits == {"available_credits": 1, "available_paid_credits": 0}


@pytest.fixture
def page_server() -> FixtureServer:
    with FixtureServer() as site:
        yield site


def test_ttfb_test_measures_each_location_of_the_region(
    server: LiveServer, page_server: FixtureServer
) -> None:
    with server.client(server.key(ttfb=2)) as client:
        response = client.post("/v1/ttfb-tests",
                               json={"url": page_server.url("/delay/30"), "region": "middle-east"})
        credits = client.get("/v1/account/credits").json()["ttfb"]
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["region"] == "middle-east"
    assert result["vantage"] == "local"
    assert [r["location_id"] for r in result["result"]] == ["il-central", "qa-central"]
    for location in result["result"]:
        assert location["status"] == "success"
        timings = location["data"]["timings"]
        assert timings["ttfb"] >= 30  # milliseconds
        assert timings["total"] >= timings["ttfb"]
        assert location["data"]["http_status"] == 200
    assert page_server.requests == 2
    assert credits["available_credits"] == 1


def test_ttfb_failures(server: LiveServer) -> None:
    with server.client(server.key(ttfb=1)) as client:
        region = client.post("/v1/ttfb-tests", json={"url": "https://a.test/", "region": "moon"})
        url = client.post("/v1/ttfb-tests", json={"url": "gopher://a", "region": "africa"})
        refused = client.post("/v1/ttfb-tests", json={
            "url": f"http://127.0.0.1:{closed_port()}/", "region": "africa"})
        empty = client.post("/v1/ttfb-tests", json={"url": "https://a.test/", "region": "africa"})
    assert region.status_code == url.status_code == 400
    assert region.json()["message"].startswith("region:")
    assert url.json()["message"].startswith("url:")
    # A page that cannot be reached is a measured failure, not an error response.
    assert refused.status_code == 200
    assert refused.json()["result"][0]["status"] == "failed"
    assert refused.json()["result"][0]["error"]["code"] == "CONNECTION_REFUSED"
    assert empty.status_code == 402


def test_keys_cli(start_server: StartServer) -> None:
    server = start_server()
    created = server.store_cli("keys", "create", "--lighthouse-credits", "5",
                               "--ttfb-credits", "0")
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    assert key.startswith("pl_")
    assert len(key) > 30
    assert "shown once" in created.stderr
    listed = server.store_cli("keys", "list")
    assert key[:11] in listed.stdout
    assert key not in listed.stdout
    assert "lighthouse 5/5 + 0 paid" in listed.stdout
    with server.client(key) as client:
        assert client.get("/v1/account/credits").status_code == 200
        revoked = server.store_cli("keys", "revoke", key[:11])
        assert revoked.returncode == 0
        assert "revoked" in revoked.stdout
        assert client.get("/v1/account/credits").status_code == 401
    unknown = server.store_cli("keys", "revoke", "pl_00000000")
    assert unknown.returncode == 2
    assert "no key starts with" in unknown.stderr
    short = server.store_cli("keys", "credits", "pl_", "--lighthouse", "1")
    assert short.returncode == 2
    # Only the hash is stored.
    database = server.stored_bytes()
    assert key.encode() not in database


#: How long a test may wait for a Lighthouse run another process holds the engine for.
ENGINE_WAIT = 600.0


@pytest.mark.engine
@pytest.mark.store("sqlite", "postgresql")  # each queue claims its test its own way
@pytest.mark.usefixtures("quick_navigation_in_test")  # the credits, not the measurement
def test_a_key_revoked_while_its_test_runs_leaves_the_credits_exact(
    start_server: StartServer, store_backend: str,
) -> None:
    """One rule: a refunded test stays failed; a test that ran is charged. The worker has
    taken the test and waits for the engine (held here) when the key is revoked: SQLite's
    queue still says ``idle`` then, so the revocation fails and refunds it, and it must not
    run afterwards (before: it ran and ended ``success``, error cleared, refunded all the
    same); PostgreSQL's claim made it ``active``, so it runs and is charged."""
    from pagelab.engine._lock import engine_lock

    server = start_server(worker=True)
    key = server.key(lighthouse=5)
    lock = engine_lock()
    with FixtureServer() as site:
        lock.acquire(timeout=ENGINE_WAIT)
        try:
            with server.client(key) as client:
                test_id = client.post("/v1/lighthouse-tests", json={"url": site.url()}
                                      ).json()["id"]
            deadline = time.monotonic() + 60
            while server.running_test != test_id:
                assert time.monotonic() < deadline, "the worker did not take the test"
                time.sleep(0.1)
            with server.store.connection() as conn, transaction(conn, immediate=True):
                account = revoke_account(conn, key[:11])
            assert account is not None
        finally:
            lock.release()
        deadline = time.monotonic() + ENGINE_WAIT
        while True:
            with server.store.connection() as conn:
                row = conn.execute(
                    "SELECT t.status, t.error_code, c.refunded_at, a.lighthouse_credits "
                    "FROM tests t JOIN credit_charges c ON c.test_id = t.id "
                    "JOIN accounts a ON a.id = t.account_id WHERE t.id = ?", (test_id,),
                ).fetchone()
            if server.running_test is None and TestStatus(row["status"]).is_final:
                break
            assert time.monotonic() < deadline, f"test {test_id} did not finish: {row}"
            time.sleep(0.2)
    outcome = (row["status"], row["error_code"], row["refunded_at"] is not None,
               row["lighthouse_credits"])
    if store_backend == "sqlite":
        assert outcome == ("failed", "ACCOUNT_REVOKED", True, 5)
        assert site.requests == 0  # the page was never loaded
    else:
        assert outcome == ("success", None, False, 4)
