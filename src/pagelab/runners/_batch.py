"""The spec's batch rules, shared by the LocalRunner and the API service."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from pagelab._exceptions import InvalidInputError
from pagelab.models import (
    MAX_STRING_LENGTH,
    BatchType,
    Device,
    DeviceId,
    Location,
    PageUrl,
    validation_message,
)

__all__ = ["MAX_BATCH_ITEMS", "BatchPlan", "plan_batch"]

#: The spec leaves the batch size open; 100 tests keeps one batch under ~15 minutes here.
MAX_BATCH_ITEMS = 100

_URL = TypeAdapter(PageUrl)
_DEVICE: TypeAdapter[Device] = TypeAdapter(DeviceId)
_LOCATION = TypeAdapter(Location)


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """The batch type, the effective lists (invalid entries dropped, first-only applied) and
    the tests."""

    batch_type: BatchType
    urls: list[str]
    devices: list[Device]
    locations: list[Location]
    items: list[tuple[str, Device, Location]]


def _valid(adapter: TypeAdapter[Any], entries: Sequence[Any]) -> list[Any]:
    valid = []
    for entry in entries:
        # Invalid entries (wrong type, unknown id, malformed or over-long) are ignored.
        if not isinstance(entry, str) or len(entry) > MAX_STRING_LENGTH:
            continue
        try:
            valid.append(adapter.validate_python(entry))
        except ValidationError:
            continue
    return valid


def _none_valid(adapter: TypeAdapter[Any], given: Sequence[Any], field: str,
                what: str) -> InvalidInputError:
    """Nothing valid in ``given``: the error names the first entry's problem, in the words
    a single value gets (``devices[0]: unknown 'Desktop': did you mean 'desktop'? ...``)."""
    for index, entry in enumerate(given):
        try:
            adapter.validate_python(entry)
        except ValidationError as exc:
            first = validation_message(exc, f"{field}[{index}]", limit=1)
            return InvalidInputError(f"{field}: no valid {what} in the list ({first})")
    return InvalidInputError(f"{field}: no valid {what} in the list")


def _axis(varies: bool, valid: list[Any], given: Sequence[Any], field: str, what: str,
          adapter: TypeAdapter[Any], every: list[Any]) -> list[Any]:
    """The devices or locations of a batch: on the axis the batch varies, each valid one
    once (none given: ``every`` one); on another axis, the first valid one."""
    if not varies:
        return [_first(valid, given, field, what, adapter)]
    if given and not valid:
        raise _none_valid(adapter, given, field, what)
    return list(dict.fromkeys(valid)) if given else every


def _first(values: list[Any], given: Sequence[Any], field: str, what: str,
           adapter: TypeAdapter[Any]) -> Any:
    if not given:
        raise InvalidInputError(f"{field}: provide one {what} (the list is empty)")
    if not values:
        raise _none_valid(adapter, given, field, what)
    return values[0]


def plan_batch(
    urls: Sequence[Any],
    devices: Sequence[Any],
    locations: Sequence[Any],
    batch_type: BatchType | str,
) -> BatchPlan:
    """Apply the spec's rules.

    The varied dimension keeps every valid entry (an empty ``devices`` / ``locations`` list
    means all 15 presets); the others use their first valid entry. Invalid entries are
    dropped; an empty list where one value is needed, or nothing valid left, raises
    :class:`InvalidInputError` naming the field.
    """
    try:
        kind = BatchType(batch_type)
    except ValueError:
        choices = ", ".join(t.value for t in BatchType)
        raise InvalidInputError(f"batch_type: must be one of {choices}") from None
    valid_urls = _valid(_URL, urls)
    valid_devices = _valid(_DEVICE, devices)
    valid_locations = _valid(_LOCATION, locations)

    if kind is BatchType.MULTIPLE_URLS:
        if not valid_urls:
            raise _none_valid(_URL, urls, "urls", "absolute http(s) URL")
        plan_urls = valid_urls
    else:
        plan_urls = [_first(valid_urls, urls, "urls", "absolute http(s) URL", _URL)]

    plan_devices = _axis(kind is BatchType.MULTIPLE_DEVICES, valid_devices, devices,
                         "devices", "device id", _DEVICE, list(Device))
    plan_locations = _axis(kind is BatchType.MULTIPLE_LOCATIONS, valid_locations, locations,
                           "locations", "location id", _LOCATION, list(Location))

    items = [(u, d, loc) for u in plan_urls for d in plan_devices for loc in plan_locations]
    if len(items) > MAX_BATCH_ITEMS:
        raise InvalidInputError(
            f"a batch has at most {MAX_BATCH_ITEMS} tests; this one would have {len(items)}"
        )
    return BatchPlan(kind, plan_urls, plan_devices, plan_locations, items)
