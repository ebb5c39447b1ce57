"""Clients of the Web Performance Testing API (any server of it, ``pagelab serve`` included).

:class:`Client` and :class:`AsyncClient` have the same methods; they share an I/O-free core
and differ only in how they send requests and sleep. Their argument types (``ConfigInput``,
``TimeInput``, ``ProgressCallback``) live in :mod:`pagelab.models`.
"""

from pagelab._public import publish

from ._async import AsyncClient
from ._core import RetryPolicy
from ._sync import Client

__all__ = [
    "AsyncClient",
    "Client",
    "RetryPolicy",
]

publish(__name__, globals(), __all__)

# isort: split
# For pagelab.field's client of the Chrome UX Report API (not public API, not in __all__).
from ._core import parse_retry_after as parse_retry_after  # noqa: E402
