"""Which step of which user flow a stored test measured: what a :class:`TestReport` of a
flow step carries, and the frame's four flow columns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FlowStepRef", "StepMode"]

StepMode = Literal["navigation", "timespan", "snapshot"]


class FlowStepRef(BaseModel):
    """The step of a user flow run a stored test measured (``TestReport.flow_step``): the
    flow's name, the step's name, its place among the measured steps (1-based, as every
    flow message numbers them) and its mode; ``mode`` is None on the ``failed`` test of the
    step a run failed at (nothing was measured)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    flow: str
    step: str
    step_index: int = Field(ge=1)
    mode: StepMode | None = None
