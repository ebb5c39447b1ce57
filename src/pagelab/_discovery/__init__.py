"""Discovery of a site's pages (sitemaps, else a link crawl), their templates and a sample
of each (issue 39). Below the service and the runners, so that ``pagelab serve`` discovers
under its own egress rules (``POST /v1/discoveries``); :mod:`pagelab._scan` measures the
sample on top. Private room: nothing here is public API."""

from ._discover import Discovery, discover
from ._scope import glob_list
from ._sitemaps import MAX_SITEMAP_URLS
from ._templates import TemplateRule, group_templates, sample_templates
from ._wire import from_wire, to_wire

__all__ = [
    "MAX_SITEMAP_URLS",
    "Discovery",
    "TemplateRule",
    "discover",
    "from_wire",
    "glob_list",
    "group_templates",
    "sample_templates",
    "to_wire",
]
