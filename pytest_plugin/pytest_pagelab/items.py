"""Budget files as tests: one item per page URL x device x location, and per flow x device
x location.

Files are collected when named like ``budgets.yaml`` / ``*.budgets.yaml`` (``.yml``,
``.json``; the ini ``pagelab_budget_files`` changes the patterns) or given with
``--pagelab-budgets`` (any name, e.g. ``lighthouserc.json`` or ``budget.json``).
"""

from __future__ import annotations

import fnmatch
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._errors import BudgetWarning, EngineFailure
from ._outcome import RecordedOutcome, locate_checks, record_outcome
from ._state import STATE_KEY, PagelabState

if TYPE_CHECKING:
    from _pytest._code.code import ExceptionInfo, TerminalRepr

    from pagelab.budgets import Target

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


def is_budget_file(state: PagelabState, path: Path) -> bool:
    if path.resolve() in state.budget_paths():
        return True
    patterns = state.config.getini("pagelab_budget_files") or DEFAULT_PATTERNS
    return any(fnmatch.fnmatchcase(path.name, p) for p in patterns)


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
        try:
            added.extend(n for n in collector.collect() if isinstance(n, pytest.Item))
        except BudgetFileError as exc:
            raise pytest.UsageError(str(exc)) from exc
    return added


class BudgetFileCollector(pytest.File):
    """A budget file: pagelab YAML/JSON, Lighthouse CI assertions or budget.json."""

    def collect(self) -> Iterable[pytest.Item]:
        from pagelab import Flow, InvalidInputError
        from pagelab.budgets import load_budgets, plan_targets

        state: PagelabState = self.config.stash[STATE_KEY]
        try:
            budget_file = load_budgets(self.path)
            targets = plan_targets(budget_file, state.setting("base_url", budget_file.base_url),
                                   source=self.path, base_url_option="--pagelab-base-url")
        except InvalidInputError as exc:
            raise BudgetFileError(str(exc)) from exc
        for note in budget_file.notes:
            # What reading a lighthouserc decided (nearest device / connection profile).
            warnings.warn(UserWarning(f"{self.path.name}: {note}"), stacklevel=2)
        # The flows' items first, then the pages', then the scan templates'.
        for target in sorted(targets, key=lambda t: not isinstance(t.page, Flow)):
            page = _shown(target)
            for device in target.devices:
                for location in target.locations:
                    yield BudgetItem.from_parent(
                        self, name=f"{page}[{device}-{location}]", target=target,
                        device=device, location=location, aggregation=budget_file.aggregation,
                        lhci=budget_file.lhci)

    def repr_failure(  # type: ignore[override]
        self, excinfo: ExceptionInfo[BaseException]
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, BudgetFileError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class BudgetItem(pytest.Item):
    """One page or user flow on one device from one location, checked against its budget
    file's limits (a flow's per step): a miss or an engine failure is shown as its lines."""

    def __init__(self, *, target: Target, device: str, location: str,
                 aggregation: str | None, lhci: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target = target
        #: (device, location) the item measures on (``location`` is pytest's own attribute).
        self.device_location = (device, location)
        self.file_aggregation = aggregation
        #: A lighthouserc's ``ci.assert`` options, asserted on the runs' LHRs.
        self.lhci = lhci

    def runtest(self) -> None:
        from pagelab import Flow
        from pagelab.budgets import source_line, source_text, target_checks

        state: PagelabState = self.config.stash[STATE_KEY]
        target, outcome = self.target, RecordedOutcome()
        runs = state.runs(target.runs)
        if isinstance(target.page, Flow) and not isinstance(runs, int):
            raise BudgetMiss("runs=auto measures pages only: give the flow a number of runs")
        device, location = self.device_location
        cell, checks, resources = target_checks(target, device, location)
        frame, failures = state.check(target, runs, outcome, checks, resources, cell=cell,
                                      devices=[device], locations=[location],
                                      aggregation=self.file_aggregation)
        if self.lhci is not None:
            failures += self._assert_lhci(state, frame, outcome)
        # Annotations point at the line of the page's (else the file's) limit on the
        # metric, or at the line naming the flow file.
        text = source_text(self.path)
        locate_checks(self, outcome, lambda check: source_line(text, target, check))
        record_outcome(self, outcome)
        if failures:
            raise BudgetMiss("\n".join(failures))

    def _assert_lhci(self, state: PagelabState, frame: Any, outcome: RecordedOutcome
                     ) -> list[str]:
        """Lighthouse CI's verdicts on this cell's LHRs: error-level misses as ``lhci
        assert`` prints them, warn-level ones as warnings."""
        from pagelab import InvalidInputError
        from pagelab.budgets import check_lhci

        assert self.lhci is not None
        try:
            records, errors = check_lhci(self.lhci, frame, None if state.replay() is not None
                                         else state.runner().lhr)
        except InvalidInputError as exc:
            raise BudgetMiss(str(exc)) from exc
        outcome.checks.extend(records)
        for record in records:
            if record["status"] == "warn":
                warnings.warn(BudgetWarning(record["message"]), stacklevel=2)
        return errors

    def repr_failure(  # type: ignore[override]
        self, excinfo: ExceptionInfo[BaseException]
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, BudgetMiss | EngineFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        device, location = self.device_location
        return self.path, None, f"budget: {device}/{location} {_shown(self.target)}"


def _shown(target: Target) -> str:
    """How an item names its target: the page, ``flow NAME`` or ``template /product/*``."""
    from pagelab import Flow

    if isinstance(target.page, Flow):
        return f"flow {target.page.name}"
    if target.template is not None:
        return f"template {target.template}"
    return target.page if isinstance(target.page, str) else " ".join(target.page)
