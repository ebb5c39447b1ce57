"""The pytest11 entry point ``pagelab``: options, the ``budget`` marker, the ``perf`` fixture,
budget files as tests, reporting (terminal table, JUnit properties, JSON results, baseline).

``-p no:pagelab`` disables it. pagelab itself is imported only when something is measured or
checked. Under pytest-xdist each worker measures its own tests (the engine's machine-wide
lock keeps runs from overlapping) and sends what it measured and checked on its test reports;
only the controller writes the results file and the baseline, so nothing is clobbered.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pagelab import Results

from ._state import (
    SETTINGS,
    STATE_KEY,
    BudgetWarning,
    EngineFailure,
    PagelabState,
    RecordedOutcome,
)
from .items import BudgetFileCollector, collect_explicit_files, is_budget_file

__all__ = ["BudgetWarning", "Perf", "perf", "record_outcome"]

_OUTCOME_KEY = pytest.StashKey[RecordedOutcome]()
_MARKER_HELP = (
    "budget(**limits): performance budget checked by perf.measure(), e.g. "
    "budget(largest_contentful_paint=2500, cumulative_layout_shift=0.1, performance_score=90); "
    "times and CLS are maximums, scores minimums; a limit may be {limit, level, aggregation}"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pagelab", "performance budgets (pagelab)")
    for name, text in SETTINGS.items():
        flag = f"--pagelab-{name.replace('_', '-')}"
        if name == "budgets":
            group.addoption(flag, dest=f"pagelab_{name}", action="append", default=None,
                            metavar="PATH", help=text)
        else:
            group.addoption(flag, dest=f"pagelab_{name}", default=None,
                            metavar=name.split("_")[-1].upper(), help=text)
        if name == "budgets":
            parser.addini(f"pagelab_{name}", text, type="linelist", default=[])
        elif name != "api_key":
            parser.addini(f"pagelab_{name}", text, default=None)
    parser.addini("pagelab_budget_files", "file name patterns collected as budget files "
                  "(default budgets.yaml, *.budgets.yaml, .yml and .json alike)",
                  type="linelist", default=[])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", _MARKER_HELP)
    state = PagelabState(config)
    state.validate()
    config.stash[STATE_KEY] = state
    config.pluginmanager.register(_ReportCollector(state), "pagelab-report-collector")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is not None:
        state.close()


def _state(config: pytest.Config) -> PagelabState:
    return config.stash[STATE_KEY]


# -- collection ---------------------------------------------------------------------------


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if is_budget_file(_state(parent.config), file_path):
        collector: pytest.Collector = BudgetFileCollector.from_parent(parent, path=file_path)
        return collector
    return None


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    for item in items:
        marker = item.get_closest_marker("budget")
        if marker is not None:
            _marker_checks(marker, item.nodeid)
    items.extend(collect_explicit_files(session, items))


def _marker_checks(marker: pytest.Mark, nodeid: str) -> list[Any]:
    """The marker's keywords as checks; a bad one is a usage error naming the test."""
    from pagelab import InvalidInputError
    from pagelab.budgets import checks_from_mapping

    where = f"@pytest.mark.budget on {nodeid}"
    if marker.args:
        raise pytest.UsageError(f"{where}: give limits as keywords, e.g. "
                                "budget(largest_contentful_paint=2500)")
    try:
        return checks_from_mapping(marker.kwargs, where=where)
    except InvalidInputError as exc:
        raise pytest.UsageError(str(exc)) from exc


# -- the fixture --------------------------------------------------------------------------


def _as_list(value: str | Sequence[str], what: str) -> list[str]:
    items = [value] if isinstance(value, str) else list(value)
    if not items or not all(isinstance(v, str) and v for v in items):
        raise pytest.UsageError(f"perf.measure: {what} must be a non-empty id or list of ids")
    return items


class Perf:
    """The ``perf`` fixture: measure pages and check the test's ``budget`` marker."""

    def __init__(self, item: pytest.Item, state: PagelabState) -> None:
        self._item = item
        self._state = state

    def measure(
        self,
        url: str | Sequence[str],
        device: str | Sequence[str] = "mobile",
        location: str | Sequence[str] = "us",
        config: Mapping[str, Any] | None = None,
        runs: int | None = None,
    ) -> Results:
        """Measure ``url`` ``runs`` times (default ``--pagelab-runs``, 3) on every device x
        location, check the test's ``@pytest.mark.budget`` on each cell's aggregate (and the
        baseline, with ``--pagelab-compare``), and return the :class:`pagelab.Results`.

        A missed error-level budget or a page that fails to load fails the test with one
        line per miss; a missed warn-level budget is a :class:`BudgetWarning`.
        """
        state = self._state
        urls = _as_list(url, "url")
        devices = _as_list(device, "device")
        locations = _as_list(location, "location")
        count = state.runs(runs)
        marker = self._item.get_closest_marker("budget")
        checks = _marker_checks(marker, self._item.nodeid) if marker is not None else []
        frame = state.measure(urls, devices, locations, config, count)
        outcome = self._item.stash.setdefault(_OUTCOME_KEY, RecordedOutcome())
        failures = state.check(frame, checks, outcome, aggregation=state.aggregation())
        _add_properties(self._item, outcome)
        if failures:
            pytest.fail("\n".join(failures), pytrace=False)
        from pagelab import Results

        return Results.from_frame(frame)


