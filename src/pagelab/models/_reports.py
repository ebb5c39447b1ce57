"""Lighthouse test reports, batch reports and their parts."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from pagelab._html import for_notebook

from ._build import Build
from ._config import LighthouseConfig
from ._display import batch_html, batch_text, report_html, report_text
from ._enums import BatchStatus, BatchType, DeviceId, Location, TestStatus
from ._har import har_url, read_har
from ._steps import FlowStepRef
from ._types import Timestamp

__all__ = [
    "ENGINE_CRASHED",
    "ENGINE_FAILURE_CODES",
    "ENGINE_UNAVAILABLE",
    "TIMEOUT",
    "BatchItem",
    "BatchReport",
    "EngineEnvironment",
    "LighthouseError",
    "Metrics",
    "TestReport",
]


class _Model(BaseModel):
    # Unknown fields from any server are ignored, so newer servers do not break older clients.
    model_config = ConfigDict(extra="ignore")


class Metrics(_Model):
    """The nine metrics of a run. Times in milliseconds, CLS unitless, score 0-100.

    ``first_meaningful_paint`` is null with Lighthouse >= 12.1, which no longer computes it.
    """

    cumulative_layout_shift: float | None = Field(default=None, ge=0)
    first_contentful_paint: float | None = Field(default=None, ge=0)
    first_meaningful_paint: float | None = Field(default=None, ge=0)
    time_to_interactive: float | None = Field(default=None, ge=0)
    largest_contentful_paint: float | None = Field(default=None, ge=0)
    server_response_time: float | None = Field(default=None, ge=0)
    speed_index: float | None = Field(default=None, ge=0)
    total_blocking_time: float | None = Field(default=None, ge=0)
    performance_score: float | None = Field(default=None, ge=0, le=100)
    #: User flows' timespans only (pagelab's addition to the spec's nine; null otherwise).
    interaction_to_next_paint: float | None = Field(default=None, ge=0)
    #: pagelab extension: the page's User Timing marks (start) and measures (duration), ms,
    #: keyed ``user_timing:<name>``; None when the page recorded none.
    user_timings: dict[str, float] | None = None


#: The engine crashed mid-run (Chromium, Node or the driver died).
ENGINE_CRASHED = "ENGINE_CRASHED"
#: The run took longer than the engine's hard limit.
TIMEOUT = "TIMEOUT"
#: The engine could not start at all (e.g. Lighthouse not installed).
ENGINE_UNAVAILABLE = "ENGINE_UNAVAILABLE"
#: Error codes that say the measuring machine failed, not the page: such a run says nothing
#: about the page (the service refunds it; the plugin retries it once).
ENGINE_FAILURE_CODES: frozenset[str] = frozenset({ENGINE_CRASHED, TIMEOUT, ENGINE_UNAVAILABLE})


class LighthouseError(_Model):
    """Why a run failed: Lighthouse's own code (``NO_FCP``, ``FAILED_DOCUMENT_REQUEST``...)
    or pagelab's (``ENGINE_CRASHED``, ``TIMEOUT``)."""

    code: str
    message: str

    @property
    def is_engine_failure(self) -> bool:
        """The measuring engine failed (crash, timeout, unavailable), not the page."""
        return self.code in ENGINE_FAILURE_CODES


class EngineEnvironment(_Model):
    """pagelab extension: what the engine really ran with."""

    chrome_version: str | None = None
    benchmark_index: float | None = None
    host_user_agent: str | None = None
    network_user_agent: str | None = None
    form_factor: str | None = None
    screen_emulation: dict[str, Any] | None = None
    throttling_method: str | None = None
    throttling: dict[str, Any] | None = None
    #: How busy the machine was when the run started: the 1-minute load average, the
    #: percent of the last 10 s in which some task waited for a CPU (Linux PSI), and the
    #: CPU count. A run on a busy machine is a run to doubt.
    load_average: float | None = None
    cpu_pressure: float | None = None
    cpu_count: int | None = None
    #: The share of a core (0 to 1) a busy task of the engine's priority got as the run
    #: started: about 1 with a core free, 0.5 when another process keeps every core busy.
    cpu_share: float | None = None
    #: The machine was unfit to measure by the fitness rule of the engine that ran it
    #: (:class:`~pagelab.models._fitness.FitnessRule`: benchmark index, load per CPU, CPU
    #: pressure, CPU share); None when not judged (an older report, another server, no
    #: figures).
    noisy: bool | None = None
    #: Why it was unfit (``benchmark index 640 below 1000``...); empty when fit.
    unfit_reasons: list[str] | None = None


