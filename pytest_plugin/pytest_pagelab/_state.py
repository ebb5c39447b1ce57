"""The plugin's session state: settings, the runner, and the calls into the check pipeline
of :mod:`pagelab.budgets` (measuring with its retry rule, checking, recording).

pagelab (and so pandas) is imported here only inside functions: pytest loads the plugin in
every session, and a suite that never measures pays nothing for it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from ._errors import BudgetWarning, EngineFailure
from ._outcome import RecordedOutcome

if TYPE_CHECKING:
    import pandas as pd

    from pagelab import Runner
    from pagelab.budgets import (
        Baseline,
        BudgetResult,
        Check,
        GateRule,
        HistoryBaseline,
        RegressionLimit,
        SampleTemplates,
        Target,
        TemplateScan,
    )
    from pagelab.models import Build

__all__ = ["DEFAULTS", "SETTINGS", "STATE_KEY", "PagelabState"]

#: Setting -> help; each is ``--pagelab-<name>`` on the command line and ``pagelab_<name>``
#: in the ini file (the command line wins). ``api_key`` has no ini form: keep keys out of
#: files (``PAGELAB_API_KEY``).
SETTINGS: dict[str, str] = {
    "runner": "local (the engine on this machine, default) or api (PAGELAB_API_URL)",
    "api_url": "API server for --pagelab-runner=api (default $PAGELAB_API_URL)",
    "api_key": "API key for --pagelab-runner=api (default $PAGELAB_API_KEY)",
    "runs": "Lighthouse runs per checked cell: a number (default 3), or auto (or "
    "auto:MIN-MAX, default 5-15) to add runs one at a time until the checks are decided",
    "aggregation": "how runs are aggregated: median (default), mean, p75, p90, min, max, "
    "representative",
    "results": "write every check and run to this JSON file",
    "budgets": "budget file(s) to collect as tests (YAML/JSON: pagelab, Lighthouse CI "
    "assertions or budget.json); repeatable",
    "base_url": "base URL for relative page URLs in budget files",
    "save_baseline": "save the aggregated results as a baseline JSON file",
    "compare": "compare every measured cell with this baseline file",
    "against": "history: compare every measured cell with the newest stable builds of this "
    "build's branch in the store instead of a baseline file",
    "compare_fail": "regression limits against the baseline (--pagelab-compare or "
    "--pagelab-against), e.g. largest_contentful_paint:10%,performance_score:5",
    "alpha": "false-alarm rate of the regression gate against the baseline (default 0.05): "
    "a regression must be significant at this level",
    "inconclusive": "pass (default) or fail: what a difference beyond --pagelab-compare-fail "
    "that is not significant does",
    "replay": "check budgets against runs saved earlier (a --pagelab-results JSON or a "
    "wide-frame CSV) instead of measuring",
    "markdown": "write a Markdown summary of the checks to this file (a job summary or pull "
    "request comment; appended to $GITHUB_STEP_SUMMARY under GitHub Actions anyway)",
    "codequality": "write a GitLab Code Quality report (JSON) of the missed checks to this "
    "file",
}
DEFAULTS: dict[str, str] = {"runner": "local", "runs": "3", "aggregation": "median",
                             "alpha": "0.05", "inconclusive": "pass"}
_NO_INI = {"api_key"}

STATE_KEY = pytest.StashKey["PagelabState"]()


class PagelabState:
    """Settings and shared resources of one pytest session (one per xdist worker)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._runner: Runner | None = None
        #: The replayed runs, the baseline and the regression limits, read once.
        self._read: dict[str, Any] = {}
        self._sample: SampleTemplates | None = None
        #: Collected from every test's report (on the controller under xdist).
        self.checks: list[dict[str, Any]] = []
        self.run_records: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        #: runs=auto: where each cell stopped.
        self.notes: list[str] = []
        self.errors: list[dict[str, str]] = []
        #: GitHub workflow commands to print at the end (under GitHub Actions only).
        self.annotations: list[str] = []

    # -- settings ---------------------------------------------------------------------

    def cli(self, name: str) -> Any:
        """The command-line value of a setting, None when not given."""
        return self.config.getoption(f"pagelab_{name}", None)

    def setting(self, name: str, file_value: Any = None) -> Any:
        """Command line, else ``file_value`` (a budget file's own), else ini, else default."""
        value = self.cli(name)
        if value is not None and value != []:
            return value
        if file_value is not None:
            return file_value
        if name not in _NO_INI:
            ini = self.config.getini(f"pagelab_{name}")
            if ini:
                return ini
        return DEFAULTS.get(name)

    def runs(self, file_value: int | str | None = None) -> int | GateRule:
        """The runs per cell: a number, or the gate rule of ``auto`` (adaptive runs)."""
        from pagelab import InvalidInputError
        from pagelab.budgets import parse_runs

        try:
            return parse_runs(self.setting("runs", file_value), self.rule())
        except InvalidInputError as exc:
            raise pytest.UsageError(f"--pagelab-runs: {exc}") from exc

    def rule(self) -> GateRule:
        """The regression gate's rule: ``--pagelab-alpha`` and ``--pagelab-inconclusive``."""
        from pagelab import InvalidInputError
        from pagelab.budgets import parse_gate_rule

        try:
            return parse_gate_rule(self.setting("alpha"), self.setting("inconclusive"))
        except InvalidInputError as exc:
            raise pytest.UsageError(f"--pagelab-{exc}") from exc

    def aggregation(self, file_value: str | None = None) -> str:
        from pagelab.budgets import AGGREGATION_NAMES
        from pagelab.models import unknown_value

        value = str(self.setting("aggregation", file_value))
        if value not in AGGREGATION_NAMES:
            raise pytest.UsageError(
                f"--pagelab-aggregation: {unknown_value(value, AGGREGATION_NAMES)}"
            )
        return value

    def budget_paths(self) -> list[Path]:
        given = self.cli("budgets") or self.config.getini("pagelab_budgets") or []
        return [Path(p).resolve() for p in given]

    def validate(self) -> None:
        """Check the settings (those pagelab checks only when given); the rest on first use."""
        runner = self.setting("runner")
        if runner not in ("local", "api"):
            raise pytest.UsageError(f"--pagelab-runner: expected local or api, got {runner!r}")
        if any(self.setting(name) != DEFAULTS[name]
               for name in ("alpha", "inconclusive", "runs", "aggregation")):
            self.runs()  # parses the gate rule too
            self.aggregation()
        against = self.setting("against")
        if against is not None and str(against).strip().lower() != "history":
            raise pytest.UsageError(f"--pagelab-against: expected history, got {against!r}")
        if against and self.setting("compare"):
            raise pytest.UsageError("--pagelab-against=history and --pagelab-compare=BASELINE "
                                    "are two baselines: give one")
        if self.setting("compare_fail") and not (self.setting("compare") or against):
            raise pytest.UsageError("--pagelab-compare-fail needs --pagelab-compare=BASELINE "
                                    "or --pagelab-against=history")
        if self.setting("compare_fail"):
            self.regression_limits()
        if self.setting("compare"):
            self.baseline()
        if against:
            self.build()

    # -- shared resources -------------------------------------------------------------

    def runner(self) -> Runner:
        if self._runner is None:
            import pagelab

            if self.setting("runner") == "api":
                # None: the ApiRunner reads PAGELAB_API_URL / PAGELAB_API_KEY.
                self._runner = pagelab.ApiRunner(self.setting("api_url"),
                                                 self.setting("api_key"))
            else:
                self._runner = pagelab.LocalRunner()
        return self._runner

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None

    def _loaded(self, name: str, load: Callable[[str], Any]) -> Any:
        """The file or text of setting ``name`` read by ``load``, once (None when not set);
        a bad one is a usage error."""
        from pagelab import InvalidInputError

        value = self.setting(name)
        if value is not None and name not in self._read:
            try:
                self._read[name] = load(value)
            except InvalidInputError as exc:
                raise pytest.UsageError(f"--pagelab-{name.replace('_', '-')}: {exc}") from exc
        return self._read.get(name)

    def replay(self) -> pd.DataFrame | None:
        from pagelab.frames import read_runs

        return cast("pd.DataFrame | None", self._loaded("replay", read_runs))

    def baseline(self) -> Baseline | None:
        """The baseline file's (``--pagelab-compare``), else the branch history's
        (``--pagelab-against=history``), else None."""
        from pagelab.budgets import load_baseline

        if self.setting("against"):
            return self.history().baseline
        return cast("Baseline | None", self._loaded("compare", load_baseline))

    def baseline_name(self) -> str:
        """What the runs are compared with, as the summary names it."""
        if self.setting("against"):
            return f"history of {self.history().branch}"
        return str(self.setting("compare"))

    def build(self) -> Build | None:
        """The build this session measures, resolved once by the one rule (with git); with
        ``--pagelab-against=history`` it must name its branch (else a usage error)."""
        from pagelab import InvalidInputError, budgets

        if "build" not in self._read:
            try:
                self._read["build"] = (budgets.history_build() if self.setting("against")
                                       else budgets.session_build())
            except InvalidInputError as exc:
                raise pytest.UsageError(f"--pagelab-against=history: {exc}") from exc
        build: Build | None = self._read["build"]
        return build

    def history(self) -> HistoryBaseline:
        """The baseline of this build's branch in the runner's store, read once."""
        from pagelab import budgets

        if "against" not in self._read:
            self._read["against"] = budgets.history_baseline(
                self.runner(), list(self.regression_limits()), build=self.build(),
                alpha=self.rule().alpha)
        history: HistoryBaseline = self._read["against"]
        return history

    def regression_limits(self) -> dict[str, RegressionLimit]:
        from pagelab.budgets import parse_regression_limits

        return cast("dict[str, RegressionLimit]",
                    self._loaded("compare_fail", parse_regression_limits) or {})

    # -- measuring and checking: the pipeline of pagelab.budgets --------------------------

    def scan_sample(self, scan: TemplateScan) -> Mapping[str, Sequence[str]]:
        """A scan's sampled pages per template, discovered once a session by the runner."""
        if self._sample is None:
            from pagelab import budgets, scan_sample

            self._sample = budgets.discovered_once(lambda found: scan_sample(found,
                                                                             self.runner()))
        return self._sample(scan)

    def check(self, target: Target, runs: int | GateRule, outcome: RecordedOutcome,
              checks: Sequence[Check], resources: Sequence[Any], *,
              cell: tuple[str, str, str] | None = None, devices: Sequence[str] | None = None,
              locations: Sequence[str] | None = None, aggregation: str | None = None,
              build: Any = None) -> tuple[pd.DataFrame, list[str]]:
        """``target``'s runs (measuring ``build``, None: the session's; else replayed) and
        their failure lines, every check recorded in ``outcome`` (only ``cell``'s when
        given). A second engine failure on a run raises :class:`EngineFailure`."""
        from pagelab import DiscoveryError, InvalidInputError, budgets, measure
        from pagelab.frames import to_records

        chosen = (list(devices or target.devices), list(locations or target.locations))
        replay = self.replay()
        refused: str | None = None
        try:
            if replay is not None:
                frame = budgets.replayed_target(replay, target, *chosen,
                                                str(self.setting("replay")))
            else:
                measured = self.build() if build is None else budgets.session_build(build)
                frame, notes = budgets.measure_target(
                    budgets.matrix_measure(measure, self.runner(), build=measured), target,
                    runs, devices=chosen[0], locations=chosen[1], baseline=self.baseline(),
                    limits=self.regression_limits() if self.baseline() else None,
                    keeps_baseline=bool(self.setting("save_baseline")),
                    sample=self.scan_sample)
                outcome.notes.extend(notes)
        except budgets.EngineFailureError as exc:
            raise EngineFailure(str(exc)) from exc
        except (InvalidInputError, DiscoveryError) as exc:
            refused = str(exc)
        if refused is not None:  # failed outside the handler: the message once, no chain
            pytest.fail(refused, pytrace=False)
        outcome.runs.extend(to_records(frame))
        found = budgets.check_frame(frame, checks, aggregation=self.aggregation(aggregation),
                            baseline=self.baseline(),
                            limits=self.regression_limits() if self.baseline() else None,
                            rule=self.rule(), adaptive=not isinstance(runs, int),
                            only_cell=cell)
        outcome.warnings.extend(found.warnings)
        if self.setting("against"):
            outcome.notes.extend(self.history().notes_for(found.results))
        # "budget" for the test's own limits, "baseline" for the regression gate: the
        # summary shows them apart.
        failures = found.failures + self.record(found.results, outcome)
        if resources:
            source = None if replay is None else str(self.setting("replay"))
            results, errors = budgets.check_resources(
                frame, resources, None if source else self.runner().lhr,
                aggregation=self.aggregation(aggregation), replay=source)
            failures += errors + self.record([("budget", r) for r in results], outcome)
        return frame, failures

    def record(self, results: Sequence[tuple[str, BudgetResult]], outcome: RecordedOutcome
               ) -> list[str]:
        """Record ``(kind, result)`` pairs in ``outcome``, warn for warn-level misses,
        return the error-level misses' messages."""
        failures: list[str] = []
        for kind, result in results:
            outcome.checks.append({**result.to_dict(), "kind": kind})
            if not result.passed:
                if result.level == "error":
                    failures.append(result.message)
                else:
                    warnings.warn(BudgetWarning(result.message), stacklevel=4)
        return failures
