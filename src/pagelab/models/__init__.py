"""Typed models of every resource of the Web Performance Testing API (pydantic v2).

Unknown fields in incoming JSON are ignored; a wrong type or an out-of-range value raises
:class:`pydantic.ValidationError` naming the field.
"""

from ._config import MAX_BLACKLIST, MAX_WHITELIST, LighthouseConfig, url_pattern_matches
from ._enums import (
    DEVICE_ALIASES,
    BatchStatus,
    BatchType,
    Connection,
    Device,
    DeviceId,
    HttpVersion,
    Location,
    TestStatus,
    ThrottlingMethod,
    TTFBStatus,
)
from ._reference import CreditPool, Credits, ErrorBody, LocationInfo, TTFBLocation, TTFBRegion
from ._reports import (
    METRIC_NAMES,
    BatchItem,
    BatchReport,
    EngineEnvironment,
    LighthouseError,
    Metrics,
    TestReport,
)
from ._requests import BatchTestRequest, LighthouseTestRequest, TTFBTestRequest
from ._ttfb import TTFBData, TTFBError, TTFBLocationResult, TTFBResult, TTFBTimings
from ._types import MAX_STRING_LENGTH, PageUrl, Timestamp, from_epoch, to_epoch_ms

__all__ = [
    "DEVICE_ALIASES",
    "MAX_BLACKLIST",
    "MAX_STRING_LENGTH",
    "MAX_WHITELIST",
    "METRIC_NAMES",
    "BatchItem",
    "BatchReport",
    "BatchStatus",
    "BatchTestRequest",
    "BatchType",
    "Connection",
    "CreditPool",
    "Credits",
    "Device",
    "DeviceId",
    "EngineEnvironment",
    "ErrorBody",
    "HttpVersion",
    "LighthouseConfig",
    "LighthouseError",
    "LighthouseTestRequest",
    "Location",
    "LocationInfo",
    "Metrics",
    "PageUrl",
    "TTFBData",
    "TTFBError",
    "TTFBLocation",
    "TTFBLocationResult",
    "TTFBRegion",
    "TTFBResult",
    "TTFBStatus",
    "TTFBTestRequest",
    "TTFBTimings",
    "TestReport",
    "TestStatus",
    "ThrottlingMethod",
    "Timestamp",
    "from_epoch",
    "to_epoch_ms",
    "url_pattern_matches",
]