class _Linked(Protocol):
    @property
    def id(self) -> str | None: ...
    @property
    def report_url(self) -> str | None: ...


class _HarAccess:
    """``report.har()`` for the two models that name one test (:class:`TestReport`,
    :class:`BatchItem`)."""

    __slots__ = ()

    @property
    def har_url(self: _Linked) -> str | None:
        """Where the run's HAR is: beside ``report_url`` (the hosted report's link with
        ``/har``, the same token opening it; a LocalRunner's ``run.har`` file next to its
        ``report.html``); None without a report."""
        return har_url(self.report_url)

    def har(self: _Linked) -> dict[str, Any]:
        """The run's HTTP Archive (HAR 1.2), parsed, read from :attr:`har_url` (no runner
        needed; ``runner.har(report)`` reads the same document through the API)."""
        return read_har(self.report_url, self.id)


class TestReport(_Model, _HarAccess):
    """One Lighthouse test: request, status, and (when final) metrics or error."""

    __test__ = False

    id: str | None = None
    url: str
    device: DeviceId
    location: Location
    config: LighthouseConfig = Field(default_factory=LighthouseConfig)
    status: TestStatus
    lighthouse_version: str | None = None
    metrics: Metrics | None = None
    report_url: str | None = None
    created_at: Timestamp | None = None
    expires_at: Timestamp | None = None
    error: LighthouseError | None = None
    #: pagelab extension: which machine or worker measured it (``"local"`` for this machine).
    vantage: str | None = None
    #: pagelab extension: browser and throttling actually applied.
    environment: EngineEnvironment | None = None
    #: pagelab extension: the batch this test belongs to, if any.
    batch_id: str | None = None
    #: pagelab extension: the user flow step this test measured (a LocalRunner stores each
    #: step of a flow run as a test); None for a page test.
    flow_step: FlowStepRef | None = None
    #: pagelab extension: the build it measured (commit, branch...); None when unknown.
    build: Build | None = None

    @for_notebook
    def _repr_html_(self) -> str:
        """Jupyter's rich display: status, URL, metrics with rating colours, report link."""
        return report_html(self)

    def __str__(self) -> str:
        return report_text(self)


class BatchItem(_Model, _HarAccess):
    """One test of a batch."""

    id: str | None = None
    url: str
    device: DeviceId
    location: Location
    status: TestStatus
    metrics: Metrics | None = None
    report_url: str | None = None
    error: LighthouseError | None = None
    #: pagelab extensions, as on :class:`TestReport`.
    lighthouse_version: str | None = None
    created_at: Timestamp | None = None
    vantage: str | None = None
    environment: EngineEnvironment | None = None
    build: Build | None = None

    @for_notebook
    def _repr_html_(self) -> str:
        return report_html(self)

    def __str__(self) -> str:
        return report_text(self)


class BatchReport(_Model):
    """A batch of tests over URLs, devices or locations."""

    id: str | None = None
    urls: list[str]
    devices: list[DeviceId]
    locations: list[Location]
    batch_type: BatchType
    config: LighthouseConfig = Field(default_factory=LighthouseConfig)
    status: BatchStatus
    lighthouse_version: str | None = None
    report_url: str | None = None
    created_at: Timestamp | None = None
    expires_at: Timestamp | None = None
    reports: list[BatchItem] = Field(default_factory=list)

    @property
    def is_final(self) -> bool:
        """Every item is ``success`` or ``failed`` (whatever ``status`` says)."""
        return all(item.status.is_final for item in self.reports)

    @for_notebook
    def _repr_html_(self) -> str:
        """Jupyter's rich display: the batch's status and a table of its items."""
        return batch_html(self)

    def __str__(self) -> str:
        return batch_text(self)
