"""The egress proxy of guarded runs (issue 22, findings 1, 2 and 10; docs/security.md).

Everything runs on loopback: "allowed" is 127.0.0.1 (the policy re-opens 127.0.0.1/32 only),
"forbidden" is a server on 127.0.0.2 that records every TCP connection and request; names
come from a DNS server the test starts (:class:`LoopbackDns`), the engine's resolver is
pointed at it. First the proxy alone, spoken to with a raw SOCKS5 client; then the real
engine (Chromium, Lighthouse) on pages that try every way past the old per-request check.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from fixtures_dns import LoopbackDns
from fixtures_site import RecordingSite, page
from pagelab.engine import (
    Engine,
    TargetPolicy,
    TargetRefusedError,
    dns_server_resolver,
    parse_networks,
)
from pagelab.engine._egress import EgressProxy

# What these tests measure is not Lighthouse's doing: the short quiet window (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")

ONLY_ALLOWED = TargetPolicy(allowed=parse_networks(["127.0.0.1/32"]))
BOTH_ALLOWED = TargetPolicy(allowed=parse_networks(["127.0.0.1/32", "127.0.0.2/32"]))

_SUCCEEDED, _NOT_ALLOWED, _HOST_UNREACHABLE, _COMMAND_NOT_SUPPORTED = 0, 2, 4, 7


# -- finding 10: IPv4 addresses inside IPv6 ------------------------------------------------


@pytest.mark.parametrize("address", [
    "::127.0.0.2",  # IPv4-compatible (::/96), the finding
    "::7f00:2",  # the same, as Chromium's URL parser writes it
    "::127.0.0.1",
    "::",
    "::1",
    "::ffff:127.0.0.2",  # IPv4-mapped
    "::ffff:0:7f00:2",  # IPv4-translated
    "64:ff9b::7f00:2",  # NAT64, well-known prefix
    "64:ff9b:1::7f00:2",  # NAT64, local-use prefix
    "2002:7f00:2::1",  # 6to4 of 127.0.0.2
    "2001:0:4136:e378:8000:63bf:80ff:fffd",  # Teredo (client 127.0.0.2)
])
def test_ipv6_forms_of_refused_ipv4_addresses_are_refused(address: str) -> None:
    assert not TargetPolicy().allows_address(address)
    assert not ONLY_ALLOWED.allows_address(address)


def test_the_ipv4_compatible_url_of_the_finding_is_refused() -> None:
    with pytest.raises(TargetRefusedError):
        TargetPolicy().check_url("http://[::127.0.0.2]/")
    # An allowed IPv4 network also allows the IPv4-mapped form (the same host), and only it.
    assert ONLY_ALLOWED.allows_address("::ffff:127.0.0.1")
    assert not ONLY_ALLOWED.allows_address("::127.0.0.1")


# -- the proxy, through a raw SOCKS5 client -------------------------------------------------


def _read(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError(f"closed after {data!r}")
        data += chunk
    return data


def _socks(proxy: EgressProxy, host: str, port: int, command: int = 1) -> tuple[int, socket.socket]:
    """A SOCKS5 request as Chromium sends it (the host as a name); the reply code and the
    socket (open on success)."""
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=15)
    sock.sendall(b"\x05\x01\x00")
    assert _read(sock, 2) == b"\x05\x00"
    name = host.encode()
    sock.sendall(bytes((5, command, 0, 3, len(name))) + name + port.to_bytes(2, "big"))
    reply = _read(sock, 10)
    assert reply[0] == 5
    return reply[1], sock


def _get(sock: socket.socket, path: str) -> bytes:
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


@pytest.fixture
def sites() -> Iterator[tuple[RecordingSite, RecordingSite, RecordingSite]]:
    """An allowed site (127.0.0.1), the forbidden one (127.0.0.2) and an allowed twin of
    the forbidden one on its very port (127.0.0.1), for names that rebind between them."""
    with RecordingSite("127.0.0.2") as forbidden, RecordingSite() as allowed, \
            RecordingSite("127.0.0.1", forbidden.port) as twin:
        for site in (allowed, forbidden, twin):
            site.add("/", f"served by {site.origin}", content_type="text/plain")
        yield allowed, forbidden, twin


@pytest.fixture
def names(sites: tuple[RecordingSite, RecordingSite, RecordingSite]) -> Iterator[LoopbackDns]:
    with LoopbackDns({
        "frame.test": ["127.0.0.1"],
        "forbidden.test": ["127.0.0.2"],
        "rebind.test": ["127.0.0.1", "127.0.0.2"],
        "pinned.test": ["127.0.0.1", "127.0.0.2"],
    }) as server:
        yield server


@pytest.fixture
def proxy(names: LoopbackDns) -> Iterator[EgressProxy]:
    made = EgressProxy(dns_server_resolver(names.address, timeout=5))
    yield made
    made.close()


def test_the_proxy_connects_to_allowed_addresses_and_refuses_the_rest(
    proxy: EgressProxy, sites: tuple[RecordingSite, RecordingSite, RecordingSite],
) -> None:
    allowed, forbidden, _twin = sites
    with proxy.guarding(ONLY_ALLOWED) as refusals:
        code, sock = _socks(proxy, "127.0.0.1", allowed.port)
        assert code == _SUCCEEDED
        with sock:
            assert _get(sock, "/").endswith(b"served by " + allowed.origin.encode())
        for host in ("127.0.0.2", "forbidden.test", "::127.0.0.2", "::ffff:127.0.0.2"):
            code, sock = _socks(proxy, host, forbidden.port)
            sock.close()
            assert code == _NOT_ALLOWED, host
        code, sock = _socks(proxy, "nowhere.test", allowed.port)
        sock.close()
        assert code == _HOST_UNREACHABLE
        code, sock = _socks(proxy, "127.0.0.1", allowed.port, command=2)  # BIND
        sock.close()
        assert code == _COMMAND_NOT_SUPPORTED
    assert [(r.host, str(r.address)) for r in refusals] == [
        ("127.0.0.2", "127.0.0.2"), ("forbidden.test", "127.0.0.2"),
        ("::127.0.0.2", "::7f00:2"), ("::ffff:127.0.0.2", "::ffff:7f00:2"),
    ]
    assert refusals[1].target == f"forbidden.test:{forbidden.port}"
    # Outside a run the proxy refuses everything.
    code, sock = _socks(proxy, "127.0.0.1", allowed.port)
    sock.close()
    assert code == _NOT_ALLOWED
    assert forbidden.connections == 0
    assert forbidden.requests == []


def test_the_proxy_connects_to_the_address_it_checked(
    proxy: EgressProxy, names: LoopbackDns,
    sites: tuple[RecordingSite, RecordingSite, RecordingSite],
) -> None:
    """DNS rebinding: the name answers 127.0.0.1, then 127.0.0.2, then 127.0.0.1 ..."""
    _allowed, forbidden, twin = sites
    resolver = dns_server_resolver(names.address, timeout=5)
    # The service's check of the submitted URL saw the allowed answer ...
    assert resolver("rebind.test", twin.port) == (ipaddress.ip_address("127.0.0.1"),)
    with proxy.guarding(ONLY_ALLOWED) as refusals:
        # ... the proxy's own look-up gets the forbidden one: refused, nothing connected.
        code, sock = _socks(proxy, "rebind.test", twin.port)
        sock.close()
        assert code == _NOT_ALLOWED
        # A name whose first answer was allowed is pinned to it for the run: every later
        # connection goes to the checked address, with no second look-up.
        for _ in range(3):
            code, sock = _socks(proxy, "pinned.test", twin.port)
            assert code == _SUCCEEDED
            with sock:
                assert _get(sock, "/").endswith(f"served by {twin.origin}".encode())
    assert names.a_queries("pinned.test") == 1
    assert [str(r.address) for r in refusals] == ["127.0.0.2"]
    assert len(twin.requests) == 3
    assert forbidden.connections == 0


# -- the real engine: every way out of the page goes through the proxy --------------------


class _UdpCounter:
    """Counts the datagrams sent to a UDP port on 127.0.0.2 (a STUN server for WebRTC)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.2", 0))
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self.datagrams = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._count, daemon=True)
        self._thread.start()

    def _count(self) -> None:
        while not self._stop.is_set():
            try:
                self.sock.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            self.datagrams += 1

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def stun() -> Iterator[_UdpCounter]:
    counter = _UdpCounter()
    yield counter
    counter.close()


