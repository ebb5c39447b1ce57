"""The input vocabulary shared by both runners, the client, the service and the CLI.

One reading of every kind of input, so the same call means the same thing whichever runner
gets it:

- a time bound (``created_at_gt`` ...) is a datetime (naive means UTC) or an epoch number,
  read as seconds below 1e11 and as milliseconds above (see :func:`from_epoch`);
- a config is a :class:`LighthouseConfig`, a mapping of its JSON shape, or None;
- a pydantic ``ValidationError`` becomes one line naming each bad field, raised as
  :class:`~pagelab.InvalidInputError` (the one translator: :mod:`._validation`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from pagelab._exceptions import InvalidInputError

from ._config import LighthouseConfig
from ._types import from_epoch, to_epoch_ms
from ._validation import invalid_input

__all__ = [
    "ConfigInput",
    "ProgressCallback",
    "TimeInput",
    "check_paging",
    "coerce_config",
    "epoch_ms_or_none",
]

#: A config as a model, a mapping of the JSON shape, or None for the defaults.
ConfigInput = LighthouseConfig | Mapping[str, Any] | None
#: A created_at bound: a datetime (naive means UTC) or epoch seconds / milliseconds.
TimeInput = datetime | int | float | None
#: Called with the current report each time a test's or a batch item's status changes.
ProgressCallback = Callable[[Any], None]

def coerce_config(config: ConfigInput) -> LighthouseConfig:
    """A validated config (the defaults for None); bad fields raise InvalidInputError."""
    if config is None:
        return LighthouseConfig()
    if isinstance(config, LighthouseConfig):
        return config
    if not isinstance(config, Mapping):
        raise InvalidInputError(
            f"config: expected a LighthouseConfig or a dict, got {type(config).__name__}"
        )
    try:
        return LighthouseConfig.model_validate(dict(config))
    except ValidationError as exc:
        raise invalid_input(exc, "config") from exc


def epoch_ms_or_none(value: TimeInput, name: str) -> int | None:
    """A time bound as epoch milliseconds (None stays None).

    Numbers are epoch seconds below 1e11 and milliseconds above, as every timestamp the
    models read: ``1_700_000_000`` and ``1_700_000_000_000`` are both 2023-11-14.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        return to_epoch_ms(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"{name}: expected a datetime or an epoch number")
    try:
        return to_epoch_ms(from_epoch(value))
    except (ValueError, OverflowError, OSError) as exc:
        raise InvalidInputError(f"{name}: {value!r} is not a valid time") from exc


def check_paging(page: int, per_page: int) -> None:
    """The list endpoints' paging: ``page`` >= 1 and ``per_page`` from 1 to 100."""
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        raise InvalidInputError(f"page: must be an integer >= 1, got {page!r}")
    if isinstance(per_page, bool) or not isinstance(per_page, int) or not 1 <= per_page <= 100:
        raise InvalidInputError(f"per_page: must be an integer from 1 to 100, got {per_page!r}")
