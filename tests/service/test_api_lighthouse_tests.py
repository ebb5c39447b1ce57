"""``/v1/lighthouse-tests``: creation, validation, listing, retrieval, resources."""

from __future__ import annotations

import base64
import json
import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from live_server import LiveServer, StartServer

from pagelab import NotFoundError
from pagelab.models import Metrics, TestReport, TestStatus
from pagelab.store import finish_test, transaction

DAY_MS = 24 * 3600 * 1000


def _create(client: httpx.Client, url: str = "https://a.test/", **body: Any) -> dict[str, Any]:
    response = client.post("/v1/lighthouse-tests", json={"url": url, **body})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def test_create_queues_an_idle_test(server: LiveServer) -> None:
    with server.client(server.key(lighthouse=5)) as client:
        before = time.time() * 1000
        report = _create(client, "https://a.test/page?q=1", device="desktop", location="de")
        credits = client.get("/v1/account/credits").json()
    assert report["id"].startswith("lt_")
    assert report["url"] == "https://a.test/page?q=1"
    assert (report["device"], report["location"]) == ("desktop", "de")
    assert report["status"] == "idle"
    assert report["metrics"] is None
    assert report["report_url"] is None
    assert report["error"] is None
    # Epoch milliseconds; kept 30 days by default.
    assert before - 1000 <= report["created_at"] <= time.time() * 1000 + 1000
    assert len(str(report["created_at"])) == 13
    assert report["expires_at"] == report["created_at"] + 30 * DAY_MS
    assert report["config"]["throttling_method"] == "simulated"
    assert credits["lighthouse"]["available_credits"] == 4


def test_defaults_and_device_aliases(server: LiveServer) -> None:
    with server.client(server.key()) as client:
        default = _create(client)
        alias = _create(client, device="iphone11")
    assert (default["device"], default["location"]) == ("mobile", "us")
    assert alias["device"] == "phone11"


def test_secrets_are_echoed_masked(server: LiveServer) -> None:
    config = {
        "auth_username": "alice",
        "auth_password": "canary-password-7f3a",
        "cookies": ["session=canary-cookie-91c2", "theme=dark"],
    }
    with server.client(server.key()) as client:
        created = _create(client, config=config)
        fetched = client.get(f"/v1/lighthouse-tests/{created['id']}").text
        listed = client.get("/v1/lighthouse-tests").text
    assert created["config"]["auth_username"] == "alice"
    assert created["config"]["auth_password"] == "***"
    assert created["config"]["cookies"] == ["session=***", "theme=***"]
    for text in (json.dumps(created), fetched, listed):
        assert "canary" not in text


@pytest.mark.parametrize(
    "body",
    [
        {"url": "https://a.test/"},
        {"url": "https://a.test/x?y=1", "device": "iphone11", "location": "jp",
         "config": {"connection": "4g", "video": True, "whitelist": ["a.test"],
                    "cookies": ["s=secret-1"], "auth_username": "u", "auth_password": "p"}},
        {"url": "https://bob:pa%20ss@a.test/private"},
    ],
    ids=["defaults", "full config", "credentials in the URL"],
)
def test_the_creation_answer_is_the_stored_report(
    server: LiveServer, body: dict[str, Any]
) -> None:
    """The report answered by a creation is built from what was inserted, not read back:
    it equals, field for field, what retrieving and listing the test return."""
    with server.client(server.key()) as client:
        response = client.post("/v1/lighthouse-tests", json=body)
        assert response.status_code == 201, response.text
        assert response.headers["content-type"] == "application/json"
        assert "x-ratelimit-limit" in {name.lower() for name in response.headers}
        created = response.json()
        fetched = client.get(f"/v1/lighthouse-tests/{created['id']}").json()
        listed = client.get("/v1/lighthouse-tests").json()["data"]
    assert created == fetched == listed[0]
    assert "secret" not in response.text
    assert "pa ss" not in response.text


