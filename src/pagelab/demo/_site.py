"""The demo site: a threaded HTTP server on loopback whose pages each have one known trait.

Pages are HTML templates in ``static/``, beside the hero image of ``/heavy`` (a JPEG file,
read once and kept in memory). Every request, and every beacon a page sends after it
loaded, is recorded for tests to inspect, and so are the bytes each response put on the wire.

A second server on another loopback address (``127.0.0.2``; ``localhost`` where that address
cannot be bound) plays a third party: it serves ``/static/widget.js``, the large script
``/bloated`` loads and ``/lean`` does not.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import re
import secrets
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar, Self, cast
from urllib.parse import parse_qsl, urlsplit

from markupsafe import Markup

from .._exceptions import InvalidInputError
from .._served import QuietHTTPServer
from ._store import PRODUCT_DELAY_S, robots_txt, sitemap, store_page

if TYPE_CHECKING:
    import jinja2

__all__ = [
    "PAGES",
    "DemoServer",
    "RecordedRequest",
    "serve",
    "serve_forever",
]

#: The pages ``pagelab demo`` tests, by name (``DemoServer.page_url(name)``).
PAGES: tuple[str, ...] = ("fast", "heavy", "shift")

_ROUTES: dict[str, str] = {
    "index": "/",
    "fast": "/fast",
    "heavy": "/heavy",
    "shift": "/shift",
    "slow": "/slow",
    "shop": "/shop",
    "login": "/login",
    "members": "/members",
    "app": "/app",
    "lean": "/lean",
    "bloated": "/bloated",
}
# The twin articles: (title, description).
_ARTICLES = {
    "lean": ("A lean article", "An article with only its own resources."),
    "bloated": ("A bloated article",
                "The lean article plus a large third-party script and a long task."),
}
#: The size of the third party's ``/static/widget.js``, bytes (a typical tag manager's).
WIDGET_BYTES = 300_000
# The third party's loopback address, and what serves it where that cannot be bound.
_THIRD_PARTY_HOST = "127.0.0.2"
_THIRD_PARTY_FALLBACK = "localhost"
_SLOW_DEFAULT_MS = 1000
_SLOW_MAX_MS = 30_000
_BLOCKING_SCRIPT_DELAY_S = 0.3
_MAX_BEACON_BYTES = 64 * 1024
#: The password the demo's sign-in form accepts (any user name).
_PASSWORD = "demo-password"
_SESSION_COOKIE = "pagelab_demo_session"
_MAX_FORM_BYTES = 4 * 1024
# Idle keep-alive connections are dropped after this, so their threads do not linger.
_IDLE_TIMEOUT_S = 30.0

_HTML = "text/html; charset=utf-8"
_TEXT = "text/plain; charset=utf-8"
_JS = "text/javascript; charset=utf-8"
_JPEG = "image/jpeg"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the demo server received (recorded before it was answered)."""

    method: str
    #: The path as sent, without the query string (``"/slow"``).
    path: str
    #: The raw query string without ``?`` (``"ms=300"``), empty when there is none.
    query: str
    #: Header names in lower case; repeated headers joined with ``", "``.
    headers: Mapping[str, str]
    #: The HTTP version the client spoke, e.g. ``"HTTP/1.1"``.
    protocol: str
    received_at: datetime

    @property
    def params(self) -> dict[str, str]:
        """The query parameters (the first value of each name)."""
        return _query_params(self.query)


def _query_params(query: str) -> dict[str, str]:
    """The parameters of a query string, the first value of each name."""
    params: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        params.setdefault(name, value)
    return params


