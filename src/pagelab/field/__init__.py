"""Field data beside lab data: the Chrome UX Report (CrUX) of the pages you measure.

A lab run says what a page does on one emulated device; the Chrome UX Report says what its
real Chrome users saw: the 75th percentile of their page loads over 28 days, per form factor
(docs/field.md)::

    >>> pagelab.field.record("https://example.com/", form_factor="phone")
    >>> pagelab.field.history(origin="https://example.com")
    >>> results.versus_field()          # lab medians beside field p75, per cell

The key is ``api_key=`` or ``$PAGELAB_CRUX_API_KEY``; the endpoint ``$PAGELAB_CRUX_ENDPOINT``
(default the API's). A day's answers are kept under the data dir, so asking again the same
day spends no quota (``refresh=True`` asks again).
"""

from pagelab._public import publish

from ._api import history, record
from ._errors import (
    FieldError,
    FieldKeyError,
    FieldNotFoundError,
    FieldQuotaError,
    FieldTransportError,
)

# isort: split
# For pagelab.Results, the HTML report and `pagelab field` (not public API, not in __all__).
from ._client import CruxClient as CruxClient
from ._client import key_configured as key_configured
from ._tables import VERSUS_NOTE as VERSUS_NOTE
from ._tables import field_text as field_text
from ._tables import history_text as history_text
from ._tables import versus_table as versus_table
from ._versus import versus_field as versus_field

__all__ = [
    "FieldError",
    "FieldKeyError",
    "FieldNotFoundError",
    "FieldQuotaError",
    "FieldTransportError",
    "history",
    "record",
]

publish(__name__, globals(), __all__)
