"""How the engine's egress proxy turns a host name into addresses.

The default is the system resolver (:func:`pagelab.engine._targets.resolve`). A name server
of one's own (``HOST[:PORT]``) serves an operator who wants the checks on a resolver they
control, and the tests, which point the engine at a DNS server they start on loopback (a
name whose answers alternate between an allowed and a refused address: DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

from pagelab._exceptions import InvalidInputError
from pagelab._extras import require

from ._targets import IPAddress

__all__ = ["Resolver", "dns_server_resolver"]

#: ``(host, port) -> addresses`` (empty when the host does not resolve); blocking.
Resolver = Callable[[str, int], tuple[IPAddress, ...]]


def _server_address(server: str) -> tuple[str, int]:
    """``10.0.0.2``, ``10.0.0.2:5353``, ``[::1]:53`` or ``::1`` -> (address, port)."""
    text = server.strip()
    if text.startswith("["):
        address, _, rest = text[1:].partition("]")
        port_text = rest.removeprefix(":")
    elif text.count(":") == 1:
        address, port_text = text.split(":")
    else:
        address, port_text = text, ""
    try:
        ipaddress.ip_address(address)
        port = int(port_text) if port_text else 53
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise InvalidInputError(
            f"name server {server!r}: expected an address and an optional port, "
            "e.g. 10.0.0.2 or 127.0.0.1:5353"
        )
    return address, port


def _numeric(host: str, port: int) -> tuple[IPAddress, ...] | None:
    """The addresses of a numeric host as the system reads it (``127.1``, ``0x7f000001``,
    ``::1``) without any query; None for a name."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError):
        return None
    return tuple(dict.fromkeys(
        ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos
    ))


def dns_server_resolver(server: str, *, timeout: float = 5.0) -> Resolver:
    """A :data:`Resolver` asking the name server at ``server`` for A and AAAA records
    (no cache, no search domains) instead of the system resolver; numeric hosts are read
    without a query. Raises :class:`InvalidInputError` for a malformed ``server``."""
    require("dns.resolver", "server")
    import dns.exception
    import dns.resolver

    address, port = _server_address(server)
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers = [address]
    resolver.port = port
    resolver.lifetime = timeout

    def lookup(host: str, port: int) -> tuple[IPAddress, ...]:
        name = host.strip("[]")
        numeric = _numeric(name, port)
        if numeric is not None:
            return numeric
        found: list[IPAddress] = []
        for record_type in ("A", "AAAA"):
            try:
                answer = resolver.resolve(name, record_type, search=False)
            except (dns.exception.DNSException, UnicodeError, ValueError):
                continue
            found += [ipaddress.ip_address(item.to_text()) for item in answer]
        return tuple(dict.fromkeys(found))

    return lookup
