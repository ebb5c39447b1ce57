"""The result of one user-flow run: its measured steps, in order."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._build import Build
from ._display import flow_html
from ._enums import DeviceId, Location, TestStatus
from ._interactions import InteractionBreakdown
from ._reports import EngineEnvironment, LighthouseError, Metrics
from ._steps import FlowStepRef, StepMode
from ._types import Timestamp

__all__ = ["FLOW_ACTION_FAILED", "TIMESPAN_METRICS", "FlowReport", "FlowStep", "StepMode",
           "measured_metrics", "mode_measures"]

#: A flow's action failed (a selector never appeared, a click on nothing...).
FLOW_ACTION_FAILED = "FLOW_ACTION_FAILED"

#: What a timespan measures (Lighthouse computes no load metric without a navigation).
TIMESPAN_METRICS: tuple[str, ...] = (
    "interaction_to_next_paint", "total_blocking_time", "cumulative_layout_shift",
)


def mode_measures(mode: str | None, metric: str) -> bool:
    """Whether a step of ``mode`` measures ``metric`` (None: a page run, which measures
    every metric but INP; a navigation step likewise; a snapshot nothing). Budgets that name
    no step apply to the steps that measure their metric."""
    if mode == "snapshot":
        return False
    if mode == "timespan":
        return metric in TIMESPAN_METRICS
    return metric != "interaction_to_next_paint"


def measured_metrics(mode: StepMode, metrics: Metrics) -> Metrics:
    """``metrics`` with what a step of ``mode`` does not measure set to None
    (:func:`mode_measures`: Lighthouse reports some of them anyway, a navigation's INP as
    null, a timespan's score...)."""
    return Metrics(**{name: value for name, value in metrics if mode_measures(mode, name)})


class FlowStep(BaseModel):
    """One measured step: a navigation (every page metric), a timespan (INP, TBT, CLS) or
    a snapshot (no metric). ``index`` is its place among the flow's measured steps (1-based,
    actions between steps not counted), as every flow message numbers steps."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    index: int = Field(ge=1)
    name: str
    mode: StepMode
    #: The page's URL when the step ended.
    url: str | None = None
    #: Always a Metrics object (a loop over steps reads ``step.metrics.x``); what the
    #: step's mode does not measure is None (a snapshot's every field).
    metrics: Metrics = Field(default_factory=Metrics)
    #: The step's stored test (``lt_…``) and its HTML report, once a runner stored the run
    #: (a LocalRunner does): ``runner.lhr(step.id)``, ``Results.lhr(step)``.
    id: str | None = None
    report_url: str | None = None
    #: Resource name -> content: the step's ``lighthouse-json`` (its LHR) and
    #: ``html-report`` (Lighthouse's report of that step alone), what its stored test
    #: keeps; secrets scrubbed. Not part of the JSON form.
    resources: dict[str, bytes] = Field(default_factory=dict, exclude=True, repr=False)
    #: A timespan's slowest interaction: event, target and INP phases (None: no interaction
    #: measured, or another mode).
    interaction: InteractionBreakdown | None = None

    @field_validator("metrics", mode="before")
    @classmethod
    def _no_metrics_is_empty(cls, value: object) -> object:
        # Reports written before every step had a Metrics object have null here.
        return Metrics() if value is None else value


class FlowReport(BaseModel):
    """One run of a :class:`~pagelab.Flow`. A failed run keeps the steps measured before
    the failure; ``error`` names the step (and action) it failed at."""

    model_config = ConfigDict(extra="ignore")

    flow: str
    status: TestStatus
    steps: list[FlowStep] = Field(default_factory=list)
    error: LighthouseError | None = None
    #: The name of the step the run failed at (None when it succeeded).
    failed_step: str | None = None
    device: DeviceId
    location: Location | None = None
    connection: str | None = None
    lighthouse_version: str | None = None
    environment: EngineEnvironment | None = None
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    #: The build it measured (commit, branch...); None when unknown.
    build: Build | None = None
    #: Resource name -> content: ``flow-report`` (Lighthouse's flow report, HTML) and
    #: ``flow-json`` (its FlowResult); secrets scrubbed. Not part of the JSON form.
    resources: dict[str, bytes] = Field(default_factory=dict, exclude=True, repr=False)

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the flow's status and a row per step with its metrics."""
        return flow_html(self)

    def step(self, name: str) -> FlowStep:
        """The step named ``name`` (KeyError naming the steps otherwise)."""
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(f"no step {name!r}; steps: {', '.join(s.name for s in self.steps)}")

    def ref(self, step: FlowStep) -> FlowStepRef:
        """Where ``step`` is in this flow, as its stored test and its frame row say."""
        return FlowStepRef(flow=self.flow, step=step.name, step_index=step.index,
                           mode=step.mode)

    def failed_ref(self) -> FlowStepRef | None:
        """Where a failed run stopped: the step after the measured ones, named by
        ``failed_step`` (``?`` when the engine failed before any step), no mode; None
        when the run succeeded."""
        if self.status is not TestStatus.FAILED:
            return None
        return FlowStepRef(flow=self.flow, step=self.failed_step or "?",
                           step_index=len(self.steps) + 1)
