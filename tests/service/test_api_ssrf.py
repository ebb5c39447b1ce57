"""The SSRF guard (issue 10, docs/security.md): in the default server mode no test reaches a
loopback, private, link-local, reserved or metadata address, whatever form the URL takes,
after DNS resolution and on every hop; the opt-ins open exactly what they say.

Every server here is on loopback. The "refused" servers listen on 127.0.0.1 / ::1 and count
the TCP connections they accept: a refusal must happen before any connection. Allowed
targets use 127.0.0.2, opened with ``allowed_targets=("127.0.0.2/32",)``.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from live_server import LiveServer, StartServer, wait_final

from fixtures_http import FixtureServer
from pagelab.engine import TargetPolicy, TargetRefusedError, probe

ALLOWED_HOST = "127.0.0.2"


class _ListeningCounter:
    """Accepts TCP connections on ``host`` and counts them; answers nothing."""

    def __init__(self, host: str, family: socket.AddressFamily, port: int = 0) -> None:
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.port = int(self.sock.getsockname()[1])
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def refused_server() -> Iterator[FixtureServer]:
    """A real HTTP server on 127.0.0.1 that must never be contacted in guarded mode."""
    with FixtureServer() as server:
        yield server


@pytest.fixture
def refused_v6(refused_server: FixtureServer) -> Iterator[_ListeningCounter | None]:
    try:
        counter = _ListeningCounter("::1", socket.AF_INET6, refused_server.port)
    except OSError:  # no IPv6 loopback on this machine, or the port is taken there
        yield None
        return
    yield counter
    counter.close()


def corpus(port: int) -> list[str]:
    """Forms of refused addresses, all of which point at this machine's ``port``, plus the
    well-known private ones (refused before any packet: nothing is sent to them)."""
    return [
        f"http://127.0.0.1:{port}/",
        f"http://localhost:{port}/",  # a host name resolving to a refused address
        f"http://[::1]:{port}/",
        f"http://2130706433:{port}/",  # decimal
        f"http://0x7f000001:{port}/",  # hex
        f"http://0177.0.0.1:{port}/",  # octal
        f"http://127.1:{port}/",  # short form
        f"http://[::ffff:127.0.0.1]:{port}/",  # IPv4-mapped IPv6
        f"http://[::ffff:7f00:1]:{port}/",
        f"http://[::127.0.0.1]:{port}/",  # IPv4-compatible IPv6 (::/96, issue 22)
        f"http://user:pw@127.0.0.1:{port}/",
        f"http://0:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://172.16.0.1/",
        "http://100.64.0.1/",
        "http://[fd00:ec2::254]/",
        "http://[fe80::1]/",
        "http://224.0.0.1/",
        "http://240.0.0.1/",
    ]


def test_policy_refuses_the_corpus_without_connecting(
    refused_server: FixtureServer, refused_v6: _ListeningCounter | None
) -> None:
    policy = TargetPolicy()
    for url in corpus(refused_server.port):
        with pytest.raises(TargetRefusedError):
            policy.check_url(url)
        data, error = probe(url, timeout=2, policy=policy)
        assert data is None, url
        assert error is not None
        assert error.code == "TARGET_REFUSED", url
    assert refused_server.connections == 0
    assert refused_v6 is None or refused_v6.accepted == 0


def test_opt_ins_allow_what_they_name(refused_server: FixtureServer) -> None:
    url = f"http://localhost:{refused_server.port}/"
    assert TargetPolicy(allow_private=True).check_url(url).addresses
    # A CIDR opens that network only.
    only_two = TargetPolicy(allowed=(__import__("ipaddress").ip_network("127.0.0.2/32"),))
    assert only_two.allows_address("127.0.0.2")
    assert only_two.allows_address("::ffff:127.0.0.2")
    assert not only_two.allows_address("127.0.0.1")
    data, error = probe(url, timeout=5, policy=TargetPolicy(allow_private=True))
    assert error is None
    assert data is not None
    assert data.http_status == 200
    assert refused_server.connections == 1


def _credits(client: httpx.Client) -> tuple[int, int]:
    body = client.get("/v1/account/credits").json()
    return body["lighthouse"]["available_credits"], body["ttfb"]["available_credits"]


def test_server_refuses_the_corpus_with_400_and_charges_nothing(
    start_server: StartServer, refused_server: FixtureServer,
    refused_v6: _ListeningCounter | None,
) -> None:
    server = start_server(allow_private_targets=False)
    key = server.key(lighthouse=5, ttfb=5)
    with server.client(key) as client:
        for url in corpus(refused_server.port):
            for path, body in (
                ("/v1/lighthouse-tests", {"url": url}),
                ("/v1/ttfb-tests", {"url": url, "region": "europe"}),
                ("/v1/lighthouse-batch-tests", {"urls": [url], "devices": ["desktop"],
                                                "locations": ["us"],
                                                "batch_type": "multiple-urls"}),
            ):
                response = client.post(path, json=body)
                assert response.status_code == 400, (path, url, response.text)
                error = response.json()
                assert error["code"] == "invalid_request"
                assert error["message"].startswith(("url", "urls")), error
        assert _credits(client) == (5, 5)
        assert client.get("/v1/lighthouse-tests").json()["data"] == []
    assert refused_server.connections == 0
    assert refused_v6 is None or refused_v6.accepted == 0


def test_server_opt_ins(start_server: StartServer, refused_server: FixtureServer) -> None:
    url = f"http://127.0.0.1:{refused_server.port}/"
    for options in ({"allow_private_targets": True}, {"allowed_targets": ("127.0.0.0/8",)}):
        server = start_server(**{"allow_private_targets": False, **options})
        with server.client(server.key()) as client:
            ttfb = client.post("/v1/ttfb-tests", json={"url": url, "region": "oceania"})
            assert ttfb.status_code == 200, ttfb.text
            assert all(r["status"] == "success" for r in ttfb.json()["result"])
            assert client.post("/v1/lighthouse-tests", json={"url": url}).status_code == 201
    assert refused_server.connections > 0


# -- on the engine: redirects and subresources are checked at the browser's network layer


class _AllowedSite(BaseHTTPRequestHandler):
    """Pages on 127.0.0.2 that lead to the refused server (``server.refused_origin``)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        refused: str = self.server.refused_origin  # type: ignore[attr-defined]
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", f"{refused}/secret")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = (
            "<!doctype html><title>allowed</title><h1>allowed page</h1>"
            f'<img src="{refused}/pixel.png"><script src="http://localhost:'
            f'{refused.rsplit(":", 1)[1]}/app.js"></script>'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def allowed_site(refused_server: FixtureServer) -> Iterator[str]:
    httpd = ThreadingHTTPServer((ALLOWED_HOST, 0), _AllowedSite)
    httpd.refused_origin = f"http://127.0.0.1:{refused_server.port}"  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{ALLOWED_HOST}:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.engine
