"""Budget models: what a budget file says, validated, and the flat checks it resolves to.

A budget on a metric is a limit on its aggregated value over the runs of one cell (URL x
device x location). Which way the limit goes comes from the metric registry: times and CLS
are maximums (``<=``), the performance score is a minimum (``>=``).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from pagelab._exceptions import InvalidInputError
from pagelab.models import METRICS, Device, DeviceId, Location, Metric, invalid_input, metric

__all__ = [
    "AGGREGATION_NAMES",
    "PRESETS",
    "UNMEASURED_METRICS",
    "Aggregation",
    "BudgetFile",
    "Check",
    "Level",
    "MetricLimit",
    "PageBudget",
    "budget_metric",
    "checks_from_mapping",
    "format_resource_value",
    "is_resource_metric",
]

Level = Literal["warn", "error"]
Aggregation = Literal["median", "mean", "p75", "p90", "min", "max", "representative"]
#: The aggregations a budget may name (the same as :data:`pagelab.stats.AGGREGATIONS`).
AGGREGATION_NAMES: tuple[str, ...] = Aggregation.__args__  # type: ignore[attr-defined]

#: Metrics the engine never fills: a budget on one would always miss for want of a value.
UNMEASURED_METRICS: dict[str, str] = {
    "first_meaningful_paint": "Lighthouse removed First Meaningful Paint in 12.1 and the "
    "engine does not measure it; budget largest_contentful_paint instead",
}


def _preset(threshold: Literal["good", "poor"]) -> dict[str, float]:
    # Read from the registry, never copied: the presets move with its thresholds.
    limits: dict[str, float] = {}
    for name, m in METRICS.items():
        value = getattr(m, threshold)
        if value is not None and name not in UNMEASURED_METRICS:
            limits[name] = value
    return limits


#: Named sets of limits: ``good`` keeps every metric in its "good" band, ``not-poor`` keeps
#: it out of the "poor" band (the registry's web-vitals / Lighthouse thresholds).
PRESETS: dict[str, dict[str, float]] = {"good": _preset("good"), "not-poor": _preset("poor")}


def budget_metric(name: str, where: str = "budget") -> Metric:
    """The registry entry for a budgeted metric (a spec name or a label such as ``LCP``).

    Raises :class:`InvalidInputError` naming the valid metrics, or saying the engine does
    not measure it.
    """
    try:
        found = metric(name)
    except KeyError:
        valid = ", ".join(n for n in METRICS if n not in UNMEASURED_METRICS)
        raise InvalidInputError(f"{where}: unknown metric {name!r}; valid: {valid}") from None
    if found.name in UNMEASURED_METRICS:
        raise InvalidInputError(f"{where}: {found.name}: {UNMEASURED_METRICS[found.name]}")
    return found


def is_resource_metric(name: str) -> bool:
    """Whether ``name`` is a resource budget's (``resource_size:script``)."""
    return name.startswith(("resource_size:", "resource_count:"))


def format_resource_value(name: str, value: float | None) -> str:
    """``312.3 KB`` (1 KB = 1000 bytes) for sizes, ``4 requests`` for counts."""
    if value is None or math.isnan(value):
        return "\u2013"
    if name.startswith("resource_size:"):
        return f"{value / 1000:,.1f} KB" if value >= 1000 else f"{value:,.0f} B"
    return f"{value:g} request{'' if value == 1 else 's'}"


class _Strict(BaseModel):
    # A misspelt key in a budget file would silently budget nothing: refuse it.
    model_config = ConfigDict(extra="forbid", frozen=True)


class MetricLimit(_Strict):
    """One metric's limit with its own level or aggregation (a bare number is ``limit``)."""

    limit: float = Field(ge=0)
    level: Level | None = None
    aggregation: Aggregation | None = None


LimitInput = float | MetricLimit


def _check_limits(value: dict[str, LimitInput]) -> dict[str, LimitInput]:
    for name in value:
        budget_metric(name, "budgets")
    return value


class _Budgeted(_Strict):
    """What a page and a whole file both carry: a preset and per-metric limits."""

    preset: str | None = None
    budgets: dict[str, LimitInput] = Field(default_factory=dict)

    @field_validator("budgets")
    @classmethod
    def _known_metrics(cls, value: dict[str, LimitInput]) -> dict[str, LimitInput]:
        return _check_limits(value)

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str | None) -> str | None:
        return _check_preset(value)


