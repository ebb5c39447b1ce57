"""Clients of the Web Performance Testing API (any server of it, ``pagelab serve`` included).

:class:`Client` and :class:`AsyncClient` have the same methods; they share an I/O-free core
and differ only in how they send requests and sleep.
"""

from ._async import AsyncClient
from ._core import DEFAULT_TIMEOUT, ConfigInput, ProgressCallback, RetryPolicy, TimeInput
from ._sync import Client

__all__ = [
    "DEFAULT_TIMEOUT",
    "AsyncClient",
    "Client",
    "ConfigInput",
    "ProgressCallback",
    "RetryPolicy",
    "TimeInput",
]
