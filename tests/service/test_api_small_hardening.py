"""Issue 10, item 7: credentials in URLs are masked, wrong keys are rate-limited per
address, /healthz tells when the engine cannot run, report links ignore a forged Host,
HEAD and OPTIONS answer, malformed ports, NUL bytes and header injection are 400."""

from __future__ import annotations

import socket

import pytest
from live_server import LOOPBACK, LiveServer, StartServer


def test_credentials_in_the_url_are_masked_and_not_stored(server: LiveServer) -> None:
    key = server.key(lighthouse=2, ttfb=1)
    with server.client(key) as client:
        report = client.post("/v1/lighthouse-tests",
                             json={"url": "http://alice:s3cret-pw@127.0.0.1:9/x"}).json()
        assert report["url"] == "http://127.0.0.1:9/x"
        assert report["config"]["auth_username"] == "alice"
        assert report["config"]["auth_password"] == "***"
        ttfb = client.post("/v1/ttfb-tests", json={
            "url": f"http://alice:s3cret-pw@{LOOPBACK}:9/", "region": "oceania"}).json()
        assert ttfb["url"] == f"http://alice:***@{LOOPBACK}:9/"
        batch = client.post("/v1/lighthouse-batch-tests", json={
            "urls": ["http://bob:pw@127.0.0.1:9/"], "devices": ["desktop"],
            "locations": ["us"], "batch_type": "multiple-urls"})
        assert batch.status_code == 400
    masked = server.stored_bytes()
    assert b"s3cret-pw@" not in masked


def test_wrong_keys_are_rate_limited_per_address(start_server: StartServer) -> None:
    server = start_server(failed_key_limit_per_minute=5)
    with server.client("pl_" + "x" * 40) as client:
        statuses = [client.get("/v1/account/credits").status_code for _ in range(8)]
    assert statuses[:5] == [401] * 5
    assert statuses[5:] == [429] * 3


def test_health_is_degraded_while_the_engine_cannot_run(server: LiveServer) -> None:
    server_worker = server._server.config.app  # the FastAPI app
    worker = server_worker.state.worker
    worker.engine_error = "Lighthouse is not installed: run `pagelab setup`"
    with server.client() as client:
        health = client.get("/healthz").json()
    worker.engine_error = None
    assert health["status"] == "degraded"
    assert any("Lighthouse is not installed" in w for w in health["warnings"])


def test_report_links_ignore_a_forged_host(start_server: StartServer) -> None:
    for trusted, expected in (((), None), (("perf.example.org",), "http://perf.example.org/")):
        server = start_server(trusted_hosts=trusted)
        with server.client(server.key()) as client:
            batch = client.post(
                "/v1/lighthouse-batch-tests", headers={"Host": "evil.example"},
                json={"urls": ["http://127.0.0.1:9/"], "devices": ["desktop"],
                      "locations": ["us"], "batch_type": "multiple-urls"}).json()
        assert "evil.example" not in batch["report_url"]
        assert batch["report_url"].startswith(expected or server.base_url + "/")


def test_head_and_options(server: LiveServer) -> None:
    with server.client() as client:
        head = client.head("/healthz")
        assert head.status_code == 200
        assert head.content == b""
        options = client.options("/v1/lighthouse-tests")
        assert options.status_code == 204
        assert options.headers["allow"] == "GET, HEAD, OPTIONS, POST"
        assert client.options("/nowhere").status_code == 404


@pytest.mark.parametrize(("body", "field"), [
    ({"url": "http://127.0.0.1:0/"}, "url"),
    ({"url": "http://127.0.0.1:65536/"}, "url"),
    ({"url": "http://127.0.0.1/\u0000admin"}, "url"),
    ({"url": "http://127.0.0.1/", "config": {"user_agent": "x\r\nX-Evil: 1"}},
     "config.user_agent"),
    ({"url": "http://127.0.0.1/", "config": {"auth_username": "a\nb"}}, "config.auth_username"),
])
def test_malformed_input_is_400_and_not_charged(
    server: LiveServer, body: dict[str, object], field: str
) -> None:
    key = server.key(lighthouse=1)
    with server.client(key) as client:
        response = client.post("/v1/lighthouse-tests", json=body)
        assert response.status_code == 400, response.text
        assert response.json()["message"].startswith(field)
        assert client.get("/v1/account/credits").json()["lighthouse"]["available_credits"] == 1


def test_a_client_leaving_mid_body_is_not_a_500(server: LiveServer) -> None:
    key = server.key()
    port = int(server.base_url.rsplit(":", 1)[1])
    with socket.create_connection((LOOPBACK, port)) as sock:
        sock.sendall(b"POST /v1/lighthouse-tests HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: 1000\r\n" + f"X-API-KEY: {key}\r\n\r\n".encode()
                     + b'{"url": ')
    with server.client(key) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/v1/lighthouse-tests").json()["data"] == []
