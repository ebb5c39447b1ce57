"""Discovery under a server's egress rules: every request a scan's discovery makes (the
start page, ``robots.txt``, each sitemap, each crawled page, and each redirect hop, which
httpx sends as a request of its own) goes through :class:`PinnedTransport`.

As the engine's egress proxy does for a browser (docs/security.md), the transport resolves
the host **once** per request, checks every address with the :class:`TargetPolicy` and
connects to a checked address only: the URL's host is replaced by that address, while the
``Host`` header, TLS's SNI and the certificate check keep the name. A name that answers
differently a moment later (DNS rebinding) reaches nothing new. Environment proxies are
ignored (a proxy would connect wherever it is told).
"""

from __future__ import annotations

import httpx

from pagelab._exceptions import DiscoveryError
from pagelab.engine import Resolver, TargetPolicy, TargetRefusedError, resolve

__all__ = ["PinnedTransport"]


class PinnedTransport(httpx.BaseTransport):
    """An httpx transport that sends each request to an address ``policy`` allows, resolved
    by ``resolver`` (default: the system's). A refused address is a
    :class:`~pagelab.DiscoveryError` naming the request, the host, its address and the rule;
    a host that does not resolve is an :class:`httpx.ConnectError`, as without a policy."""

    def __init__(self, policy: TargetPolicy, resolver: Resolver | None = None) -> None:
        self._policy = policy
        self._resolve = resolver or resolve
        # One pool per host name: a connection (and its TLS session) is never reused for
        # another name that happens to share the address.
        self._pools: dict[str, httpx.HTTPTransport] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.raw_host.decode("ascii")  # IDNA-encoded, as DNS and SNI want it
        port = request.url.port or (443 if request.url.scheme == "https" else 80)
        addresses = self._resolve(host, port)
        if not addresses:
            raise httpx.ConnectError(f"the host {host!r} does not resolve", request=request)
        try:
            self._policy.check_addresses(host, port, addresses,
                                         field=f"discovery request {request.url}")
        except TargetRefusedError as exc:
            raise DiscoveryError(str(exc)) from exc
        pinned = httpx.Request(
            request.method, request.url.copy_with(host=str(addresses[0])),
            headers=request.headers, stream=request.stream,
            extensions={**request.extensions, "sni_hostname": host})
        pool = self._pools.get(host)
        if pool is None:
            pool = self._pools[host] = httpx.HTTPTransport(trust_env=False)
        return pool.handle_request(pinned)

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()
