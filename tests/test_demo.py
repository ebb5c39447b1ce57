"""The bundled demo site: routes, headers, recording, lifecycle, and a real headless browser."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

import pagelab.demo
from pagelab._exceptions import InvalidInputError
from pagelab.demo import PAGES, DemoServer, RecordedRequest, serve

HTML = "text/html; charset=utf-8"


@pytest.fixture
def server() -> Iterator[DemoServer]:
    with DemoServer() as running:
        yield running


@pytest.fixture
def client(server: DemoServer) -> Iterator[httpx.Client]:
    # trust_env=False: a proxy from the environment must not see loopback traffic.
    with httpx.Client(base_url=server.url, trust_env=False, timeout=10) as http:
        yield http


# --- pages ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "marker"),
    [
        ("/", "pagelab demo site"),
        ("/fast", "A fast page"),
        ("/heavy", '<img class="hero" src="/static/hero.jpg"'),
        ("/shift", 'id="promo-slot"'),
        ("/slow?ms=0", "waited <strong>0&nbsp;ms</strong>"),
    ],
)
def test_pages_are_html(client: httpx.Client, path: str, marker: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == HTML
    assert response.headers["cache-control"] == "no-store"
    assert int(response.headers["content-length"]) == len(response.content)
    assert marker in response.text
    assert "navigator.sendBeacon" in response.text
    assert "{{" not in response.text  # every placeholder was filled


def test_pages_reference_no_outside_host(client: httpx.Client) -> None:
    absolute = re.compile(r"https?:|[\"'(=]\s*//")  # http://x, "//x", url(//x)
    for path in ("/", "/fast", "/heavy", "/shift", "/slow?ms=0", "/static/blocking.js"):
        assert not absolute.search(client.get(path).text), path


def test_heavy_page_has_a_render_blocking_script_and_a_long_task(client: httpx.Client) -> None:
    html = client.get("/heavy").text
    head = html[: html.index("</head>")]
    assert '<script src="/static/blocking.js"></script>' in head
    assert "performance.now() + 300" in html


def test_blocking_script_is_sent_late(client: httpx.Client) -> None:
    started = time.perf_counter()
    response = client.get("/static/blocking.js")
    assert time.perf_counter() - started >= 0.3
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"


def test_hero_image_is_a_large_valid_jpeg(client: httpx.Client) -> None:
    from PIL import Image

    response = client.get("/static/hero.jpg")
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/jpeg"
    assert int(response.headers["content-length"]) == len(response.content)
    assert 1_000_000 < len(response.content) < 2_000_000
    assert response.content[:3] == b"\xff\xd8\xff"
    with Image.open(io.BytesIO(response.content)) as image:
        assert image.format == "JPEG"
        assert image.size == (2400, 1600)
        image.load()  # decodes the whole file: raises if truncated
    assert client.get("/static/hero.jpg").content == response.content  # deterministic


def test_slow_waits_before_the_first_byte(server: DemoServer, client: httpx.Client) -> None:
    with ThreadPoolExecutor(1) as pool, httpx.Client(trust_env=False, timeout=60) as other:
        # Received first, ten times as long: still pending when the 300 ms answer comes
        # (a wait that ignored ``ms`` would answer both alike, the first one first).
        longer = pool.submit(other.get, server.page_url("slow?ms=3000"))
        while not server.requests:  # received: its wait has begun
            time.sleep(0.01)
        started = time.perf_counter()
        with client.stream("GET", "/slow?ms=300") as response:
            first_byte = time.perf_counter() - started
            assert not longer.done()
            assert response.status_code == 200
            assert "waited <strong>300&nbsp;ms</strong>" in response.read().decode()
        assert longer.result().status_code == 200
    assert first_byte >= 0.3


def test_delay_slows_every_page_at_its_url(server: DemoServer, client: httpx.Client) -> None:
    # The same URL, slowed: what a regression gate must catch.
    server.delay_ms = 300
    started = time.perf_counter()
    with client.stream("GET", "/fast") as response:
        first_byte = time.perf_counter() - started
        assert "A fast page" in response.read().decode()
    assert first_byte >= 0.3
    assert server.delay_ms == 300
    for bad in (-1, 1.5, True, 30_001):
        with pytest.raises(InvalidInputError, match="delay_ms must be a whole number"):
            server.delay_ms = bad  # type: ignore[assignment]


def test_slow_clamps_negative_delays_to_zero(client: httpx.Client) -> None:
    response = client.get("/slow?ms=-50")
    assert response.status_code == 200
    assert "waited <strong>0&nbsp;ms</strong>" in response.text


@pytest.mark.parametrize("value", ["abc", "", "1.5", "1e3", "0x10", "9" * 40])
def test_slow_rejects_a_bad_delay(client: httpx.Client, value: str) -> None:
    response = client.get("/slow", params={"ms": value})
    assert response.status_code == 400
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert "ms must be a whole number" in response.text


@pytest.mark.parametrize(
    "path", ["/nope", "/fast/", "/static/", "/static/site.css", "/favicon.ico"]
)
def test_unknown_paths_are_404(client: httpx.Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"] == "text/plain; charset=utf-8"


def test_head_sends_headers_without_a_body(client: httpx.Client) -> None:
    get = client.get("/fast")
    head = client.head("/fast")
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == get.headers["content-length"]
    assert head.headers["content-type"] == HTML
    assert client.head("/nope").status_code == 404


def test_post_outside_beacon_is_405(client: httpx.Client) -> None:
    response = client.post("/fast", content=b"x")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"


# --- recording -----------------------------------------------------------------------


def test_requests_are_recorded(server: DemoServer, client: httpx.Client) -> None:
    before = datetime.now(UTC)
    client.get(
        "/fast?x=1&x=2&y=",
        headers={
            "User-Agent": "pagelab-test/1",
            "Authorization": "Bearer t0ken",
            "Cookie": "session=abc",
        },
    )
    client.head("/nope")
    first, second = server.requests
    assert isinstance(first, RecordedRequest)
    assert (first.method, first.path, first.query) == ("GET", "/fast", "x=1&x=2&y=")
    assert first.params == {"x": "1", "y": ""}
    assert first.protocol == "HTTP/1.1"
    assert first.headers["user-agent"] == "pagelab-test/1"
    assert first.headers["authorization"] == "Bearer t0ken"
    assert first.headers["cookie"] == "session=abc"
    assert all(name == name.lower() for name in first.headers)
    assert before <= first.received_at <= second.received_at <= datetime.now(UTC)
    assert (second.method, second.path) == ("HEAD", "/nope")


def test_requests_are_recorded_before_a_slow_answer(server: DemoServer) -> None:
    with httpx.Client(trust_env=False) as http:
        http.get(server.page_url("slow?ms=200"))
        answered = datetime.now(UTC)
    (request,) = server.requests
    # Recorded on arrival, so at least the 200 ms wait before the answer (a lower bound:
    # load can only lengthen it); recorded after answering, the gap would be about 0.
    assert answered - request.received_at >= timedelta(milliseconds=200)


def test_beacons_are_recorded(server: DemoServer, client: httpx.Client) -> None:
    payload = {"page": "fast", "innerWidth": 412, "innerHeight": 823, "devicePixelRatio": 1.75}
    # What navigator.sendBeacon sends for a string body.
    posted = client.post(
        "/beacon",
        content=json.dumps(payload),
        headers={"Content-Type": "text/plain;charset=UTF-8"},
    )
    got = client.get("/beacon", params={"page": "heavy", "innerWidth": "800"})
    assert posted.status_code == got.status_code == 204
    assert server.beacons == [payload, {"page": "heavy", "innerWidth": "800"}]
    assert [r.path for r in server.requests] == ["/beacon", "/beacon"]


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b""])
def test_a_bad_beacon_is_400(server: DemoServer, client: httpx.Client, body: bytes) -> None:
    assert client.post("/beacon", content=body).status_code == 400
    assert client.get("/beacon").status_code == 400
    assert server.beacons == []


def test_a_huge_beacon_is_413(server: DemoServer, client: httpx.Client) -> None:
    assert client.post("/beacon", content=b"x" * 100_000).status_code == 413
    assert server.beacons == []


def test_recordings_are_copies_and_clear_empties_them(
    server: DemoServer, client: httpx.Client
) -> None:
    client.get("/beacon?page=fast")
    server.beacons[0]["page"] = "changed"
    server.requests.clear()
    assert server.beacons == [{"page": "fast"}]
    assert len(server.requests) == 1
    server.clear()
    assert server.requests == []
    assert server.beacons == []


# --- lifecycle -----------------------------------------------------------------------


def test_urls(server: DemoServer) -> None:
    assert server.url == f"http://127.0.0.1:{server.port}"
    assert PAGES == ("fast", "heavy", "shift")
    assert server.page_url("heavy") == f"{server.url}/heavy"
    assert server.page_url("slow?ms=300") == f"{server.url}/slow?ms=300"
    assert server.page_url("index") == f"{server.url}/"
    with pytest.raises(InvalidInputError, match="no demo page named 'nope'"):
        server.page_url("nope")


def test_url_before_start_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="call start"):
        _ = DemoServer().url


def test_two_servers_get_different_ports() -> None:
    with DemoServer() as first, DemoServer() as second:
        assert first.port != second.port
        assert first.port > 0
        assert second.port > 0


def test_stopping_frees_the_port() -> None:
    server = DemoServer().start()
    port = server.port
    with httpx.Client(trust_env=False) as http:
        assert http.get(server.page_url("fast")).status_code == 200  # a keep-alive connection
        server.stop()
        assert not server.running
        with pytest.raises(httpx.TransportError):
            http.get(server.page_url("fast"))
    server.stop()  # idempotent
    with DemoServer(port=port) as again:
        assert again.port == port


def test_stop_interrupts_a_slow_answer() -> None:
    server = DemoServer().start()
    # The client waits longer than the slowest answer (30 s): only the server hanging up
    # ends the request with an error; without the interruption it would get its 200.
    with ThreadPoolExecutor(1) as pool, httpx.Client(trust_env=False, timeout=60) as http:
        pending = pool.submit(http.get, server.page_url("slow?ms=30000"))
        while not server.requests:  # received: the answer is now being held
            time.sleep(0.01)
        server.stop()
        with pytest.raises(httpx.TransportError) as hung_up:
            pending.result()
    assert not isinstance(hung_up.value, httpx.TimeoutException)


def test_restart_keeps_recordings() -> None:
    server = DemoServer()
    with server, httpx.Client(trust_env=False) as http:
        http.get(server.page_url("fast"))
    with server, httpx.Client(trust_env=False) as http:
        http.get(server.page_url("shift"))
    assert [r.path for r in server.requests] == ["/fast", "/shift"]


def test_starting_twice_is_an_error(server: DemoServer) -> None:
    with pytest.raises(RuntimeError, match="already running"):
        server.start()


def test_port_in_use_is_invalid_input() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(InvalidInputError, match=f"port {port} .* already in use"):
            DemoServer(port=port).start()
    with DemoServer() as running, pytest.raises(InvalidInputError, match="already in use"):
        DemoServer(port=running.port).start()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.org", "::", ""])
def test_only_loopback_hosts(host: str) -> None:
    with pytest.raises(InvalidInputError, match="loopback"):
        DemoServer(host=host)


@pytest.mark.parametrize("port", [-1, 65536, True])
def test_bad_ports(port: int) -> None:
    with pytest.raises(InvalidInputError, match="port must be"):
        DemoServer(port=port)


def test_serve_yields_the_base_url() -> None:
    with serve() as url, httpx.Client(trust_env=False) as http:
        assert url.startswith("http://127.0.0.1:")
        assert not url.endswith("/")
        assert http.get(f"{url}/fast").status_code == 200
    with httpx.Client(trust_env=False) as http, pytest.raises(httpx.TransportError):
        http.get(f"{url}/fast")


def test_serve_forever_prints_the_pages_and_stops_on_ctrl_c() -> None:
    src = str(Path(pagelab.demo.__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    # A shell's background job (CI started with `&`) ignores SIGINT, and Python then never
    # turns it into KeyboardInterrupt: the child takes Ctrl-C as it would in a terminal.
    code = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from pagelab.demo import serve_forever; serve_forever(port=0)"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env
    ) as process:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(6)]
        assert lines[0].startswith("pagelab demo site at http://127.0.0.1:")
        base = lines[0].split()[-1].rstrip("/")
        assert [line.split()[0] for line in lines[1:5]] == ["fast", "heavy", "shift", "slow"]
        assert lines[5].strip() == "Press Ctrl-C to stop."
        with httpx.Client(trust_env=False) as http:
            assert http.get(f"{base}/fast").status_code == 200
        process.send_signal(signal.SIGINT)
        try:
            out, _ = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()  # never leave the suite waiting on a server that did not stop
            raise
    assert process.returncode == 0
    assert "Stopped." in out


# --- a real browser ------------------------------------------------------------------

# `pagelab setup` (run by `make test`) installs Chromium: its absence is a failure, not a skip.
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_pages_in_headless_chromium(server: DemoServer, tmp_path: Path) -> None:
    """/shift and /heavy load in a real browser: scripts run and the beacons arrive."""
    assert CHROMIUM is not None

    def dump_dom(page: str) -> str:
        command = [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / page}",
            # Headless windows are at least 500 px wide, so no phone size here.
            "--window-size=1024,768",
            # Virtual time: the 500 ms timers and the 300 ms script delay do not cost 5 s.
            "--virtual-time-budget=5000",
            "--dump-dom",
            server.page_url(page),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
        return done.stdout

    with ThreadPoolExecutor(2) as pool:  # the two browsers run at once
        shift_dom, heavy_dom = pool.map(dump_dom, ["shift", "heavy"])

    assert '<aside class="promo">' in shift_dom  # the late banner was inserted
    assert 'data-blocking-script="ran"' in heavy_dom
    paths = {request.path for request in server.requests}
    assert {"/shift", "/heavy", "/static/blocking.js", "/static/hero.jpg"} <= paths
    assert all("HeadlessChrome" in r.headers["user-agent"] for r in server.requests)

    beacons = {beacon["page"]: beacon for beacon in server.beacons}
    assert set(beacons) == {"shift", "heavy"}
    for beacon in beacons.values():
        assert beacon["innerWidth"] == 1024
        assert 500 <= beacon["innerHeight"] <= 768  # minus the space of a browser's toolbars
        assert beacon["devicePixelRatio"] > 0
        assert "Chrome" in beacon["userAgent"]
