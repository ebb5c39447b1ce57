"""Reports as pandas DataFrames (the wide frame of runs and its tidy form), and one run's
audits and network requests, and TTFB results; the codec of runs (frame <-> records <->
reports); what a cell is (:data:`CELL`)."""

from pagelab._cells import CELL, CellKey, cell_columns, cell_key, cell_keys, cell_label
from pagelab._public import publish

from ._records import from_records, read_runs, to_records, to_reports
from ._run import AUDIT_COLUMNS, REQUEST_COLUMNS, audits, requests
from ._ttfb import TTFB_COLUMNS, ttfb_frame
from ._wide import COLUMNS, UNITS, to_frame, to_long

__all__ = [
    "AUDIT_COLUMNS",
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
    "from_records",
    "read_runs",
    "requests",
    "to_frame",
    "to_long",
    "to_records",
    "to_reports",
    "ttfb_frame",
]

publish(__name__, globals(), __all__)