class _Recorder:
    """What the server saw, shared by the handler threads; survives restarts."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.beacons: list[dict[str, Any]] = []
        # Bytes written per URL (scheme, host, port and path; no query).
        self.sent: dict[str, int] = {}
        # Set while stopping: wakes handlers that are waiting before they answer.
        self.stopping = threading.Event()
        #: Extra wait before every page's HTML (DemoServer.delay_ms), milliseconds.
        self.delay_ms = 0
        #: Session tokens the sign-in form handed out (the members page's cookies).
        self.sessions: set[str] = set()

    def add_request(self, request: RecordedRequest) -> None:
        with self.lock:
            self.requests.append(request)

    def add_beacon(self, beacon: dict[str, Any]) -> None:
        with self.lock:
            self.beacons.append(beacon)

    def add_sent(self, url: str, size: int) -> None:
        with self.lock:
            self.sent[url] = self.sent.get(url, 0) + size


# --- content ---------------------------------------------------------------------------


@cache
def _asset(name: str) -> str:
    return (resources.files("pagelab.demo") / "static" / name).read_text(encoding="utf-8")


_INTEGER = re.compile(r"[+-]?[0-9]{1,12}")


@cache
def _templates() -> jinja2.Environment:
    """The pages' templates (``static/*.html``, each extending ``static/_base.html``), with
    autoescaping. Not ``pagelab._html``'s environment: the pages' bytes are pinned (tests read
    engine metrics of these pages), so their white space is kept exactly as written."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("pagelab.demo", "static"), autoescape=True,
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def _render(page: str, template: str | None = None, **values: str) -> bytes:
    """The HTML of ``page``, with the shared style, navigation and beacon script inlined;
    ``values`` are text (escaped) or :class:`Markup` (kept)."""
    shared = {
        "css": Markup(_asset("site.css").strip()),
        "nav": Markup(_asset("nav.html").strip()),
        "beacon": Markup(_templates().get_template("beacon.js").render(page=page).strip()),
    }
    document = _templates().get_template(f"{template or page}.html")
    return document.render(**shared, **values).encode("utf-8")


def _article(page: str, third_party: str) -> bytes:
    """``/lean`` or ``/bloated``: one article, the second with the third party's script
    (a fresh cache-busting query each time, as tag snippets do) and a long task."""
    title, description = _ARTICLES[page]
    extra = Markup("") if page == "lean" else Markup(_templates().get_template(
        "bloated.html").render(third_party=third_party, cb=secrets.token_hex(6)))
    return _render(page, "article", title=title, description=description, extra=extra)


