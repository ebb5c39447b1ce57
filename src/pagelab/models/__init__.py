"""Typed models of every resource of the Web Performance Testing API (pydantic v2).

Unknown fields in incoming JSON are ignored; a wrong type or an out-of-range value raises
:class:`pydantic.ValidationError` naming the field.
"""

from pagelab._public import publish

from ._config import LighthouseConfig
from ._enums import (
    BatchStatus,
    BatchType,
    Connection,
    Device,
    HttpVersion,
    Location,
    TestStatus,
    ThrottlingMethod,
    TTFBStatus,
)
from ._flow_reports import FlowReport, FlowStep
from ._flows import Flow
from ._inputs import ConfigInput, ProgressCallback, TimeInput
from ._interactions import InteractionBreakdown
from ._metrics import METRICS, Direction, Metric, Rating, metric
from ._reference import CreditPool, Credits, ErrorBody, LocationInfo, TTFBLocation, TTFBRegion
from ._reports import (
    BatchItem,
    BatchReport,
    EngineEnvironment,
    LighthouseError,
    Metrics,
    TestReport,
)
from ._requests import BatchTestRequest, LighthouseTestRequest, TTFBTestRequest
from ._steps import FlowStepRef
from ._ttfb import TTFBData, TTFBError, TTFBLocationResult, TTFBResult, TTFBTimings

# isort: split
# The build a test measured (``build=``, ``TestReport.build``): importable as
# ``pagelab.models.Build``, outside ``__all__`` (the public-name cap, tests/test_public_api.py).
# For the other pagelab packages only (not public API, not in __all__): the validation
# helpers and wire details every floor above shares.
from ._build import MAX_BRANCH_LENGTH as MAX_BRANCH_LENGTH
from ._build import MAX_COMMIT_LENGTH as MAX_COMMIT_LENGTH
from ._build import Build as Build
from ._build import BuildInput as BuildInput
from ._build import build_filters as build_filters
from ._build import coerce_build as coerce_build
from ._config import MAX_MATCHED_URL_LENGTH as MAX_MATCHED_URL_LENGTH
from ._config import url_pattern_matches as url_pattern_matches
from ._discovery import DEFAULT_DEPTH as DEFAULT_DEPTH
from ._discovery import DEFAULT_MAX_PAGES as DEFAULT_MAX_PAGES
from ._discovery import DEFAULT_PER_TEMPLATE as DEFAULT_PER_TEMPLATE
from ._discovery import DISCOVERY_FAILED as DISCOVERY_FAILED
from ._discovery import DiscoveredPage as DiscoveredPage
from ._discovery import DiscoveryRequest as DiscoveryRequest
from ._discovery import SiteDiscovery as SiteDiscovery
from ._display import metric_value as metric_value
from ._display import status_pill as status_pill
from ._enums import DEVICE_ALIASES as DEVICE_ALIASES
from ._enums import DeviceId as DeviceId
from ._files import DATA_FILE_SUFFIXES as DATA_FILE_SUFFIXES
from ._files import read_data_file as read_data_file
from ._fitness import FitnessRule as FitnessRule
from ._fitness import nonnegative_setting as nonnegative_setting
from ._fitness import unfit_runs_note as unfit_runs_note
from ._flow_reports import FLOW_ACTION_FAILED as FLOW_ACTION_FAILED
from ._flow_reports import measured_metrics as measured_metrics
from ._flow_reports import mode_measures as mode_measures
from ._flows import Navigate as Navigate
from ._flows import Timespan as Timespan
from ._flows import step_name as step_name
from ._har import HAR_FILE as HAR_FILE
from ._har import HOSTED_HAR as HOSTED_HAR
from ._har import REPORT_FILE as REPORT_FILE
from ._har import parse_har as parse_har
from ._har import read_report_lhr as read_report_lhr
from ._inputs import check_paging as check_paging
from ._inputs import coerce_config as coerce_config
from ._inputs import epoch_ms_or_none as epoch_ms_or_none
from ._interactions import INP_PHASES as INP_PHASES
from ._interactions import inp_phases as inp_phases
from ._metrics import FIELD_METRICS as FIELD_METRICS
from ._metrics import HEADLINE_METRICS as HEADLINE_METRICS
from ._metrics import METRIC_NAMES as METRIC_NAMES
from ._metrics import RATING_COLOURS as RATING_COLOURS
from ._metrics import RATING_FILL as RATING_FILL
from ._metrics import USER_TIMING_PREFIX as USER_TIMING_PREFIX
from ._metrics import metric_columns as metric_columns
from ._metrics import unknown_metric as unknown_metric
from ._metrics import user_timing_values as user_timing_values
from ._reports import ENGINE_CRASHED as ENGINE_CRASHED
from ._reports import ENGINE_FAILURE_CODES as ENGINE_FAILURE_CODES
from ._reports import ENGINE_UNAVAILABLE as ENGINE_UNAVAILABLE
from ._reports import TIMEOUT as TIMEOUT
from ._resource_types import BUDGET_RESOURCE_TYPES as BUDGET_RESOURCE_TYPES
from ._resource_types import RESOURCE_TYPES as RESOURCE_TYPES
from ._resource_types import resource_type as resource_type
from ._steps import StepMode as StepMode
from ._types import MAX_STRING_LENGTH as MAX_STRING_LENGTH
from ._types import PAGE_URL_PATTERN as PAGE_URL_PATTERN
from ._types import PageUrl as PageUrl
from ._types import from_epoch as from_epoch
from ._types import to_epoch_ms as to_epoch_ms
from ._validation import KEY_PART as KEY_PART
from ._validation import StrictModel as StrictModel
from ._validation import did_you_mean as did_you_mean
from ._validation import invalid_input as invalid_input
from ._validation import nested_error as nested_error
from ._validation import unknown_value as unknown_value
from ._validation import validation_message as validation_message

__all__ = [
    "METRICS",
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
    "Direction",
    "EngineEnvironment",
    "ErrorBody",
    "Flow",
    "FlowReport",
    "FlowStep",
    "FlowStepRef",
    "HttpVersion",
    "InteractionBreakdown",
    "LighthouseConfig",
    "LighthouseError",
    "LighthouseTestRequest",
    "Location",
    "LocationInfo",
    "Metric",
    "Metrics",
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
    "metric",
]

publish(__name__, globals(), __all__)