@pytest.mark.store("sqlite")  # SQLite's one write lock
def test_creation_waits_for_another_process_writing(server: LiveServer) -> None:
    """While another process holds SQLite's write lock the creation waits for it off the
    event loop (reads still answer), then succeeds, charged once."""
    import sqlite3
    import threading

    key = server.key(lighthouse=3)
    blocker = sqlite3.connect(server.data_dir / "pagelab.sqlite3", isolation_level=None)
    outcome: dict[str, httpx.Response] = {}
    with server.client(key) as client:
        client.get("/v1/account/credits")  # the server's connections are open
        blocker.execute("BEGIN IMMEDIATE")
        try:
            worker = threading.Thread(
                target=lambda: outcome.setdefault(
                    "post", client.post("/v1/lighthouse-tests", json={"url": "https://a.test/"})
                )
            )
            worker.start()
            time.sleep(0.5)
            assert worker.is_alive(), "the creation did not wait for the write lock"
            with server.client(key) as reader:  # the event loop is free
                assert reader.get("/v1/lighthouse-tests").status_code == 200
        finally:
            blocker.execute("COMMIT")
            blocker.close()
        worker.join(30)
        assert outcome["post"].status_code == 201, outcome["post"].text
        created = outcome["post"].json()
        assert client.get(f"/v1/lighthouse-tests/{created['id']}").json() == created
        credits = client.get("/v1/account/credits").json()
    assert credits["lighthouse"]["available_credits"] == 2


LONG = "x" * 5001

INVALID_BODIES: list[tuple[str, Any, str]] = [
    ("not JSON", b"{url:", "body is not valid JSON"),
    ("a list", [], "body"),
    ("a string", "https://a.test/", "body"),
    ("missing url", {"device": "mobile"}, "url: Field required"),
    ("url wrongly typed", {"url": 42}, "url:"),
    ("url not http", {"url": "ftp://a.test/"}, "url: must be an absolute http"),
    ("url relative", {"url": "/index.html"}, "url: must be an absolute http"),
    ("url javascript", {"url": "javascript:alert(1)"}, "url: must be an absolute http"),
    ("url too long", {"url": "https://a.test/" + LONG}, "url: String should have at most 5000"),
    ("device unknown", {"url": "https://a.test/", "device": "pager"}, "device:"),
    ("device wrongly typed", {"url": "https://a.test/", "device": 3}, "device:"),
    ("location unknown", {"url": "https://a.test/", "location": "mars"}, "location:"),
    ("config not an object", {"url": "https://a.test/", "config": "fast"}, "config:"),
    ("connection unknown", {"url": "https://a.test/", "config": {"connection": "9g"}},
     "config.connection:"),
    ("throttling unknown",
     {"url": "https://a.test/", "config": {"throttling_method": "magic"}},
     "config.throttling_method:"),
    ("http version unknown", {"url": "https://a.test/", "config": {"http_version": "3"}},
     "config.http_version:"),
    ("video wrongly typed", {"url": "https://a.test/", "config": {"video": "maybe"}},
     "config.video:"),
    ("user agent too long", {"url": "https://a.test/", "config": {"user_agent": LONG}},
     "config.user_agent: String should have at most 5000"),
    ("too many whitelist entries",
     {"url": "https://a.test/", "config": {"whitelist": [f"a{i}.test" for i in range(6)]}},
     "config.whitelist: List should have at most 5 items"),
    ("too many blacklist entries",
     {"url": "https://a.test/", "config": {"blacklist": [f"b{i}.test" for i in range(11)]}},
     "config.blacklist: List should have at most 10 items"),
    ("cookie without a value", {"url": "https://a.test/", "config": {"cookies": ["oops"]}},
     "config.cookies[0]:"),
]


