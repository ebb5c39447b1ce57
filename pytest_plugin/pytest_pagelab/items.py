"""Budget files as tests: one item per page URL x device x location, and per flow x device
x location.

Files are collected when named like ``budgets.yaml`` / ``*.budgets.yaml`` (``.yml``,
``.json``; the ini ``pagelab_budget_files`` changes the patterns) or given with
``--pagelab-budgets`` (any name, e.g. ``lighthouserc.json`` or ``budget.json``).
"""

from __future__ import annotations

import fnmatch
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._errors import EngineFailure
from ._outcome import RecordedOutcome, locate_checks, record_outcome
from ._state import STATE_KEY, PagelabState

if TYPE_CHECKING:
    from _pytest._code.code import ExceptionInfo, TerminalRepr

    from pagelab.budgets import BudgetFile, Check

# The collection of budget files, used by the plugin's hooks: nothing here is public.
__all__: list[str] = []

#: File names collected as budget files unless the ini sets ``pagelab_budget_files``.
DEFAULT_PATTERNS = (
    "budgets.yaml", "budgets.yml", "budgets.json",
    "*.budgets.yaml", "*.budgets.yml", "*.budgets.json",
)


class BudgetFileError(Exception):
    """A budget file that cannot be read or mapped: shown as one line, not a traceback."""


class BudgetMiss(Exception):
    """An error-level budget was missed or the page failed to load: one line per miss."""


def _patterns(config: pytest.Config) -> list[str]:
    try:
        patterns = list(config.getini("pagelab_budget_files"))
    except ValueError:
        patterns = []
    return patterns or list(DEFAULT_PATTERNS)


def is_budget_file(state: PagelabState, path: Path) -> bool:
    if path.resolve() in state.budget_paths():
        return True
    return any(fnmatch.fnmatchcase(path.name, p) for p in _patterns(state.config))


def collect_explicit_files(session: pytest.Session, items: list[pytest.Item]) -> list[pytest.Item]:
    """Items of ``--pagelab-budgets`` files that the normal collection did not reach."""
    state: PagelabState = session.config.stash[STATE_KEY]
    seen = {Path(item.path).resolve() for item in items if isinstance(item, BudgetItem)}
    added: list[pytest.Item] = []
    for path in state.budget_paths():
        if path in seen:
            continue
        if not path.is_file():
            raise pytest.UsageError(f"--pagelab-budgets: {path}: no such file")
        collector = BudgetFileCollector.from_parent(session, path=path)
        added.extend(_collect_items(collector))
    return added


def _collect_items(collector: BudgetFileCollector) -> Iterator[pytest.Item]:
    try:
        nodes = list(collector.collect())
    except BudgetFileError as exc:
        raise pytest.UsageError(str(exc)) from exc
    for node in nodes:
        if isinstance(node, pytest.Item):
            yield node


