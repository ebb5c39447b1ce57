"""A discovery on the wire (``POST /v1/discoveries``): what the service answers, and the
same discovery read back by :func:`pagelab.scan` on an :class:`~pagelab.ApiRunner`."""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence

from pagelab.models import DiscoveredPage, SiteDiscovery

from ._discover import Discovery

__all__ = ["from_wire", "to_wire"]


def to_wire(found: Discovery, templates: Mapping[str, str],
            sample: Mapping[str, Sequence[str]]) -> SiteDiscovery:
    """The answer for ``found``, each page with its template, and the ``sample``."""
    return SiteDiscovery(
        start_url=found.start_url,
        source="crawl" if found.source == "crawl" else "sitemap",
        pages=[DiscoveredPage(url=url, template=templates[url]) for url in found.pages],
        sample={template: list(urls) for template, urls in sample.items()},
        sitemaps=list(found.sitemaps),
        dropped=dict(found.dropped),
    )


def from_wire(site: SiteDiscovery) -> tuple[Discovery, dict[str, str], dict[str, list[str]]]:
    """``(discovery, page -> template, template -> sample)`` as the service found them."""
    found = Discovery(site.start_url, pages=[page.url for page in site.pages],
                      source=site.source, sitemaps=list(site.sitemaps),
                      dropped=collections.Counter(site.dropped))
    templates = {page.url: page.template for page in site.pages}
    return found, templates, {t: list(urls) for t, urls in site.sample.items()}
