"""Field types shared by the models: bounded strings, page URLs, epoch timestamps."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, PlainSerializer, PlainValidator, TypeAdapter

__all__ = [
    "MAX_STRING_LENGTH",
    "PAGE_URL_PATTERN",
    "BoundedStr",
    "PageUrl",
    "Timestamp",
    "from_epoch",
    "to_epoch_ms",
]

#: The spec's limit for every string it mentions (URLs, ids, config strings).
MAX_STRING_LENGTH = 5000

BoundedStr = Annotated[str, Field(max_length=MAX_STRING_LENGTH)]

# Below this an epoch number is read as seconds, above it as milliseconds: 1e11 s is the
# year 5138, 1e11 ms is 1973. Servers of this API disagree (the spec documents seconds,
# its samples have 13 digits), so both are read correctly.
_SECONDS_MILLIS_CUTOFF = 1e11


def from_epoch(value: float) -> datetime:
    """An aware UTC datetime from epoch seconds or epoch milliseconds."""
    if not math.isfinite(value):
        raise ValueError("timestamp must be a finite number")
    seconds = value / 1000 if abs(value) >= _SECONDS_MILLIS_CUTOFF else value
    return datetime.fromtimestamp(seconds, tz=UTC)


def to_epoch_ms(value: datetime) -> int:
    """Epoch milliseconds, the wire format of every timestamp pagelab writes."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return round(value.timestamp() * 1000)


# pydantic's own datetime parsing, used for text only (it parses ISO 8601 in Rust).
_DATETIME: TypeAdapter[datetime] = TypeAdapter(datetime)


_fromtimestamp = datetime.fromtimestamp
# Integers below this in magnitude are exact floats (2 ** 53).
_EXACT_INT = 9_007_199_254_740_992


def _read_timestamp(value: Any) -> datetime:
    try:
        return _timestamp_of(value)
    except (OverflowError, OSError) as exc:
        # An epoch number past the platform's dates (1e20 ms) is a bad value, not a crash:
        # as a ValueError it is the field's validation error (an API 400, not a 500).
        raise ValueError("timestamp out of range") from exc


def _timestamp_of(value: Any) -> datetime:
    # One plain validator, so one Python call per value (the list path reads 200 000 of
    # them per 100 000 reports): numbers, what servers send, never reach pydantic's parser,
    # whose seconds/ms cutoff (2e10) and time zone object are not ours.
    if value.__class__ is int and -_EXACT_INT < value < _EXACT_INT:
        # The wire format (epoch ms as a JSON integer), read inline: from_epoch's reading
        # and errors without its calls (such an int is a finite float). Larger ints take
        # from_epoch itself, so even their errors stay the same.
        if value >= _SECONDS_MILLIS_CUTOFF or value <= -_SECONDS_MILLIS_CUTOFF:
            return _fromtimestamp(value / 1000, UTC)
        return _fromtimestamp(value, UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return from_epoch(value)
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, bool):
        raise ValueError("timestamp must be a number or a datetime")
    # Its ValidationError becomes this field's error, as if pydantic had parsed it here.
    return _DATETIME.validate_python(value).astimezone(UTC)


#: A point in time: read from epoch s/ms, datetime or ISO text; written as epoch ms.
Timestamp = Annotated[
    datetime,
    PlainValidator(_read_timestamp, json_schema_input_type=datetime),
    PlainSerializer(to_epoch_ms, return_type=int, when_used="json"),
]


def _check_page_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an absolute http:// or https:// URL")
    if any(ch.isspace() for ch in value):
        raise ValueError("must not contain white space")
    # Control characters (NUL above all) are cut or read differently by Chromium, libcurl
    # and Python: one URL must mean one target everywhere.
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ValueError("must not contain control characters")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("the port must be a number from 1 to 65535") from None
    if port == 0:
        raise ValueError("the port must be a number from 1 to 65535")
    return value


#: The address of a page to test: absolute http(s), at most 5000 characters, kept verbatim.
#: What the OpenAPI document promises for a URL: a subset of what the validator accepts
#: (a schema-driven client never sends a URL the server refuses as malformed): http(s),
#: a host of letters, digits, dots and hyphens, a port from 1 to 9999, printable ASCII.
PAGE_URL_PATTERN = r"^https?://[A-Za-z0-9][A-Za-z0-9.-]{0,252}(:[1-9][0-9]{0,3})?(/[!-~]*)?$"

PageUrl = Annotated[
    str,
    Field(min_length=1, max_length=MAX_STRING_LENGTH,
          json_schema_extra={"pattern": PAGE_URL_PATTERN}),
    AfterValidator(_check_page_url),
]
