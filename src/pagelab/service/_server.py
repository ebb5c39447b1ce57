"""Serving the app with uvicorn, hardened against slow and numerous clients.

uvicorn times out idle keep-alive connections but not a client that sends half a request
line and stops, and it reads bodies as slowly as they come. Here a connection has
``header_timeout`` seconds to send its headers (again after every response), a request
``body_timeout`` seconds to send its body, and connections past ``max_connections`` (or
past ``max_connections_per_address`` from one client address) are closed at once, so
neither file descriptors nor database connections can be held by clients that do not
finish their requests, and one client cannot take every connection.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any
from urllib.parse import unquote_plus

import h11
import uvicorn
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from pagelab.models import ErrorBody

from ._settings import Settings

__all__ = ["BufferedBodyMiddleware", "MethodsMiddleware", "RedactTokens", "server_config"]

logger = logging.getLogger("pagelab.service")

#: Bodies larger than this are refused (the largest valid batch is far smaller).
MAX_BODY_BYTES = 1 << 20

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class _GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header deadline and a hard connection cap."""

    header_timeout: float = 10.0
    max_connections: int = 512
    max_connections_per_address: int = 64
    #: Open connections per client address, of one server (its own class, server_config).
    open_per_address: dict[str, int]
    _header_timer: asyncio.TimerHandle | None = None
    _address: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if peer else "unknown"
        if self.open_per_address.get(address, 0) >= self.max_connections_per_address:
            # Before the global cap: a client holding its share cannot shut others out.
            logger.warning("over %d connections from %s: closing a new one",
                           self.max_connections_per_address, address)
            transport.close()
            return
        if len(self.connections) > self.max_connections:
            # Past the cap there is no request to answer 503 to yet: refuse the socket.
            logger.warning("over %d connections: closing a new one", self.max_connections)
            transport.close()
            return
        self._address = address
        self.open_per_address[address] = self.open_per_address.get(address, 0) + 1
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._arm_header_timer()  # a new request has begun, or may begin
        else:
            self._cancel_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The keep-alive timer guards an idle connection; once the client sends a byte
        # uvicorn cancels it, so the next request's headers get their own deadline.
        self._cancel_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        if self._address is not None:
            left = self.open_per_address.get(self._address, 1) - 1
            if left > 0:
                self.open_per_address[self._address] = left
            else:
                self.open_per_address.pop(self._address, None)
            self._address = None
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._header_late)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


class BufferedBodyMiddleware:
    """Reads a request's whole body, within ``timeout`` seconds and ``max_bytes``, before
    the application sees the request.

    So no route or dependency (a database connection above all) is held while a slow
    client trickles its body in; a client that stops sending gets 408, one that hangs up
    mid-body is a quiet log line. A body over ``max_bytes`` is not read further: the
    request goes on with an empty body and ``scope["state"]["body_too_large"]`` set, so
    authentication still answers first (401 before 400).
    """

    def __init__(self, app: ASGIApp, *, timeout: float, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.timeout = timeout
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        too_large = False
        try:
            async with asyncio.timeout(self.timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        logger.info("%s %s: the client left before sending its body",
                                    scope["method"], scope["path"])
                        return
                    chunk: bytes = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_bytes:
                        too_large = True
                        break
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            body = ErrorBody(code="request_timeout",
                             message=f"body: not received within {self.timeout:g} s")
            response = JSONResponse(body.model_dump(), status_code=408,
                                    headers={"Connection": "close"})
            await response(scope, receive, send)
            return
        if too_large:
            scope.setdefault("state", {})["body_too_large"] = True
            chunks = []
        body_bytes = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body_bytes, "more_body": False}
            return await receive()  # only a disconnect can come now

        await self.app(scope, replay, send)


class RedactTokens(logging.Filter):
    """Keeps report-link tokens out of the access log: a log line is read by more people,
    and kept longer, than a link (issue 22, finding 12).

    A parameter is judged by its name decoded as the server decodes it: ``%74oken=`` opens
    the report as ``token=`` does, so it is masked too (issue 34, point 5)."""

    #: A query parameter of a logged request line: its name and its value as written.
    _PARAMETER = re.compile(r"(?<=[?&])([^=&#\s]*)=([^&#\s]*)")
    _NAME = "token"

    def _redacted(self, match: re.Match[str]) -> str:
        name = match.group(1)
        return f"{name}=***" if unquote_plus(name) == self._NAME else match.group(0)

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                self._PARAMETER.sub(self._redacted, arg) if isinstance(arg, str) else arg
                for arg in record.args
            )
        return True


def server_config(app: ASGIApp, settings: Settings, **options: Any) -> uvicorn.Config:
    """The uvicorn configuration ``pagelab serve`` uses (tests serve the app with it too).

    ``options`` go to :class:`uvicorn.Config` (``host``, ``port``, ``log_level``, ...).
    """
    protocol = type(
        "PagelabH11Protocol",
        (_GuardedH11Protocol,),
        {"header_timeout": settings.header_timeout, "max_connections": settings.max_connections,
         "max_connections_per_address": settings.max_connections_per_address,
         "open_per_address": {}},
    )
    defaults: dict[str, Any] = {
        "http": protocol,
        "limit_concurrency": settings.max_connections,
        # Behind a proxy set --public-url; the forwarded headers are not trusted blindly.
        "proxy_headers": False,
        "server_header": False,
        "lifespan": "on",
    }
    config = uvicorn.Config(app, **{**defaults, **options})
    access = logging.getLogger("uvicorn.access")  # configured by the line above
    if not any(isinstance(f, RedactTokens) for f in access.filters):
        access.addFilter(RedactTokens())
    return config


class MethodsMiddleware:
    """``HEAD`` and ``OPTIONS`` on every path, as HTTP defines them.

    FastAPI routes answer only the methods they declare, so ``HEAD /healthz`` was 405.
    ``HEAD`` runs the ``GET`` route and sends its status and headers without the body;
    ``OPTIONS`` answers 204 with ``Allow`` (no CORS: the API is not meant for browsers,
    so no ``Access-Control-*`` header is sent). Unknown paths stay 404.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def _allowed(self, scope: Scope) -> set[str]:
        from starlette.routing import Match

        # Asked method by method: a route (or an included router) matches FULL only for
        # a method it serves.
        methods = {
            method
            for method in ("GET", "POST", "PUT", "PATCH", "DELETE")
            for route in getattr(scope.get("app"), "routes", ())
            if route.matches({**scope, "method": method})[0] == Match.FULL
        }
        if "GET" in methods:
            methods.add("HEAD")
        return methods | {"OPTIONS"} if methods else set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        allowed = self._allowed(scope)
        if scope["method"] == "OPTIONS" and allowed:
            response = Response(status_code=204,
                                headers={"Allow": ", ".join(sorted(allowed))})
            await response(scope, receive, send)
            return
        if scope["method"] == "HEAD" and "GET" in allowed:

            async def without_body(message: Message) -> None:
                if message["type"] == "http.response.body":
                    message = {**message, "body": b""}
                await send(message)

            await self.app({**scope, "method": "GET"}, receive, without_body)
            return
        await self.app(scope, receive, send)