def _vector_pages(allowed: RecordingSite, forbidden: RecordingSite, stun_port: int) -> str:
    """A page on the allowed site that reaches for the forbidden one in every way the
    finding names, and WebRTC (STUN over UDP); returns its URL."""
    bad = forbidden.origin
    frame_origin = f"http://frame.test:{allowed.port}"  # another site: an OOPIF
    allowed.add("/app.js", f"window.app = 1;\n//# sourceMappingURL={bad}/app.js.map\n",
                content_type="text/javascript")
    allowed.add("/worker.js", f'fetch("{bad}/worker-fetch").catch(() => {{}});',
                content_type="text/javascript")
    allowed.add("/shared.js", f'fetch("{bad}/shared-fetch").catch(() => {{}});',
                content_type="text/javascript")
    allowed.add("/sw.js", f'fetch("{bad}/sw-fetch").catch(() => {{}});\n'
                'self.addEventListener("install", (e) => e.waitUntil('
                f'fetch("{bad}/sw-install").catch(() => {{}})));',
                content_type="text/javascript")
    allowed.add("/frame", page(f'<img src="{bad}/oopif-img"><script>'
                               f'fetch("{bad}/oopif-fetch").catch(() => {{}});</script>',
                               beacon=False))
    script = f"""
      try {{ new WebSocket("ws://127.0.0.2:{forbidden.port}/ws"); }} catch (e) {{}}
      try {{ new Worker("/worker.js"); }} catch (e) {{}}
      try {{ new SharedWorker("/shared.js"); }} catch (e) {{}}
      navigator.serviceWorker && navigator.serviceWorker.register("/sw.js").catch(() => {{}});
      try {{
        const rtc = new RTCPeerConnection({{iceServers: [{{urls: "stun:127.0.0.2:{stun_port}"}}]}});
        rtc.createDataChannel("x");
        rtc.createOffer().then((offer) => rtc.setLocalDescription(offer)).catch(() => {{}});
      }} catch (e) {{}}
    """
    return allowed.add("/vectors", page(
        f'<h1>egress</h1><iframe src="{frame_origin}/frame"></iframe>'
        f'<iframe src="{bad}/direct-frame"></iframe><script>{script}</script>',
        head='<script src="/app.js"></script>', beacon=False,
    ))


