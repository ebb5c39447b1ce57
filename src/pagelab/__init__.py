"""pagelab: synthetic web-performance testing for Python.

Real Lighthouse runs in real Chromium (or through any server of the Web Performance Testing
API), as typed reports and pandas DataFrames.

    >>> import pagelab
    >>> results = pagelab.measure(["http://127.0.0.1:8000/fast"], devices=["mobile", "desktop"])
    >>> results.summary()                     # median per cell, CV, representative run
    >>> results.compare(by="device", a="mobile", b="desktop")

The analysis modules (``frames``, ``stats``, ``measure``, ``plots``, ``export``,
``budgets``, ``widgets``) load on first use, so ``import pagelab`` (and ``pagelab serve``)
stays light.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from ._exceptions import (
    APIError,
    APINotFoundError,
    AuthenticationError,
    BadRequestError,
    EngineError,
    EngineNotInstalledError,
    InsufficientCreditsError,
    InvalidInputError,
    MissingDependencyError,
    NotFoundError,
    PagelabError,
    RateLimitedError,
    ServerError,
    StoreError,
    TimeoutError,
    TransportError,
)
from .client import AsyncClient, Client, RetryPolicy
from .models import (
    METRICS,
    BatchItem,
    BatchReport,
    BatchStatus,
    BatchType,
    Connection,
    Device,
    HttpVersion,
    LighthouseConfig,
    LighthouseError,
    Location,
    Metric,
    Metrics,
    TestReport,
    TestStatus,
    ThrottlingMethod,
    TTFBResult,
    metric,
)
from .runners import ApiRunner, LocalRunner, Runner

if TYPE_CHECKING:
    from . import budgets, export, frames, plots, stats, widgets
    from ._measure import Results, measure
    from ._readable import Comparison, Summary

__version__ = "0.1.0"

__all__ = [
    "METRICS",
    "APIError",
    "APINotFoundError",
    "ApiRunner",
    "AsyncClient",
    "AuthenticationError",
    "BadRequestError",
    "BatchItem",
    "BatchReport",
    "BatchStatus",
    "BatchType",
    "Client",
    "Comparison",
    "Connection",
    "Device",
    "EngineError",
    "EngineNotInstalledError",
    "HttpVersion",
    "InsufficientCreditsError",
    "InvalidInputError",
    "LighthouseConfig",
    "LighthouseError",
    "LocalRunner",
    "Location",
    "Metric",
    "Metrics",
    "MissingDependencyError",
    "NotFoundError",
    "PagelabError",
    "RateLimitedError",
    "Results",
    "RetryPolicy",
    "Runner",
    "ServerError",
    "StoreError",
    "Summary",
    "TTFBResult",
    "TestReport",
    "TestStatus",
    "ThrottlingMethod",
    "TimeoutError",
    "TransportError",
    "__version__",
    "budgets",
    "connect",
    "export",
    "frames",
    "measure",
    "metric",
    "plots",
    "stats",
    "widgets",
]

# Submodules and names loaded on first access (PEP 562): pandas, matplotlib and ipywidgets
# are paid for only by code that uses them.
_LAZY_MODULES = frozenset({"budgets", "export", "frames", "plots", "stats", "widgets"})
_LAZY_NAMES: dict[str, str] = {"Comparison": "._readable", "Results": "._measure",
                               "Summary": "._readable", "measure": "._measure"}


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(_LAZY_NAMES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def connect(data_dir: str | None = None) -> Runner:
    """The runner for this environment.

    An :class:`ApiRunner` when ``PAGELAB_API_URL`` is set (with ``PAGELAB_API_KEY``),
    else a :class:`LocalRunner` on ``data_dir`` (default ``$PAGELAB_DATA_DIR`` or the
    per-user data dir).
    """
    if os.environ.get("PAGELAB_API_URL"):
        return ApiRunner()
    return LocalRunner(data_dir)
