"""The service's settings: one immutable object passed to :func:`create_app`."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from pagelab._paths import data_dir as default_data_dir
from pagelab.store import DEFAULT_RETENTION

__all__ = ["Settings"]


class Settings(BaseModel):
    """How ``pagelab serve`` runs. Every field has a production default."""

    model_config = ConfigDict(frozen=True)

    #: The store (SQLite file and artifacts), shared with the LocalRunner.
    data_dir: Path = Field(default_factory=default_data_dir)
    #: Run queued tests in this process. Off, tests stay ``idle``: for API-only tests and
    #: for a server that only answers reads while another process does the runs.
    worker: bool = True
    #: Requests per minute per key (per client address for keyless public requests).
    rate_limit_per_minute: int = Field(default=600, ge=1)
    #: How long tests, batches and their artifacts are kept.
    retention: timedelta = DEFAULT_RETENTION
    #: Base of the absolute ``report_url`` links, e.g. ``https://perf.example.com``. Unset,
    #: links are built from the address the request was sent to.
    public_url: str | None = None
    #: Per-location timeout of a TTFB probe, in seconds.
    ttfb_timeout: float = Field(default=30.0, gt=0)
    #: How often the worker looks for queued tests it was not told about, and deletes
    #: expired tests, in seconds.
    poll_interval: float = Field(default=2.0, gt=0)
    sweep_interval: float = Field(default=600.0, gt=0)
    #: How long a clean shutdown waits for the running test before leaving it to the next
    #: start, in seconds.
    shutdown_timeout: float = Field(default=30.0, ge=0)
