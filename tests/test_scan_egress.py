"""A scan's discovery under a server's egress rules (issue 39, point 5), on loopback only:
every request (start page, robots.txt, sitemaps, crawled pages, redirect hops) is resolved
once, checked with the :class:`TargetPolicy` and sent to the checked address only.

The policy of these tests allows 127.0.0.1 alone (``--allow-target 127.0.0.1``), so
127.0.0.2, loopback too, stands for a private address the server refuses.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import pytest

from fixtures_dns import LoopbackDns
from fixtures_scan import XML, html, scan_site, urlset
from fixtures_site import RecordingSite
from pagelab import DiscoveryError
from pagelab._discovery import discover
from pagelab.engine import TargetPolicy, dns_server_resolver

#: Refuses every private address but 127.0.0.1.
ONLY_127_0_0_1 = TargetPolicy(allowed=(ipaddress.ip_network("127.0.0.1/32"),))
REFUSED = ("a private, loopback, link-local or reserved address this server does not test "
           "(the operator can allow it with --allow-target)")


@pytest.fixture
def site() -> Iterator[RecordingSite]:
    with scan_site() as server:
        yield server


@pytest.fixture
def private(site: RecordingSite) -> Iterator[RecordingSite]:
    """A site on 127.0.0.2, at the same port as ``site``: what a refused request would
    reach (it must never be asked anything)."""
    with RecordingSite("127.0.0.2", site.port) as server:
        server.add("/sitemap.xml", urlset(server.url("/secret")), content_type=XML)
        server.add("/secret", html())
        yield server


def test_a_policy_refusing_loopback_refuses_the_start_url(site: RecordingSite) -> None:
    with pytest.raises(DiscoveryError) as caught:
        discover(site.url("/"), target_policy=TargetPolicy())
    assert str(caught.value) == (f"discovery request {site.url('/')}: '127.0.0.1' is, or "
                                 f"resolves to, 127.0.0.1: {REFUSED}")
    assert site.connections == 0


def test_an_ipv6_loopback_start_url_is_refused_before_any_connection() -> None:
    with pytest.raises(DiscoveryError, match=r"^discovery request http://\[::1\]:9/: '::1' "
                       r"is, or resolves to, ::1: a private"):
        discover("http://[::1]:9/", target_policy=ONLY_127_0_0_1)


def test_a_sitemap_on_a_refused_address_is_refused(site: RecordingSite,
                                                   private: RecordingSite) -> None:
    site.add("/robots.txt", f"Sitemap: {private.url('/sitemap.xml')}\n",
             content_type="text/plain")
    with pytest.raises(DiscoveryError) as caught:
        discover(site.url("/"), target_policy=ONLY_127_0_0_1)
    assert str(caught.value) == (f"discovery request {private.url('/sitemap.xml')}: "
                                 f"'127.0.0.2' is, or resolves to, 127.0.0.2: {REFUSED}")
    assert private.connections == 0
    # Without a policy (a user's own process) the same site is read as before.
    assert discover(site.url("/")).sitemaps == [private.url("/sitemap.xml")]


def test_a_redirect_to_a_refused_address_is_refused(site: RecordingSite,
                                                    private: RecordingSite) -> None:
    site.add("/", html("/a", "/b"))
    site.add("/a", html())
    site.add("/b", b"", status=302, headers={"Location": private.url("/secret")})
    with pytest.raises(DiscoveryError, match=r"discovery request http://127\.0\.0\.2:\d+/"
                       r"secret: '127\.0\.0\.2' is, or resolves to, 127\.0\.0\.2"):
        discover(site.url("/"), target_policy=ONLY_127_0_0_1)
    assert [r.path for r in site.requests_for("/b")] == ["/b"]  # the hop before: allowed
    assert private.connections == 0


def test_a_name_that_rebinds_to_a_refused_address_reaches_nothing_new(
        site: RecordingSite, private: RecordingSite) -> None:
    site.add("/", html("/a"))
    site.add("/a", html())
    # Start page, robots.txt, /sitemap.xml on 127.0.0.1; the crawled /a then on 127.0.0.2.
    with LoopbackDns({"shop.test": ["127.0.0.1"] * 3 + ["127.0.0.2"]}) as dns:
        start = f"http://shop.test:{site.port}/"
        with pytest.raises(DiscoveryError) as caught:
            discover(start, target_policy=ONLY_127_0_0_1,
                     resolver=dns_server_resolver(dns.address))
    assert str(caught.value) == (f"discovery request {start}a: 'shop.test' is, or resolves "
                                 f"to, 127.0.0.2: {REFUSED}")
    assert [r.path for r in site.requests] == ["/", "/robots.txt", "/sitemap.xml"]
    # Connected to the checked address, the name kept where the server reads it.
    assert {r.headers["host"] for r in site.requests} == {f"shop.test:{site.port}"}
    assert private.connections == 0


def test_allowed_targets_are_discovered_through_the_policy(site: RecordingSite) -> None:
    u = site.url
    site.add("/robots.txt", f"Sitemap: {u('/old-sitemap.xml')}\n", content_type="text/plain")
    site.add("/old-sitemap.xml", b"", status=301, headers={"Location": u("/sitemap.xml")})
    site.add("/sitemap.xml", urlset(u("/"), u("/p/1"), u("/p/2")), content_type=XML)
    found = discover(u("/"), target_policy=ONLY_127_0_0_1)
    assert found.pages == [u("/"), u("/p/1"), u("/p/2")]
    assert found.sitemaps == [u("/old-sitemap.xml")]
    # The crawl, too, and a policy that allows everything is no policy at all.
    site.routes.pop("/robots.txt")
    site.routes.pop("/sitemap.xml")
    site.add("/", html("/p/1"))
    site.add("/p/1", html())
    assert discover(u("/"), target_policy=ONLY_127_0_0_1).pages == [u("/"), u("/p/1")]
    assert discover(u("/"), target_policy=TargetPolicy(allow_private=True)).pages == [
        u("/"), u("/p/1")]


def test_a_spent_time_budget_sends_no_request(site: RecordingSite) -> None:
    # A server's bound (POST /v1/discoveries): past it, no request is sent.
    with pytest.raises(DiscoveryError, match=(
            rf"^discovery request {site.url('/')}: not sent, discovery took longer than its "
            r"0 s budget \(lower max_pages or depth\)$")):
        discover(site.url("/"), time_budget=0)
    assert site.requests == []
    assert discover(site.url("/"), time_budget=60).pages == [site.url("/")]
