"""Runners: one interface over the local engine and the HTTP API."""

from ._api import ApiRunner
from ._base import MatrixCell, ReportSink, Runner
from ._batch import MAX_BATCH_ITEMS, BatchPlan, plan_batch
from ._connect import connect
from ._execute import execute_test
from ._history import read_history
from ._local import LocalRunner
from ._resources import RESOURCE_NAMES, ReportRef

__all__ = [
    "MAX_BATCH_ITEMS",
    "RESOURCE_NAMES",
    "ApiRunner",
    "BatchPlan",
    "LocalRunner",
    "MatrixCell",
    "ReportRef",
    "ReportSink",
    "Runner",
    "connect",
    "execute_test",
    "plan_batch",
    "read_history",
]
