"""Sitemaps, read as untrusted input: the ``Sitemap:`` lines of ``robots.txt``, sitemap
indexes followed, gzipped sitemaps stream-decompressed, every body capped.

The protocol's limits (sitemaps.org) are the caps: 50 000 URLs and 50 MB (uncompressed) per
sitemap. XML is parsed by ``defusedxml`` with DTDs forbidden, so no entity expansion and no
external entity is ever read (docs/security.md).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import ParseError, fromstring

from pagelab._exceptions import DiscoveryError

__all__ = ["MAX_SITEMAP_BYTES", "MAX_SITEMAP_URLS", "SitemapReader", "robots_sitemaps"]

#: The sitemap protocol's limits on one sitemap file (uncompressed).
MAX_SITEMAP_URLS = 50_000
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
#: How deep indexes may nest (the protocol allows none; some sites nest one level).
_MAX_INDEX_DEPTH = 4
#: Sitemap files read in one discovery at most: an index of indexes cannot make it endless.
_MAX_SITEMAPS = 1_000
_GZIP_MAGIC = b"\x1f\x8b"


def robots_sitemaps(client: httpx.Client, origin: str) -> list[str]:
    """The ``Sitemap:`` URLs of ``origin``'s ``/robots.txt`` (none when it has no such
    file or cannot be read: a missing robots.txt is normal)."""
    try:
        response = client.get(f"{origin}/robots.txt")
    except httpx.HTTPError:
        return []
    if response.status_code != 200:
        return []
    found = []
    for line in response.text.splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "sitemap" and value.strip():
            found.append(value.strip())
    return list(dict.fromkeys(found))


def _local(tag: str) -> str:
    """An element's name without its namespace."""
    return tag.rpartition("}")[2]


@dataclass
class SitemapReader:
    """Reads sitemaps and the indexes above them, yielding every ``<loc>`` of every URL set.

    ``fetched`` lists the sitemap files read, in order; a file listed twice (not in a loop)
    is read once."""

    client: httpx.Client
    fetched: list[str] = field(default_factory=list)

    def locations(self, url: str, *, optional: bool = False) -> Iterator[str]:
        """Every page URL of the sitemap (or index) at ``url``, in document order.
        ``optional`` (a guessed ``/sitemap.xml``): a 404 or 410, or an HTML page in its
        place (a site answering every path with its app), means no sitemap, not an error."""
        yield from self._read(url, (), optional=optional)

    def _read(self, url: str, parents: tuple[str, ...], *, optional: bool = False
              ) -> Iterator[str]:
        if url in parents:
            chain = " -> ".join((*parents[parents.index(url):], url))
            raise DiscoveryError(f"sitemap indexes form a loop: {chain}")
        if len(parents) > _MAX_INDEX_DEPTH:
            raise DiscoveryError(
                f"sitemap {url}: indexes nested more than {_MAX_INDEX_DEPTH} deep")
        if url in self.fetched:
            return
        if len(self.fetched) >= _MAX_SITEMAPS:
            raise DiscoveryError(f"more than {_MAX_SITEMAPS} sitemap files; not reading {url}")
        body = self._body(url, optional=optional)
        if body is None:
            return
        self.fetched.append(url)
        root = _parse(url, body)
        kind = _local(root.tag)
        if kind not in ("urlset", "sitemapindex"):
            raise DiscoveryError(
                f"sitemap {url}: not a sitemap (its root element is <{kind}>, "
                "expected <urlset> or <sitemapindex>)")
        locations = [(element.text or "").strip() for element in root.iter()
                     if _local(element.tag) == "loc"]
        if len(locations) > MAX_SITEMAP_URLS:
            raise DiscoveryError(
                f"sitemap {url}: {len(locations)} entries, over the protocol's "
                f"{MAX_SITEMAP_URLS} per sitemap")
        if kind == "urlset":
            yield from (location for location in locations if location)
            return
        for child in locations:
            if child:
                yield from self._read(child, (*parents, url))

    def _body(self, url: str, *, optional: bool) -> bytes | None:
        """The sitemap's bytes, decompressed when gzipped, never more than the cap (None:
        an optional sitemap that is not there)."""
        try:
            with self.client.stream("GET", url) as response:
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if optional and (response.status_code in (404, 410) or kind == "text/html"):
                    return None
                if response.status_code != 200:
                    raise DiscoveryError(
                        f"sitemap {url}: the server answered {response.status_code}")
                return _capped(url, response.iter_bytes())
        except httpx.HTTPError as exc:
            raise DiscoveryError(f"sitemap {url} cannot be read: {exc}") from exc


def _capped(url: str, chunks: Iterator[bytes]) -> bytes:
    """The body, gunzipped as it streams when it starts with gzip's magic bytes (a ``.gz``
    file served as is; a ``Content-Encoding: gzip`` body httpx already decodes as it
    streams), stopped as soon as it passes :data:`MAX_SITEMAP_BYTES`."""
    out = bytearray()
    inflater: Any = None
    for chunk in chunks:
        if inflater is None and not out and chunk[:2] == _GZIP_MAGIC:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        if inflater is None:
            out += chunk
        else:
            try:
                # Never more than one byte past the cap out of a single chunk: a gzip
                # bomb is stopped without ever being inflated whole.
                out += inflater.decompress(chunk, MAX_SITEMAP_BYTES + 1 - len(out))
            except zlib.error as exc:
                raise DiscoveryError(f"sitemap {url}: broken gzip data ({exc})") from exc
        if len(out) > MAX_SITEMAP_BYTES:
            raise DiscoveryError(
                f"sitemap {url}: over the protocol's {MAX_SITEMAP_BYTES // 2**20} MB "
                "(uncompressed)")
    return bytes(out)


def _parse(url: str, body: bytes) -> Any:
    try:
        return fromstring(body, forbid_dtd=True)
    except ParseError as exc:
        raise DiscoveryError(f"sitemap {url}: not XML ({exc})") from exc
    except DefusedXmlException as exc:
        raise DiscoveryError(
            f"sitemap {url}: refused XML (a DTD or entity declaration, which sitemaps never "
            f"need: {exc})") from exc
