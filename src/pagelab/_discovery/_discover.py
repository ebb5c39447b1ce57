"""Discovery: the pages of a site in scope, from its sitemaps or, when they give none, from a
breadth-first crawl of its links.

Requests go through httpx (the client pagelab already depends on), not the engine's
browser: discovery reads sitemaps and links, it does not render, and a browser would cost a
second per page and hold the engine that the runs need (docs/decisions.md).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin

import httpx

from pagelab._exceptions import DiscoveryError, InvalidInputError
from pagelab.engine import Resolver, TargetPolicy, enforced
from pagelab.models import DEFAULT_DEPTH, DEFAULT_MAX_PAGES

from ._egress import PinnedTransport
from ._scope import PathGlobs, Scope, page_url
from ._sitemaps import SitemapReader, robots_sitemaps

__all__ = ["Discovery", "discover"]

#: The crawl fetches at most this many pages per page kept (it may pass through pages that
#: ``include``/``exclude`` leave out to reach the ones they keep).
_FETCHES_PER_PAGE = 4
_TIMEOUT = httpx.Timeout(15.0)
_HTML_TYPES = ("text/html", "application/xhtml+xml")
#: The part of a crawled HTML page whose links are read.
_MAX_PAGE_BYTES = 5 * 2**20
#: Called with each page kept, as it is found.
PageCallback = Callable[[str], None]


@dataclass
class Discovery:
    """What discovery found: the pages kept (in discovery order), where they came from
    (``"sitemap"`` or ``"crawl"``), the sitemap files read, and how many URLs were dropped
    and why (``off_scope``, ``duplicate``, ``not_http``, ``filtered`` by include/exclude,
    ``over_max_pages``)."""

    start_url: str
    pages: list[str] = field(default_factory=list)
    source: str = "sitemap"
    sitemaps: list[str] = field(default_factory=list)
    dropped: collections.Counter[str] = field(default_factory=collections.Counter)


class _Keeper:
    """Applies scope, de-duplication, the globs and ``max_pages`` to candidate URLs."""

    def __init__(self, scope: Scope, globs: PathGlobs, max_pages: int,
                 found: Discovery, on_page: PageCallback | None) -> None:
        self.scope, self.globs, self.max_pages = scope, globs, max_pages
        self.found = found
        self.seen: set[str] = set()
        self.on_page = on_page

    @property
    def full(self) -> bool:
        return len(self.found.pages) >= self.max_pages

    def offer(self, candidate: str) -> str | None:
        """The URL in scope and new (else None, the reason counted); kept as a page when
        the globs keep it and there is room."""
        url = page_url(candidate)
        reason = ("not_http" if url is None else "off_scope" if not self.scope.contains(url)
                  else "duplicate" if url in self.seen else None)
        if reason is not None or url is None:
            self.found.dropped[reason or "not_http"] += 1
            return None
        self.seen.add(url)
        return url

    def keep(self, url: str) -> None:
        if not self.globs.keeps(url):
            self.found.dropped["filtered"] += 1
        elif self.full:
            self.found.dropped["over_max_pages"] += 1
        else:
            self.found.pages.append(url)
            if self.on_page is not None:
                self.on_page(url)


def discover(
    start_url: str,
    *,
    max_pages: int = DEFAULT_MAX_PAGES,
    include: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] | None = None,
    depth: int = DEFAULT_DEPTH,
    on_page: PageCallback | None = None,
    target_policy: TargetPolicy | None = None,
    resolver: Resolver | None = None,
    time_budget: float | None = None,
) -> Discovery:
    """The pages of the site at ``start_url`` within its scope (origin and path prefix).

    Sitemaps first: the ``Sitemap:`` lines of ``/robots.txt``, else ``/sitemap.xml``.
    When they give no page in scope, a breadth-first crawl of the links from the start page
    (same scope, HTML pages only, fragments dropped, ``depth`` links deep). ``include`` and
    ``exclude`` are path globs (:func:`glob_pattern`). At most ``max_pages`` pages are
    kept. Raises :class:`DiscoveryError` when the start URL cannot be reached or a sitemap
    is broken, too big or loops; :class:`InvalidInputError` for bad arguments.

    ``target_policy`` (a server's egress rules; None in a user's own process, as for the
    local runners: every address allowed) checks every request, redirect hops included,
    through :class:`PinnedTransport` (host names resolved by ``resolver``, default the
    system's): a refused address is a :class:`DiscoveryError` naming it and the rule.
    ``time_budget`` (seconds; a server's bound) stops discovery with a
    :class:`DiscoveryError` at the first request sent after it is spent."""
    scope = Scope.of(start_url)
    if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
        raise InvalidInputError(f"max_pages: expected a positive integer, got {max_pages!r}")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise InvalidInputError(f"depth: expected a non-negative integer, got {depth!r}")
    globs = PathGlobs(include, exclude)
    start = page_url(start_url) or start_url
    found = Discovery(start)
    keeper = _Keeper(scope, globs, max_pages, found, on_page)
    guarded = enforced(target_policy)
    http = httpx.Client(
        follow_redirects=True, timeout=_TIMEOUT, headers={"User-Agent": "pagelab-scan"},
        event_hooks={"request": [_within(time_budget)] if time_budget is not None else []},
        transport=PinnedTransport(guarded, resolver) if guarded is not None else None,
        trust_env=guarded is None)
    try:
        start_page = _get_start(http, start)
        reader = SitemapReader(http)
        listed = robots_sitemaps(http, scope.origin)
        for sitemap in listed or [f"{scope.origin}/sitemap.xml"]:
            for location in reader.locations(sitemap, optional=not listed):
                url = keeper.offer(location)
                if url is not None:
                    keeper.keep(url)
            if keeper.full:
                break
        found.sitemaps = list(reader.fetched)
        if not keeper.seen:
            found.source = "crawl"
            _crawl(http, start, start_page, keeper, depth)
    finally:
        http.close()
    return found


def _within(time_budget: float) -> Callable[[httpx.Request], None]:
    """An httpx request hook (called for each request, redirect hops included) that
    refuses to send once ``time_budget`` seconds have passed since it was made."""
    deadline = time.monotonic() + time_budget

    def check(request: httpx.Request) -> None:
        if time.monotonic() >= deadline:
            raise DiscoveryError(
                f"discovery request {request.url}: not sent, discovery took longer than "
                f"its {time_budget:g} s budget (lower max_pages or depth)")

    return check


@dataclass(frozen=True, slots=True)
class _Page:
    """A fetched page: its status, its final URL (after redirects) and, for an HTML page
    answered 200, its first :data:`_MAX_PAGE_BYTES` as text (else None: never read)."""

    status: int
    url: str
    html: str | None


def _fetch(client: httpx.Client, url: str) -> _Page:
    """GET ``url``, reading the body only of an HTML page, and only up to the cap (its links
    are in its first megabytes; a PDF or a video is not downloaded at all)."""
    with client.stream("GET", url) as response:
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if response.status_code != 200 or kind not in _HTML_TYPES:
            return _Page(response.status_code, str(response.url), None)
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) >= _MAX_PAGE_BYTES:
                break
        text = bytes(body[:_MAX_PAGE_BYTES]).decode(response.encoding or "utf-8", "replace")
        return _Page(response.status_code, str(response.url), text)


def _get_start(client: httpx.Client, url: str) -> _Page:
    try:
        page = _fetch(client, url)
    except httpx.HTTPError as exc:
        raise DiscoveryError(f"start URL {url} cannot be reached: {exc}") from exc
    if page.status >= 400:
        raise DiscoveryError(f"start URL {url}: the server answered {page.status}")
    return page


class _Links(HTMLParser):
    """The ``href`` of every ``<a>`` and ``<area>``, and the ``<base href>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.base: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if href is None:
            return
        if tag == "base" and self.base is None:
            self.base = href
        elif tag in ("a", "area"):
            self.links.append(href)


def _links(page: _Page) -> list[str]:
    parser = _Links()
    parser.feed(page.html or "")
    parser.close()
    base = urljoin(page.url, parser.base) if parser.base else page.url
    return [urljoin(base, href.strip()) for href in parser.links]


def _crawl(client: httpx.Client, start_url: str, start: _Page, keeper: _Keeper,
           depth: int) -> None:
    """Breadth first from the start page: each level's pages in the order they were linked,
    until ``max_pages`` are kept, ``depth`` is reached or the fetch budget is spent."""
    first = keeper.offer(start_url)
    if first is None or start.html is None:
        return
    keeper.keep(first)
    budget = _FETCHES_PER_PAGE * keeper.max_pages
    queue: collections.deque[tuple[str, int, _Page | None]] = collections.deque(
        [(first, 0, start)])
    while queue and not keeper.full and budget > 0:
        url, level, page = queue.popleft()
        if page is None:
            budget -= 1
            try:
                page = _fetch(client, url)
            except httpx.HTTPError:
                continue  # a broken link is not the scan's failure: the page is skipped
            if page.html is None:
                continue
            keeper.keep(url)
        if level >= depth:
            continue
        for link in _links(page):
            found = keeper.offer(link)
            if found is not None:
                queue.append((found, level + 1, None))
