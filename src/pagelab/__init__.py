"""pagelab: synthetic web-performance testing for Python.

Real Lighthouse runs in real Chromium (or through any server of the Web Performance Testing
API), as typed reports and pandas DataFrames.

    >>> import pagelab
    >>> runner = pagelab.connect()            # LocalRunner, or ApiRunner if PAGELAB_API_URL
    >>> report = runner.lighthouse("http://127.0.0.1:8000/fast", device="desktop")
    >>> report.to_frame()
"""

from __future__ import annotations

import os

from ._exceptions import (
    APIError,
    APINotFoundError,
    AuthenticationError,
    BadRequestError,
    EngineError,
    EngineNotInstalledError,
    InsufficientCreditsError,
    InvalidInputError,
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
    Metrics,
    TestReport,
    TestStatus,
    ThrottlingMethod,
    TTFBResult,
)
from .runners import ApiRunner, LocalRunner, Runner

__version__ = "0.1.0"

__all__ = [
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
    "Metrics",
    "NotFoundError",
    "PagelabError",
    "RateLimitedError",
    "RetryPolicy",
    "Runner",
    "ServerError",
    "StoreError",
    "TTFBResult",
    "TestReport",
    "TestStatus",
    "ThrottlingMethod",
    "TimeoutError",
    "TransportError",
    "__version__",
    "connect",
]


def connect(data_dir: str | None = None) -> Runner:
    """The runner for this environment.

    An :class:`ApiRunner` when ``PAGELAB_API_URL`` is set (with ``PAGELAB_API_KEY``),
    else a :class:`LocalRunner` on ``data_dir`` (default ``$PAGELAB_DATA_DIR`` or the
    per-user data dir).
    """
    if os.environ.get("PAGELAB_API_URL"):
        return ApiRunner()
    return LocalRunner(data_dir)
