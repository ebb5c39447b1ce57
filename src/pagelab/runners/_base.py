"""The runner interface every backend implements (local engine, HTTP API)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from pagelab._exceptions import InvalidInputError
from pagelab.models import (
    BatchReport,
    BatchType,
    LighthouseConfig,
    LocationInfo,
    TestReport,
    TTFBRegion,
    TTFBResult,
    to_epoch_ms,
)

__all__ = [
    "ConfigInput",
    "ProgressCallback",
    "Runner",
    "TimeInput",
    "coerce_config",
    "epoch_ms_or_none",
    "invalid_input",
]

#: Called with the current report each time a test's or a batch item's status changes.
ProgressCallback = Callable[[Any], None]
#: A config as a model, a plain dict (the JSON shape) or None for the defaults.
ConfigInput = LighthouseConfig | dict[str, Any] | None
#: A created_at bound: an aware/naive (UTC) datetime or epoch milliseconds.
TimeInput = datetime | int | float | None


@runtime_checkable
class Runner(Protocol):
    """Runs tests and reads history; :class:`LocalRunner` and :class:`ApiRunner` implement it.

    ``lighthouse`` and ``batch`` block until every test is ``success`` or ``failed``.
    """

    def lighthouse(
        self,
        url: str,
        device: str = "mobile",
        location: str = "us",
        config: ConfigInput = None,
        *,
        progress: ProgressCallback | None = None,
    ) -> TestReport: ...

    def batch(
        self,
        urls: Sequence[str],
        devices: Sequence[str],
        locations: Sequence[str],
        batch_type: BatchType | str,
        config: ConfigInput = None,
        *,
        progress: ProgressCallback | None = None,
    ) -> BatchReport: ...

    def ttfb(self, url: str, region: str) -> TTFBResult: ...

    def locations(self) -> builtins.list[LocationInfo]: ...

    def ttfb_regions(self) -> builtins.list[TTFBRegion]: ...

    def get(self, id: str) -> TestReport | BatchReport: ...

    def list(
        self,
        page: int = 1,
        per_page: int = 10,
        created_at_gt: TimeInput = None,
        created_at_gte: TimeInput = None,
        created_at_lt: TimeInput = None,
        created_at_lte: TimeInput = None,
    ) -> builtins.list[TestReport]: ...


def invalid_input(exc: ValidationError, prefix: str = "") -> InvalidInputError:
    """One readable line naming each bad field, e.g. ``config.whitelist: List should have…``."""
    parts = []
    for error in exc.errors():
        location = ".".join(str(p) for p in (*([prefix] if prefix else []), *error["loc"]))
        parts.append(f"{location}: {error['msg']}" if location else error["msg"])
    return InvalidInputError("; ".join(parts))


def coerce_config(config: ConfigInput) -> LighthouseConfig:
    if config is None:
        return LighthouseConfig()
    if isinstance(config, LighthouseConfig):
        return config
    try:
        return LighthouseConfig.model_validate(config)
    except ValidationError as exc:
        raise invalid_input(exc, "config") from exc


def epoch_ms_or_none(value: TimeInput, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return to_epoch_ms(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"{name}: expected a datetime or epoch milliseconds")
    return int(value)
