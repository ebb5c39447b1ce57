"""Whole-site scans, discovery (issue 39): sitemaps (robots.txt, indexes, gzip), the link
crawl, scope, max_pages, include/exclude and every error, on real loopback sites."""

from __future__ import annotations

import gzip
from collections.abc import Iterator

import pytest

import pagelab
from fixtures_http import closed_port
from fixtures_scan import XML, html, index, scan_site, urlset
from fixtures_site import RecordingSite
from pagelab._discovery import MAX_SITEMAP_URLS, discover


@pytest.fixture
def site() -> Iterator[RecordingSite]:
    with scan_site() as server:
        yield server


@pytest.fixture
def other() -> Iterator[RecordingSite]:
    with RecordingSite() as server:
        yield server


def test_robots_index_and_gzip_sitemaps_with_scope_and_duplicates(
        site: RecordingSite, other: RecordingSite) -> None:
    u = site.url
    site.add("/robots.txt", f"User-agent: *\nDisallow:\nSitemap: {u('/sitemap-index.xml')}\n",
             content_type="text/plain")
    site.add("/sitemap-index.xml", index(u("/pages.xml"), u("/products.xml.gz")),
             content_type=XML)
    site.add("/pages.xml", urlset(
        u("/"), u("/about"), u("/about#team"),           # a fragment: the same page
        other.url("/elsewhere"),                          # another origin: off scope
        "mailto:shop@example.test", "ftp://127.0.0.1/x",  # not HTTP(S)
    ), content_type=XML)
    products = urlset(*(u(f"/product/item-{i}") for i in range(5)), u("/about"))
    site.add("/products.xml.gz", gzip.compress(products.encode()),
             content_type="application/gzip")

    found = discover(u("/"))

    assert found.source == "sitemap"
    assert found.pages == [u("/"), u("/about"), *(u(f"/product/item-{i}") for i in range(5))]
    assert found.sitemaps == [u("/sitemap-index.xml"), u("/pages.xml"), u("/products.xml.gz")]
    assert found.dropped == {"duplicate": 2, "off_scope": 1, "not_http": 2}
    assert not other.requests  # an off-scope URL is never fetched


def test_sitemap_xml_without_robots_and_the_path_prefix(site: RecordingSite) -> None:
    u = site.url
    site.add("/shop/", html())
    site.add("/sitemap.xml", urlset(u("/shop/a"), u("/shop"), u("/shopping"), u("/blog/x"),
                                    u("/shop/b/c")), content_type=XML)

    found = discover(u("/shop/"))

    assert found.pages == [u("/shop/a"), u("/shop"), u("/shop/b/c")]
    assert found.dropped == {"off_scope": 2}


def test_a_gzipped_body_served_with_content_encoding_is_read(site: RecordingSite) -> None:
    u = site.url
    site.add("/sitemap.xml", gzip.compress(urlset(u("/a")).encode()), content_type=XML,
             headers={"Content-Encoding": "gzip"})
    assert discover(u("/")).pages == [u("/a")]


def test_max_pages_include_and_exclude(site: RecordingSite) -> None:
    u = site.url
    paths = ["/", "/blog/one", "/blog/two", "/blog/drafts/three", "/product/p1", "/product/p2",
             "/product/p3"]
    site.add("/sitemap.xml", urlset(*map(u, paths)), content_type=XML)

    assert discover(u("/"), max_pages=3).pages == list(map(u, paths[:3]))
    found = discover(u("/"), include=["/blog/**", "/product/*"], exclude="/blog/drafts/*",
                     max_pages=4)
    assert found.pages == list(map(u, ["/blog/one", "/blog/two", "/product/p1", "/product/p2"]))
    assert found.dropped == {"filtered": 2, "over_max_pages": 1}
    # `*` stays within a segment.
    assert discover(u("/"), include="/blog/*").pages == list(map(u, paths[1:3]))


