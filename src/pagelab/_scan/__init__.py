"""Whole-site scans (issue 39): discovery of a site's pages, their templates, and
:func:`pagelab.scan`, which measures a sample of each template through
:func:`pagelab.measure`. Private room: the root re-exports ``scan`` and ``ScanResults``;
the CLI uses the rest."""

from ._discover import DEFAULT_DEPTH, Discovery, discover
from ._scan import ScanResults, scan, scan_sample
from ._scope import glob_pattern
from ._sitemaps import MAX_SITEMAP_BYTES, MAX_SITEMAP_URLS
from ._templates import (
    DEFAULT_PER_TEMPLATE,
    MIN_SIBLINGS,
    TemplateRule,
    group_templates,
    sample_templates,
)

__all__ = [
    "DEFAULT_DEPTH",
    "DEFAULT_PER_TEMPLATE",
    "MAX_SITEMAP_BYTES",
    "MAX_SITEMAP_URLS",
    "MIN_SIBLINGS",
    "Discovery",
    "ScanResults",
    "TemplateRule",
    "discover",
    "glob_pattern",
    "group_templates",
    "sample_templates",
    "scan",
    "scan_sample",
]
