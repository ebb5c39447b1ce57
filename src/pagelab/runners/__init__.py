"""Runners: one interface over the local engine and the HTTP API."""

from pagelab._history import read_history
from pagelab._public import publish

from ._api import ApiRunner
from ._base import FlowCell, MatrixCell, ReportSink, Runner
from ._connect import connect
from ._local import LocalRunner

# isort: split
# For the service only (not public API, not in __all__): how it plans a batch and runs a
# queued test, the same way the local runner does.
from ._batch import MAX_BATCH_ITEMS as MAX_BATCH_ITEMS
from ._batch import plan_batch as plan_batch
from ._execute import execute_test as execute_test

__all__ = [
    "ApiRunner",
    "FlowCell",
    "LocalRunner",
    "MatrixCell",
    "ReportSink",
    "Runner",
    "connect",
    "read_history",
]

publish(__name__, globals(), __all__)
