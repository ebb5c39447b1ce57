"""Reports as pandas DataFrames (the wide frame of runs and its tidy form), one run's
audits, and per-run breakdowns (requests, resource summary, third parties, main thread, user
timings), and TTFB results; the codec of runs (frame <-> records <->
reports); what a cell is (:data:`CELL`)."""

from pagelab._cells import CELL, cell_label
from pagelab._public import publish

from ._breakdown import (
    MAIN_THREAD_COLUMNS,
    RESOURCE_SUMMARY_COLUMNS,
    THIRD_PARTY_COLUMNS,
    USER_TIMING_COLUMNS,
    main_thread,
    requests,
    resource_summary,
    third_parties,
    user_timings,
)
from ._records import from_records, read_runs, to_records, to_reports
from ._run import AUDIT_COLUMNS, REQUEST_COLUMNS, audits
from ._ttfb import TTFB_COLUMNS, ttfb_frame
from ._wide import COLUMNS, UNITS, to_frame, to_long

__all__ = [
    "AUDIT_COLUMNS",
    "CELL",
    "COLUMNS",
    "MAIN_THREAD_COLUMNS",
    "REQUEST_COLUMNS",
    "RESOURCE_SUMMARY_COLUMNS",
    "THIRD_PARTY_COLUMNS",
    "TTFB_COLUMNS",
    "UNITS",
    "USER_TIMING_COLUMNS",
    "audits",
    "cell_label",
    "from_records",
    "main_thread",
    "read_runs",
    "requests",
    "resource_summary",
    "third_parties",
    "to_frame",
    "to_long",
    "to_records",
    "to_reports",
    "ttfb_frame",
    "user_timings",
]

# isort: split
# For pagelab.stats' explanations (not public API, not in __all__).
from ._breakdown import resource_type as resource_type

# For pagelab.Results and pagelab.plots (not public API, not in __all__): rows per report,
# visual progress and the timed screenshots.
from ._visual import observed_ms as observed_ms
from ._visual import run_screenshots as run_screenshots
from ._visual import timed_images as timed_images
from ._visual import visual_progress as visual_progress
from ._visual import visual_progress_curve as visual_progress_curve
from ._visual import visually_complete_ms as visually_complete_ms
from ._wide import INTERACTION_COLUMNS as INTERACTION_COLUMNS
from ._wide import row_count as row_count
from ._wide import with_template as with_template

publish(__name__, globals(), __all__)
