"""A recording fixture site for the engine's option tests (not a test module).

:class:`RecordingSite` is a threaded HTTP/1.1 server on 127.0.0.1 (or another loopback
address) whose pages a test registers (path -> body), so a page can reference a second
:class:`RecordingSite` on another port (a second origin). Every TCP connection is counted and
every request recorded (path, lower-case headers, protocol) before it is answered, and pages
that include :data:`BEACON_JS` POST their viewport, DPR, user agent and ``document.cookie`` to
``/beacon`` after load (plus ``window.pagelabBefore``, which a page may set to report what it
found before it changed anything).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

__all__ = ["BEACON_JS", "RecordedRequest", "RecordingSite", "Route", "page"]

#: Reports what the page saw, off the critical path (after load), to its own origin.
BEACON_JS = """
addEventListener("load", function () {
  setTimeout(function () {
    var body = JSON.stringify({
      path: location.pathname + location.search,
      innerWidth: innerWidth,
      innerHeight: innerHeight,
      devicePixelRatio: devicePixelRatio,
      userAgent: navigator.userAgent,
      cookie: document.cookie,
      before: window.pagelabBefore || null
    });
    if (!(navigator.sendBeacon && navigator.sendBeacon("/beacon", body))) {
      fetch("/beacon", {method: "POST", body: body, keepalive: true});
    }
  }, 0);
});
"""


def page(body: str, *, head: str = "", beacon: bool = True) -> bytes:
    """A small, valid HTML page (the beacon script included unless ``beacon=False``)."""
    script = f"<script>{BEACON_JS}</script>" if beacon else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f'<title>pagelab fixture</title><link rel=icon href="data:,">{head}</head>'
        f"<body><h1>pagelab fixture</h1><p>{body}</p>{script}</body></html>"
    ).encode()


@dataclass(frozen=True)
class Route:
    """What a path answers."""

    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    #: Seconds to wait before answering.
    delay: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]
    protocol: str


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, site: RecordingSite, host: str, port: int) -> None:
        self.site = site
        super().__init__((host, port), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.site.count_connection()
        super().process_request(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: requests are recorded instead."""

    def _record(self) -> str:
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        path = urlsplit(self.path).path
        self.server.site.record(RecordedRequest(self.command, path, headers, self.request_version))
        return path

    def do_POST(self) -> None:
        path = self._record()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if path == "/beacon":
            with contextlib.suppress(ValueError):
                self.server.site.add_beacon(json.loads(raw))
        self.send_response(204)
        self.send_header("Cache-Control", "no-store")
        self.end_headers()

    def do_GET(self) -> None:
        path = self._record()
        route = self.server.site.routes.get(path)
        if route is None:
            route = Route(b"not found\n", "text/plain", 404)
        if route.delay:
            time.sleep(route.delay)
        self.send_response(route.status)
        self.send_header("Content-Type", route.content_type)
        self.send_header("Content-Length", str(len(route.body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in route.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(route.body)


class RecordingSite:
    """A loopback HTTP server with test-defined routes that records what it receives."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.routes: dict[str, Route] = {}
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._beacons: list[dict[str, Any]] = []
        self.connections = 0
        self.host = host
        self._server = _Server(self, host, port)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def add(self, path: str, body: bytes | str, **kwargs: Any) -> str:
        """Serve ``body`` at ``path``; returns its absolute URL."""
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = Route(data, **kwargs)
        return self.url(path)

    def count_connection(self) -> None:
        with self._lock:
            self.connections += 1

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def add_beacon(self, beacon: Any) -> None:
        if isinstance(beacon, dict):
            with self._lock:
                self._beacons.append(beacon)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_for(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path]

    @property
    def beacons(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._beacons)

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()
            self._beacons.clear()
            self.connections = 0

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