def test_link_crawl_when_there_is_no_sitemap(site: RecordingSite, other: RecordingSite) -> None:
    u = site.url
    site.add("/", html("/a", "b#section", "/a", other.url("/x"), "mailto:x@example.test",
                       "/doc.pdf", "/missing", "javascript:void(0)"))
    site.add("/a", html("/", "/a/deep"))
    site.add("/b", html("/b/1"))
    site.add("/doc.pdf", b"%PDF-1.4", content_type="application/pdf")
    site.add("/a/deep", html("/a/deeper"))
    site.add("/b/1", html())
    site.add("/a/deeper", html())

    found = discover(u("/"), depth=2)

    assert found.source == "crawl"
    assert found.sitemaps == []
    # Breadth first, HTML pages only (not the PDF, not the 404), two links deep.
    assert found.pages == list(map(u, ["/", "/a", "/b", "/a/deep", "/b/1"]))
    assert not site.requests_for("/a/deeper")
    assert not other.requests
    assert discover(u("/"), max_pages=2).pages == [u("/"), u("/a")]
    assert discover(u("/"), exclude="/a**").pages == list(map(u, ["/", "/b", "/b/1"]))


def test_only_the_first_5_mb_of_a_crawled_page_are_read(site: RecordingSite) -> None:
    site.add("/", html("/early") + " " * (6 * 2**20) + html("/late"))
    site.add("/early", html())
    site.add("/late", html())
    assert discover(site.url("/")).pages == [site.url("/"), site.url("/early")]


def test_a_guessed_sitemap_that_is_an_html_page_means_crawl(site: RecordingSite) -> None:
    site.add("/", html("/a"))
    site.add("/a", html())
    site.add("/sitemap.xml", html())  # a site that answers every path with its app
    found = discover(site.url("/"))
    assert (found.source, found.pages) == ("crawl", [site.url("/"), site.url("/a")])


# -- errors ----------------------------------------------------------------------------------


def test_an_unreachable_start_url() -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    with pytest.raises(pagelab.DiscoveryError, match=r"start URL .* cannot be reached"):
        discover(url)


def test_a_start_url_that_answers_an_error(site: RecordingSite) -> None:
    with pytest.raises(pagelab.DiscoveryError, match="answered 404"):
        discover(site.url("/nowhere"))


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/", "127.0.0.1/", "http:///x", 42])
def test_a_start_url_that_is_not_http(url: object) -> None:
    with pytest.raises(pagelab.InvalidInputError, match="start_url"):
        discover(url)  # type: ignore[arg-type]


def listed(site: RecordingSite, path: str, body: str | bytes, **kwargs: object) -> str:
    site.add("/robots.txt", f"Sitemap: {site.url(path)}\n", content_type="text/plain")
    return site.add(path, body, **kwargs)  # type: ignore[arg-type]


def test_a_sitemap_that_is_not_xml(site: RecordingSite) -> None:
    listed(site, "/sitemap.xml", "this is not <xml", content_type=XML)
    with pytest.raises(pagelab.DiscoveryError, match=r"sitemap http://.*/sitemap.xml: not XML"):
        discover(site.url("/"))


def test_a_listed_sitemap_that_is_an_html_page_is_an_error(site: RecordingSite) -> None:
    listed(site, "/sitemap.xml", html("/a"))
    with pytest.raises(pagelab.DiscoveryError, match=r"sitemap\.xml: not XML"):
        discover(site.url("/"))


def test_xml_that_is_not_a_sitemap(site: RecordingSite) -> None:
    listed(site, "/feed.xml", "<rss><channel/></rss>", content_type=XML)
    with pytest.raises(pagelab.DiscoveryError, match=r"not a sitemap .*<rss>"):
        discover(site.url("/"))


def test_a_missing_listed_sitemap(site: RecordingSite) -> None:
    site.add("/robots.txt", f"Sitemap: {site.url('/gone.xml')}\n", content_type="text/plain")
    with pytest.raises(pagelab.DiscoveryError, match=r"gone\.xml: the server answered 404"):
        discover(site.url("/"))


