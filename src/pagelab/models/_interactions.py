"""What made a timespan's INP slow: its slowest interaction's event, target and phases."""

from __future__ import annotations

import math
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["INP_BREAKDOWN_AUDIT", "INP_PHASES", "InteractionBreakdown", "inp_phases"]

#: Lighthouse's audit with the slowest interaction's phases (Lighthouse 13: it replaced
#: ``work-during-interaction``).
INP_BREAKDOWN_AUDIT = "inp-breakdown-insight"

#: Each phase: (field of :class:`InteractionBreakdown`, Lighthouse's ``subpart``, words).
INP_PHASES: tuple[tuple[str, str, str], ...] = (
    ("input_delay", "inputDelay", "input delay"),
    ("processing", "processingDuration", "processing"),
    ("presentation", "presentationDelay", "presentation delay"),
)


class InteractionBreakdown(BaseModel):
    """The slowest interaction of a timespan step (the one its INP reports): the type of
    its event whose handlers ran longest (``click``), that event's target as Lighthouse
    names nodes (its CSS ``selector`` and its ``nodeLabel``) and the three phases of its
    duration, ms, from the step's LHR. A part the run could not tell is None."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    event: str | None = None
    target: str | None = None
    target_label: str | None = None
    #: From the user's input to the first event handler's start.
    input_delay: float | None = Field(default=None, ge=0)
    #: The event handlers' time (first start to last end).
    processing: float | None = Field(default=None, ge=0)
    #: From the last handler's end to the next frame's presentation.
    presentation: float | None = Field(default=None, ge=0)


def inp_phases(lhr: Mapping[str, object]) -> dict[str, float]:
    """The slowest interaction's phases (``input_delay``, ``processing``, ``presentation``;
    ms) from an LHR's :data:`INP_BREAKDOWN_AUDIT`; empty when it has none (a navigation, a
    timespan without an interaction)."""
    audits = lhr.get("audits")
    audit = audits.get(INP_BREAKDOWN_AUDIT) if isinstance(audits, Mapping) else None
    details = audit.get("details") if isinstance(audit, Mapping) else None
    parts = details.get("items") if isinstance(details, Mapping) else None
    durations: dict[str, float] = {}
    for part in parts if isinstance(parts, list) else []:
        rows = part.get("items") if isinstance(part, Mapping) and part.get(
            "type") == "table" else None
        for row in rows if isinstance(rows, list) else []:
            value = row.get("duration") if isinstance(row, Mapping) else None
            if isinstance(value, int | float) and math.isfinite(value) and value >= 0:
                durations.setdefault(str(row.get("subpart")), float(value))
    return {name: durations[subpart] for name, subpart, _ in INP_PHASES
            if subpart in durations}
