"""``pagelab.Client``, ``pagelab.AsyncClient`` and ``ApiRunner`` against real servers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from live_server import LiveServer, ScriptedServer, StartServer

from fixtures_http import FixtureServer, SilentServer, closed_port
from pagelab import _exceptions as errors
from pagelab.client import AsyncClient, Client, RetryPolicy
from pagelab.models import BatchReport, LighthouseConfig, TestReport, TestStatus
from pagelab.runners import Runner
from pagelab.runners._api import ApiRunner

FAST_RETRY = RetryPolicy(max_retries=3, backoff_base=0.01, backoff_max=0.05)


@pytest.fixture
def client(server: LiveServer) -> Iterator[Client]:
    with Client(server.base_url, server.key(lighthouse=50, ttfb=5)) as api:
        yield api


def test_every_endpoint(client: Client, server: LiveServer) -> None:
    assert [loc.id for loc in client.list_locations()][:3] == ["us", "ca", "br"]
    assert any(region.id == "europe" for region in client.list_ttfb_regions())
    assert client.get_credits().lighthouse.available_credits == 50
    created = client.create_test("https://a.test/", "desktop", "de",
                                 {"connection": "4g", "auth_password": "secret"})
    assert isinstance(created, TestReport)
    assert created.status == TestStatus.IDLE
    assert created.config.auth_password == "***"
    assert created.created_at is not None
    assert abs(created.created_at - datetime.now(UTC)) < timedelta(minutes=1)
    typed = client.create_test("https://b.test/", config=LighthouseConfig(video=True))
    assert typed.config.video is True
    assert client.get_test(created.id or "") == created
    batch = client.create_batch(["https://a.test/"], ["mobile", "desktop"], ["us"],
                                "multiple-devices")
    assert isinstance(batch, BatchReport)
    assert len(batch.reports) == 2
    assert client.get_batch(batch.id or "").id == batch.id
    listed = client.list_tests(per_page=2)
    assert len(listed) == 2
    assert [t.id for t in client.iter_tests(per_page=3)][-2:] == [typed.id, created.id]
    assert client.list_tests(created_at_gt=datetime.now(UTC) + timedelta(hours=1)) == []
    assert len(client.list_tests(per_page=100, created_at_gte=created.created_at)) == 4
    # Epoch seconds work as well as milliseconds and datetimes.
    assert client.list_tests(created_at_lt=time.time() - 3600) == []
    with pytest.raises(errors.APINotFoundError) as missing:
        client.get_resource(created.id or "", "lighthouse-json")
    assert missing.value.status_code == 404
    assert client.health()["status"] == "ok"
    with FixtureServer() as site:
        ttfb = client.create_ttfb_test(site.url("/"), "africa")
    assert ttfb.result[0].status == "success"


def test_api_errors_carry_status_code_and_message(server: LiveServer) -> None:
    with Client(server.base_url, api_key="") as anonymous:
        assert anonymous.list_locations()  # public
        with pytest.raises(errors.AuthenticationError) as unauthorized:
            anonymous.get_credits()
    assert unauthorized.value.status_code == 401
    assert unauthorized.value.code == "unauthorized"
    with Client(server.base_url, server.key(lighthouse=0)) as client:
        with pytest.raises(errors.BadRequestError) as bad:
            client.create_test("ftp://a.test/")
        with pytest.raises(errors.InsufficientCreditsError) as poor:
            client.create_test("https://a.test/")
        with pytest.raises(errors.APINotFoundError) as missing:
            client.get_batch("lbt_unknown")
    assert bad.value.message.startswith("url:")
    assert poor.value.code == "insufficient_credits"
    # A 404 is also the toolkit's NotFoundError (and a KeyError), whatever the backend.
    assert isinstance(missing.value, errors.NotFoundError)
    assert isinstance(missing.value, KeyError)
    assert str(missing.value).startswith("404 not_found:")


def test_a_429_is_retried_after_retry_after(start_server: StartServer) -> None:
    server = start_server(rate_limit_per_minute=60)  # one token a second
    key = server.key()
    answers: list[httpx.Response] = []
    # A token may come back between the drain's 429 and the client's first request; then
    # the client is answered at once and nothing was retried: drain again (bounded).
    for _ in range(5):
        answers.clear()
        with server.client(key) as raw:
            while raw.get("/v1/account/credits").status_code != 429:
                pass
        hooks = {"response": [answers.append]}
        with Client(server.base_url, key, http_client=httpx.Client(event_hooks=hooks)) as client:
            started = time.monotonic()
            assert client.get_credits().lighthouse.available_credits == 100
            waited = time.monotonic() - started
        if answers[0].status_code == 429:
            break
    assert [a.status_code for a in answers] == [429, 200]
    # It waited what the 429 asked for before asking again.
    assert waited >= float(answers[0].headers["Retry-After"]) - 0.05


def test_a_long_retry_after_is_raised_at_once(start_server: StartServer) -> None:
    server = start_server(rate_limit_per_minute=1)
    with Client(server.base_url, server.key(), retry=RetryPolicy(max_retry_after=5)) as client:
        client.get_credits()
        # Raised, not waited out: after the 60 s the token is back and the call succeeds
        # (and a wait of max_retry_after's 5 s then a retry would see a shorter Retry-After).
        with pytest.raises(errors.RateLimitedError) as limited:
            client.get_credits()
    assert limited.value.retry_after == 60
    assert limited.value.code == "rate_limited"


def _report(status: str, created_at: float = 1_700_000_000) -> dict[str, Any]:
    return {"id": "lt_1", "url": "https://a.test/", "device": "mobile", "location": "us",
            "status": status, "created_at": created_at, "expires_at": created_at}


def test_5xx_retries_only_where_safe() -> None:
    unavailable = (503, {"code": "unavailable", "message": "later"}, {"Retry-After": "0"})
    crashed = (500, {"code": "internal_error", "message": "boom"}, {})
    script = {
        ("GET", "/v1/locations"): [crashed, unavailable, (200, {"data": []}, {})],
        ("POST", "/v1/lighthouse-tests"): [crashed, (201, _report("idle"), {})],
        ("POST", "/v1/lighthouse-batch-tests"): [unavailable, (201, {
            "id": "lbt_1", "urls": [], "devices": [], "locations": [],
            "batch_type": "multiple-urls", "status": "idle", "reports": []}, {})],
    }
    with ScriptedServer(script) as other, Client(other.base_url, "k", retry=FAST_RETRY) as client:
        assert client.list_locations() == []
        # A creation that may have reached the server is not repeated...
        with pytest.raises(errors.ServerError) as crash:
            client.create_test("https://a.test/")
        # ...one the server refused with 503 is.
        assert client.create_batch(["https://a.test/"], [], [], "multiple-urls").id == "lbt_1"
        requests = other.requests
    assert crash.value.status_code == 500
    assert requests.count(("GET", "/v1/locations")) == 3
    assert requests.count(("POST", "/v1/lighthouse-tests")) == 1
    assert requests.count(("POST", "/v1/lighthouse-batch-tests")) == 2


@pytest.mark.parametrize("created_at", [1_700_000_000, 1_700_000_000_000, 1_700_000_000.5])
def test_timestamps_in_seconds_or_milliseconds(created_at: float) -> None:
    script = {("GET", "/v1/lighthouse-tests/lt_1"): [(200, _report("idle", created_at), {})]}
    with ScriptedServer(script) as other, Client(other.base_url, "k") as client:
        report = client.get_test("lt_1")
    assert report.created_at is not None
    assert report.created_at.date() == datetime(2023, 11, 14, tzinfo=UTC).date()


def test_wait_batch_waits_for_items_not_the_batch_status() -> None:
    def batch(status: str, *items: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        reports = [{"id": f"lt_{i}", "url": "https://a.test/", "device": "mobile",
                    "location": "us", "status": s} for i, s in enumerate(items)]
        return (200, {"id": "lbt_1", "urls": ["https://a.test/"], "devices": ["mobile"],
                      "locations": ["us"], "batch_type": "multiple-urls", "status": status,
                      "reports": reports}, {})

    script = {("GET", "/v1/lighthouse-batch-tests/lbt_1"): [
        batch("idle", "idle", "idle"),
        batch("idle", "success", "idle"),  # this server says idle while an item is done
        batch("idle", "success", "idle"),
        batch("active", "success", "failed"),  # ...and never says completed
    ]}
    seen: list[tuple[str, ...]] = []
    with ScriptedServer(script) as other, Client(other.base_url, "k") as client:
        final = client.wait_batch(
            "lbt_1", poll_interval=0.01,
            progress=lambda b: seen.append(tuple(i.status.value for i in b.reports)),
        )
    assert final.status.value == "active"
    assert final.is_final
    assert seen == [("idle", "idle"), ("success", "idle"), ("success", "failed")]


def test_wait_times_out(client: Client) -> None:
    created = client.create_test("https://a.test/")
    seen: list[TestReport] = []
    started = time.monotonic()
    # Nothing runs the test (worker off), so only the 0.3 s timeout ends the wait (else
    # pytest-timeout does); it waited the whole of it (a lower bound: load only adds).
    with pytest.raises(errors.RequestTimeoutError, match="last status: idle"):
        client.wait_test(created, timeout=0.3, poll_interval=0.05, progress=seen.append)
    assert time.monotonic() - started >= 0.3
    assert [report.status for report in seen] == [TestStatus.IDLE]


def test_transport_failures() -> None:
    closed = Client(f"http://127.0.0.1:{closed_port()}", "k", retry=FAST_RETRY)
    with closed, pytest.raises(errors.TransportError, match="ConnectError"):
        closed.list_locations()
    with SilentServer() as silent:
        slow = Client(silent.url(), "k", timeout=0.3, retry=RetryPolicy(max_retries=0))
        with slow, pytest.raises(errors.RequestTimeoutError):
            slow.get_credits()


def test_configuration_from_the_environment(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(errors.InvalidInputError, match="PAGELAB_API_URL"):
        Client()
    key = server.key()
    monkeypatch.setenv("PAGELAB_API_URL", server.base_url + "/")
    monkeypatch.setenv("PAGELAB_API_KEY", key)
    with Client() as client:
        assert client.base_url == server.base_url
        assert client.get_credits().ttfb.available_credits == 100
        assert key not in repr(client)


def test_async_client(server: LiveServer) -> None:
    key = server.key(lighthouse=5)

    async def scenario() -> None:
        async with AsyncClient(server.base_url, key) as client:
            created, credits = await asyncio.gather(
                client.create_test("https://a.test/", config={"video": True}),
                client.get_credits(),
            )
            assert created.status == TestStatus.IDLE
            assert credits.lighthouse.available_credits in (4, 5)
            assert (await client.get_test(created.id or "")).config.video is True
            batch = await client.create_batch(["https://a.test/", "https://b.test/"],
                                              ["mobile"], ["us"], "multiple-urls")
            assert len((await client.get_batch(batch.id or "")).reports) == 2
            assert len([t async for t in client.iter_tests(per_page=2)]) == 3
            assert len(await client.list_locations()) == 15
            with pytest.raises(errors.APINotFoundError):
                await client.get_resource(created.id or "", "video")
            with pytest.raises(errors.RequestTimeoutError):
                await client.wait_test(created.id or "", timeout=0.2, poll_interval=0.05)
            with pytest.raises(errors.InsufficientCreditsError):
                await client.create_batch(["https://a.test/"], [], ["us"], "multiple-devices")

    asyncio.run(scenario())


def test_api_runner(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAGELAB_API_URL", server.base_url)
    monkeypatch.setenv("PAGELAB_API_KEY", server.key())
    with ApiRunner() as runner:
        assert isinstance(runner, Runner)
        assert len(runner.locations()) == 15
        assert runner.ttfb_regions()
        with pytest.raises(errors.InvalidInputError, match=r"config\.whitelist"):
            runner.lighthouse("https://a.test/", config={"whitelist": ["a"] * 6})
        created = runner.client.create_test("https://a.test/")
        batch = runner.client.create_batch(["https://a.test/"], ["mobile"], ["us"],
                                           "multiple-urls")
        assert runner.get(created.id or "") == created
        assert isinstance(runner.get(batch.id or ""), BatchReport)
        with pytest.raises(errors.NotFoundError):
            runner.get("x_1")
        assert [t.id for t in runner.list(per_page=1)] == [batch.reports[0].id]
        assert len(runner.list(created_at_gte=created.created_at)) == 2
        with FixtureServer() as site:
            assert runner.ttfb(site.url("/"), "africa").region == "africa"