def test_a_loop_of_sitemap_indexes(site: RecordingSite) -> None:
    u = site.url
    listed(site, "/a.xml", index(u("/b.xml")), content_type=XML)
    site.add("/b.xml", index(u("/ok.xml"), u("/a.xml")), content_type=XML)
    site.add("/ok.xml", urlset(u("/page")), content_type=XML)
    with pytest.raises(pagelab.DiscoveryError,
                       match=r"loop: .*/a\.xml -> .*/b\.xml -> .*/a\.xml"):
        discover(u("/"))


def test_an_index_listing_one_sitemap_twice_is_no_loop(site: RecordingSite) -> None:
    u = site.url
    listed(site, "/a.xml", index(u("/ok.xml"), u("/ok.xml")), content_type=XML)
    site.add("/ok.xml", urlset(u("/page")), content_type=XML)
    assert discover(u("/")).pages == [u("/page")]


def test_a_sitemap_over_50000_urls(site: RecordingSite) -> None:
    body = urlset(*(site.url(f"/p/{i}") for i in range(MAX_SITEMAP_URLS + 1)))
    listed(site, "/big.xml.gz", gzip.compress(body.encode()), content_type="application/gzip")
    with pytest.raises(pagelab.DiscoveryError, match="50001 entries, over the protocol's 50000"):
        discover(site.url("/"))


def test_a_gzip_bomb_is_stopped_at_50_mb(site: RecordingSite) -> None:
    # 60 MB of spaces inside a valid sitemap compress to about 60 kB.
    bomb = gzip.compress(b"<urlset>" + b" " * (60 * 2**20) + b"</urlset>", compresslevel=9)
    assert len(bomb) < 2**20
    listed(site, "/bomb.xml.gz", bomb, content_type="application/gzip")
    with pytest.raises(pagelab.DiscoveryError, match=r"over the protocol's 50 MB"):
        discover(site.url("/"))


def test_entity_expansion_is_refused(site: RecordingSite) -> None:
    laughs = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
              '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
              "<urlset><url><loc>&lol2;</loc></url></urlset>")
    listed(site, "/sitemap.xml", laughs, content_type=XML)
    with pytest.raises(pagelab.DiscoveryError, match="refused XML"):
        discover(site.url("/"))


@pytest.mark.parametrize(("options", "message"), [
    ({"max_pages": 0}, "max_pages"), ({"depth": -1}, "depth"),
    ({"include": "blog/*"}, "must start with '/'"), ({"exclude": [3]}, "exclude"),
])
def test_bad_arguments(site: RecordingSite, options: dict[str, object], message: str) -> None:
    with pytest.raises(pagelab.InvalidInputError, match=message):
        discover(site.url("/"), **options)  # type: ignore[arg-type]
    assert not site.requests  # refused before any request


def test_a_scan_that_finds_no_page_stops_before_any_run(site: RecordingSite) -> None:
    site.add("/sitemap.xml", urlset(site.url("/a")), content_type=XML)
    with pytest.raises(pagelab.DiscoveryError, match=r"no page found in scope .*filtered"):
        pagelab.scan(site.url("/"), include="/nothing/*", progress=False)


@pytest.mark.parametrize(("options", "message"), [
    ({"runs": 0}, "runs"), ({"per_template": 0}, "per_template"),
    ({"runner": "local"}, "runner"), ({"template": 42}, "template"),
])
def test_a_scan_refuses_bad_arguments_before_running(
        site: RecordingSite, options: dict[str, object], message: str) -> None:
    site.add("/sitemap.xml", urlset(site.url("/a")), content_type=XML)
    with pytest.raises(pagelab.InvalidInputError, match=message):
        pagelab.scan(site.url("/"), progress=False, **options)  # type: ignore[arg-type]
