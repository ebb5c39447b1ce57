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
from ._inputs import (
    ConfigInput,
    ProgressCallback,
    TimeInput,
    check_paging,
    coerce_config,
    epoch_ms_or_none,
)
from ._metrics import METRIC_NAMES, METRICS, Direction, Metric, Rating, metric
from ._reference import CreditPool, Credits, ErrorBody, LocationInfo, TTFBLocation, TTFBRegion
from ._reports import (
    ENGINE_CRASHED,
    ENGINE_FAILURE_CODES,
    ENGINE_UNAVAILABLE,
    TIMEOUT,
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
from ._validation import invalid_input, validation_message

__all__ = [
    "DEVICE_ALIASES",
    "ENGINE_CRASHED",
    "ENGINE_FAILURE_CODES",
    "ENGINE_UNAVAILABLE",
    "MAX_BLACKLIST",
    "MAX_STRING_LENGTH",
    "MAX_WHITELIST",
    "METRICS",
    "METRIC_NAMES",
    "TIMEOUT",
    "BatchItem",
    "BatchReport",
    "BatchStatus",
    "BatchTestRequest",
    "BatchType",
    "ConfigInput",
    "Connection",
    "CreditPool",
    "Credits",
    "Device",
    "DeviceId",
    "Direction",
    "EngineEnvironment",
    "ErrorBody",
    "HttpVersion",
    "LighthouseConfig",
    "LighthouseError",
    "LighthouseTestRequest",
    "Location",
    "LocationInfo",
    "Metric",
    "Metrics",
    "PageUrl",
    "ProgressCallback",
    "Rating",
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
    "TimeInput",
    "Timestamp",
    "check_paging",
    "coerce_config",
    "epoch_ms_or_none",
    "from_epoch",
    "invalid_input",
    "metric",
    "to_epoch_ms",
    "url_pattern_matches",
    "validation_message",
]
