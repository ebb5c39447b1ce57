"""The exceptions pagelab raises. Every one derives from :class:`PagelabError`::

    PagelabError
    ├── InvalidInputError (also ValueError)   bad arguments to a runner, a model or the CLI
    │   └── InvalidFlowError                  a user flow that cannot run (names the step)
    ├── NotFoundError (also KeyError)         no test or batch with that id
    ├── EngineError                           the local engine cannot run at all
    │   └── EngineNotInstalledError           Chromium, Node or Lighthouse missing
    ├── StoreError                            the local store cannot be read or written
    ├── DiscoveryError                        a scan cannot find the site's pages
    ├── MissingDependencyError (also ImportError)  an optional extra is not installed
    ├── TransportError                        the API server could not be reached
    │   └── RequestTimeoutError               a request, or waiting for a test, took too long
    └── APIError                              the API server answered with an error body
        ├── BadRequestError           400 invalid_request (also InvalidInputError)
        ├── AuthenticationError       401 unauthorized
        ├── InsufficientCreditsError  402 insufficient_credits
        ├── APINotFoundError          404 not_found (also NotFoundError)
        ├── RateLimitedError          429 rate_limited
        └── ServerError               5xx

A test whose page fails to load is not an exception: its report has ``status="failed"``
and an ``error``. Foreign exceptions are translated at the boundary (``raise ... from exc``).
"""

from __future__ import annotations

__all__ = [
    "APIError",
    "APINotFoundError",
    "AuthenticationError",
    "BadRequestError",
    "DiscoveryError",
    "EngineError",
    "EngineNotInstalledError",
    "InsufficientCreditsError",
    "InvalidFlowError",
    "InvalidInputError",
    "MissingDependencyError",
    "NotFoundError",
    "PagelabError",
    "RateLimitedError",
    "RequestTimeoutError",
    "ServerError",
    "StoreError",
    "TransportError",
]


class PagelabError(Exception):
    """Root of every pagelab exception."""


class InvalidInputError(PagelabError, ValueError):
    """An argument is invalid; the message names it."""


class InvalidFlowError(InvalidInputError):
    """A user flow is malformed (an action outside a page, an unclosed timespan, an unknown
    key, a selector that is not a string...); the message names the flow and the step.
    Raised before anything runs."""


class NotFoundError(PagelabError, KeyError):
    """No test or batch with that id (or it expired)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class EngineError(PagelabError):
    """The local engine cannot run."""


class EngineNotInstalledError(EngineError):
    """Chromium, Node or Lighthouse is missing; the message says how to install it."""


class StoreError(PagelabError):
    """The local store could not be read or written."""


class DiscoveryError(PagelabError):
    """:func:`pagelab.scan` cannot find the site's pages: the start URL cannot be reached,
    or a sitemap is not XML, is over the protocol's 50 000 URLs or 50 MB, or its indexes
    loop; the message names the URL."""


class MissingDependencyError(PagelabError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""


class TransportError(PagelabError):
    """The API server could not be reached."""


class RequestTimeoutError(TransportError):
    """A request to the API server, or waiting for a test or batch on it to finish, took
    longer than allowed. (``pagelab.TimeoutError``, which shadowed the builtin, is a
    deprecated alias.)"""


class APIError(PagelabError):
    """The server answered with an error body ``{code, message}``."""

    def __init__(self, status_code: int, code: str, message: str) -> None:
        super().__init__(f"{status_code} {code}: {message}")
        self.status_code = status_code
        self.code = code
        self.message = message

    def __reduce__(self) -> tuple[type[APIError], tuple[int, str, str], dict[str, object]]:
        # Exceptions pickle as ``cls(*self.args)``; ours take three arguments, not the
        # formatted message. (Errors cross processes: concurrent.futures, multiprocessing.)
        return type(self), (self.status_code, self.code, self.message), self.__dict__


class BadRequestError(APIError, InvalidInputError):
    """400 ``invalid_request``: the server found the input invalid, so it is an
    :class:`InvalidInputError` too, as the same input is on the local runner."""


class AuthenticationError(APIError):
    """401 ``unauthorized``: missing or unknown API key."""


class InsufficientCreditsError(APIError):
    """402 ``insufficient_credits``."""


class APINotFoundError(APIError, NotFoundError):
    """404 ``not_found``."""

    def __str__(self) -> str:
        return APIError.__str__(self)


class RateLimitedError(APIError):
    """429 ``rate_limited``; ``retry_after`` in seconds when the server said."""

    retry_after: float | None = None


class ServerError(APIError):
    """5xx from the server."""
