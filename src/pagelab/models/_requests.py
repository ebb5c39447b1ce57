"""Request bodies of the creation endpoints."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._build import Build
from ._config import LighthouseConfig
from ._enums import BatchType, Device, DeviceId, Location
from ._types import BoundedStr, PageUrl

__all__ = ["BatchTestRequest", "LighthouseTestRequest", "TTFBTestRequest"]


class _Request(BaseModel):
    model_config = ConfigDict(extra="ignore")


class LighthouseTestRequest(_Request):
    """``POST /v1/lighthouse-tests``. Only ``url`` is required."""

    url: PageUrl
    device: DeviceId = Device.MOBILE
    location: Location = Location.US
    config: LighthouseConfig = Field(default_factory=LighthouseConfig)
    #: pagelab extension: the build the test measures (docs/history.md); optional.
    build: Build | None = None


class BatchTestRequest(_Request):
    """``POST /v1/lighthouse-batch-tests``, as sent.

    Entries are kept as strings: the batch rules drop invalid entries instead of rejecting
    the request (see :func:`pagelab.runners.plan_batch`).
    """

    urls: list[Any]
    devices: list[Any]
    locations: list[Any]
    batch_type: BatchType
    config: LighthouseConfig = Field(default_factory=LighthouseConfig)
    #: pagelab extension: the build every item measures; optional.
    build: Build | None = None


class TTFBTestRequest(_Request):
    """``POST /v1/ttfb-tests``."""

    url: PageUrl
    region: BoundedStr