class _Measured(_Budgeted):
    """What a page and a flow of a budget file both carry: settings over the file's."""

    devices: list[DeviceId] | None = None
    locations: list[Location] | None = None
    config: dict[str, Any] | None = None
    runs: int | None = Field(default=None, ge=1, le=100)
    level: Level | None = None


class PageBudget(_Measured):
    """One page of a budget file; its settings override the file's."""

    #: Absolute URL, a path resolved against ``base_url``, or a pattern with ``*``
    #: (``/*`` as in Lighthouse's budget.json) that only matches measured pages.
    url: str = Field(min_length=1)


class FlowBudget(_Measured):
    """A user flow of a budget file: its flow file and its budgets, for every step (each
    limit on the steps whose mode measures its metric) and per step by name."""

    #: The flow file (YAML / JSON), relative to the budget file.
    file: str = Field(min_length=1)
    #: Step name -> that step's own limits (over the flow's).
    steps: dict[str, dict[str, LimitInput]] = Field(default_factory=dict)
    # The flow, read from ``file`` by load_budgets (which knows where the budget file is).
    _flow: Any = PrivateAttr(default=None)

    @field_validator("steps")
    @classmethod
    def _known_step_metrics(
        cls, value: dict[str, dict[str, LimitInput]]
    ) -> dict[str, dict[str, LimitInput]]:
        for limits in value.values():
            _check_limits(limits)
        return value

    @property
    def flow(self) -> Any:
        """The :class:`pagelab.Flow` of ``file`` (read by :func:`load_budgets`)."""
        if self._flow is None:
            raise InvalidInputError(
                f"flow file {self.file!r} was not read: load the budget file with load_budgets"
            )
        return self._flow


def _check_preset(name: str | None) -> str | None:
    if name is not None and name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; valid: {', '.join(PRESETS)}")
    return name


class BudgetFile(_Budgeted):
    """A budget file: defaults for every page, then the pages with their overrides."""

    base_url: str | None = None
    runs: int | None = Field(default=None, ge=1, le=100)
    aggregation: Aggregation | None = None
    level: Level = "error"
    devices: list[DeviceId] = Field(default_factory=lambda: [Device.MOBILE], min_length=1)
    locations: list[Location] = Field(default_factory=lambda: [Location.US], min_length=1)
    config: dict[str, Any] | None = None
    preset: str | None = None
    budgets: dict[str, LimitInput] = Field(default_factory=dict)
    pages: list[PageBudget] = Field(default_factory=list)
    #: User flows (``{file: cart.yaml, budgets: {...}, steps: {add: {...}}}``); the file's
    #: budgets apply to their steps as to pages.
    flows: list[FlowBudget] = Field(default_factory=list)
    #: Lighthouse CI ``ci.assert`` options (a lighthouserc), evaluated on the runs' LHRs by
    #: :func:`pagelab.budgets.assert_runs` as ``lhci assert`` does.
    lhci: dict[str, Any] | None = None
    #: What reading the file decided that a user should know (nearest device/connection).
    notes: list[str] = Field(default_factory=list)

    @field_validator("lhci")
    @classmethod
    def _valid_lhci(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            from ._lhci import validate_options

            try:
                validate_options(value, "lhci")
            except InvalidInputError as exc:
                raise ValueError(str(exc)) from exc
        return value

    @classmethod
    def parse(cls, data: Any, source: str = "budgets") -> BudgetFile:
        """Validate ``data``; every bad field is named in one :class:`InvalidInputError`."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise InvalidInputError(f"{source}: {invalid_input(exc)}") from exc

    def page_url(self, page: PageBudget, base_url: str | None = None) -> str:
        """The page's URL, a relative one resolved against ``base_url`` (or the file's)."""
        base = base_url or self.base_url
        if urlsplit(page.url).scheme or base is None:
            return page.url
        return urljoin(base.rstrip("/") + "/", page.url.lstrip("/"))

    def checks(self, base_url: str | None = None) -> list[Check]:
        """Every (page, metric) limit, page settings over file settings."""
        found: list[Check] = []
        for page in self.pages:
            limits: dict[str, LimitInput] = {}
            for preset in (self.preset, page.preset):
                if preset is not None:
                    limits.update(PRESETS[preset])
            limits.update(self.budgets)
            limits.update(page.budgets)
            found.extend(
                checks_from_mapping(
                    limits,
                    url=self.page_url(page, base_url),
                    devices=tuple(d.value for d in page.devices or self.devices),
                    locations=tuple(loc.value for loc in page.locations or self.locations),
                    level=page.level or self.level,
                    aggregation=self.aggregation,
                )
            )
        for flow in self.flows:
            found.extend(self.flow_checks(flow))
        return found

    def flow_checks(self, flow: FlowBudget) -> list[Check]:
        """A flow's limits: the file's and the flow's on every step (where the step's mode
        measures the metric), then each named step's own."""
        limits: dict[str, LimitInput] = {}
        for preset in (self.preset, flow.preset):
            if preset is not None:
                limits.update(PRESETS[preset])
        limits.update(self.budgets)
        limits.update(flow.budgets)
        scope = {
            "devices": tuple(d.value for d in flow.devices or self.devices),
            "locations": tuple(loc.value for loc in flow.locations or self.locations),
            "level": flow.level or self.level, "aggregation": self.aggregation,
            "flow": flow.flow.name,
        }
        found = checks_from_mapping(limits, where=f"flow {flow.file}", **scope)
        for step, step_limits in flow.steps.items():
            found.extend(checks_from_mapping(step_limits, where=f"flow {flow.file}, step "
                                             f"{step}", step=step, **scope))
        return found


