"""Budget models: what a budget file says, validated, the flat checks it resolves to (metric
:class:`Check` s and per-resource-type :class:`ResourceLimit` s), and the result record.

A budget on a metric is a limit on its aggregated value over the runs of one cell (URL x
device x location). Which way the limit goes comes from the metric registry: times and CLS
are maximums (``<=``), the performance score is a minimum (``>=``).
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Annotated, Any, Literal
from urllib.parse import urljoin, urlsplit

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    PlainValidator,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from pagelab._exceptions import InvalidInputError
from pagelab.models import (
    BUDGET_RESOURCE_TYPES,
    KEY_PART,
    METRICS,
    Connection,
    Device,
    DeviceId,
    Location,
    Metric,
    StrictModel,
    invalid_input,
    metric,
    nested_error,
    unknown_metric,
    unknown_value,
)

from ._wording import STATUS_LABELS, status_of

__all__ = [
    "AGGREGATION_NAMES",
    "MAX_RUNS",
    "PRESETS",
    "RESOURCE_KEYWORDS",
    "RESOURCE_TYPES",
    "UNMEASURED_METRICS",
    "Aggregation",
    "BudgetFile",
    "BudgetResult",
    "Check",
    "Level",
    "MetricLimit",
    "PageBudget",
    "ResourceLimit",
    "ScanBudget",
    "Scope",
    "TemplateBudget",
    "budget_metric",
    "check_runs",
    "checks_from_mapping",
    "format_resource_value",
    "is_resource_metric",
    "resource_limits",
]

#: The most runs per cell: a budget file's ``runs``, ``--runs`` / ``--pagelab-runs`` and
#: the maximum of ``runs=auto``.
MAX_RUNS = 100


def check_runs(runs: int) -> int:
    """``runs`` when it is a number of runs per cell (1 to :data:`MAX_RUNS`): the one
    range check of a run count (budget files, the faces' options)."""
    if not 1 <= runs <= MAX_RUNS:
        raise InvalidInputError(f"must be from 1 to {MAX_RUNS}, got {runs}")
    return runs


#: A budget file's runs per cell.
RunCount = Annotated[int, AfterValidator(check_runs)]

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


def _unbudgetable(name: object) -> str | None:
    """Why ``name`` cannot be budgeted (None: it can): unknown, with the closest valid
    spelling, or a metric the engine does not measure."""
    try:
        found = metric(name) if isinstance(name, str) else None
    except KeyError:
        found = None
    if found is None:
        return unknown_metric(name, [n for n in METRICS if n not in UNMEASURED_METRICS])
    if found.name in UNMEASURED_METRICS:
        return f"{found.name}: {UNMEASURED_METRICS[found.name]}"
    return None


def budget_metric(name: str, where: str = "budget") -> Metric:
    """The registry entry for a budgeted metric (a spec name or a label such as ``LCP``).

    Raises :class:`InvalidInputError` naming the valid metrics (the closest first), or
    saying the engine does not measure it.
    """
    problem = _unbudgetable(name)
    if problem is not None:
        raise InvalidInputError(f"{where}: {problem}")
    return metric(name)


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


#: A time limit written with its unit: refused, naming the number to write instead
#: (docs/decisions.md, "Budget limits are numbers").
_WITH_UNIT = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s)\s*", re.IGNORECASE)


def _no_unit(value: Any) -> Any:
    found = _WITH_UNIT.fullmatch(value) if isinstance(value, str) else None
    if found is not None:
        milliseconds = float(found[1]) * (1000 if found[2].lower() == "s" else 1)
        raise PydanticCustomError("limit_unit", "write milliseconds as a number ({number})",
                                  {"number": f"{milliseconds:g}"})
    return value


#: A limit's number: ms for times, unitless CLS, score 0-100, bytes or requests.
LimitNumber = Annotated[float, BeforeValidator(_no_unit), Field(ge=0)]


# Budget models are StrictModels: a misspelt key would silently budget nothing, so it is
# refused, naming the key that was meant.
class MetricLimit(StrictModel):
    """One metric's limit with its own level or aggregation (a bare number is ``limit``)."""

    limit: LimitNumber
    level: Level | None = None
    aggregation: Aggregation | None = None


LimitInput = float | MetricLimit

