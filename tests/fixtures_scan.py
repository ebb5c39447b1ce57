"""What the scan tests serve (not a test module): sitemaps, sitemap indexes and pages of
links, and a loopback site answering ``/`` with an empty page."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fixtures_site import RecordingSite

__all__ = ["XML", "html", "index", "scan_site", "urlset"]

XML = "application/xml"


def urlset(*locs: str) -> str:
    entries = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return ('<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>')


def index(*locs: str) -> str:
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return ('<?xml version="1.0" encoding="UTF-8"?>'
            f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}'
            "</sitemapindex>")


def html(*hrefs: str) -> str:
    links = "".join(f'<a href="{href}">link</a>' for href in hrefs)
    return f"<!doctype html><title>t</title><body>{links}</body>"


@contextmanager
def scan_site() -> Iterator[RecordingSite]:
    """A site on 127.0.0.1 whose ``/`` is a page without links."""
    with RecordingSite() as server:
        server.add("/", html())
        yield server
