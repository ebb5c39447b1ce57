"""The body and answer of ``POST /v1/discoveries`` (a pagelab extension: discovery of a
site's pages inside the service, under its egress rules; docs/api.md). Shared by the
service, which answers, and the clients, which read the answer. Not public API."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ._types import BoundedStr, PageUrl

__all__ = [
    "DEFAULT_DEPTH",
    "DEFAULT_MAX_PAGES",
    "DEFAULT_PER_TEMPLATE",
    "DISCOVERY_FAILED",
    "DiscoveredPage",
    "DiscoveryRequest",
    "SiteDiscovery",
]

#: The pages discovery keeps unless told.
DEFAULT_MAX_PAGES = 500
#: How many links deep the crawl goes from the start page unless told.
DEFAULT_DEPTH = 3
#: Pages measured per template unless told.
DEFAULT_PER_TEMPLATE = 3
#: The error code of a discovery that could not find the site's pages (status 502).
DISCOVERY_FAILED = "discovery_failed"
#: What a server discovers at most in one request (its time budget bounds it too).
_MAX_PAGES_ON_SERVER = 5000
_MAX_DEPTH_ON_SERVER = 10
_MAX_PER_TEMPLATE = 100
_MAX_GLOBS = 50


class DiscoveryRequest(BaseModel):
    """``POST /v1/discoveries``: the start URL and :func:`pagelab.scan`'s discovery and
    sampling options (``include``/``exclude`` are path globs)."""

    model_config = ConfigDict(extra="ignore")

    url: PageUrl
    max_pages: int = Field(DEFAULT_MAX_PAGES, ge=1, le=_MAX_PAGES_ON_SERVER)
    include: list[BoundedStr] = Field(default_factory=list, max_length=_MAX_GLOBS)
    exclude: list[BoundedStr] = Field(default_factory=list, max_length=_MAX_GLOBS)
    depth: int = Field(DEFAULT_DEPTH, ge=0, le=_MAX_DEPTH_ON_SERVER)
    per_template: int = Field(DEFAULT_PER_TEMPLATE, ge=1, le=_MAX_PER_TEMPLATE)
    seed: int = Field(0, ge=0, le=2**31 - 1)


class DiscoveredPage(BaseModel):
    """One page kept, with its template (the default rule of docs/scan.md)."""

    url: str
    template: str


class SiteDiscovery(BaseModel):
    """What discovery found: the pages in discovery order with their templates, where they
    came from, each template's sample, the sitemap files read and the URLs dropped, by
    reason (``off_scope``, ``duplicate``, ``not_http``, ``filtered``, ``over_max_pages``)."""

    start_url: str
    source: Literal["sitemap", "crawl"]
    pages: list[DiscoveredPage]
    sample: dict[str, list[str]]
    sitemaps: list[str]
    dropped: dict[str, int]
