"""The demo store: a small shop for ``pagelab scan`` to discover and measure.

``/store/`` lists three categories, each listing four of the twelve products; ``/store/about``
is a page of its own. Its sitemaps are those of a real shop: ``/robots.txt`` names the index
``/store/sitemap.xml``, which lists a plain sitemap of the pages (with the site's home
``/``, outside a scan of ``/store/``) and a gzipped one of the products. A product page
answers after :data:`PRODUCT_DELAY_S` on purpose: the template a scan should rank worst.
"""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
from functools import cache

from pagelab._html import Markup

__all__ = ["CATEGORIES", "PRODUCT_DELAY_S", "STORE_PATHS", "product_path", "robots_txt",
           "sitemap", "store_page"]

#: Category slug -> its products' slugs.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "shoes": ("trail-runner", "city-sneaker", "rain-boot", "linen-espadrille"),
    "hats": ("wool-beanie", "straw-sunhat", "rain-cap", "felt-fedora"),
    "bags": ("canvas-tote", "leather-satchel", "day-pack", "bike-pannier"),
}
#: Seconds a product page waits before its HTML: the slow template, on purpose.
PRODUCT_DELAY_S = 1.5
_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
_INDEX, _PAGES, _PRODUCTS = ("/store/sitemap.xml", "/store/sitemap-pages.xml",
                             "/store/sitemap-products.xml.gz")


def product_path(slug: str) -> str:
    return f"/store/product/{slug}"


def _category_path(slug: str) -> str:
    return f"/store/category/{slug}"


def _products() -> list[str]:
    return [slug for slugs in CATEGORIES.values() for slug in slugs]


def _name(slug: str) -> str:
    return slug.replace("-", " ").capitalize()


#: Every page of the store (the sitemaps' and the links' targets).
STORE_PATHS: tuple[str, ...] = (
    "/store/", "/store/about", *map(_category_path, CATEGORIES), *map(product_path, _products()))


def robots_txt(base: str) -> bytes:
    """``/robots.txt``: everything allowed, and where the sitemap index is."""
    return f"User-agent: *\nAllow: /\nSitemap: {base}{_INDEX}\n".encode()


def _xml(root: str, child: str, urls: list[str]) -> bytes:
    element = ET.Element(root, xmlns=_NS)
    for url in urls:
        ET.SubElement(ET.SubElement(element, child), "loc").text = url
    data: bytes = ET.tostring(element, encoding="utf-8", xml_declaration=True)
    return data


@cache
def _gzipped(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def sitemap(path: str, base: str) -> tuple[bytes, str] | None:
    """The sitemap file at ``path`` and its content type, or None when there is none."""
    if path == _INDEX:
        return _xml("sitemapindex", "sitemap", [base + _PAGES, base + _PRODUCTS]), "application/xml"
    if path == _PAGES:
        pages = ["/", "/store/", "/store/about", *map(_category_path, CATEGORIES)]
        return _xml("urlset", "url", [base + p for p in pages]), "application/xml"
    if path == _PRODUCTS:
        products = [base + product_path(slug) for slug in _products()]
        return _gzipped(_xml("urlset", "url", products)), "application/gzip"
    return None


def _links(pairs: list[tuple[str, str]]) -> Markup:
    item = Markup('<li><a href="{}">{}</a></li>')
    return Markup("").join(item.format(href, text) for href, text in pairs)


def store_page(path: str) -> tuple[str, str, Markup] | None:
    """A store page's title, text and links (HTML), or None when ``path`` is not one.
    Only known slugs are pages: nothing of the request is echoed."""
    path = "/store/" if path == "/store" else path
    if path == "/store/":
        return ("The demo store", "Three categories of things to wear and carry.",
                _links([(_category_path(c), _name(c)) for c in CATEGORIES]))
    if path == "/store/about":
        return ("About the store", "A small shop on loopback, here to be scanned.", Markup(""))
    for category, slugs in CATEGORIES.items():
        if path == _category_path(category):
            return (_name(category), f"Four {category} we like.",
                    _links([(product_path(s), _name(s)) for s in slugs]))
        for slug in slugs:
            if path == product_path(slug):
                return (_name(slug), f"One of our {category}; its page is slow on purpose.",
                        _links([(_category_path(category), f"More {category}")]))
    return None
