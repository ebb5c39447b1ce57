"""User flows on the warm engine: what goes to the driver and how its FlowResult maps to
steps (pure). The run itself is ``Engine.run_flow``: one fresh browser context per flow
run, Lighthouse's own user-flow API (``startFlow``) in the driver."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pagelab.models import (
    Flow,
    FlowStep,
    InteractionBreakdown,
    Metrics,
    StepMode,
    Timespan,
    inp_phases,
    measured_metrics,
    step_name,
)

from ._mapping import summarize_lhr
from ._scrub import SecretScrubber

__all__ = ["failure_message", "flow_steps", "flow_wire", "slowest_interaction"]

_MODES: dict[str, StepMode] = {
    "navigation": "navigation", "timespan": "timespan", "snapshot": "snapshot",
}


def flow_steps(
    flow_result: dict[str, Any], *, interactions: Sequence[Any] = (),
    chrome_version: str | None = None,
) -> list[FlowStep]:
    """Lighthouse's FlowResult -> steps with their metrics (pure; per mode). A timespan's
    slowest interaction joins its phases, read from its LHR, and the event and target the
    driver read in the page (``interactions``: its records, by ``step_index``)."""
    observed = {item.get("step_index"): item for item in interactions
                if isinstance(item, dict)}
    steps: list[FlowStep] = []
    for index, step in enumerate(flow_result.get("steps") or [], 1):
        lhr = step.get("lhr") or {}
        mode = _MODES.get(str(lhr.get("gatherMode")), "navigation")
        summary = summarize_lhr(lhr, chrome_version=chrome_version)
        # Every step has a Metrics object; what its mode does not measure is None.
        interaction = (slowest_interaction(lhr, observed.get(index))
                       if mode == "timespan" else None)
        steps.append(FlowStep(
            index=index, name=str(step.get("name") or mode), mode=mode,
            url=lhr.get("finalDisplayedUrl"),
            metrics=measured_metrics(mode, summary.metrics or Metrics()),
            interaction=interaction,
            resources={"lighthouse-json": json.dumps(lhr).encode()},
        ))
    return steps


def slowest_interaction(
    lhr: dict[str, Any], observed: dict[str, Any] | None
) -> InteractionBreakdown | None:
    """A timespan's slowest interaction: its phases from the LHR, its event and target from
    the driver's record (``{event, selector, node_label}``); None when neither has it."""
    phases = inp_phases(lhr)
    seen = observed or {}
    named = {"event": seen.get("event"), "target": seen.get("selector"),
             "target_label": seen.get("node_label")}
    named = {key: value for key, value in named.items() if isinstance(value, str) and value}
    if not phases and not named:
        return None
    return InteractionBreakdown(**named, **phases)


def _wire(item: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": item.kind, **item.model_dump()}
    if isinstance(item, Timespan):
        data["actions"] = [_wire(action) for action in item.actions]
    return data


def flow_wire(flow: Flow) -> dict[str, Any]:
    """The flow as the driver reads it: items with their ``kind`` (secret text included:
    the driver types it, and scrubs it from what it writes)."""
    return {"name": flow.name, "steps": [_wire(item) for item in flow.steps]}


def failure_message(
    failure: dict[str, Any], flow: Flow, secrets: SecretScrubber
) -> tuple[str, str]:
    """(message, failed step name) from the driver's failure record. The message names the
    place as every flow message does (:meth:`Flow.where`: measured steps numbered as in the
    frame and the CLI's tables, not the entries of ``flow.steps``)."""
    item_index = int(failure.get("item_index") or 0)
    failed_step = ""
    if 0 < item_index <= len(flow.steps):
        failed_step = step_name(flow.steps[item_index - 1])
        where = flow.where(item_index, int(failure.get("action_index") or 0) or None)
    else:
        where = f"flow {flow.name!r}"
    message = secrets.scrub(f"{where}: {failure.get('message', 'failed')}")
    return message, failed_step