#: The types of Lighthouse's resource-summary audit (its two sums included).
RESOURCE_TYPES = BUDGET_RESOURCE_TYPES
#: Budget keywords -> (size or count, the fixed type for the third_party_* ones).
RESOURCE_KEYWORDS: dict[str, tuple[str, str | None]] = {
    "resource_size": ("size", None), "resource_count": ("count", None),
    "third_party_size": ("size", "third-party"), "third_party_count": ("count", "third-party"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Scope:
    """The cells a limit applies to: ``url``, ``devices``, ``locations``, ``flow`` and
    ``step`` None apply to every cell of a frame; a ``url`` with ``*`` is a pattern (matched
    on the path when it starts with ``/``, as in budget.json)."""

    url: str | None = None
    devices: tuple[str, ...] | None = None
    locations: tuple[str, ...] | None = None
    #: A user flow's name and step name: the limit applies to that flow / step only.
    #: None: to every flow (and page); a check naming no step applies to the steps whose
    #: mode measures its metric.
    flow: str | None = None
    step: str | None = None
    #: A scan's template (``/product/*``): the limit applies to that template's runs,
    #: pooled over its measured pages (a budget file's ``templates``).
    template: str | None = None

    @property
    def is_pattern(self) -> bool:
        return self.url is not None and "*" in self.url

    def matches(self, url: str, device: str, location: str, *, flow: str | None = None,
                step: str | None = None, template: str | None = None) -> bool:
        """Whether the limit applies to this cell (``flow`` and ``step``: a flow step's;
        ``template``: a scan template's pooled runs)."""
        if self.template is not None and template != self.template:
            return False
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
        target = (urlsplit(url).path or "/") if self.url.startswith("/") else url
        return fnmatch.fnmatchcase(target, self.url) if self.is_pattern else target == self.url


@dataclass(frozen=True, slots=True)
class ResourceLimit(Scope):
    """A maximum on one resource type's transfer bytes (``size``) or requests (``count``)."""

    kind: str
    resource_type: str
    limit: float
    level: Level | None = None
    aggregation: str | None = None

    @property
    def metric(self) -> str:
        """``resource_size:script``: how results and tables name it."""
        return f"resource_{self.kind}:{self.resource_type}"


def _limit(raw: Any, where: str) -> MetricLimit:
    try:
        if isinstance(raw, MetricLimit):
            return raw
        return MetricLimit.model_validate(raw) if isinstance(raw, Mapping) else MetricLimit(
            limit=raw)
    except ValidationError as exc:
        raise InvalidInputError(f"{where}: {invalid_input(exc)}") from exc


def resource_limits(limits: Mapping[str, Any], where: str = "budget"
                    ) -> tuple[dict[str, Any], list[ResourceLimit]]:
    """Split ``limits`` into the metric limits and the :class:`ResourceLimit` s of its
    resource keywords (``resource_size={"script": 300_000}``, ``third_party_size=...``)."""
    rest: dict[str, Any] = {}
    found: list[ResourceLimit] = []
    for key, raw in limits.items():
        if key not in RESOURCE_KEYWORDS:
            rest[key] = raw
            continue
        kind, fixed = RESOURCE_KEYWORDS[key]
        if fixed is not None:
            per_type = {fixed: raw}
        elif isinstance(raw, Mapping) and not {"limit"} & set(raw):
            per_type = dict(raw)
        else:
            raise InvalidInputError(
                f"{where}: {key} takes a mapping of resource type -> limit, e.g. "
                f"{key}={{'script': 300_000}}; types: {', '.join(RESOURCE_TYPES)}")
        for resource_type, value in per_type.items():
            if resource_type not in RESOURCE_TYPES:
                raise InvalidInputError(f"{where}: {key}: " + unknown_value(
                    resource_type, RESOURCE_TYPES, what="resource type"))
            spec = _limit(value, f"{where}: {key}.{resource_type}")
            if spec.aggregation is not None and spec.aggregation not in AGGREGATION_NAMES:
                raise InvalidInputError(f"{where}: {key}.{resource_type}: unknown aggregation")
            found.append(ResourceLimit(kind, str(resource_type), float(spec.limit), spec.level,
                                       spec.aggregation))
    return rest, found





_LIMIT_NUMBER: TypeAdapter[float] = TypeAdapter(LimitNumber)


def _metric_limit(raw: Any) -> LimitInput:
    """A metric's limit: a number, or a mapping of :class:`MetricLimit`'s keys; one error
    for a value of neither shape (not one per shape, as a union gives)."""
    if isinstance(raw, MetricLimit):
        return raw
    if isinstance(raw, Mapping):
        return MetricLimit.model_validate(raw)
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise PydanticCustomError(
            "limit_type", "write a number, or a mapping with limit (and level, aggregation)")
    return _LIMIT_NUMBER.validate_python(raw)


#: :func:`_metric_limit` as a validator: every refusal is a ValidationError.
_METRIC_LIMIT: TypeAdapter[LimitInput] = TypeAdapter(
    Annotated[LimitInput, PlainValidator(_metric_limit)])


def _check_limits(value: Any) -> dict[str, Any]:
    """Metric names known (an error at the name), each limit a number or a
    :class:`MetricLimit` (an error at the limit); resource keys (``resource_size: {script:
    ...}``) checked by the resource module. Every bad entry is named."""
    if not isinstance(value, Mapping):
        raise PydanticCustomError("limits_type", "write a mapping of metric -> limit")
    checked: dict[str, Any] = {}
    errors: list[InitErrorDetails] = []
    for name, raw in value.items():
        if name in RESOURCE_KEYWORDS:
            try:
                resource_limits({name: raw}, "budgets")
            except InvalidInputError as exc:
                errors.append(InitErrorDetails(type=PydanticCustomError(
                    "resource_limit", str(exc).removeprefix("budgets: ")), loc=(), input=raw))
            checked[name] = raw
            continue
        problem = _unbudgetable(name)
        if problem is not None:
            errors.append(InitErrorDetails(type=PydanticCustomError("unknown_metric", problem),
                                           loc=(name, KEY_PART), input=name))
            continue
        try:
            checked[name] = _METRIC_LIMIT.validate_python(raw)
        except ValidationError as exc:
            errors.extend(nested_error(error, name) for error in exc.errors())
    if errors:
        raise ValidationError.from_exception_data("budgets", errors)
    return checked


_LimitsShape = dict[str, LimitInput | dict[str, LimitInput]]
#: A budgets mapping: metric -> limit, resource keyword -> {type: limit}.
_Limits = Annotated[
    _LimitsShape, PlainValidator(_check_limits, json_schema_input_type=_LimitsShape)]


class _Budgeted(StrictModel):
    """What a page and a whole file both carry: a preset and per-metric limits (and
    per-resource-type ones under :data:`RESOURCE_KEYWORDS`)."""

    preset: str | None = None
    budgets: _Limits = Field(default_factory=dict)

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str | None) -> str | None:
        return _check_preset(value)


def _no_resource_limits(limits: _LimitsShape, what: str = "flows") -> _LimitsShape:
    found = sorted(set(limits) & set(RESOURCE_KEYWORDS))
    if found:
        raise ValueError(f"{found[0]}: resource budgets apply to pages, not to {what}")
    return limits


class _Measured(_Budgeted):
    """What a page and a flow of a budget file both carry: settings over the file's."""

    devices: list[DeviceId] | None = None
    locations: list[Location] | None = None
    #: Measured on each (each replacing ``config``'s); None: the file's.
    connections: list[Connection] | None = Field(default=None, min_length=1)
    config: dict[str, Any] | None = None
    runs: RunCount | None = None
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
    steps: dict[str, _Limits] = Field(default_factory=dict)
    # The flow, read from ``file`` by load_budgets (which knows where the budget file is).
    _flow: Any = PrivateAttr(default=None)

    @field_validator("steps")
    @classmethod
    def _known_step_metrics(cls, value: dict[str, _LimitsShape]) -> dict[str, _LimitsShape]:
        for limits in value.values():
            _no_resource_limits(limits)
        return value

    @field_validator("budgets")
    @classmethod
    def _metrics_only(cls, value: _LimitsShape) -> _LimitsShape:
        return _no_resource_limits(value)

    @property
    def flow(self) -> Any:
        """The :class:`pagelab.Flow` of ``file`` (read by :func:`load_budgets`)."""
        if self._flow is None:
            raise InvalidInputError(
                f"flow file {self.file!r} was not read: load the budget file with load_budgets"
            )
        return self._flow


class TemplateBudget(_Budgeted):
    """A scan template's budgets (``templates: {"/product/*": {budgets: {...}}}``), over the
    file's, checked on the runs of the template's sampled pages pooled per device x
    location."""

    level: Level | None = None

    @field_validator("budgets")
    @classmethod
    def _metrics_only(cls, value: _LimitsShape) -> _LimitsShape:
        return _no_resource_limits(value, "templates")


class ScanBudget(StrictModel):
    """The scan whose templates a budget file budgets: its start URL (absolute, or a path
    resolved against ``base_url``) and the options of :func:`pagelab.scan` it sets (None:
    scan's default)."""

    url: str = Field(min_length=1)
    per_template: int | None = Field(default=None, ge=1)
    max_pages: int | None = Field(default=None, ge=1)
    include: list[str] | None = None
    exclude: list[str] | None = None
    seed: int | None = None

    def options(self) -> dict[str, Any]:
        """The scan options the file sets, as :func:`pagelab.scan`'s keywords."""
        return {name: value for name, value in self.model_dump(exclude={"url"}).items()
                if value is not None}


def _check_preset(name: str | None) -> str | None:
    if name is not None and name not in PRESETS:
        raise ValueError(unknown_value(name, PRESETS, what="preset"))
    return name


class BudgetFile(_Budgeted):
    """A budget file: defaults for every page, then the pages with their overrides."""

    base_url: str | None = None
    runs: RunCount | None = None
    aggregation: Aggregation | None = None
    level: Level = "error"
    devices: list[DeviceId] = Field(default_factory=lambda: [Device.MOBILE], min_length=1)
    locations: list[Location] = Field(default_factory=lambda: [Location.US], min_length=1)
    #: Every page and flow measured on each (each replacing ``config``'s connection);
    #: None: ``config``'s, else each device's default.
    connections: list[Connection] | None = Field(default=None, min_length=1)
    config: dict[str, Any] | None = None
    preset: str | None = None
    budgets: _Limits = Field(default_factory=dict)
    pages: list[PageBudget] = Field(default_factory=list)
    #: User flows (``{file: cart.yaml, budgets: {...}, steps: {add: {...}}}``); the file's
    #: budgets apply to their steps as to pages.
    flows: list[FlowBudget] = Field(default_factory=list)
    #: Lighthouse CI ``ci.assert`` options (a lighthouserc), evaluated on the runs' LHRs by
    #: :func:`pagelab.budgets.assert_runs` as ``lhci assert`` does.
    lhci: dict[str, Any] | None = None
    #: What reading the file decided that a user should know (nearest device/connection).
    notes: list[str] = Field(default_factory=list)
    #: The site to scan for ``templates`` (its start URL and scan options).
    scan: ScanBudget | None = None
    #: A scan template (a path glob, ``/product/*``) -> its budgets; the file's budgets
    #: apply to every template as to pages.
    templates: dict[str, TemplateBudget] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _templates_need_a_scan(self) -> BudgetFile:
        problem: tuple[str, str] | None = None
        if self.templates and self.scan is None:
            problem = ("templates", "budgets per template need the site to scan: add scan: "
                       "{url: START_URL}")
        elif self.scan is not None and not self.templates:
            problem = ("scan", "name the templates to budget under templates: "
                       "{\"/product/*\": {budgets: {...}}}")
        elif self.templates and self.lhci is not None:
            problem = ("templates", "Lighthouse CI assertions are checked per page, not per "
                       "template: use pagelab budgets under templates")
        for name in self.templates:
            if problem is None and not name.startswith("/"):
                problem = ("templates", f"{name!r}: a template is a URL path glob starting "
                           "with '/' (/product/*)")
        if problem is not None:
            field, message = problem
            raise ValidationError.from_exception_data("budgets", [InitErrorDetails(
                type=PydanticCustomError("templates", message), loc=(field,),
                input=getattr(self, field))])
        return self

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
    def parse(cls, data: Any, source: str = "budget file") -> BudgetFile:
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

    def _metric_limits(self, own: _Budgeted) -> dict[str, Any]:
        """The metric limits of a page, flow or template: the file's presets and budgets,
        then its own (the later wins per metric); resource keywords are left to
        :meth:`resource_limits` (the file's apply to its pages only)."""
        limits: dict[str, Any] = {}
        for preset in (self.preset, own.preset):
            if preset is not None:
                limits.update(PRESETS[preset])
        limits.update(self.budgets)
        limits.update(own.budgets)
        for key in RESOURCE_KEYWORDS:
            limits.pop(key, None)
        return limits

    def checks(self, base_url: str | None = None) -> list[Check]:
        """Every (page, metric) limit, page settings over file settings."""
        found: list[Check] = []
        for page in self.pages:
            found.extend(
                checks_from_mapping(
                    self._metric_limits(page),
                    url=self.page_url(page, base_url),
                    devices=tuple(d.value for d in page.devices or self.devices),
                    locations=tuple(loc.value for loc in page.locations or self.locations),
                    level=page.level or self.level,
                    aggregation=self.aggregation,
                )
            )
        for flow in self.flows:
            found.extend(self.flow_checks(flow))
        for name in self.templates:
            found.extend(self.template_checks(name))
        return found

    def scan_url(self, base_url: str | None = None) -> str | None:
        """The scan's start URL, a relative one resolved against ``base_url`` (or the
        file's); None without a scan."""
        if self.scan is None:
            return None
        return self.page_url(PageBudget(url=self.scan.url), base_url)

    def template_checks(self, name: str) -> list[Check]:
        """A template's limits: the file's, then the template's own, on the file's devices
        and locations."""
        template = self.templates[name]
        return checks_from_mapping(
            self._metric_limits(template), where=f"templates: {name}", template=name,
            devices=tuple(d.value for d in self.devices),
            locations=tuple(loc.value for loc in self.locations),
            level=template.level or self.level, aggregation=self.aggregation)

    def flow_checks(self, flow: FlowBudget) -> list[Check]:
        """A flow's limits: the file's and the flow's on every step (where the step's mode
        measures the metric), then each named step's own."""
        limits = self._metric_limits(flow)
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

    def resource_limits(self, base_url: str | None = None) -> list[ResourceLimit]:
        """Every page's byte and request limits per resource type (``resource_size: {script:
        300000}`` and the like under ``budgets``), the file's then the page's (the later
        one wins per type, as ``evaluate_resources`` reads them), each
        scoped to its page's cells."""
        found: list[ResourceLimit] = []
        for page in self.pages:
            # The file's, then the page's: per type and kind the last wins (a page's
            # resource_size: {image: ...} leaves the file's script limit in force).
            resources = [
                limit
                for source in (self.budgets, page.budgets)
                for limit in resource_limits(
                    {key: source[key] for key in RESOURCE_KEYWORDS if key in source}, "budgets")[1]
            ]
            found.extend(replace(
                r, level=r.level or page.level or self.level,
                aggregation=r.aggregation or self.aggregation,
                url=self.page_url(page, base_url),
                devices=tuple(d.value for d in page.devices or self.devices),
                locations=tuple(loc.value for loc in page.locations or self.locations),
            ) for r in resources)
        return found


@dataclass(frozen=True, slots=True)
class Check(Scope):
    """One resolved limit: a metric's bound on the cells it applies to (its
    :class:`Scope`)."""

    metric: str
    limit: float
    level: Level = "error"
    aggregation: str | None = None

    @property
    def operator(self) -> str:
        """``<=`` for a maximum (times, CLS), ``>=`` for a minimum (the score)."""
        return "<=" if metric(self.metric).lower_is_better else ">="


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
    template: str | None = None,
) -> list[Check]:
    """Checks from ``{metric: limit | MetricLimit | {limit, level, aggregation}}``."""
    found: list[Check] = []
    for name, raw in limits.items():
        m = budget_metric(name, where)
        try:
            limit = _METRIC_LIMIT.validate_python(raw)
        except ValidationError as exc:
            raise InvalidInputError(f"{where}: {invalid_input(exc, m.name)}") from exc
        spec = limit if isinstance(limit, MetricLimit) else MetricLimit(limit=limit)
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
                template=template,
            )
        )
    return found