@pytest.mark.parametrize(
    ("body", "message"),
    [(body, message) for _, body, message in INVALID_BODIES],
    ids=[name for name, _, _ in INVALID_BODIES],
)
def test_invalid_input_is_400_naming_the_field(
    server: LiveServer, body: Any, message: str
) -> None:
    with server.client(server.key(lighthouse=1)) as client:
        if isinstance(body, bytes):
            response = client.post("/v1/lighthouse-tests", content=body)
        else:
            response = client.post("/v1/lighthouse-tests", json=body)
        credits = client.get("/v1/account/credits").json()["lighthouse"]
    assert response.status_code == 400, response.text
    error = response.json()
    assert set(error) == {"code", "message"}
    assert error["code"] == "invalid_request"
    assert message in error["message"]
    assert credits["available_credits"] == 1  # nothing charged


def test_empty_and_oversized_bodies_are_400(server: LiveServer) -> None:
    with server.client(server.key()) as client:
        empty = client.post("/v1/lighthouse-tests", content=b"")
        huge = client.post("/v1/lighthouse-tests", content=b"[" + b"1," * 600_000 + b"1]")
    assert empty.status_code == huge.status_code == 400
    assert "body" in empty.json()["message"]
    assert "larger than" in huge.json()["message"]


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False, 0, -1, 2**70, 1.5e308, -0.0])
    if kind == 2:
        return rng.choice(["", "mobile", "us", "https://a.test/", "\u0000", "é" * 3, "x" * 6000])
    if kind == 3:
        return rng.choice(["fiber", "simulated", "2", "1.1", "*", "a=b"])
    if kind == 4:
        return rng.uniform(-1e9, 1e9)
    if kind == 5:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["url", "device", "location", "config", "connection", "video", "cookies",
            "whitelist", "blacklist", "http_version", "urls", "devices", "batch_type", "region"]
    return {rng.choice(keys): _random_json(rng, depth + 1) for _ in range(rng.randrange(6))}


@pytest.mark.parametrize(
    "path", ["/v1/lighthouse-tests", "/v1/lighthouse-batch-tests", "/v1/ttfb-tests"]
)
def test_no_input_produces_a_500(server: LiveServer, path: str) -> None:
    rng = random.Random(path)
    bodies: list[Any] = [_random_json(rng) for _ in range(150)]
    bodies += [{"url": "https://a.test/", "config": _random_json(rng)} for _ in range(50)]
    with server.client(server.key(lighthouse=10_000, ttfb=0)) as client:
        for body in bodies:
            response = client.post(path, json=body)
            assert response.status_code in (201, 400, 402), (body, response.text)
            assert set(response.json()) >= {"code", "message"} or response.status_code == 201
        nested = client.post(path, content=b"[" * 100_000 + b"]" * 100_000)
        assert nested.status_code == 400


def _create_series(client: httpx.Client, count: int) -> list[dict[str, Any]]:
    """Tests created at distinct milliseconds, oldest first."""
    reports = []
    for index in range(count):
        reports.append(_create(client, f"https://a.test/{index}"))
        time.sleep(0.003)
    return reports


def _ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200
    return [report["id"] for report in response.json()["data"]]


def test_list_is_newest_first_and_paged(server: LiveServer) -> None:
    with server.client(server.key()) as client:
        created = _create_series(client, 12)
        newest_first = [report["id"] for report in reversed(created)]
        assert _ids(client.get("/v1/lighthouse-tests")) == newest_first[:10]
        assert _ids(client.get("/v1/lighthouse-tests", params={"page": 2})) == newest_first[10:]
        empty = client.get("/v1/lighthouse-tests", params={"page": 3})
        assert empty.json() == {"data": []}
        assert _ids(client.get("/v1/lighthouse-tests", params={"per_page": 5, "page": 2})) == (
            newest_first[5:10]
        )


