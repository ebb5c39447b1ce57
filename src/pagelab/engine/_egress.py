"""The egress proxy of guarded runs: every connection the browser opens goes through it, and it
connects only to an address it has resolved and checked itself.

Chromium is told to use it for everything (``--proxy-server=socks5://...``: HTTP, HTTPS and
WebSocket of pages, subresources, iframes in other processes, dedicated, shared and service
workers, and Lighthouse's own fetches, which all leave through Chromium's network stack;
``<-loopback>`` so that loopback is not bypassed), with QUIC off and WebRTC limited to
proxied traffic (a profile preference). For each connection the proxy resolves the host
**once**, checks every address with the run's :class:`TargetPolicy` and opens the TCP
connection to exactly those addresses, so a name that answers differently a moment later
(DNS rebinding) reaches nothing new. A refused connection gets SOCKS reply 2 ("not allowed
by ruleset"), which Chromium turns into a failed request.

Why SOCKS5 rather than an HTTP proxy: Chromium sends the host name, not an address, and
opens one tunnel per origin connection exactly as it opens direct connections, so its
connection pools, HTTP/2 coalescing and the connection ids Lighthouse's simulation models
stay as they are without the proxy; through an HTTP proxy, plain-HTTP requests of all
origins would share the proxy's keep-alive connections. The proxy never parses HTTP, so it
adds no header or framing handling of its own (docs/security.md, "Egress proxy").

It runs on an asyncio loop in a daemon thread of the engine's process, listening on
``127.0.0.1`` only.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

from ._resolver import Resolver
from ._targets import IPAddress, TargetPolicy, resolve

__all__ = ["EgressProxy", "Refusal"]

_Addresses = tuple[IPAddress, ...]
logger = logging.getLogger("pagelab.engine")

# SOCKS5 (RFC 1928) constants.
_VERSION = 5
_NO_AUTH = 0
_NO_ACCEPTABLE_METHOD = 0xFF
_CONNECT = 1
_IPV4, _DOMAIN, _IPV6 = 1, 3, 4
_SUCCEEDED = 0
_NOT_ALLOWED = 2
_HOST_UNREACHABLE = 4
_CONNECTION_REFUSED = 5
_COMMAND_NOT_SUPPORTED = 7
_ADDRESS_TYPE_NOT_SUPPORTED = 8

#: Seconds for the browser to send its SOCKS greeting and request.
_HANDSHAKE_TIMEOUT = 10.0
#: Seconds for a name to resolve (then the connection fails: host unreachable).
_RESOLVE_TIMEOUT = 10.0
#: Seconds for the TCP connection to one address of the target.
_CONNECT_TIMEOUT = 30.0
#: How long a checked answer serves later connections of the same run (Chromium's own host
#: cache keeps an answer a minute): one look-up per name, not one per connection.
_ANSWER_TTL = 60.0
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class Refusal:
    """A connection the proxy refused: the host and port the browser asked for and the
    refused address among the host's."""

    host: str
    port: int
    address: IPAddress

    @property
    def target(self) -> str:
        """``host:port`` (``[v6]:port``), as listed in ``RunResult.blocked``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


class _Closed(Exception):
    """The handshake ended (an error reply was sent, or the browser went away)."""


class EgressProxy:
    """A SOCKS5 proxy on loopback that resolves, checks and pins (see the module's doc).

    The policy is per run: :meth:`guarding` sets it for the duration of a run and collects
    that run's refusals. Outside a run every connection is refused (fail closed).
    ``resolver`` (default: the system resolver) is what a test points at a DNS server of
    its own.
    """

    def __init__(self, resolver: Resolver | None = None) -> None:
        self._resolver: Resolver = resolver or resolve
        self._lock = threading.Lock()
        self._policy: TargetPolicy | None = None
        self._refusals: list[Refusal] = []
        #: Connections the browser opened through the proxy (refused ones included).
        self.connections = 0
        self._answers: dict[tuple[str, int], tuple[float, asyncio.Future[_Addresses]]] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="pagelab-egress", daemon=True
        )
        self._thread.start()
        try:
            self._server = asyncio.run_coroutine_threadsafe(
                asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop
            ).result(10)
        except BaseException:
            self._stop_loop()
            raise
        self.port: int = int(self._server.sockets[0].getsockname()[1])

    @property
    def chromium_flags(self) -> tuple[str, ...]:
        """Chromium's switches: every connection through this proxy, loopback included
        (Chromium bypasses loopback by default), and no QUIC (UDP cannot be proxied here)."""
        return (
            f"--proxy-server=socks5://127.0.0.1:{self.port}",
            "--proxy-bypass-list=<-loopback>",
            "--disable-quic",
        )

    @property
    def profile_preferences(self) -> dict[str, Any]:
        """The browser profile's preferences: WebRTC only through the proxy (so over TCP,
        or not at all). The command-line switch for it
        (``--force-webrtc-ip-handling-policy``) does not stop STUN over UDP in Chromium 156
        headless; this preference does (tests/test_egress.py)."""
        return {"webrtc": {"ip_handling_policy": "disable_non_proxied_udp"}}

    @contextlib.contextmanager
    def guarding(self, policy: TargetPolicy) -> Iterator[list[Refusal]]:
        """Apply ``policy`` to the connections of one run; yields the list the run's
        refusals are added to."""
        refusals: list[Refusal] = []
        with self._lock:
            self._policy, self._refusals = policy, refusals
        self._loop.call_soon_threadsafe(self._answers.clear)
        try:
            yield refusals
        finally:
            with self._lock:
                self._policy, self._refusals = None, []

    def close(self) -> None:
        if not self._thread.is_alive():
            return
        self._stop_loop()

    def _stop_loop(self) -> None:
        async def cancel_all() -> None:
            # The server is closed on its loop's thread: asyncio's Server is not thread-safe
            # (closed from another thread while a connection ended, both woke its waiters
            # and the second found them gone: a TypeError at teardown).
            self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(RuntimeError, TimeoutError):
            asyncio.run_coroutine_threadsafe(cancel_all(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.close()

    # -- one connection (event loop) ---------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.connections += 1
        try:
            host, port = await asyncio.wait_for(self._request(reader, writer), _HANDSHAKE_TIMEOUT)
            upstream = await self._connect(host, port, writer)
            writer.write(bytes((_VERSION, _SUCCEEDED, 0, _IPV4, 0, 0, 0, 0, 0, 0)))
            await writer.drain()
            await _relay(reader, writer, *upstream)
        except (_Closed, TimeoutError, ConnectionError, OSError, asyncio.IncompleteReadError):
            pass
        except Exception:  # a bug must cost one connection, never the proxy
            logger.exception("egress proxy: connection failed")
        finally:
            for side in (writer, upstream[1] if upstream else None):
                if side is not None:
                    side.close()

    async def _request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[str, int]:
        """The SOCKS5 greeting and CONNECT request: the host (a name or an address, as
        Chromium sent it) and the port."""
        version, count = await reader.readexactly(2)
        methods = await reader.readexactly(count)
        if version != _VERSION or _NO_AUTH not in methods:
            writer.write(bytes((_VERSION, _NO_ACCEPTABLE_METHOD)))
            raise _Closed
        writer.write(bytes((_VERSION, _NO_AUTH)))
        version, command, _reserved, kind = await reader.readexactly(4)
        if kind == _IPV4:
            host = str(ipaddress.IPv4Address(await reader.readexactly(4)))
        elif kind == _IPV6:
            host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
        elif kind == _DOMAIN:
            (length,) = await reader.readexactly(1)
            host = (await reader.readexactly(length)).decode("ascii", "replace")
        else:
            await _reply(writer, _ADDRESS_TYPE_NOT_SUPPORTED)
        port = int.from_bytes(await reader.readexactly(2), "big")
        if version != _VERSION or command != _CONNECT:
            await _reply(writer, _COMMAND_NOT_SUPPORTED)
        return host, port

    async def _connect(
        self, host: str, port: int, writer: asyncio.StreamWriter
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        with self._lock:
            policy, refusals = self._policy, self._refusals
        if policy is None:  # outside a run
            await _reply(writer, _NOT_ALLOWED)
        try:
            addresses = await asyncio.wait_for(self._addresses(host, port), _RESOLVE_TIMEOUT)
        except TimeoutError:
            addresses = ()
        if not addresses:
            await _reply(writer, _HOST_UNREACHABLE)
        for address in addresses:
            # One refused address refuses the host, as the service's check of a URL does.
            if not policy.allows_address(address):
                with self._lock:
                    refusals.append(Refusal(host, port, address))
                await _reply(writer, _NOT_ALLOWED)
        for address in addresses:
            try:
                # An address, never a name: asyncio reads it without any look-up.
                return await asyncio.wait_for(
                    asyncio.open_connection(str(address), port), _CONNECT_TIMEOUT
                )
            except (OSError, TimeoutError):
                continue
        await _reply(writer, _CONNECTION_REFUSED)

    async def _addresses(self, host: str, port: int) -> tuple[IPAddress, ...]:
        """The host's addresses: an address as it is, a name resolved once per run and
        minute; connections asking for a name already being resolved wait for that
        answer."""
        with contextlib.suppress(ValueError):
            return (ipaddress.ip_address(host.strip("[]")),)
        key = (host.lower(), port)
        cached = self._answers.get(key)
        if cached is None or time.monotonic() - cached[0] > _ANSWER_TTL:
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(None, self._resolver, host, port)
            cached = (time.monotonic(), asyncio.ensure_future(future))
            self._answers[key] = cached
        try:
            return await asyncio.shield(cached[1])
        except Exception:
            return ()


async def _reply(writer: asyncio.StreamWriter, code: int) -> NoReturn:
    """Send an error reply and end the handshake."""
    writer.write(bytes((_VERSION, code, 0, _IPV4, 0, 0, 0, 0, 0, 0)))
    with contextlib.suppress(ConnectionError, OSError):
        await writer.drain()
    raise _Closed


async def _relay(
    client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter,
    upstream_reader: asyncio.StreamReader, upstream_writer: asyncio.StreamWriter,
) -> None:
    """Copy both ways until one side ends (its end is passed on), then close both."""
    for side in (client_writer, upstream_writer):
        sock = side.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    directions = [
        asyncio.ensure_future(_copy(client_reader, upstream_writer)),
        asyncio.ensure_future(_copy(upstream_reader, client_writer)),
    ]
    try:
        await asyncio.wait(directions, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for direction in directions:
            direction.cancel()
        await asyncio.gather(*directions, return_exceptions=True)


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
        await writer.drain()
