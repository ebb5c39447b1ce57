"""How a fleet server dispatches (``pagelab serve --broker``): one frozen object on the
service's settings. Pydantic only: importing it loads neither Celery nor Redis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pagelab.models import invalid_input

from ._protocol import MIN_SECRET_LENGTH, resolve_secret

__all__ = ["FleetSettings", "fleet_settings"]


class FleetSettings(BaseModel):
    """The broker, the shared secret and the bounds of a fleet."""

    model_config = ConfigDict(frozen=True)

    #: ``redis://HOST:PORT/DB`` or ``rediss://`` (TLS).
    broker_url: str
    #: The root of every fleet key (the server's signing key, the workers' keys, the
    #: sealing keys); it never leaves the server (docs/scale-out.md).
    secret: str = Field(repr=False, min_length=MIN_SECRET_LENGTH)
    #: Seconds a test may wait for a worker of its location before it fails ``NO_WORKER``
    #: (refunded); also the bound of an ``active`` test whose worker was lost.
    queue_timeout: float = Field(default=1800.0, gt=0)
    #: Deliveries of one test (the first and the re-deliveries after a lost worker) before
    #: it fails ``ENGINE_CRASHED`` (refunded).
    max_attempts: int = Field(default=2, ge=1)
    #: Seconds before Redis hands a task taken by a lost worker out again.
    visibility_timeout: float = Field(default=600.0, gt=0)
    #: A worker's message (started, result, TTFB answer) older than this many seconds is
    #: refused: a captured message cannot be replayed later. Results wait on the queue
    #: while the server is down, so keep it above the longest stop you expect.
    message_max_age: float = Field(default=6 * 3600.0, gt=0)
    #: A worker's message larger than this many MiB (as Redis holds it, or once decoded)
    #: is refused before it is decoded, as a compressed one is (issue 34). A result
    #: carries its artifacts (LHR, HTML report, HAR, screenshots, video) base64-encoded.
    max_message_mb: int = Field(default=64, ge=1)
    #: Seconds between looks for queued tests the creation endpoints did not announce.
    poll_interval: float = Field(default=0.5, gt=0)

    @field_validator("broker_url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        if not value.startswith(("redis://", "rediss://")):
            raise ValueError(f"{value!r} is not a redis:// or rediss:// URL")
        return value


def fleet_settings(broker: str, *, secret_file: Path | None, secret: str | None = None,
                   **bounds: Any) -> FleetSettings:
    """The settings of a fleet on ``broker`` (resolved: :func:`resolve_broker`), its secret
    resolved once (:func:`resolve_secret`: ``secret_file``, ``$PAGELAB_FLEET_SECRET`` or
    the deprecated ``secret``), ``bounds`` as the command gave them; a bad one is an
    :class:`~pagelab.InvalidInputError` naming its option."""
    try:
        return FleetSettings(broker_url=broker, secret=resolve_secret(secret, file=secret_file),
                             **bounds)
    except ValidationError as exc:
        raise invalid_input(exc, as_option=True) from exc
