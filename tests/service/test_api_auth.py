"""Authentication, error bodies, rate limits and the operator endpoint."""

from __future__ import annotations

import time

import httpx
import pytest
from live_server import LiveServer, StartServer

from pagelab.store import revoke_account, transaction

PROTECTED = [
    ("POST", "/v1/lighthouse-tests", {"url": "https://a.test/"}),
    ("POST", "/v1/lighthouse-batch-tests",
     {"urls": ["https://a.test/"], "devices": [], "locations": ["us"],
      "batch_type": "multiple-devices"}),
    ("POST", "/v1/ttfb-tests", {"url": "https://a.test/", "region": "europe"}),
    ("GET", "/v1/lighthouse-tests", None),
    ("GET", "/v1/lighthouse-tests/lt_0", None),
    ("GET", "/v1/lighthouse-tests/lt_0/resources/lighthouse-json", None),
    ("GET", "/v1/lighthouse-batch-tests/lbt_0", None),
    ("GET", "/v1/account/credits", None),
]


def _send(client: httpx.Client, method: str, path: str, body: object) -> httpx.Response:
    return client.request(method, path, json=body)


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
def test_missing_key_is_401(server: LiveServer, method: str, path: str, body: object) -> None:
    with server.client() as client:
        response = _send(client, method, path, body)
    assert response.status_code == 401
    assert response.json() == {
        "code": "unauthorized",
        "message": "missing X-API-KEY header: send your API key",
    }


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
def test_unknown_key_is_401(server: LiveServer, method: str, path: str, body: object) -> None:
    key = server.key()
    with server.client(key[:-1] + ("A" if key[-1] != "A" else "B")) as client:
        response = _send(client, method, path, body)
    assert response.status_code == 401
    assert response.json()["code"] == "unauthorized"


def test_auth_comes_before_body_validation(server: LiveServer) -> None:
    with server.client() as client:
        response = client.post("/v1/lighthouse-tests", content=b"{not json")
    assert response.status_code == 401


def test_revoked_key_is_401(server: LiveServer) -> None:
    key = server.key()
    with server.client(key) as client:
        assert client.get("/v1/account/credits").status_code == 200
        with server.store.connection() as conn, transaction(conn, immediate=True):
            assert revoke_account(conn, key[:11]) is not None
        response = client.get("/v1/account/credits")
    assert response.status_code == 401
    assert response.json()["message"] == "unknown or revoked API key"


@pytest.mark.parametrize("path", ["/v1/locations", "/v1/ttfb-regions"])
def test_reference_lists_are_public_and_accept_a_key(server: LiveServer, path: str) -> None:
    with server.client() as anonymous, server.client(server.key()) as keyed:
        public, with_key = anonymous.get(path), keyed.get(path)
    assert public.status_code == with_key.status_code == 200
    assert public.json() == with_key.json()
    assert public.json()["data"]


def test_a_wrong_key_on_a_public_endpoint_is_still_401(server: LiveServer) -> None:
    with server.client("pl_not-a-key") as client:
        response = client.get("/v1/locations")
    assert response.status_code == 401


def test_reference_lists_match_the_catalog(server: LiveServer) -> None:
    with server.client() as client:
        locations = client.get("/v1/locations").json()["data"]
        regions = client.get("/v1/ttfb-regions").json()["data"]
    assert [loc["id"] for loc in locations] == [
        "us", "ca", "br", "de", "uk", "nl", "pl", "ch", "jp", "in", "sg", "au", "id", "kr", "tw"
    ]
    assert set(locations[0]) == {"id", "name", "full_name", "region"}
    assert sum(len(region["locations"]) for region in regions) == 36
    assert set(regions[0]) == {"id", "name", "locations"}


def test_unknown_path_and_method_use_the_error_body(server: LiveServer) -> None:
    with server.client() as client:
        missing = client.get("/v1/nothing-here")
        wrong_method = client.delete("/v1/locations")
    assert missing.status_code == 404
    assert missing.json() == {"code": "not_found", "message": "no such endpoint"}
    assert wrong_method.status_code == 405
    assert wrong_method.json()["code"] == "method_not_allowed"


def test_rate_limit_per_key(start_server: StartServer) -> None:
    server = start_server(rate_limit_per_minute=3)
    first, second = server.key(), server.key()
    with server.client(first) as client, server.client(second) as other:
        answers = [client.get("/v1/account/credits") for _ in range(4)]
        # Another key has its own bucket.
        assert other.get("/v1/account/credits").status_code == 200
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    ok, limited = answers[0], answers[3]
    assert ok.headers["X-RateLimit-Limit"] == "3"
    assert ok.headers["X-RateLimit-Remaining"] == "2"
    assert int(ok.headers["X-RateLimit-Reset"]) >= 1
    assert limited.json()["code"] == "rate_limited"
    assert limited.headers["X-RateLimit-Remaining"] == "0"
    # 3 per minute: one token every 20 s.
    assert 1 <= int(limited.headers["Retry-After"]) <= 20


def test_waiting_retry_after_lets_the_next_request_through(start_server: StartServer) -> None:
    server = start_server(rate_limit_per_minute=120)  # a token every 0.5 s
    with server.client(server.key()) as client:
        # Tokens refill while requests are sent: send until the bucket is empty.
        for _ in range(1000):
            limited = client.get("/v1/account/credits")
            if limited.status_code == 429:
                break
        assert limited.status_code == 429
        time.sleep(float(limited.headers["Retry-After"]))
        assert client.get("/v1/account/credits").status_code == 200


def test_keyless_requests_are_limited_per_address(start_server: StartServer) -> None:
    server = start_server(rate_limit_per_minute=2)
    with server.client() as client:
        statuses = [client.get("/v1/locations").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


def test_healthz(server: LiveServer) -> None:
    with server.client() as client:
        response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["version"] == "0.1.0"
    assert body["worker"]["enabled"] is False
    assert body["worker"]["alive"] is True
