"""What can go wrong asking the Chrome UX Report API, in pagelab's one hierarchy::

    PagelabError
    └── FieldError                          the CrUX API gave no usable answer
        ├── FieldNotFoundError (also NotFoundError)   404: no data for this page or origin
        ├── FieldKeyError                   no API key, or the API refused it
        ├── FieldQuotaError                 429 past the retries (``retry_after``)
        └── FieldTransportError (also TransportError)  the API could not be reached

No message ever holds the API key.
"""

from __future__ import annotations

from pagelab._exceptions import NotFoundError, PagelabError, TransportError

__all__ = [
    "FieldError",
    "FieldKeyError",
    "FieldNotFoundError",
    "FieldQuotaError",
    "FieldTransportError",
]


class FieldError(PagelabError):
    """The Chrome UX Report API gave no usable answer (the message says why)."""


class FieldNotFoundError(FieldError, NotFoundError):
    """404: the report has no data for this page (or origin) on this form factor: too few
    Chrome users visited it in the last 28 days. ``level`` is ``"page"`` or ``"origin"``,
    ``target`` what was asked for, ``form_factor`` the API's (None: all)."""

    def __init__(self, message: str, *, level: str = "page", target: str = "",
                 form_factor: str | None = None) -> None:
        super().__init__(message)
        self.level = level
        self.target = target
        self.form_factor = form_factor


class FieldKeyError(FieldError):
    """No API key (``api_key=`` or ``PAGELAB_CRUX_API_KEY``), or the API refused it."""


class FieldQuotaError(FieldError):
    """429: the key's quota is spent; ``retry_after`` in seconds when the API said."""

    retry_after: float | None = None


class FieldTransportError(FieldError, TransportError):
    """The Chrome UX Report API could not be reached (after the retries)."""
