"""The one translator of a pydantic ``ValidationError`` into a message naming each bad field.

Every face reads it: the API's 400 body (:func:`validation_message`, at most three fields),
the Python :class:`~pagelab.InvalidInputError` (:func:`invalid_input`, every field), the
CLI's one-line message (the same, fields named as options where they came from options)
and the pytest plugin (the exception's text).

A value outside a fixed set and a key a model does not know are worded alike, with the
closest valid spelling (:func:`unknown_value`): ``device: unknown 'Desktop': did you mean
'desktop'? (valid: mobile, desktop, ...)``. Checks outside pydantic that refuse a name from
a fixed set (a metric, a device given to :func:`pagelab.measure`) use the same words.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    ModelWrapValidatorHandler,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from pagelab._exceptions import InvalidInputError

__all__ = [
    "KEY_PART",
    "StrictModel",
    "did_you_mean",
    "invalid_input",
    "nested_error",
    "unknown_value",
    "validation_message",
]

_REQUEST_PARTS = ("body", "query", "path", "header")
#: pydantic's last part of the location of an error about a mapping's key.
KEY_PART = "[key]"
#: The quoted members of pydantic's ``expected`` context: "'a', 'b' or 'c'".
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")
#: How much of a refused value a message repeats (an API body may be large).
_SHOWN_VALUE = 100
#: The context key of a :class:`StrictModel`'s unknown-key error listing the keys it knows.
_KNOWN_KEYS = "known_keys"


def did_you_mean(word: object, choices: Iterable[str]) -> str | None:
    """The choice ``word`` most likely meant: the same letters in another case, else the
    closest by :func:`difflib.get_close_matches` (None when nothing is close)."""
    if not isinstance(word, str) or len(word) > _SHOWN_VALUE:
        return None  # nothing valid is that long; and difflib's cost grows with the length
    by_folded: dict[str, str] = {}
    for choice in choices:
        by_folded.setdefault(choice.lower(), choice)
    folded = word.lower()
    if folded in by_folded:
        return by_folded[folded]
    close = difflib.get_close_matches(folded, list(by_folded), n=1)
    return by_folded[close[0]] if close else None


def unknown_value(value: object, choices: Iterable[str], *, what: str = "",
                  valid: str | None = None) -> str:
    """``unknown key 'device': did you mean 'devices'? (valid: url, devices, ...)``.

    ``what`` names the kind of value (``key``, ``metric``); ``valid`` words the valid list
    where the choices alone do not (``largest_contentful_paint (lcp), ...``).
    """
    options = list(choices)
    shown = repr(value[:_SHOWN_VALUE] if isinstance(value, str) else value)
    text = " ".join(part for part in ("unknown", what, shown) if part)
    suggestion = did_you_mean(value, options)
    if suggestion is not None and suggestion != value:
        text += f": did you mean {suggestion!r}?"
    return f"{text} (valid: {valid if valid is not None else ', '.join(options)})"


class StrictModel(BaseModel):
    """A frozen model that refuses keys it does not know, its error naming the keys it
    does know, so the translator can say which one was meant."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="wrap")
    @classmethod
    def _name_known_keys(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        try:
            return handler(data)
        except ValidationError as exc:
            errors = exc.errors()
            if not any(_is_own_extra_key(error) for error in errors):
                raise
            known = [field.alias or name for name, field in cls.model_fields.items()]
            details = [
                nested_error(error, known_keys=known if _is_own_extra_key(error) else None)
                for error in errors
            ]
            raise ValidationError.from_exception_data(exc.title, details) from None


def nested_error(error: Any, *loc: int | str, known_keys: list[str] | None = None
                 ) -> InitErrorDetails:
    """``error`` (one of a :class:`ValidationError`'s) to raise again inside a validator,
    ``loc`` before its location (pydantic puts the field's location before that);
    ``known_keys``: the keys of the model an unknown key was given to."""
    ctx = dict(error.get("ctx") or {})
    if known_keys is not None:
        ctx[_KNOWN_KEYS] = known_keys
    return InitErrorDetails(
        type=PydanticCustomError(error["type"], error["msg"], ctx or None),
        loc=(*loc, *error["loc"]), input=error["input"])


def _is_own_extra_key(error: Any) -> bool:
    return bool(error["type"] == "extra_forbidden" and len(error["loc"]) == 1
                and _KNOWN_KEYS not in (error.get("ctx") or {}))


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


def _located(error: Any) -> tuple[Sequence[int | str], str]:
    """Where the error is reported and its words. An error about a key (an unknown key, or
    pydantic's ``[key]`` errors) is reported at the mapping holding it, naming the key."""
    kind = error.get("type", "")
    loc: Sequence[int | str] = error.get("loc", ())
    ctx = error.get("ctx") or {}
    text = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    if kind == "extra_forbidden" and loc:
        known = ctx.get(_KNOWN_KEYS)
        words = (unknown_value(loc[-1], known, what="key") if known is not None
                 else f"unknown key {loc[-1]!r}")
        return loc[:-1], words
    if kind in ("enum", "literal_error") and "expected" in ctx:
        choices = _QUOTED.findall(str(ctx["expected"]))
        if choices:
            text = unknown_value(error.get("input"), choices)
    if len(loc) >= 2 and loc[-1] == KEY_PART:
        return loc[:-2], text
    return loc, text


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
        loc, text = _located(error)
        field = _field_path(loc, prefix, as_option)
        if not field:
            object_expected = kind in ("missing", "model_type", "dict_type")
            messages.append("body: send a JSON object" if object_expected else
                            (text if loc != error.get("loc", ()) else f"body: {text}"))
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
