"""Reports as pandas DataFrames (the wide frame of runs and its tidy form), and one run's
audits and network requests, and TTFB results; what a cell is (:data:`CELL`)."""

from pagelab._cells import CELL, CellKey, cell_columns, cell_key, cell_keys, cell_label

from ._run import AUDIT_COLUMNS, AUDIT_GROUPS, REQUEST_COLUMNS, audits, requests
from ._ttfb import TTFB_COLUMNS, ttfb_frame
from ._wide import COLUMNS, UNITS, to_frame, to_long

__all__ = [
    "AUDIT_COLUMNS",
    "AUDIT_GROUPS",
    "CELL",
    "COLUMNS",
    "REQUEST_COLUMNS",
    "TTFB_COLUMNS",
    "UNITS",
    "CellKey",
    "audits",
    "cell_columns",
    "cell_key",
    "cell_keys",
    "cell_label",
    "requests",
    "to_frame",
    "to_long",
    "ttfb_frame",
]