@dataclass(frozen=True, slots=True)
class BudgetResult:
    """One checked limit on one cell (URL x device x location x connection; ``connection``
    None is the device's default).

    ``expected`` and ``actual`` are in the metric's unit (ms, unitless CLS, score 0-100);
    ``actual`` is None when no run gave a value (then ``passed`` is False). ``values`` are
    the successful runs' values in run order. ``operator`` is the condition that passes.
    """

    url: str
    device: str
    location: str
    connection: str | None
    metric: str
    operator: str
    expected: float
    actual: float | None
    values: tuple[float, ...]
    aggregation: str
    passed: bool
    level: Level
    report_url: str | None
    message: str
    #: The user flow and step the cell is (None: a page run).
    flow: str | None = None
    step: str | None = None
    #: The scan template whose pooled runs were checked (then ``url`` is the template).
    template: str | None = None

    @property
    def status(self) -> str:
        """``pass``, ``warn`` (a missed warn-level limit) or ``fail``."""
        return status_of(self.passed, self.level)

    @property
    def label(self) -> str:
        """The status as every face prints it (CLI, pytest summary, reports): ``pass``,
        ``warn`` or ``FAIL``, a missed limit in capitals so it cannot be overlooked."""
        return STATUS_LABELS[self.status]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (values as a list, NaN never appears), with ``status`` and its
        printed ``label``, so a reader of the dict words it as the result does."""
        data = asdict(self)
        if self.template is None:  # a page's record reads as it always did
            del data["template"]
        data["values"] = list(self.values)
        data["status"] = self.status
        data["label"] = self.label
        return data