@cache
def _widget_script() -> bytes:
    """The third party's script: :data:`WIDGET_BYTES` of JavaScript, mostly data (as a tag
    manager's container is), that evaluates quickly."""
    head = "/* pagelab demo: a third party's widget */\nvar pagelabWidget = {rules: [\n"
    tail = "]};\npagelabWidget.ready = true;\n"
    rule = '  {id: %d, match: "section-%05d", fire: "view", tags: ["a", "b", "c"]},\n'
    body = "".join(rule % (i, i) for i in range(WIDGET_BYTES // len(rule % (0, 0)) + 1))
    text = (head + body)[: WIDGET_BYTES - len(tail)]
    return (text[: text.rindex("\n") + 1] + tail).ljust(WIDGET_BYTES).encode("ascii")


@cache
def _hero_image() -> bytes:
    """The hero JPEG of ``/heavy`` (2400 x 1600, 1.3 MB: as large as a real photo), read once.

    A sunset over a mountain lake with film grain, drawn once with Pillow and shipped as a
    static file, so the demo site needs no image library.
    """
    return (resources.files("pagelab.demo") / "static" / "hero.jpg").read_bytes()


# --- HTTP ------------------------------------------------------------------------------


class _HTTPServer(QuietHTTPServer):
    daemon_threads = True
    # SO_REUSEPORT would let a second server bind a port already in use.
    allow_reuse_port = False

    def __init__(self, address: tuple[str, int], recorder: _Recorder, *,
                 name: str | None = None, third_party: str = "") -> None:
        self.recorder = recorder
        #: The host name URLs of this server use (None: its address).
        self.name = name
        #: The third party's base URL (empty on the third party's own server).
        self.third_party = third_party
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def track(self, connection: socket.socket, *, open_: bool) -> None:
        with self._connections_lock:
            if open_:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def close_connections(self) -> None:
        """Hang up on keep-alive clients, so that stopping really ends every exchange."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A stop that hangs up on a browser is normal (and one that hangs up: the base's).
        if self.recorder.stopping.is_set():
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "pagelab-demo"
    timeout = _IDLE_TIMEOUT_S

    @property
    def _server(self) -> _HTTPServer:
        return cast(_HTTPServer, self.server)

    def setup(self) -> None:
        super().setup()
        self._server.track(self.connection, open_=True)
        self._url = ""
        self.wfile = cast(Any, _CountingWriter(self.wfile, self))

    def finish(self) -> None:
        self._server.track(self.connection, open_=False)
        with suppress(OSError):
            super().finish()

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: requests are recorded instead of logged."""

    def parse_request(self) -> bool:
        received_at = datetime.now(UTC)
        if not super().parse_request():
            return False
        target = urlsplit(self.path)
        host, port = self._server.server_address[:2]
        self._url = f"http://{self._server.name or str(host)}:{port}{target.path}"
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        self._server.recorder.add_request(
            RecordedRequest(
                method=self.command,
                path=target.path,
                query=target.query,
                headers=headers,
                protocol=self.request_version,
                received_at=received_at,
            )
        )
        return True

    def do_GET(self) -> None:
        self._get(head=False)

    def do_HEAD(self) -> None:
        self._get(head=True)

    def do_POST(self) -> None:
        if urlsplit(self.path).path == "/login":
            self._login()
            return
        if urlsplit(self.path).path != "/beacon":
            # The body was not read, so this connection cannot carry another request.
            self.close_connection = True
            self._send_text(
                HTTPStatus.METHOD_NOT_ALLOWED,
                "only /beacon accepts POST",
                extra={"Allow": "GET, HEAD", "Connection": "close"},
            )
            return
        length_header = self.headers.get("Content-Length")
        if length_header is None or not length_header.isdigit():
            self.close_connection = True
            self._send_text(
                HTTPStatus.LENGTH_REQUIRED,
                "a beacon needs a Content-Length",
                extra={"Connection": "close"},
            )
            return
        length = int(length_header)
        if length > _MAX_BEACON_BYTES:
            self.close_connection = True
            self._send_text(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"a beacon is at most {_MAX_BEACON_BYTES} bytes",
                extra={"Connection": "close"},
            )
            return
        try:
            beacon = json.loads(self.rfile.read(length))
        except ValueError:
            beacon = None
        if not isinstance(beacon, dict):
            self._send_text(HTTPStatus.BAD_REQUEST, "a beacon is a JSON object")
            return
        self._server.recorder.add_beacon(beacon)
        self._send_no_content()

    def _login(self) -> None:
        """The sign-in form's POST: the right password gets a session cookie and a redirect
        to the members page; anything else goes back to the form."""
        length_header = self.headers.get("Content-Length") or ""
        if not length_header.isdigit() or int(length_header) > _MAX_FORM_BYTES:
            self.close_connection = True
            self._send_text(HTTPStatus.BAD_REQUEST, "a sign-in form of at most "
                            f"{_MAX_FORM_BYTES} bytes, with its Content-Length",
                            extra={"Connection": "close"})
            return
        form = _query_params(self.rfile.read(int(length_header)).decode("utf-8", "replace"))
        if form.get("password") != _PASSWORD or not form.get("user"):
            self._redirect("/login?failed=1")
            return
        token = secrets.token_urlsafe(16)
        with self._server.recorder.lock:
            self._server.recorder.sessions.add(token)
        self._redirect("/members", cookie=f"{_SESSION_COOKIE}={token}; Path=/; HttpOnly; "
                       "SameSite=Lax")

    def _redirect(self, location: str, *, cookie: str | None = None) -> None:
        extra = {"Location": location, **({"Set-Cookie": cookie} if cookie else {})}
        self._send(HTTPStatus.SEE_OTHER, b"", _TEXT, extra=extra)

    def _signed_in(self) -> bool:
        cookies = SimpleCookie()
        with suppress(CookieError):
            cookies.load(self.headers.get("Cookie") or "")
        morsel = cookies.get(_SESSION_COOKIE)
        return morsel is not None and morsel.value in self._server.recorder.sessions

    def _get(self, *, head: bool) -> None:
        target = urlsplit(self.path)
        path = target.path
        if not self._server.third_party:  # the third party's own server
            if path == "/static/widget.js":
                self._send(HTTPStatus.OK, _widget_script(), _JS, head=head)
            else:
                self._send_text(HTTPStatus.NOT_FOUND, f"no file at {path}", head=head)
            return
        if path in ("/lean", "/bloated"):
            page = _article(path.strip("/"), self._server.third_party)
            self._send(HTTPStatus.OK, page, _HTML, head=head)
        elif path in ("/", "/fast", "/heavy", "/shift", "/shop"):
            if self._wait(self._server.recorder.delay_ms / 1000):
                self._send(HTTPStatus.OK, _render(path.strip("/") or "index"), _HTML, head=head)
        elif path == "/slow":
            self._slow(target.query, head=head)
        elif path == "/robots.txt":
            self._send(HTTPStatus.OK, robots_txt(self._base()), _TEXT, head=head)
        elif path.startswith("/store"):
            self._store(path, head=head)
        elif path == "/login":
            failed = _query_params(target.query).get("failed")
            message = Markup('<p id="login-failed" role="alert">Wrong user or password.</p>'
                             if failed else "")
            self._send(HTTPStatus.OK, _render("login", message=message), _HTML, head=head)
        elif path == "/members":
            if self._signed_in():
                self._send(HTTPStatus.OK, _render("members"), _HTML, head=head)
            else:
                self._redirect("/login")
        elif path in ("/app", "/app/details"):
            # One document for every route: the app draws the view from the path.
            self._send(HTTPStatus.OK, _render("app"), _HTML, head=head)
        elif path == "/static/blocking.js":
            if self._wait(_BLOCKING_SCRIPT_DELAY_S):
                self._send(HTTPStatus.OK, _asset("blocking.js").encode("utf-8"), _JS, head=head)
        elif path == "/static/hero.jpg":
            self._send(HTTPStatus.OK, _hero_image(), _JPEG, head=head)
        elif path == "/beacon":
            beacon = _query_params(target.query)
            if head:
                self._send_no_content()
            elif not beacon:
                self._send_text(HTTPStatus.BAD_REQUEST, "a beacon needs a query string")
            else:
                self._server.recorder.add_beacon(beacon)
                self._send_no_content()
        else:
            self._send_text(HTTPStatus.NOT_FOUND, f"no page at {path}", head=head)

    def _base(self) -> str:
        """This server's own origin (never the request's Host header)."""
        host, port = self._server.server_address[:2]
        return f"http://{self._server.name or str(host)}:{port}"

    def _store(self, path: str, *, head: bool) -> None:
        """The demo store (``pagelab.demo._store``): its sitemaps and pages."""
        found = sitemap(path, self._base())
        if found is not None:
            self._send(HTTPStatus.OK, found[0], found[1], head=head)
            return
        page = store_page(path)
        if page is None:
            self._send_text(HTTPStatus.NOT_FOUND, f"no page at {path}", head=head)
            return
        title, text, links = page
        delay = PRODUCT_DELAY_S if path.startswith("/store/product/") else 0.0
        if self._wait(delay + self._server.recorder.delay_ms / 1000):
            body = _render("store", title=title, text=text, links=links)
            self._send(HTTPStatus.OK, body, _HTML, head=head)

    def _slow(self, query: str, *, head: bool) -> None:
        raw = _query_params(query).get("ms")
        if raw is None:
            ms = _SLOW_DEFAULT_MS
        else:
            if not _INTEGER.fullmatch(raw):
                self._send_text(
                    HTTPStatus.BAD_REQUEST,
                    f"ms must be a whole number of milliseconds (0 to {_SLOW_MAX_MS}), got {raw!r}",
                    head=head,
                )
                return
            ms = min(max(int(raw), 0), _SLOW_MAX_MS)
        if self._wait(ms / 1000):
            self._send(HTTPStatus.OK, _render("slow", ms=str(ms)), _HTML, head=head)

    def _wait(self, seconds: float) -> bool:
        """Sleep before answering; False (and hang up) when the server stops meanwhile."""
        if self._server.recorder.stopping.wait(seconds):
            self.close_connection = True
            return False
        return True

    def _send(
        self,
        status: HTTPStatus,
        body: bytes,
        content_type: str,
        *,
        head: bool = False,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        # Every load does the same work: nothing the browser kept from a previous run.
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _send_text(
        self,
        status: HTTPStatus,
        message: str,
        *,
        head: bool = False,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        body = f"{status.value} {status.phrase}: {message}\n".encode()
        self._send(status, body, _TEXT, head=head, extra=extra)

    def _send_no_content(self) -> None:
        self.send_response(HTTPStatus.NO_CONTENT)
        self.send_header("Cache-Control", "no-store")
        self.end_headers()


class _CountingWriter:
    """The handler's ``wfile``, adding every byte written to its response's URL."""

    def __init__(self, wfile: Any, handler: _Handler) -> None:
        self._wfile = wfile
        self._handler = handler

    def write(self, data: bytes) -> int:
        written: int = self._wfile.write(data)
        url = getattr(self._handler, "_url", "")
        if url:
            self._handler._server.recorder.add_sent(url, len(data))
        return written

    def flush(self) -> None:
        self._wfile.flush()

    def close(self) -> None:
        self._wfile.close()

    @property
    def closed(self) -> bool:
        return bool(self._wfile.closed)


# --- public API ------------------------------------------------------------------------


def _check_host(host: str) -> None:
    if host == "localhost":
        return
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is None or address.version != 4 or not address.is_loopback:
        raise InvalidInputError(
            f"host must be a loopback IPv4 address such as 127.0.0.1, got {host!r}: "
            "the demo site is never exposed to the network"
        )


def _check_port(port: int) -> None:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InvalidInputError(f"port must be an integer from 0 to 65535, got {port!r}")


class DemoServer:
    """The demo site on ``host:port`` (port 0: any free port), served by a background thread.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`. Recorded requests
    and beacons are kept across restarts until :meth:`clear`.
    """

    #: The password the ``login`` page accepts (with any user name).
    password: ClassVar[str] = _PASSWORD

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        _check_host(host)
        _check_port(port)
        self._host = host
        self._requested_port = port
        self._recorder = _Recorder()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._third_party: tuple[_HTTPServer, threading.Thread] | None = None
        self._address: tuple[str, int] | None = None

    def start(self) -> Self:
        """Bind the port and serve in the background; raises if the port is in use."""
        if self._httpd is not None:
            raise RuntimeError("the demo server is already running")
        self._recorder.stopping.clear()
        third = self._start_third_party()
        try:
            httpd = _HTTPServer((self._host, self._requested_port), self._recorder,
                                third_party=third)
        except OSError as exc:
            self._stop_servers()
            where = f"{self._host}:{self._requested_port}"
            if exc.errno == errno.EADDRINUSE:
                message = (
                    f"port {self._requested_port} on {self._host} is already in use; "
                    "choose another port, or 0 for any free one"
                )
            else:
                message = f"cannot serve the demo site on {where}: {exc.strerror or exc}"
            raise InvalidInputError(message) from exc
        host, port = httpd.server_address[:2]
        self._address = (str(host), int(port))
        self._httpd = httpd
        self._thread = self._serve(httpd)
        return self

    def _serve(self, httpd: _HTTPServer) -> threading.Thread:
        port = httpd.server_address[1]
        thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"pagelab-demo-{port}",
            daemon=True,
        )
        thread.start()
        return thread

    def _start_third_party(self) -> str:
        """Serve the third party on another loopback host; its base URL."""
        try:
            httpd = _HTTPServer((_THIRD_PARTY_HOST, 0), self._recorder)
        except OSError:  # only 127.0.0.1 is up (macOS): another name for it
            httpd = _HTTPServer(("127.0.0.1", 0), self._recorder, name=_THIRD_PARTY_FALLBACK)
        self._third_party = (httpd, self._serve(httpd))
        host = httpd.name or str(httpd.server_address[0])
        return f"http://{host}:{httpd.server_address[1]}"

    def _stop_servers(self) -> None:
        servers = [(self._httpd, self._thread)] if self._httpd is not None else []
        if self._third_party is not None:
            servers.append(self._third_party)
        self._recorder.stopping.set()
        for httpd, thread in servers:
            assert httpd is not None
            httpd.shutdown()
            httpd.server_close()
            httpd.close_connections()
            if thread is not None:
                thread.join()
        self._httpd = self._thread = self._third_party = None

    def stop(self) -> None:
        """Stop serving, hang up on open connections and free the port. Idempotent."""
        if self._httpd is None:
            return
        self._stop_servers()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """Whether the server is serving now."""
        return self._httpd is not None

    @property
    def port(self) -> int:
        """The port bound by the last :meth:`start`."""
        return self._bound()[1]

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:8080`` (no trailing slash)."""
        host, port = self._bound()
        return f"http://{host}:{port}"

    @property
    def third_party_url(self) -> str:
        """The third party's base URL (``http://127.0.0.2:PORT``), which serves the large
        ``/static/widget.js`` that ``/bloated`` loads."""
        if self._third_party is None:
            raise RuntimeError("the demo server has not been started; call start() first")
        httpd = self._third_party[0]
        host = httpd.name or str(httpd.server_address[0])
        return f"http://{host}:{httpd.server_address[1]}"

    def bytes_sent(self, url: str | None = None) -> int:
        """Bytes the site (both hosts) wrote since the last :meth:`clear`, headers included:
        in all, or for one URL (its query ignored)."""
        with self._recorder.lock:
            if url is None:
                return sum(self._recorder.sent.values())
            parts = urlsplit(url)
            return self._recorder.sent.get(f"{parts.scheme}://{parts.netloc}{parts.path}", 0)

    def page_url(self, name: str) -> str:
        """The URL of a page by name: ``fast``, ``heavy``, ``shift``, ``slow``, ``lean``,
        ``bloated``, ``shop`` (user flows: a fast and a slow add-to-cart button,
        ``shop?block=<ms>``), ``login`` and ``members`` (a sign-in form whose session
        cookie, for the password :attr:`password`, unlocks the members page), ``app``
        (a client-side route change to ``/app/details``, ``app?render=<ms>``) or ``index``.

        A query may follow the name, as in ``page_url("slow?ms=300")``.
        """
        page, sep, query = name.partition("?")
        route = _ROUTES.get(page.strip("/") or "index")
        if route is None:
            known = ", ".join(sorted(_ROUTES))
            raise InvalidInputError(f"no demo page named {page!r}; the pages are: {known}")
        return f"{self.url}{route}{sep}{query}"

    @property
    def delay_ms(self) -> int:
        """How long every page (``/``, ``fast``, ``heavy``, ``shift``, ``shop``) waits before its
        first byte, in ms (default 0): the same URLs, slowed, as a regression to catch."""
        return self._recorder.delay_ms

    @delay_ms.setter
    def delay_ms(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not (
                0 <= value <= _SLOW_MAX_MS):
            raise InvalidInputError(
                f"delay_ms must be a whole number from 0 to {_SLOW_MAX_MS}, got {value!r}")
        self._recorder.delay_ms = value

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._recorder.lock:
            return list(self._recorder.requests)

    @property
    def beacons(self) -> list[dict[str, Any]]:
        """Every beacon the pages sent so far, oldest first (copies).

        A POSTed beacon is the JSON object the page sent; a GET beacon is its query
        parameters, as strings.
        """
        with self._recorder.lock:
            return [dict(beacon) for beacon in self._recorder.beacons]

    def clear(self) -> None:
        """Forget the recorded requests and beacons."""
        with self._recorder.lock:
            self._recorder.requests.clear()
            self._recorder.beacons.clear()
            self._recorder.sent.clear()

    def _bound(self) -> tuple[str, int]:
        if self._address is None:
            raise RuntimeError("the demo server has not been started; call start() first")
        return self._address

    def __repr__(self) -> str:
        where = self.url if self._address is not None else f"{self._host}:{self._requested_port}"
        state = "running" if self.running else "stopped"
        return f"<DemoServer {where} {state}>"


@contextmanager
def serve(port: int = 0, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve the demo site for the duration of a ``with`` block, yielding its base URL."""
    with DemoServer(host=host, port=port) as server:
        yield server.url


def serve_forever(port: int = 8080, host: str = "127.0.0.1") -> None:
    """Serve the demo site in the foreground until Ctrl-C (``pagelab demo serve``)."""
    server = DemoServer(host=host, port=port).start()
    try:
        print(f"pagelab demo site at {server.url}/", flush=True)
        for name in (*PAGES, "slow"):
            print(f"  {name:<6} {server.page_url(name)}", flush=True)
        print("Press Ctrl-C to stop.", flush=True)
        # Short sleeps keep Ctrl-C responsive on every platform.
        while server.running:
            time.sleep(0.25)
    except KeyboardInterrupt:
        print("\nStopped.", flush=True)
    finally:
        server.stop()