#: Paths of the forbidden server the vectors page requests (the control run shows each one
#: arrives when the policy allows it).
VECTOR_PATHS = {"/ws", "/worker-fetch", "/shared-fetch", "/sw-fetch", "/oopif-img",
                "/oopif-fetch", "/direct-frame", "/app.js.map"}


@pytest.fixture
def proxied_engine(names: LoopbackDns) -> Iterator[Engine]:
    with Engine(run_timeout=120, resolver=dns_server_resolver(names.address, timeout=5)) as made:
        yield made


def _requested_urls(lhr: dict[str, Any]) -> set[str]:
    items = lhr["audits"]["network-requests"]["details"]["items"]
    return {str(item["url"]) for item in items}


@pytest.mark.engine
def test_no_way_out_of_a_page_reaches_a_refused_address(
    proxied_engine: Engine, sites: tuple[RecordingSite, RecordingSite, RecordingSite],
    stun: _UdpCounter,
) -> None:
    allowed, forbidden, _twin = sites
    url = _vector_pages(allowed, forbidden, stun.port)

    # Control: the same page, the same proxied browser, 127.0.0.2 allowed: every way out
    # reaches the server (so zero below means refused, not broken).
    # On a loaded machine the cross-site frame can load after the run ended (its two paths
    # missing once in a suite run): the control is run again, up to three times, until
    # every way out arrived.
    for _ in range(3):
        forbidden.clear()
        allowed.clear()
        control = proxied_engine.run(url, "desktop", target_policy=BOTH_ALLOWED)
        assert control.status == "success", control.error
        reached = {r.path for r in forbidden.requests}
        if reached >= VECTOR_PATHS:
            break
    assert reached >= VECTOR_PATHS, VECTOR_PATHS - reached
    assert ("/frame" in {r.path for r in allowed.requests})  # the OOPIF came through a name

    forbidden.clear()
    allowed.clear()
    result = proxied_engine.run(url, "desktop", target_policy=ONLY_ALLOWED)
    assert result.status == "success", result.error
    assert forbidden.connections == 0
    assert forbidden.requests == []
    assert {r.path for r in allowed.requests} >= {"/vectors", "/app.js", "/frame", "/sw.js"}
    assert (f"127.0.0.2:{forbidden.port}", "target") in result.blocked
    lhr = json.loads(result.artifacts["lighthouse-json"])
    assert f"{forbidden.origin}/direct-frame" in _requested_urls(lhr)
    # WebRTC sends no UDP outside the proxy (none at all: SOCKS here carries TCP only), in
    # either run; an unguarded browser does send STUN requests (docs/security.md).
    assert stun.datagrams == 0
    browser = proxied_engine._processes.browser
    assert browser is not None
    argv = browser.process.popen.args
    assert isinstance(argv, list)
    assert {"--proxy-bypass-list=<-loopback>", "--disable-quic"} <= set(argv)


@pytest.mark.engine
def test_a_name_that_rebinds_reaches_nothing(
    proxied_engine: Engine, names: LoopbackDns,
    sites: tuple[RecordingSite, RecordingSite, RecordingSite],
) -> None:
    allowed, forbidden, twin = sites
    port = twin.port
    twin.add("/pinned.png", b"GIF89a", content_type="image/gif")
    url = allowed.add("/rebinding", page(
        f'<img src="http://rebind.test:{port}/rebind.png">'
        + "".join(f'<img src="http://pinned.test:{port}/pinned.png?{i}">' for i in range(4)),
        beacon=False,
    ))
    # What the service's check of a submitted URL does: rebind.test answered 127.0.0.1.
    resolver = dns_server_resolver(names.address, timeout=5)
    assert resolver("rebind.test", port) == (ipaddress.ip_address("127.0.0.1"),)

    result = proxied_engine.run(url, "desktop", target_policy=ONLY_ALLOWED)
    assert result.status == "success", result.error
    # The browser's connection asked again and got 127.0.0.2: refused, nothing reached.
    assert (f"rebind.test:{port}", "target") in result.blocked
    assert forbidden.connections == 0
    assert forbidden.requests == []
    # pinned.test answered 127.0.0.1 first; every connection went there, one look-up.
    assert len(twin.requests_for("/pinned.png")) == 4
    assert names.a_queries("pinned.test") == 1
