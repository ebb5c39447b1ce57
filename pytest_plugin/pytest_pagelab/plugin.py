"""The pytest11 entry point ``pagelab``: options, the ``budget`` marker, the ``perf`` fixture,
budget files as tests, reporting (terminal table, JUnit properties, JSON results, baseline).

``-p no:pagelab`` disables it. pagelab itself is imported only when something is measured or
checked. Under pytest-xdist each worker measures its own tests (the engine's machine-wide
lock keeps runs from overlapping) and sends what it measured and checked on its test reports;
only the controller writes the results file and the baseline, so nothing is clobbered.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pagelab import Flow, Results

from ._errors import EngineFailure
from ._outcome import OUTCOME_KEY, RecordedOutcome, locate_checks, record_outcome
from ._state import SETTINGS, STATE_KEY, PagelabState
from .items import BudgetFileCollector, collect_explicit_files, is_budget_file

#: The fixture ``perf`` is registered with pytest; its type is public for annotations.
__all__ = ["Perf"]

_MARKER_HELP = (
    "budget(**limits): performance budget checked by perf.measure() or perf.flow(), e.g. "
    "budget(largest_contentful_paint=2500, cumulative_layout_shift=0.1, performance_score=90); "
    "times and CLS are maximums, scores minimums; a limit may be {limit, level, aggregation}; "
    "step='name' (and flow='name') limit a user flow's step"
)


def _option_help(text: str) -> str:
    # argparse %-formats every option's help (for %(default)s): a literal % (as in
    # "largest_contentful_paint:10%") must be doubled or `pytest --help` crashes in every
    # project of the environment. SETTINGS stays plain text; only here is it escaped.
    return text.replace("%", "%%")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pagelab", "performance budgets (pagelab)")
    for name, text in SETTINGS.items():
        flag, dest = f"--pagelab-{name.replace('_', '-')}", f"pagelab_{name}"
        shown = _option_help(text)
        if name == "budgets":
            group.addoption(flag, dest=dest, action="append", default=None, metavar="PATH",
                            help=shown)
            parser.addini(dest, text, type="linelist", default=[])
            continue
        group.addoption(flag, dest=dest, default=None, metavar=name.split("_")[-1].upper(),
                        help=shown)
        if name != "api_key":
            parser.addini(dest, text, default=None)
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


def _marker_checks(marker: pytest.Mark, nodeid: str) -> tuple[list[Any], list[Any]]:
    """The marker's keywords as checks and resource limits; a bad one is a usage error
    naming the test."""
    from pagelab import InvalidInputError
    from pagelab.budgets import keyword_limits

    where = f"@pytest.mark.budget on {nodeid}"
    if marker.args:
        raise pytest.UsageError(f"{where}: give limits as keywords, e.g. "
                                "budget(largest_contentful_paint=2500)")
    try:
        return keyword_limits(marker.kwargs, where)
    except InvalidInputError as exc:
        raise pytest.UsageError(str(exc)) from exc


# -- the fixture --------------------------------------------------------------------------


def _as_list(value: str | Sequence[str], what: str) -> list[str]:
    items = [value] if isinstance(value, str) else list(value)
    if not items or not all(isinstance(v, str) and v for v in items):
        raise pytest.UsageError(f"perf.measure: {what} must be a non-empty id or list of ids")
    return items


def _connections(connections: str | Sequence[str] | None) -> tuple[str, ...]:
    """``perf``'s ``connections=`` as the pipeline's (empty: the config's); an unknown id
    is a usage error."""
    from pagelab import InvalidInputError
    from pagelab.budgets import parse_connections

    if connections is None:
        return ()
    try:
        return parse_connections(connections, "perf: connections")
    except InvalidInputError as exc:
        raise pytest.UsageError(str(exc)) from exc


def _renamed(new_name: str, new: Any, old_name: str, old: Any, default: Any) -> Any:
    """``new`` if given, else the deprecated ``old`` (warned), else ``default``."""
    if old is None:
        return default if new is None else new
    if new is not None:
        raise TypeError(f"perf.measure: give {new_name}= or {old_name}=, not both")
    warnings.warn(f"perf.measure: {old_name}= is deprecated; use {new_name}= (the name "
                  f"pagelab.measure uses)", DeprecationWarning, stacklevel=3)
    return old


class Perf:
    """The ``perf`` fixture: measure pages and check the test's ``budget`` marker."""

    def __init__(self, item: pytest.Item, state: PagelabState) -> None:
        self._item = item
        self._state = state

    def measure(
        self,
        urls: str | Sequence[str] | None = None,
        devices: str | Sequence[str] | None = None,
        locations: str | Sequence[str] | None = None,
        config: Mapping[str, Any] | None = None,
        runs: int | str | None = None,
        *,
        connections: str | Sequence[str] | None = None,
        url: str | Sequence[str] | None = None,
        device: str | Sequence[str] | None = None,
        location: str | Sequence[str] | None = None,
        build: Any = None,
    ) -> Results:
        """Measure ``urls`` ``runs`` times (default ``--pagelab-runs``; ``"auto"``: until the
        checks are decided) on every device x location (x connection) as
        :func:`pagelab.measure` does (its names; ``url=``, ``device=``, ``location=`` are
        deprecated spellings), check the test's ``@pytest.mark.budget`` (and the baseline)
        on each cell's aggregate, and return the :class:`pagelab.Results`.
        ``connections``: one connection id or a list, each replacing ``config``'s (None:
        ``config``'s, else each device's default); every limit is checked on each.
        ``build``: the build the runs measure (default: the session's, docs/history.md,
        "Build context").

        A missed error-level budget or a page that fails to load fails the test with one
        line per miss; a missed warn-level budget is a :class:`BudgetWarning`.
        """
        urls = _renamed("urls", urls, "url", url, None)
        if urls is None:
            raise TypeError("perf.measure: missing the page URL(s) to measure (urls)")
        devices = _renamed("devices", devices, "device", device, "mobile")
        locations = _renamed("locations", locations, "location", location, "us")
        return self._check(tuple(_as_list(urls, "urls")), devices, locations, config,
                           _connections(connections), runs, build)

    def flow(
        self,
        flow: Flow | str | os.PathLike[str],
        runs: int | None = None,
        devices: str | Sequence[str] = "mobile",
        locations: str | Sequence[str] = "us",
        config: Mapping[str, Any] | None = None,
        *,
        connections: str | Sequence[str] | None = None,
        build: Any = None,
    ) -> Results:
        """Run a user flow (a :class:`pagelab.Flow` or a flow file's path) ``runs`` times on
        every device x location (x connection), check the test's ``@pytest.mark.budget`` per step
        (``step="name"`` limits one step; else every step measuring the metric), and return
        the :class:`pagelab.Results`, one row per step; otherwise as :meth:`measure`.
        """
        import pagelab

        try:
            chosen = flow if isinstance(flow, pagelab.Flow) else (
                pagelab.Flow.from_file(os.fspath(flow)))
            chosen.check()
        except pagelab.InvalidInputError as exc:
            raise pytest.UsageError(f"perf.flow: {exc}") from exc
        return self._check(chosen, devices, locations, config, _connections(connections),
                           runs, build)

    def _check(self, page: tuple[str, ...] | Flow, devices: str | Sequence[str],
               locations: str | Sequence[str], config: Mapping[str, Any] | None,
               connections: tuple[str, ...], runs: int | str | None,
               build: Any = None) -> Results:
        """Measure ``page`` (URLs or a flow), check the marker's limits, record it all."""
        from pagelab import Results
        from pagelab.budgets import Target

        state, item = self._state, self._item
        count = state.runs(runs)
        is_flow = not isinstance(page, tuple)
        if is_flow and not isinstance(count, int):
            raise pytest.UsageError("perf.flow: runs=auto measures pages only; give a number")
        marker = item.get_closest_marker("budget")
        checks, resources = _marker_checks(marker, item.nodeid) if marker else ([], [])
        target = Target(page, tuple(_as_list(devices, "devices")),
                        tuple(_as_list(locations, "locations")),
                        dict(config) if config is not None else None, None, checks,
                        connections=connections)
        outcome = item.stash.get(OUTCOME_KEY, None) or RecordedOutcome()
        frame, failures = state.check(target, count, outcome, checks,
                                      [] if is_flow else resources, build=build)
        if is_flow and resources:
            failures.append("resource budgets apply to pages: perf.flow checks metric budgets")
        # Annotations point at the test function (its first line: the budget marker).
        locate_checks(item, outcome, lambda _: (item.location[1] or 0) + 1)
        record_outcome(item, outcome)
        if failures:
            pytest.fail("\n".join(failures), pytrace=False)
        return Results.from_frame(frame)


@pytest.fixture
def perf(request: pytest.FixtureRequest) -> Perf:
    """Measure pages and user flows and check the ``budget`` marker:
    ``perf.measure(url, devices=...)``, ``perf.flow(flow, runs=3)``."""
    return Perf(request.node, _state(request.config))


# -- reports ------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.when == "call":
        outcome = item.stash.get(OUTCOME_KEY, None)
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
            # Two tests may measure the same cell; a run is kept once (by its test id).
            seen = {run.get("id") for run in state.run_records} - {None}
            state.run_records.extend(r for r in parsed["runs"] if r.get("id") not in seen)
            state.warnings.extend(w for w in parsed["warnings"] if w not in state.warnings)
            state.notes.extend(parsed.get("notes", []))
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
    baseline_path = state.setting("save_baseline")
    if baseline_path:
        _save_baseline(state, baseline_path)  # first: the reports carry its warnings
    _publish_ci_reports(state)
    results_path = state.setting("results")
    if results_path:
        from pagelab import __version__, budgets

        budgets.write_results(results_path, version=__version__, checks=state.checks,
                              aggregation=state.aggregation(), errors=state.errors,
                              baseline_warnings=state.warnings, notes=state.notes,
                              runs=state.run_records)


def _save_baseline(state: PagelabState, path: str) -> None:
    """Save the session's runs as a baseline; a cell with too few runs for a comparison to
    show a difference at ``--pagelab-alpha`` is a baseline warning in the summary."""
    from pagelab.budgets import save_baseline, too_few_baseline_runs
    from pagelab.frames import from_records

    if state.run_records:
        alpha = state.rule().alpha
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # said once, in the summary
            baseline = save_baseline(from_records(state.run_records), path,
                                     aggregation=state.aggregation(), alpha=alpha)
        state.warnings.extend(too_few_baseline_runs(baseline, alpha))


def _publish_ci_reports(state: PagelabState) -> None:
    markdown, codequality = state.setting("markdown"), state.setting("codequality")
    github = os.environ.get("GITHUB_STEP_SUMMARY") or os.environ.get("GITHUB_ACTIONS")
    if not (markdown or codequality or (github and (state.checks or state.errors))):
        return  # nothing asked for: pagelab stays unimported
    from pagelab.budgets import publish_ci_reports

    state.annotations = publish_ci_reports(
        state.checks, markdown=markdown, codequality=codequality,
        runs=state.run_records,
        errors=[f"{e['nodeid']}: {e['message']}" for e in state.errors],
        notes=[*state.warnings, *dict.fromkeys(state.notes)],  # with where runs=auto stopped
    )


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is None or _is_worker(config) or not (state.checks or state.warnings
                                                     or state.errors):
        return
    from ._report import summary_lines

    terminalreporter.write_sep("=", "pagelab budgets")
    for line in summary_lines(state):
        terminalreporter.write_line(line)
    # GitHub turns these lines into annotations on the test's file and line.
    for command in state.annotations:
        terminalreporter.write_line(command)