@pytest.mark.usefixtures("quick_navigation_in_test")  # what is sent, not measured
def test_redirects_and_subresources_to_refused_addresses_never_leave_the_browser(
    start_server: StartServer, refused_server: FixtureServer, allowed_site: str
) -> None:
    server: LiveServer = start_server(
        allow_private_targets=False, allowed_targets=(f"{ALLOWED_HOST}/32",), worker=True
    )
    with server.client(server.key()) as client:
        page = client.post("/v1/lighthouse-tests", json={"url": f"{allowed_site}/page"})
        redirect = client.post("/v1/lighthouse-tests", json={"url": f"{allowed_site}/redirect"})
        assert page.status_code == redirect.status_code == 201, (page.text, redirect.text)
        page_report = wait_final(client, page.json()["id"])
        redirect_report = wait_final(client, redirect.json()["id"])
        # The allowed page itself was measured; its requests to the refused server were
        # failed in the browser, so the LHR lists them as failed requests.
        assert page_report["status"] == "success", page_report["error"]
        lhr = client.get(
            f"/v1/lighthouse-tests/{page_report['id']}/resources/lighthouse-json"
        ).json()
        assert "/pixel.png" in lhr
        assert "/app.js" in lhr
    # The redirect's target was refused before any connection: the page never loaded.
    assert redirect_report["status"] == "failed"
    assert refused_server.connections == 0
    assert refused_server.requests == 0
