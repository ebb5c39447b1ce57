""":func:`pagelab.scan` (issue 39): measures a sample of each template of a site, found by
:mod:`pagelab._discovery` (in this process, or inside the service on an
:class:`~pagelab.ApiRunner`), through :func:`pagelab.measure`. Private room: the root
re-exports ``scan`` and ``ScanResults``; the CLI and the plugin use ``scan_sample``."""

from ._scan import ScanResults, scan, scan_sample

__all__ = [
    "ScanResults",
    "scan",
    "scan_sample",
]
