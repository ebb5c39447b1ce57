"""Runners: one interface over the local engine and the HTTP API."""

from ._api import ApiRunner
from ._base import ConfigInput, ProgressCallback, Runner, TimeInput
from ._batch import MAX_BATCH_ITEMS, BatchPlan, plan_batch
from ._execute import execute_test
from ._local import LocalRunner

__all__ = [
    "MAX_BATCH_ITEMS",
    "ApiRunner",
    "BatchPlan",
    "ConfigInput",
    "LocalRunner",
    "ProgressCallback",
    "Runner",
    "TimeInput",
    "execute_test",
    "plan_batch",
]
