"""pagelab: synthetic web-performance testing for Python.

Real Lighthouse runs in real Chromium (or through any server of the Web Performance Testing
API), as typed reports and pandas DataFrames.

    >>> import pagelab
    >>> results = pagelab.measure(["http://127.0.0.1:8000/fast"], devices=["mobile", "desktop"])
    >>> results.summary()                     # median per cell, CV, representative run
    >>> results.compare(by="device", a="mobile", b="desktop")

The analysis modules (``frames``, ``stats``, ``measure``, ``plots``, ``export``,
``budgets``, ``field``, ``widgets``) load on first use, so ``import pagelab`` (and
``pagelab serve``) stays light.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from ._exceptions import (
    APIError,
    APINotFoundError,
    AuthenticationError,
    BadRequestError,
    DiscoveryError,
    EngineError,
    EngineNotInstalledError,
    InsufficientCreditsError,
    InvalidFlowError,
    InvalidInputError,
    MissingDependencyError,
    NotFoundError,
    PagelabError,
    RateLimitedError,
    RequestTimeoutError,
    ServerError,
    StoreError,
    TransportError,
)
from ._public import publish
from .client import AsyncClient, Client, RetryPolicy
from .models import (
    METRICS,
    BatchItem,
    BatchReport,
    BatchStatus,
    BatchType,
    Connection,
    Device,
    Flow,
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
from .runners import ApiRunner, LocalRunner, Runner, connect

if TYPE_CHECKING:
    # Not widgets: a face, which imports this package; the root never imports up into it.
    # ``from pagelab.widgets import ...`` is fully typed; ``pagelab.widgets`` reads as Any.
    from . import budgets, export, field, frames, plots, stats
    from ._build_history import history
    from ._measure import Results, measure
    from ._readable import Comparison, Summary
    from ._scan import ScanResults, scan
    from ._scan import scan_sample as scan_sample

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
    "DiscoveryError",
    "EngineError",
    "EngineNotInstalledError",
    "Flow",
    "HttpVersion",
    "InsufficientCreditsError",
    "InvalidFlowError",
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
    "RequestTimeoutError",
    "Results",
    "RetryPolicy",
    "Runner",
    "ScanResults",
    "ServerError",
    "StoreError",
    "Summary",
    "TTFBResult",
    "TestReport",
    "TestStatus",
    "ThrottlingMethod",
    "TransportError",
    "__version__",
    "budgets",
    "connect",
    "export",
    "field",
    "frames",
    "history",
    "measure",
    "metric",
    "plots",
    "scan",
    "stats",
    "widgets",
]

# Submodules and names loaded on first access (PEP 562): pandas, matplotlib and ipywidgets
# are paid for only by code that uses them.
_LAZY_MODULES = frozenset({"budgets", "export", "field", "frames", "plots", "stats",
                           "widgets"})
_LAZY_NAMES: dict[str, str] = {"Comparison": "._readable", "Results": "._measure",
                               "history": "._build_history",
                               "ScanResults": "._scan", "Summary": "._readable",
                               "measure": "._measure", "scan": "._scan",
                               # For the faces' budgets per template (the pytest plugin,
                               # pagelab check): not public, not in __all__.
                               "scan_sample": "._scan"}
#: Old names that still work, with a DeprecationWarning: old name -> (new name, why).
_DEPRECATED: dict[str, tuple[str, str]] = {
    "TimeoutError": ("RequestTimeoutError", "it shadowed the builtin TimeoutError"),
}

publish(__name__, globals(), __all__)


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(_LAZY_NAMES[name], __name__), name)
    if name in _DEPRECATED:
        new, why = _DEPRECATED[name]
        warnings.warn(
            f"pagelab.{name} is deprecated ({why}); use pagelab.{new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return globals()[new]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

