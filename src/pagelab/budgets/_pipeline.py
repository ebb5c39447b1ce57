"""The one check pipeline under ``pagelab check`` and the pytest plugin: a budget file's
pages, flows and scan templates (:func:`plan_targets`) -> their runs (a number, or
``auto``; one retry of an engine failure) -> the checks (budgets, resource budgets,
Lighthouse CI assertions, the baseline gate) -> records for the tables and CI reports
(:mod:`._tables`, :mod:`._publish`).

The faces parse their options, call these, print and set their exit status, as lighthouse-ci's
CLI does around its assertions. Measuring itself is the face's: it passes a
:data:`MeasureMatrix` (``pagelab.measure`` bound to its runner), so budgets never reach the
runners. So is discovery: for a scan's templates the face passes a :data:`SampleTemplates`
(:func:`pagelab._scan.scan_sample`, which sits above the budgets).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagelab._build import resolve_build
from pagelab._cells import CELL, CellKey, cell_key, cell_label
from pagelab._exceptions import DiscoveryError, EngineError, InvalidInputError
from pagelab.models import Build, BuildInput, Flow

from ._adaptive import AutoRuns, Measure, parse_auto_runs
from ._baseline import Baseline, compare_baseline
from ._ci import budget_source_line
from ._evaluate import evaluate, run_failures
from ._gate import GateRule
from ._lhci_runs import assert_runs, format_lhci
from ._limits import RegressionLimit
from ._models import BudgetFile, BudgetResult, Check, check_runs, checks_from_mapping
from ._resources import (
    LhrReader,
    ResourceLimit,
    evaluate_resources,
    replayed_lhrs,
    resource_limits,
)

if TYPE_CHECKING:
    import pandas as pd

    from ._lhci import AssertionResult

__all__ = [
    "DEFAULT_RUNS",
    "EngineFailureError",
    "MeasureMatrix",
    "SampleTemplates",
    "Target",
    "TemplateScan",
    "check_frame",
    "check_lhci",
    "check_resources",
    "connection_targets",
    "discovered_once",
    "failure_lines",
    "keyword_limits",
    "lhci_record",
    "matrix_measure",
    "measure_auto",
    "measure_cells",
    "measure_flow",
    "measure_target",
    "parse_connections",
    "parse_gate_rule",
    "parse_runs",
    "plan_targets",
    "replayed_cells",
    "replayed_flow",
    "replayed_target",
    "replayed_template",
    "session_build",
    "source_line",
    "source_text",
    "target_checks",
    "target_urls",
]

#: Runs per cell when neither the options nor the budget file say.
DEFAULT_RUNS = 3

#: Measures ``runs`` runs of the URLs (or of one flow) on every device x location and
#: returns their wide frame: ``pagelab.measure`` bound to the face's runner.
MeasureMatrix = Callable[[Sequence[str] | Flow, Sequence[str], Sequence[str],
                          Mapping[str, Any] | None, int], "pd.DataFrame"]


@dataclass(frozen=True)
class TemplateScan:
    """The scan of a budget file's ``templates``: its start URL (absolute), the templates
    it budgets (path globs; a page gets the first that matches) and the options of
    :func:`pagelab.scan` the file sets (as pairs, so the scan can key a cache)."""

    start_url: str
    templates: tuple[str, ...]
    options: tuple[tuple[str, Any], ...] = ()


#: Discovers a :class:`TemplateScan`'s site and returns the pages sampled of each of its
#: templates (a template the site lacks: absent), bound by the face.
SampleTemplates = Callable[[TemplateScan], Mapping[str, Sequence[str]]]


class EngineFailureError(EngineError):
    """The engine crashed or timed out twice on one run (or a replayed run records that it
    did): the page is not to blame, so the faces report an error, not a missed budget."""


def parse_runs(value: int | str | None, rule: GateRule | None = None) -> int | GateRule:
    """The runs per cell: a whole number from 1 to :data:`MAX_RUNS`, or the gate rule of
    ``auto`` / ``auto:MIN-MAX`` (adaptive runs; ``rule``'s alpha). None: the default.
    The one check of a run count; InvalidInputError names what is wrong (the face adds
    its option's name)."""
    if value is None:
        return DEFAULT_RUNS
    if isinstance(value, str) and value.strip().lower().startswith("auto"):
        auto = parse_auto_runs(value, rule)
        if auto is not None:
            return auto
    try:
        runs = int(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"expected a whole number or auto, got {value!r}") from None
    return check_runs(runs)


def parse_gate_rule(alpha: object, inconclusive: object) -> GateRule:
    """The regression gate's rule from its options: ``alpha`` a number between 0 and 0.5,
    ``inconclusive`` pass or fail; InvalidInputError starts with the option's name (the
    face adds its prefix)."""
    try:
        number = float(alpha)  # type: ignore[arg-type]  # any option value: checked here
    except (TypeError, ValueError):
        number = float("nan")
    if not 0 < number < 0.5:
        raise InvalidInputError(f"alpha: expected a number between 0 and 0.5, got {alpha!r}")
    verdict = str(inconclusive).strip().lower()
    if verdict not in ("pass", "fail"):
        raise InvalidInputError(f"inconclusive: expected pass or fail, got {verdict!r}")
    return GateRule(alpha=number, inconclusive_fails=verdict == "fail")


def discovered_once(sample: SampleTemplates) -> SampleTemplates:
    """``sample`` run once per scan: every template of a scan shares its pages, or its
    :class:`~pagelab.DiscoveryError`."""
    found: dict[TemplateScan, Mapping[str, Sequence[str]] | DiscoveryError] = {}

    def once(scan: TemplateScan) -> Mapping[str, Sequence[str]]:
        if scan not in found:
            try:
                found[scan] = sample(scan)
            except DiscoveryError as exc:
                found[scan] = exc
        pages = found[scan]
        if isinstance(pages, DiscoveryError):
            raise pages
        return pages

    return once


# -- budget file -> targets -----------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One page (its absolute URL; pages measured together: their URLs) or flow of a
    budget file, with what it is measured on and checked against."""

    page: str | tuple[str, ...] | Flow
    devices: tuple[str, ...]
    locations: tuple[str, ...]
    config: dict[str, Any] | None
    #: The page's (else the file's) runs; None: the face's default.
    runs: int | None
    checks: list[Check] = field(default_factory=list)
    resources: list[ResourceLimit] = field(default_factory=list)
    #: The line of the budget file annotations of this target's checks point at: the
    #: page's limit on the metric (None) or, for a flow, the line naming its flow file.
    flow_file: str | None = None
    #: A scan template's target: the template, and the scan that finds its pages (then
    #: ``page`` is the scan's start URL).
    template: str | None = None
    scan: TemplateScan | None = None
    #: Measured on each of these connections, each replacing the config's (a target of
    #: its own per connection: :func:`connection_targets`); empty: the config's.
    connections: tuple[str, ...] = ()


def parse_connections(value: str | Sequence[str], where: str) -> tuple[str, ...]:
    """``value`` (one connection id or several) as a :attr:`Target.connections`, repeats
    dropped; :class:`~pagelab.InvalidInputError` naming ``where`` for an unknown id."""
    from pagelab.models import Connection, unknown_value

    chosen = tuple(dict.fromkeys([value] if isinstance(value, str) else list(value)))
    known = [c.value for c in Connection]
    for connection in chosen:
        if connection not in known:
            raise InvalidInputError(f"{where}: {unknown_value(connection, known)}")
    if not chosen:
        raise InvalidInputError(f"{where}: expected a connection id or a list of them")
    return chosen


def connection_targets(target: Target) -> list[Target]:
    """``target`` as one target per connection of its :attr:`~Target.connections` (each
    in its config), or itself when it names none."""
    if not target.connections:
        return [target]
    return [replace(target, config={**(target.config or {}), "connection": connection},
                    connections=()) for connection in target.connections]


def target_checks(target: Target, device: str, location: str
                  ) -> tuple[tuple[str, str, str] | None, list[Check], list[ResourceLimit]]:
    """What ``target`` checks on one device and location: its page cell (None for a flow,
    whose checks name it, and for a template, checked pooled over its sampled pages), the
    checks and the resource limits."""
    if target.template is not None:
        return None, [c for c in target.checks if c.matches(
            str(target.page), device, location, template=target.template)], []
    if isinstance(target.page, Flow):
        return None, list(target.checks), []
    cell = (str(target.page), device, location)
    return (cell, [c for c in target.checks if c.matches(*cell)],
            [r for r in target.resources if r.matches(*cell)])


def plan_targets(budget_file: BudgetFile, base_url: str | None, *, source: str | Path,
                 base_url_option: str) -> list[Target]:
    """The pages (paths with ``*`` only match pages measured elsewhere), then the flows,
    of ``budget_file``; InvalidInputError for a relative URL without a base URL or a file
    with nothing to measure."""
    pages = [p for p in budget_file.pages if "*" not in p.url]
    if not pages and not budget_file.flows and not budget_file.templates:
        raise InvalidInputError(
            f"{source}: no page to measure: paths with '*' only match pages measured "
            "elsewhere; name pages (pages: [{url: ...}], ci.collect.url, or a budget.json "
            "path without '*')")
    checks, resources = budget_file.checks(base_url), budget_file.resource_limits(base_url)
    targets = []
    for page in pages:
        url = budget_file.page_url(page, base_url)
        if "://" not in url:
            raise InvalidInputError(f"{source}: page {page.url!r} is relative: set base_url "
                                    f"in the file or {base_url_option}")
        targets.append(Target(
            url, tuple(d.value for d in page.devices or budget_file.devices),
            tuple(loc.value for loc in page.locations or budget_file.locations),
            page.config if page.config is not None else budget_file.config,
            page.runs or budget_file.runs, checks, resources,
            connections=_connections(page.connections or budget_file.connections)))
    return [*targets, *(
        Target(flow.flow, tuple(d.value for d in flow.devices or budget_file.devices),
               tuple(loc.value for loc in flow.locations or budget_file.locations),
               flow.config if flow.config is not None else budget_file.config,
               flow.runs or budget_file.runs, budget_file.flow_checks(flow),
               flow_file=flow.file,
               connections=_connections(flow.connections or budget_file.connections))
        for flow in budget_file.flows), *_template_targets(budget_file, base_url, source,
                                                           base_url_option)]


def _connections(chosen: Sequence[Any] | None) -> tuple[str, ...]:
    """A budget file's ``connections`` (validated ids) as :attr:`Target.connections`."""
    return tuple(dict.fromkeys(str(c.value) for c in chosen or ()))


def _template_targets(budget_file: BudgetFile, base_url: str | None, source: str | Path,
                      base_url_option: str) -> list[Target]:
    """A target per template of the file's scan, measured on the file's devices and
    locations (every template on the same ones: their figures stay comparable)."""
    start = budget_file.scan_url(base_url)
    if start is None or budget_file.scan is None:
        return []
    if "://" not in start:
        raise InvalidInputError(f"{source}: scan.url {budget_file.scan.url!r} is relative: "
                                f"set base_url in the file or {base_url_option}")
    options = tuple((name, tuple(value) if isinstance(value, list) else value)
                    for name, value in budget_file.scan.options().items())
    scan = TemplateScan(start, tuple(budget_file.templates), options)
    return [Target(start, tuple(d.value for d in budget_file.devices),
                   tuple(loc.value for loc in budget_file.locations), budget_file.config,
                   budget_file.runs, budget_file.template_checks(name), template=name,
                   scan=scan, connections=_connections(budget_file.connections))
            for name in budget_file.templates]


def source_text(path: str | Path) -> str:
    """A budget file's text for locating its lines ("" when it cannot be read)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def source_line(text: str, target: Target, record: Mapping[str, Any]) -> int:
    """The line of the budget file a check record of ``target`` is annotated on."""
    if target.flow_file is None:
        return budget_source_line(text, record["url"], record["metric"])
    return next((n for n, row in enumerate(text.splitlines(), 1) if target.flow_file in row),
                1)


def keyword_limits(keywords: Mapping[str, Any], where: str,
                   ) -> tuple[list[Check], list[ResourceLimit]]:
    """Limits given as keywords (``largest_contentful_paint=2500``, ``resource_size=...``;
    ``flow=`` and ``step=`` name the user flow's step the metric limits apply to) as
    checks and resource limits."""
    limits = dict(keywords)
    # A user flow's step (and flow) the limits apply to: names, not metrics.
    scope = {key: limits.pop(key) for key in ("flow", "step") if key in limits}
    for key, value in scope.items():
        if not isinstance(value, str) or not value:
            raise InvalidInputError(f"{where}: {key}= takes a {key}'s name, got {value!r}")
    metrics, resources = resource_limits(limits, where=where)
    if scope and resources:
        raise InvalidInputError(f"{where}: resource budgets apply to pages, not to a flow's "
                                "step")
    return checks_from_mapping(metrics, where=where, **scope), resources


# -- measuring -----------------------------------------------------------------------------


def _engine_failed(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["engine_failure"].fillna(False).astype(bool)]


def _first_engine_failure(frame: pd.DataFrame) -> pd.Series | None:
    """The row of the first run the engine failed, if any."""
    if "engine_failure" not in frame.columns:
        return None
    engine = _engine_failed(frame)
    return None if engine.empty else engine.iloc[0]


def session_build(build: BuildInput = None) -> Build | None:
    """The build a check measures, resolved once per check (``pagelab check`` run, pytest
    session) by the one rule, git in the working directory last (docs/history.md, "Build
    context")."""
    return resolve_build(build, git=True)


def matrix_measure(measure: Callable[..., Any], runner: Any,
                   progress: Any = False, build: Build | None = None) -> MeasureMatrix:
    """``measure`` (``pagelab.measure``, given by the face) on ``runner`` as a
    :data:`MeasureMatrix`, every run measuring ``build`` (the face's
    :func:`session_build`)."""

    def run(page: Sequence[str] | Flow, devices: Sequence[str], locations: Sequence[str],
            config: Mapping[str, Any] | None, runs: int) -> pd.DataFrame:
        frame: pd.DataFrame = measure(
            page if isinstance(page, Flow) else list(page), devices=list(devices),
            locations=list(locations), runs=runs,
            config=dict(config) if config is not None else None, runner=runner,
            progress=progress, build=build).frame
        return frame

    return run


def measure_target(measure: MeasureMatrix, target: Target, runs: int | GateRule, *,
                   devices: Sequence[str] | None = None,
                   locations: Sequence[str] | None = None, baseline: Baseline | None = None,
                   limits: Mapping[str, RegressionLimit] | None = None,
                   keeps_baseline: bool = False, sample: SampleTemplates | None = None,
                   ) -> tuple[pd.DataFrame, list[str]]:
    """A target's runs on its devices and locations (or the given ones): a flow's with
    :func:`measure_flow`, a page's with :func:`measure_cells` or, for ``auto``,
    :func:`measure_auto` on the checks of its cells, a scan template's sampled pages (found
    by ``sample``) with :func:`measure_cells` and a ``template`` column; the frame and the
    notes (where ``auto`` stopped, a template the scan did not find). A target of several
    connections is measured one connection after the other (:func:`connection_targets`)."""
    if target.connections:
        import pandas as pd

        parts = [measure_target(measure, one, runs, devices=devices, locations=locations,
                                baseline=baseline, limits=limits,
                                keeps_baseline=keeps_baseline, sample=sample)
                 for one in connection_targets(target)]
        return (pd.concat([frame for frame, _ in parts], ignore_index=True),
                [note for _, notes in parts for note in notes])
    chosen = (list(devices or target.devices), list(locations or target.locations))
    fixed = isinstance(target.page, Flow) or target.template is not None
    if fixed and not isinstance(runs, int):
        what = "the flow" if isinstance(target.page, Flow) else "the templates"
        raise InvalidInputError(f"runs=auto measures pages only: give {what} a number of "
                                "runs")
    if isinstance(target.page, Flow) and isinstance(runs, int):
        return measure_flow(measure, target.page, *chosen, target.config, runs), []
    urls = target_urls(target, sample)
    if target.template is not None and isinstance(runs, int):
        return _measure_template(measure, target, urls, chosen, runs)
    if isinstance(runs, int):
        return measure_cells(measure, urls, *chosen, target.config, runs), []
    checks = [c for c in target.checks if any(
        c.matches(u, d, loc) for u in urls for d in chosen[0] for loc in chosen[1])]
    return measure_auto(*_measure_pages(measure, urls, *chosen, target.config), runs,
                        checks=checks, baseline=baseline, limits=limits,
                        keeps_baseline=keeps_baseline)


def target_urls(target: Target, sample: SampleTemplates | None = None) -> list[str]:
    """A page target's URLs (none for a flow); a template target's sampled pages, found by
    ``sample`` (none without it, or when the scan found no page of the template)."""
    if isinstance(target.page, Flow):
        return []
    if target.template is not None:
        if sample is None or target.scan is None:
            return []
        return list(sample(target.scan).get(target.template, ()))
    return [target.page] if isinstance(target.page, str) else list(target.page)


def _measure_template(measure: MeasureMatrix, target: Target, urls: Sequence[str],
                      chosen: tuple[list[str], list[str]], runs: int,
                      ) -> tuple[pd.DataFrame, list[str]]:
    """A template's sampled pages measured (none: no run, and a note; its checks then
    fail saying so), with the ``template`` column its checks select its runs by."""
    from pagelab.frames import to_frame, with_template

    notes = [] if urls else [
        f"template {target.template}: the scan of {target.page} found no page of it"]
    frame = measure_cells(measure, urls, *chosen, target.config, runs) if urls \
        else to_frame([])
    return with_template(frame, str(target.template)), notes



def measure_cells(measure: MeasureMatrix, urls: Sequence[str], devices: Sequence[str],
                  locations: Sequence[str], config: Mapping[str, Any] | None, runs: int,
                  ) -> pd.DataFrame:
    """``runs`` runs of every URL x device x location; a run the engine failed (crash,
    timeout) is measured once more, and a second engine failure raises
    :class:`EngineFailureError`: the retry rule of every face."""
    import pandas as pd

    frame = measure(list(urls), list(devices), list(locations), config, runs)
    failed = _engine_failed(frame).index
    retried: list[pd.DataFrame] = []
    for label in failed:
        row = frame.loc[label]
        url, device, location = str(row["url"]), str(row["device"]), str(row["location"])
        again = measure([url], [device], [location], config, 1)
        if not _engine_failed(again).empty:
            raise EngineFailureError(
                f"the engine failed twice on {device}/{location} {url}: "
                f"{again['error_code'].iloc[0]} (not a budget miss; the page was not measured)"
            )
        again["run"] = pd.array([row["run"]], dtype="Int64")
        retried.append(again)
    if retried:
        frame = pd.concat([frame.drop(index=failed), *retried], ignore_index=True)
    return frame.sort_values("run", kind="stable").reset_index(drop=True)


def measure_auto(measure_some: Measure, cells: Sequence[CellKey], rule: GateRule, *,
                 checks: Sequence[Check] = (), baseline: Baseline | None = None,
                 limits: Mapping[str, RegressionLimit] | None = None,
                 keeps_baseline: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """``runs=auto``, the one driver of adaptive runs (``pagelab.measure``, ``pagelab
    check``, the plugin): ``cells``' runs, measured by ``measure_some``, until ``checks``
    and the baseline comparison are decided; the frame and where each cell stopped."""
    auto = AutoRuns(rule, baseline, (limits or {}) if baseline is not None else {}, checks,
                    keeps_baseline=keeps_baseline)
    return auto.run(measure_some, list(cells)), auto.notes()


def _measure_pages(measure: MeasureMatrix, urls: Sequence[str], devices: Sequence[str],
                   locations: Sequence[str], config: Mapping[str, Any] | None,
                   ) -> tuple[Measure, list[CellKey]]:
    """The page cells of URLs x devices x locations and how ``auto`` measures some of them
    (as :func:`measure_cells` does: an engine failure measured once more)."""
    import pandas as pd

    def measure_some(cells: Sequence[CellKey], count: int) -> pd.DataFrame:
        if list(cells) == every_cell:
            return measure_cells(measure, urls, devices, locations, config, count)
        return pd.concat([measure_cells(measure, [str(u)], [str(d)], [str(loc)], config, count)
                          for u, d, loc, *_ in cells], ignore_index=True)

    # The connection is the config's (None: each device's default), as in the frame.
    connection = (config or {}).get("connection")
    every_cell = [cell_key((u, d, loc, connection))
                  for u in urls for d in devices for loc in locations]
    return measure_some, every_cell


def measure_flow(measure: MeasureMatrix, flow: Flow, devices: Sequence[str],
                 locations: Sequence[str], config: Mapping[str, Any] | None, runs: int,
                 ) -> pd.DataFrame:
    """``runs`` runs of ``flow`` per device x location, a row per step; an engine failure
    raises :class:`EngineFailureError` (a flow is not measured again)."""
    frame = measure(flow, list(devices), list(locations), config, runs)
    row = _first_engine_failure(frame)
    if row is not None:
        raise EngineFailureError(
            f"the engine failed on {row['device']}/{row['location']} flow {flow.name!r} "
            f"step {row['step']!r}: {row['error_code']} (not a budget miss)")
    return frame


def replayed_target(frame: pd.DataFrame, target: Target, devices: Sequence[str],
                    locations: Sequence[str], source: str) -> pd.DataFrame:
    """``target``'s recorded runs on the devices and locations: a flow's
    (:func:`replayed_flow`), a template's (:func:`replayed_template`), else its pages'
    (:func:`replayed_cells`). When the target's config names a connection, only the runs
    on that connection count (as a measured target runs on it); a target of several
    connections is each of its :func:`connection_targets`."""
    if target.connections:
        import pandas as pd

        return pd.concat([replayed_target(frame, one, devices, locations, source)
                          for one in connection_targets(target)], ignore_index=True)
    connection = (target.config or {}).get("connection")
    if connection is not None:
        frame = frame[frame["connection"].astype(object) == str(connection)]
        source = f"{source} on connection {connection}"
    if isinstance(target.page, Flow):
        return replayed_flow(frame, target.page, devices, locations, source)
    if target.template is not None:
        return replayed_template(frame, target.template, devices, locations, source)
    return replayed_cells(frame, target_urls(target), devices, locations, source)


def replayed_cells(frame: pd.DataFrame, urls: Sequence[str], devices: Sequence[str],
                   locations: Sequence[str], source: str) -> pd.DataFrame:
    """The runs of every URL x device x location in a replayed frame; InvalidInputError for
    a cell without runs, :class:`EngineFailureError` for a recorded engine failure (it says
    nothing about the page; nothing to retry)."""
    chosen = frame[frame["url"].astype(str).isin(list(urls))
                   & frame["device"].astype(str).isin(list(devices))
                   & frame["location"].astype(str).isin(list(locations))]
    present = set(zip(chosen["url"].astype(str), chosen["device"].astype(str),
                      chosen["location"].astype(str), strict=True))
    for url in urls:
        for device in devices:
            for location in locations:
                if (url, device, location) not in present:
                    raise InvalidInputError(
                        f"no recorded runs for {device}/{location} {url} in {source}")
    return _no_recorded_failure(chosen, source)


def replayed_template(frame: pd.DataFrame, template: str, devices: Sequence[str],
                      locations: Sequence[str], source: str) -> pd.DataFrame:
    """A scan template's recorded runs (its ``template`` column) on the devices and
    locations: none is no error (its checks fail saying so); a recorded engine failure is
    :class:`EngineFailureError`."""
    chosen = frame.iloc[:0]
    if "template" in frame.columns:
        chosen = frame[(frame["template"].astype(object) == template)
                       & frame["device"].astype(str).isin(list(devices))
                       & frame["location"].astype(str).isin(list(locations))]
    return _no_recorded_failure(chosen, source)


def _no_recorded_failure(chosen: pd.DataFrame, source: str) -> pd.DataFrame:
    """The replayed runs, renumbered; :class:`EngineFailureError` for a recorded engine
    failure (it says nothing about the page; nothing to retry)."""
    row = _first_engine_failure(chosen)
    if row is not None:
        raise EngineFailureError(f"the engine failed on {row['device']}/{row['location']} "
                                 f"{row['url']}: {row['error_code']} (recorded in {source})")
    return chosen.reset_index(drop=True)


def replayed_flow(frame: pd.DataFrame, flow: Flow, devices: Sequence[str],
                  locations: Sequence[str], source: str) -> pd.DataFrame:
    """A flow's recorded steps on the devices and locations; InvalidInputError for none."""
    steps = frame[frame["flow"].astype(object) == flow.name] if "flow" in frame.columns \
        else frame[:0]
    steps = steps[steps["device"].astype(str).isin(list(devices))
                  & steps["location"].astype(str).isin(list(locations))]
    if steps.empty:
        raise InvalidInputError(f"no recorded runs of flow {flow.name!r} in {source}")
    return steps.reset_index(drop=True)


# -- checking ------------------------------------------------------------------------------


def failure_lines(frame: pd.DataFrame, only_cell: tuple[str, ...] | None = None) -> list[str]:
    """``page failed to load: <cell>: <codes>`` per cell whose page failed in some run
    (``only_cell``: that URL, device and location's only)."""
    lines = []
    for cell, codes in run_failures(frame).items():
        if only_cell is None or cell[:3] == only_cell:
            counted = ", ".join(f"{c} x{codes.count(c)}" if codes.count(c) > 1 else c
                                for c in sorted(set(codes)))
            lines.append(f"page failed to load: {cell_label(cell)}: {counted}")
    return lines


@dataclass
class FrameCheck:
    """What checking one frame found: ``(kind, result)`` pairs ("budget" for limits,
    "baseline" for the regression gate), pages that failed, the baseline's warnings."""

    results: list[tuple[str, BudgetResult]]
    failures: list[str]
    warnings: list[str]


def check_frame(frame: pd.DataFrame, checks: Sequence[Check], *, aggregation: str,
                baseline: Baseline | None = None,
                limits: Mapping[str, RegressionLimit] | None = None,
                rule: GateRule | None = None, adaptive: bool = False,
                only_cell: tuple[str, ...] | None = None) -> FrameCheck:
    """Evaluate ``checks`` and the baseline comparison on ``frame``."""
    results = [("budget", r) for r in evaluate(checks, frame, aggregation=aggregation)]
    warnings: list[str] = []
    if baseline is not None:
        comparison = compare_baseline(baseline, frame, limits or {}, rule=rule,
                                      adaptive=adaptive)
        results.extend(("baseline", r) for r in comparison.results)
        warnings = list(comparison.warnings)
    if only_cell is not None:
        results = [(kind, r) for kind, r in results
                   if (r.url, r.device, r.location) == only_cell]
    return FrameCheck(results, failure_lines(frame, only_cell), warnings)


def check_resources(frame: pd.DataFrame, limits: Sequence[ResourceLimit],
                    read_lhr: LhrReader | None, *, aggregation: str,
                    replay: str | None = None) -> tuple[list[BudgetResult], list[str]]:
    """Resource budgets on the runs' LHRs (``read_lhr``: the runner's; replayed runs'
    from their report links): the results, or the one line saying why they cannot be."""
    if not limits:
        return [], []
    read = read_lhr if replay is None else replayed_lhrs(frame)
    if read is None:
        return [], [f"resource budgets (resource_size, resource_count, third_party_*) need "
                    f"the runs' LHRs: the runs replayed from {replay} have no report_url to "
                    "read them from"]
    try:
        return evaluate_resources(limits, frame, read, aggregation=aggregation), []
    except InvalidInputError as exc:
        return [], [str(exc)]


def lhci_record(result: AssertionResult) -> dict[str, Any]:
    """A Lighthouse CI assertion as a check record (tables, CI reports, results JSON)."""
    cell = dict(zip(CELL, cell_key(result.cell or (result.url,)), strict=True))
    return {**result.to_lhci(), "kind": "lhci", "label": result.label,
            "status": result.status, "metric": f"{result.assertion} {result.name}", **cell,
            "message": "\n".join(format_lhci([result])[2:]).strip()}


def check_lhci(options: Mapping[str, Any], frame: pd.DataFrame, read_lhr: LhrReader | None,
               ) -> tuple[list[dict[str, Any]], list[str]]:
    """A lighthouserc's assertions on the runs' LHRs as check records
    (:func:`lhci_record`), and the error-level misses as ``lhci assert`` prints them."""
    results = assert_runs(dict(options), frame, read_lhr=read_lhr)
    errors = [r for r in results if not r.passed and r.level == "error"]
    return [lhci_record(r) for r in results], format_lhci(errors) if errors else []