class BudgetFileCollector(pytest.File):
    """A budget file: pagelab YAML/JSON, Lighthouse CI assertions or budget.json."""

    def _budget_file(self) -> BudgetFile:
        from pagelab import InvalidInputError
        from pagelab.budgets import load_budgets

        try:
            return load_budgets(self.path)
        except InvalidInputError as exc:
            raise BudgetFileError(str(exc)) from exc

    def collect(self) -> Iterable[pytest.Item]:
        state: PagelabState = self.config.stash[STATE_KEY]
        budget_file = self._budget_file()
        for note in budget_file.notes:
            # What reading a lighthouserc decided (nearest device / connection profile).
            warnings.warn(UserWarning(f"{self.path.name}: {note}"), stacklevel=2)
        base_url = state.setting("base_url", budget_file.base_url)
        checks = budget_file.checks(base_url)
        resources = budget_file.resource_limits(base_url)
        pages = [p for p in budget_file.pages if "*" not in p.url]
        yield from self._flow_items(budget_file)
        if not pages and budget_file.flows:
            return
        if not pages:
            raise BudgetFileError(
                f"{self.path}: no page to measure: paths with '*' only match pages measured "
                "elsewhere; name pages (pages: [{url: ...}], ci.collect.url, or a budget.json "
                "path without '*')"
            )
        for page in pages:
            url = budget_file.page_url(page, base_url)
            if "://" not in url:
                raise BudgetFileError(
                    f"{self.path}: page {page.url!r} is relative: set base_url in the file "
                    "or --pagelab-base-url"
                )
            for device in page.devices or budget_file.devices:
                for location in page.locations or budget_file.locations:
                    yield BudgetItem.from_parent(
                        self,
                        name=f"{url}[{device.value}-{location.value}]",
                        url=url,
                        device=device.value,
                        location=location.value,
                        checks=checks,
                        resources=resources,
                        measure_config=(
                            page.config if page.config is not None else budget_file.config
                        ),
                        runs=page.runs or budget_file.runs,
                        aggregation=budget_file.aggregation,
                        lhci=budget_file.lhci,
                    )

    def _flow_items(self, budget_file: BudgetFile) -> Iterator[pytest.Item]:
        """One item per flow x device x location, with the flow's checks."""
        for flow_budget in budget_file.flows:
            flow = flow_budget.flow
            checks = budget_file.flow_checks(flow_budget)
            for device in flow_budget.devices or budget_file.devices:
                for location in flow_budget.locations or budget_file.locations:
                    yield FlowBudgetItem.from_parent(
                        self,
                        name=f"flow {flow.name}[{device.value}-{location.value}]",
                        flow=flow,
                        flow_file=flow_budget.file,
                        device=device.value,
                        location=location.value,
                        checks=checks,
                        measure_config=(flow_budget.config if flow_budget.config is not None
                                        else budget_file.config),
                        runs=flow_budget.runs or budget_file.runs,
                        aggregation=budget_file.aggregation,
                    )

    def repr_failure(  # type: ignore[override]
        self, excinfo: ExceptionInfo[BaseException]
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, BudgetFileError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class _CheckItem(pytest.Item):
    """An item of a budget file: a miss or an engine failure is shown as its lines."""

    def repr_failure(  # type: ignore[override]
        self, excinfo: ExceptionInfo[BaseException]
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, BudgetMiss | EngineFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class BudgetItem(_CheckItem):
    """One page on one device from one location, checked against its file's budgets."""

    def __init__(
        self,
        *,
        url: str,
        device: str,
        location: str,
        checks: list[Check],
        measure_config: dict[str, Any] | None,
        runs: int | None,
        aggregation: str | None,
        lhci: dict[str, Any] | None = None,
        resources: Sequence[Any] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        #: (url, device, location) this item measures.
        self.cell = (url, device, location)
        self.checks = checks
        #: The file's byte and request limits per resource type (ResourceLimit).
        self.resources = list(resources)
        self.measure_config = measure_config
        self.file_runs = runs
        self.file_aggregation = aggregation
        #: A lighthouserc's ``ci.assert`` options, asserted on the runs' LHRs.
        self.lhci = lhci

    def runtest(self) -> None:
        state: PagelabState = self.config.stash[STATE_KEY]
        cell = self.cell
        url, device, location = cell
        runs = state.runs(self.file_runs)
        checks = [c for c in self.checks if c.matches(*cell)]
        outcome = RecordedOutcome()
        frame = state.measure([url], [device], [location], self.measure_config, runs, checks,
                              outcome)
        failures = state.check(
            frame, checks, outcome, aggregation=state.aggregation(self.file_aggregation),
            only_cell=cell, adaptive=not isinstance(runs, int),
        )
        failures += state.check_resources(
            frame, [r for r in self.resources if r.matches(*cell)], outcome,
            aggregation=self.file_aggregation)
        if self.lhci is not None:
            failures += self._assert_lhci(state, frame, outcome)
        self._locate(outcome)
        record_outcome(self, outcome)
        if failures:
            raise BudgetMiss("\n".join(failures))

    def _locate(self, outcome: RecordedOutcome) -> None:
        # Annotations point at the line of the page's (else the file's) limit on the metric.
        from pagelab.budgets import budget_source_line

        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        locate_checks(self, outcome,
                      lambda check: budget_source_line(text, check["url"], check["metric"]))

    def _assert_lhci(self, state: PagelabState, frame: Any, outcome: RecordedOutcome
                     ) -> list[str]:
        """Lighthouse CI's verdicts on this cell's LHRs: error-level misses as ``lhci
        assert`` prints them, warn-level ones as warnings."""
        from pagelab import InvalidInputError
        from pagelab.budgets import assert_runs, format_lhci

        from ._errors import BudgetWarning

        assert self.lhci is not None
        read_lhr = state.runner().lhr if state.replay() is None else None
        try:
            results = assert_runs(self.lhci, frame, read_lhr=read_lhr)
        except InvalidInputError as exc:
            raise BudgetMiss(str(exc)) from exc
        for r in results:
            url, device, location, connection = (r.cell or (r.url, None, None, None))[:4]
            outcome.checks.append({
                **r.to_lhci(), "kind": "lhci", "label": r.label,
                "metric": f"{r.assertion} {r.name}",
                "device": device, "location": location, "connection": connection,
                "url": url, "message": "\n".join(format_lhci([r])[2:]).strip(),
            })
        for r in results:
            if not r.passed and r.level == "warn":
                warnings.warn(BudgetWarning("\n".join(format_lhci([r])[2:]).strip()),
                              stacklevel=2)
        errors = [r for r in results if not r.passed and r.level == "error"]
        return format_lhci(errors) if errors else []

    def reportinfo(self) -> tuple[Path, int | None, str]:
        url, device, location = self.cell
        return self.path, None, f"budget: {device}/{location} {url}"


class FlowBudgetItem(_CheckItem):
    """One user flow on one device from one location, checked per step against its budget
    file's limits."""

    def __init__(
        self,
        *,
        flow: Any,
        flow_file: str,
        device: str,
        location: str,
        checks: list[Check],
        measure_config: dict[str, Any] | None,
        runs: int | None,
        aggregation: str | None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.flow = flow
        self.flow_file = flow_file
        #: (device, location) the item measures on (``location`` is pytest's own attribute).
        self.device_location = (device, location)
        self.checks = checks
        self.measure_config = measure_config
        self.file_runs = runs
        self.file_aggregation = aggregation

    def runtest(self) -> None:
        state: PagelabState = self.config.stash[STATE_KEY]
        runs = state.runs(self.file_runs)
        if not isinstance(runs, int):
            raise BudgetMiss("runs=auto measures pages only: give the flow a number of runs")
        outcome = RecordedOutcome()
        device, location = self.device_location
        frame = state.measure_flow(self.flow, [device], [location], self.measure_config, runs)
        failures = state.check(frame, self.checks, outcome,
                               aggregation=state.aggregation(self.file_aggregation))
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        # Annotations point at the line naming the flow file.
        line = next((n for n, row in enumerate(text.splitlines(), 1) if self.flow_file in row),
                    1)
        locate_checks(self, outcome, lambda _: line)
        record_outcome(self, outcome)
        if failures:
            raise BudgetMiss("\n".join(failures))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        device, location = self.device_location
        return self.path, None, f"budget: {device}/{location} flow {self.flow.name}"