@pytest.mark.parametrize(
    ("params", "expected_count", "expected_first_index"),
    [
        ({"per_page": "0"}, 1, 0),
        ({"per_page": "-3"}, 1, 0),
        ({"per_page": "1000"}, 12, 0),
        ({"per_page": "abc"}, 10, 0),
        ({"per_page": "2.7"}, 2, 0),
        ({"per_page": ""}, 10, 0),
        ({"page": "0"}, 10, 0),
        ({"page": "-1"}, 10, 0),
        ({"page": "two"}, 10, 0),
        ({"page": "1e30"}, 0, None),
        ({"page": "NaN", "per_page": "inf"}, 12, 0),
        ({"created_at_gt": "yesterday"}, 10, 0),
    ],
)
def test_list_parameters_never_fail(
    server: LiveServer,
    params: dict[str, str],
    expected_count: int,
    expected_first_index: int | None,
) -> None:
    with server.client(server.key()) as client:
        created = _create_series(client, 12)
        ids = _ids(client.get("/v1/lighthouse-tests", params=params))
    assert len(ids) == expected_count
    if expected_first_index is not None:
        assert ids[0] == created[-1 - expected_first_index]["id"]


def test_list_created_at_filters(server: LiveServer) -> None:
    with server.client(server.key()) as client:
        created = _create_series(client, 6)
        stamps = [report["created_at"] for report in created]
        ids = [report["id"] for report in created]

        def listed(**params: Any) -> list[str]:
            return sorted(_ids(client.get("/v1/lighthouse-tests", params=params)))

        assert listed(created_at_gt=stamps[2]) == sorted(ids[3:])
        assert listed(created_at_gte=stamps[2]) == sorted(ids[2:])
        assert listed(created_at_lt=stamps[2]) == sorted(ids[:2])
        assert listed(created_at_lte=stamps[2]) == sorted(ids[:3])
        assert listed(created_at_gt=stamps[1], created_at_lte=stamps[4]) == sorted(ids[2:5])
        assert listed(created_at_gte=stamps[5] + 1) == []
        # Seconds and ISO 8601 are read too.
        start = datetime.fromtimestamp(stamps[0] / 1000, UTC)
        assert listed(created_at_gte=(stamps[0] // 1000)) == sorted(ids)
        assert listed(created_at_lt=start.isoformat()) == []
        assert listed(created_at_gte=(start - timedelta(seconds=1)).isoformat()) == sorted(ids)
        # Out of range: the nearest bound.
        assert listed(created_at_lt="1e300") == sorted(ids)
        assert listed(created_at_gt="-1e300") == sorted(ids)


def test_accounts_never_see_each_other(server: LiveServer) -> None:
    with server.client(server.key()) as alice, server.client(server.key()) as bob:
        test = _create(alice)
        batch = alice.post(
            "/v1/lighthouse-batch-tests",
            json={"urls": ["https://a.test/"], "devices": ["mobile", "desktop"],
                  "locations": ["us"], "batch_type": "multiple-devices"},
        ).json()
        assert bob.get("/v1/lighthouse-tests").json() == {"data": []}
        for path in (
            f"/v1/lighthouse-tests/{test['id']}",
            f"/v1/lighthouse-tests/{test['id']}/resources/lighthouse-json",
            f"/v1/lighthouse-batch-tests/{batch['id']}",
            f"/v1/lighthouse-tests/{batch['reports'][0]['id']}",
        ):
            response = bob.get(path)
            assert response.status_code == 404, path
            assert response.json()["code"] == "not_found"
        assert len(alice.get("/v1/lighthouse-tests").json()["data"]) == 3


@pytest.mark.parametrize("kind", ["lighthouse-tests", "lighthouse-batch-tests"])
@pytest.mark.parametrize("test_id", ["lt_000000000000000000000000", "nope", "x" * 5001])
def test_unknown_ids_are_404(server: LiveServer, kind: str, test_id: str) -> None:
    with server.client(server.key()) as client:
        response = client.get(f"/v1/{kind}/{test_id}")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_expired_tests_are_404_then_deleted(start_server: StartServer) -> None:
    server = start_server(retention=timedelta(milliseconds=300), sweep_interval=0.2,
                          poll_interval=0.05)
    with server.client(server.key()) as client:
        test = _create(client)
        assert client.get(f"/v1/lighthouse-tests/{test['id']}").status_code == 200
        time.sleep(0.5)
        assert client.get(f"/v1/lighthouse-tests/{test['id']}").status_code == 404
        assert client.get("/v1/lighthouse-tests").json() == {"data": []}
    deadline = time.monotonic() + 30  # returns as soon as it happens; 30 s only if never
    while time.monotonic() < deadline:
        with server.store.connection() as conn:
            if conn.execute("SELECT COUNT(*) FROM tests").fetchone()[0] == 0:
                break
        time.sleep(0.05)
    else:
        pytest.fail("the expired test was not deleted")


def test_resources(server: LiveServer) -> None:
    """Resource names and encodings, on a test finished through the store as the worker
    finishes it (the engine itself is exercised by the end-to-end test)."""
    artifacts = {
        "lighthouse-json": b'{"lighthouseVersion": "13.5.0"}',
        "html-report": b"<!doctype html><title>report</title>",
        "screenshot": b"data:image/webp;base64,UklGRg==",
        "filmstrip": b'[{"timing": 100, "data": "data:image/jpeg;base64,AA=="}]',
        "screenshots": b'[{"timing": 12.5, "data": "data:image/jpeg;base64,AA=="}]',
        "video": b"\x1aE\xdf\xa3webm-bytes",
        "har": b'{"log": {"version": "1.2", "entries": []}}',
    }
    with server.client(server.key()) as client:
        test = _create(client)
        idle = client.get(f"/v1/lighthouse-tests/{test['id']}/resources/lighthouse-json")
        assert idle.status_code == 404
        assert "idle" in idle.json()["message"]
        store = server.store
        with store.connection() as conn, transaction(conn):
            for name, data in artifacts.items():
                store.artifacts.write(conn, test["id"], name, data)
            finish_test(
                conn, test["id"], status=TestStatus.SUCCESS, lighthouse_version="13.5.0",
                metrics=Metrics(performance_score=99), error=None, vantage="local",
                environment=None,
            )
        bodies = {
            name: client.get(f"/v1/lighthouse-tests/{test['id']}/resources/{name}")
            for name in artifacts
        }
        unknown = client.get(f"/v1/lighthouse-tests/{test['id']}/resources/trace")
        report = client.get(f"/v1/lighthouse-tests/{test['id']}").json()
    for response in bodies.values():
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
    assert json.loads(bodies["lighthouse-json"].json()) == {"lighthouseVersion": "13.5.0"}
    assert bodies["html-report"].json() == "<!doctype html><title>report</title>"
    assert bodies["screenshot"].json().startswith("data:image/webp;base64,")
    assert json.loads(bodies["filmstrip"].json())[0]["timing"] == 100
    assert json.loads(bodies["screenshots"].json())[0]["timing"] == 12.5
    assert json.loads(bodies["har"].json())["log"]["version"] == "1.2"
    video = bodies["video"].json()
    assert video.startswith("data:video/webm;base64,")
    assert base64.b64decode(video.split(",", 1)[1]) == artifacts["video"]
    assert unknown.status_code == 404
    assert unknown.json()["code"] == "not_found"
    # Rules 1-3: success has report_url (an absolute URL of this server), no error.
    assert report["status"] == "success"
    assert report["report_url"].startswith(f"{server.base_url}/reports/lighthouse-tests/")
    assert report["error"] is None
    page = httpx.get(report["report_url"])
    assert page.status_code == 200
    assert page.text == "<!doctype html><title>report</title>"
    assert page.headers["content-type"].startswith("text/html")
    forged = httpx.get(report["report_url"].split("?")[0] + "?token=0123")
    assert forged.status_code == 404
    # The same link opens the run's HAR (report.har(), no key); a forged one does not.
    stored = TestReport.model_validate(report)
    assert stored.har_url == report["report_url"].replace("?token=", "/har?token=")
    assert stored.har() == json.loads(artifacts["har"])
    har = httpx.get(stored.har_url)
    assert har.headers["content-disposition"] == f'attachment; filename="{test["id"]}.har"'
    assert httpx.get(stored.har_url.split("?")[0] + "?token=0123").status_code == 404
    with pytest.raises(NotFoundError, match="link expired"):
        stored.model_copy(update={"report_url": report["report_url"] + "0"}).har()
