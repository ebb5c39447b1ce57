"""Which network addresses a test may reach: the server's guard against SSRF.

A server that loads any URL a key holder names must not become a way into its own network.
:class:`TargetPolicy` decides per *address* (after DNS resolution), never per host name:
``http://2130706433/``, ``http://0x7f000001/``, ``http://[::ffff:127.0.0.1]/`` and a name
that resolves to ``10.0.0.1`` all reach a refused address and are refused the same way.

The same list is checked in three places (see docs/security.md): the submitted URL (the
service answers 400 before charging), every connection the browser opens (the engine's
egress proxy resolves the host, checks it and connects to the checked address only), and
every TTFB probe (libcurl is told to connect to the checked address only,
``CURLOPT_CONNECT_TO``).
The local runners pass no policy: a notebook may test ``localhost``.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from pagelab._exceptions import InvalidInputError

__all__ = [
    "REFUSED_NETWORKS",
    "IPAddress",
    "IPNetwork",
    "ResolvedTarget",
    "TargetPolicy",
    "TargetRefusedError",
    "enforced",
    "parse_networks",
    "resolve",
    "target_of",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Written out rather than taken from ``ipaddress``'s ``is_global``, whose tables change
# between Python versions (and are documented in docs/security.md as they are here).
_REFUSED = (
    # IPv4: "this network", private, CGNAT (also Alibaba's metadata 100.100.100.200),
    # loopback, link-local (cloud metadata 169.254.169.254), IETF protocol assignments
    # (Oracle's metadata 192.0.0.192), documentation, 6to4 relay, benchmarking,
    # multicast, reserved and broadcast, and Azure's wire server.
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "168.63.129.16/32",
    # IPv6: unspecified, loopback and IPv4-compatible (``::/96``: ``[::127.0.0.2]``),
    # IPv4-mapped and -translated (they carry an IPv4 address, possibly a refused one),
    # NAT64, discard, IETF assignments (Teredo), documentation, 6to4, unique-local (AWS
    # metadata fd00:ec2::254), link-local, site-local and multicast.
    "::/96", "::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96",
    "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "2002::/16", "fc00::/7",
    "fe80::/10", "fec0::/10", "ff00::/8",
)

#: Networks a server refuses unless the operator allows them.
REFUSED_NETWORKS: tuple[IPNetwork, ...] = tuple(ipaddress.ip_network(n) for n in _REFUSED)


class TargetRefusedError(InvalidInputError):
    """The URL's host is, or resolves to, an address the server's policy refuses."""


def parse_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """CIDRs (``10.1.0.0/16``, ``fd00::/8``) or single addresses; comma- or space-separated
    lists are split. Raises :class:`InvalidInputError` naming the bad entry."""
    networks: list[IPNetwork] = []
    for value in values:
        for item in value.replace(",", " ").split():
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise InvalidInputError(
                    f"allowed target {item!r} is not an address or CIDR block"
                ) from None
    return tuple(networks)


def _unwrap(address: IPAddress) -> IPAddress:
    # An IPv4-mapped IPv6 address reaches the IPv4 host: judge that host too.
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@dataclass(frozen=True, slots=True)
class ResolvedTarget:
    """A URL's host, the port it uses and the addresses it resolved to (all allowed)."""

    host: str
    port: int
    addresses: tuple[IPAddress, ...]


@dataclass(frozen=True, slots=True)
class TargetPolicy:
    """The addresses a test may reach. The default refuses :data:`REFUSED_NETWORKS`.

    ``allow_private`` allows every address; ``allowed`` re-opens these networks (an
    operator's ``--allow-target 10.20.0.0/16``). Immutable and picklable, so it can travel
    with a test to whatever runs it.
    """

    allow_private: bool = False
    allowed: tuple[IPNetwork, ...] = ()

    @property
    def restricts(self) -> bool:
        """False when nothing is refused (the policy needs no check at all)."""
        return not self.allow_private

    def allows_address(self, address: IPAddress | str) -> bool:
        if not self.restricts:
            return True
        ip = ipaddress.ip_address(address) if isinstance(address, str) else address
        candidates = {ip, _unwrap(ip)}
        for candidate in candidates:
            if any(candidate in net for net in self.allowed if net.version == candidate.version):
                return True
        return not any(
            candidate in net
            for candidate in candidates
            for net in REFUSED_NETWORKS
            if net.version == candidate.version
        )

    def check_url(self, url: str, *, field: str = "url") -> ResolvedTarget:
        """Resolve the URL's host and check every address it has.

        Raises :class:`TargetRefusedError` (an :class:`InvalidInputError` naming
        ``field``) when the host cannot be resolved or any of its addresses is refused:
        one refused address is enough, because the connection may use any of them.
        """
        host, port = target_of(url, field=field)
        return self.check_addresses(host, port, resolve(host, port), field=field)

    def check_addresses(
        self, host: str, port: int, addresses: tuple[IPAddress, ...], *, field: str = "url"
    ) -> ResolvedTarget:
        """Check the addresses ``host`` resolved to (by whatever resolver the caller
        uses: the service resolves off its request threads); see :meth:`check_url`."""
        if not addresses:
            raise TargetRefusedError(f"{field}: the host {host!r} does not resolve")
        if self.restricts:
            for address in addresses:
                if not self.allows_address(address):
                    raise TargetRefusedError(
                        f"{field}: {host!r} is, or resolves to, {address}: a private, "
                        "loopback, link-local or reserved address this server does not "
                        "test (the operator can allow it with --allow-target)"
                    )
        return ResolvedTarget(host=host, port=port, addresses=addresses)

    def check_urls(self, urls: Sequence[str], *, field: str) -> None:
        for index, url in enumerate(urls):
            self.check_url(url, field=f"{field}[{index}]" if len(urls) > 1 else field)


def enforced(policy: TargetPolicy | None) -> TargetPolicy | None:
    """The policy a request must be checked against, or None when nothing is refused: no
    policy at all (the local runners and a user's own process: a notebook may test
    ``localhost``) or one that allows every address. The one place that decides whether
    a browser run, a TTFB probe or a scan's discovery is guarded."""
    return policy if policy is not None and policy.restricts else None


def target_of(url: str, *, field: str = "url") -> tuple[str, int]:
    """The host and port ``url`` connects to; :class:`InvalidInputError` naming ``field``
    when it has no host or its port is not a number from 1 to 65535."""
    parts = urlsplit(url)
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise InvalidInputError(f"{field}: the port is not a number from 1 to 65535") from None
    if not host:
        raise InvalidInputError(f"{field}: must be an absolute http:// or https:// URL")
    return host, port


def resolve(host: str, port: int) -> tuple[IPAddress, ...]:
    """Every address ``host`` resolves to, as the system resolver answers (``getaddrinfo``,
    which also reads the numeric forms a browser accepts: ``2130706433``, ``0x7f000001``,
    ``0177.0.0.1``, ``127.1``). Empty when it does not resolve."""
    name = host.strip("[]")
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return ()
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        # An IPv6 scope ("fe80::1%eth0") is not part of the address.
        text = str(sockaddr[0]).split("%", 1)[0]
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            continue
        if address not in addresses:
            addresses.append(address)
    return tuple(addresses)