@pytest.fixture
def perf(request: pytest.FixtureRequest) -> Perf:
    """Measure pages and check the ``budget`` marker: ``perf.measure(url, device=...)``."""
    return Perf(request.node, _state(request.config))


def _add_properties(item: pytest.Item, outcome: RecordedOutcome) -> None:
    # JUnit XML <property> elements: one per check, the figures in the value.
    seen = {name for name, _ in item.user_properties}
    for check in outcome.checks:
        name = f"pagelab {check['metric']} {check['device']}/{check['location']} {check['url']}"
        if name in seen:
            continue
        item.user_properties.append((name, f"{check['label']}: {check['message']}"))


def record_outcome(item: pytest.Item, outcome: RecordedOutcome) -> None:
    """Attach a budget item's outcome, as :meth:`Perf.measure` does for a test."""
    item.stash[_OUTCOME_KEY] = outcome
    _add_properties(item, outcome)


# -- reports ------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.when == "call":
        outcome = item.stash.get(_OUTCOME_KEY, None)
        if outcome is not None:
            # A JSON string survives xdist's report serialisation as it is.
            report.pagelab = outcome.dumps()  # type: ignore[attr-defined]
        if call.excinfo is not None and call.excinfo.errisinstance(EngineFailure):
            report.pagelab_engine_failure = True  # type: ignore[attr-defined]
    return report


class _ReportCollector:
    """Gathers what every test measured and checked from its report (on the controller
    under xdist, where the reports of all workers arrive)."""

    def __init__(self, state: PagelabState) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        state = self.state
        data = getattr(report, "pagelab", None)
        if isinstance(data, str):
            parsed = json.loads(data)
            for check in parsed["checks"]:
                state.checks.append({"nodeid": report.nodeid, **check})
            state.run_records.extend(parsed["runs"])
            state.warnings.extend(w for w in parsed["warnings"] if w not in state.warnings)
        if getattr(report, "pagelab_engine_failure", False):
            crash = getattr(report.longrepr, "reprcrash", None)
            message = str(getattr(crash, "message", report.longrepr))
            state.errors.append({"nodeid": report.nodeid,
                                 "message": message.split("EngineFailure: ", 1)[-1]})


def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, tuple[str, Mapping[str, bool]]] | None:
    # An engine failure is the measuring machine's fault: an error, not a missed budget.
    if report.when == "call" and report.failed and getattr(report, "pagelab_engine_failure",
                                                           False):
        return "error", "E", ("ERROR", {"red": True})
    return None


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = _state(config)
    if _is_worker(config):
        return
    results_path = state.setting("results")
    baseline_path = state.setting("save_baseline")
    if not (results_path or baseline_path):
        return
    import pandas as pd

    from pagelab import __version__
    from pagelab.budgets import frame_from_records, save_baseline

    runs = _unique_runs(state.run_records)
    if results_path:
        document = {
            "pagelab": __version__,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "aggregation": state.aggregation(),
            "checks": state.checks,
            "errors": state.errors,
            "baseline_warnings": state.warnings,
            "runs": runs,
        }
        target = Path(results_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    if baseline_path:
        frame = frame_from_records(runs) if runs else pd.DataFrame()
        if not frame.empty:
            save_baseline(frame, baseline_path, aggregation=state.aggregation())


def _unique_runs(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Two tests may measure the same cell; a run is kept once (by its test id).
    seen: set[str] = set()
    unique: list[dict[str, Any]] = []
    for run in runs:
        key = run.get("id")
        if isinstance(key, str):
            if key in seen:
                continue
            seen.add(key)
        unique.append(run)
    return unique


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is None or _is_worker(config) or not (state.checks or state.warnings
                                                     or state.errors):
        return
    from ._report import summary_lines

    terminalreporter.write_sep("=", "pagelab budgets")
    for line in summary_lines(state):
        terminalreporter.write_line(line)

