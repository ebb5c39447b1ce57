"""The one translator of a pydantic ``ValidationError`` into a message naming each bad field.

Every face reads it: the API's 400 body (:func:`validation_message`, at most three fields),
the Python :class:`~pagelab.InvalidInputError` (:func:`invalid_input`, every field) and the
CLI's one-line message (the same, fields named as options where they came from options).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from pagelab._exceptions import InvalidInputError

__all__ = ["invalid_input", "validation_message"]

_REQUEST_PARTS = ("body", "query", "path", "header")


def _field_path(loc: Sequence[int | str], prefix: str, as_option: bool) -> str:
    # ("body", "config", "whitelist", 5) -> "config.whitelist[5]"; as_option: ("max_attempts",)
    # -> "--max-attempts", the command-line option the field came from.
    parts = list(loc[1:] if loc and loc[0] in _REQUEST_PARTS else loc)
    if as_option and parts:
        return "--" + "-".join(str(part) for part in parts).replace("_", "-")
    text = prefix
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def validation_message(
    errors: ValidationError | Sequence[Any],
    prefix: str = "",
    *,
    limit: int | None = 3,
    as_option: bool = False,
) -> str:
    """One line naming each invalid field, e.g. ``config.whitelist[5]: String should…``.

    ``errors`` is a :class:`ValidationError` or its ``errors()`` list; ``prefix`` names the
    argument the model was built from; at most ``limit`` fields are named. ``as_option``
    names each field as the command-line option it came from (``--max-attempts``).
    """
    items = errors.errors() if isinstance(errors, ValidationError) else list(errors)
    shown = items if limit is None else items[:limit]
    messages: list[str] = []
    for error in shown:
        kind = error.get("type", "")
        if kind == "json_invalid":
            messages.append(f"body is not valid JSON ({error.get('ctx', {}).get('error', '')})")
            continue
        field = _field_path(error.get("loc", ()), prefix, as_option)
        text = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        if not field:
            object_expected = kind in ("missing", "model_type", "dict_type")
            messages.append("body: send a JSON object" if object_expected else f"body: {text}")
            continue
        messages.append(f"{field}: {text}")
    if len(items) > len(shown):
        messages.append(f"and {len(items) - len(shown)} more")
    return "; ".join(messages)


def invalid_input(
    exc: ValidationError, prefix: str = "", *, as_option: bool = False
) -> InvalidInputError:
    """The :class:`InvalidInputError` for a failed validation, naming every bad field."""
    return InvalidInputError(validation_message(exc, prefix, limit=None, as_option=as_option))