@dataclass(frozen=True, slots=True)
class Check:
    """One resolved limit: a metric's bound on the cells it applies to.

    ``url``, ``devices`` and ``locations`` None apply to every cell of a frame; a ``url``
    with ``*`` is a pattern (matched on the path when it starts with ``/``).
    """

    metric: str
    limit: float
    level: Level = "error"
    aggregation: str | None = None
    url: str | None = None
    devices: tuple[str, ...] | None = None
    locations: tuple[str, ...] | None = None
    #: A user flow's name and step name: the check applies to that flow / step only.
    #: None: to every flow (and page); a check naming no step applies to the steps whose
    #: mode measures its metric.
    flow: str | None = None
    step: str | None = None

    @property
    def operator(self) -> str:
        """``<=`` for a maximum (times, CLS), ``>=`` for a minimum (the score)."""
        return "<=" if metric(self.metric).lower_is_better else ">="

    @property
    def is_pattern(self) -> bool:
        return self.url is not None and "*" in self.url

    def matches(self, url: str, device: str, location: str, *, flow: str | None = None,
                step: str | None = None) -> bool:
        """Whether the check applies to this cell (``flow`` and ``step``: a flow step's)."""
        if self.flow is not None and flow != self.flow:
            return False
        if self.step is not None and step != self.step:
            return False
        if self.devices is not None and device not in self.devices:
            return False
        if self.locations is not None and location not in self.locations:
            return False
        if self.url is None:
            return True
        # A URL starting with "/" names a path on any origin (as in budget.json).
        target = (urlsplit(url).path or "/") if self.url.startswith("/") else url
        return fnmatch.fnmatchcase(target, self.url) if self.is_pattern else target == self.url


def checks_from_mapping(
    limits: Mapping[str, Any],
    *,
    url: str | None = None,
    devices: tuple[str, ...] | None = None,
    locations: tuple[str, ...] | None = None,
    level: Level = "error",
    aggregation: str | None = None,
    where: str = "budget",
    flow: str | None = None,
    step: str | None = None,
) -> list[Check]:
    """Checks from ``{metric: limit | MetricLimit | {limit, level, aggregation}}``."""
    found: list[Check] = []
    for name, raw in limits.items():
        m = budget_metric(name, where)
        try:
            spec = raw if isinstance(raw, MetricLimit) else (
                MetricLimit.model_validate(raw) if isinstance(raw, Mapping)
                else MetricLimit(limit=raw)
            )
        except ValidationError as exc:
            raise InvalidInputError(f"{where}: {m.name}: {invalid_input(exc)}") from exc
        found.append(
            Check(
                metric=m.name,
                limit=float(spec.limit),
                level=spec.level or level,
                aggregation=spec.aggregation or aggregation,
                url=url,
                devices=devices,
                locations=locations,
                flow=flow,
                step=step,
            )
        )
    return found
