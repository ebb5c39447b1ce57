"""The plugin's session state: settings, the runner, and the calls into the check pipeline
of :mod:`pagelab.budgets` (measuring with its retry rule, checking, recording).

pagelab (and so pandas) is imported here only inside functions: pytest loads the plugin in
every session, and a suite that never measures pays nothing for it.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._errors import BudgetWarning, EngineFailure
from ._outcome import RecordedOutcome

if TYPE_CHECKING:
    import pandas as pd

    from pagelab import DiscoveryError, Runner
    from pagelab.budgets import (
        Baseline,
        BudgetResult,
        Check,
        GateRule,
        HistoryBaseline,
        RegressionLimit,
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
        #: Each budget file's scan: the pages sampled per template (or why not).
        self._samples: dict[TemplateScan, Mapping[str, Sequence[str]] | DiscoveryError] = {}
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

    def alpha(self) -> float:
        raw = self.setting("alpha")
        try:
            alpha = float(raw)
        except (TypeError, ValueError):
            alpha = float("nan")
        if not 0 < alpha < 0.5:
            raise pytest.UsageError(f"--pagelab-alpha: expected a number between 0 and 0.5, "
                                    f"got {raw!r}")
        return alpha

    def inconclusive_fails(self) -> bool:
        value = str(self.setting("inconclusive")).strip().lower()
        if value not in ("pass", "fail"):
            raise pytest.UsageError(f"--pagelab-inconclusive: expected pass or fail, got "
                                    f"{value!r}")
        return value == "fail"

    def rule(self) -> GateRule:
        """The regression gate's rule: ``--pagelab-alpha`` and ``--pagelab-inconclusive``."""
        from pagelab.budgets import GateRule

        return GateRule(alpha=self.alpha(), inconclusive_fails=self.inconclusive_fails())

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
        given = self.cli("budgets") or []
        if not given:
            given = list(self.config.getini("pagelab_budgets") or [])
        return [Path(p).resolve() for p in given]

    def validate(self) -> None:
        """Check the settings (those pagelab checks only when given); the rest on first use."""
        runner = self.setting("runner")
        if runner not in ("local", "api"):
            raise pytest.UsageError(f"--pagelab-runner: expected local or api, got {runner!r}")
        self.alpha()
        self.inconclusive_fails()
        if self.setting("runs") != DEFAULTS["runs"]:
            self.runs()
        if self.setting("aggregation") != DEFAULTS["aggregation"]:
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
            self.history_build()

    # -- shared resources -------------------------------------------------------------

    def runner(self) -> Runner:
        if self._runner is None:
            import pagelab

            if self.setting("runner") == "api":
                self._runner = pagelab.ApiRunner(
                    self.setting("api_url") or os.environ.get("PAGELAB_API_URL"),
                    self.setting("api_key") or os.environ.get("PAGELAB_API_KEY"),
                )
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

        replay: pd.DataFrame | None = self._loaded("replay", read_runs)
        return replay

    def baseline(self) -> Baseline | None:
        """The baseline file's (``--pagelab-compare``), else the branch history's
        (``--pagelab-against=history``), else None."""
        from pagelab.budgets import load_baseline

        if self.setting("against"):
            return self.history().baseline
        baseline: Baseline | None = self._loaded("compare", load_baseline)
        return baseline

    def baseline_name(self) -> str:
        """What the runs are compared with, as the summary names it."""
        if self.setting("against"):
            return f"history of {self.history_build().branch}"
        return str(self.setting("compare"))

    def history_build(self) -> Build:
        """The build checked against its branch's history; a build without a branch is a
        usage error."""
        from pagelab import InvalidInputError, budgets

        if "build" not in self._read:
            try:
                self._read["build"] = budgets.history_build()
            except InvalidInputError as exc:
                raise pytest.UsageError(f"--pagelab-against=history: {exc}") from exc
        build: Build = self._read["build"]
        return build

    def history(self) -> HistoryBaseline:
        """The baseline of this build's branch in the runner's store, read once: per cell
        the newest stable builds (``budgets.history_baseline``)."""
        from pagelab import budgets

        if "against" not in self._read:
            self._read["against"] = budgets.history_baseline(
                self.runner(), list(self.regression_limits()), build=self.history_build(),
                alpha=self.alpha())
        history: HistoryBaseline = self._read["against"]
        return history

    def regression_limits(self) -> dict[str, RegressionLimit]:
        from pagelab.budgets import parse_regression_limits

        limits: dict[str, RegressionLimit] = self._loaded("compare_fail",
                                                          parse_regression_limits) or {}
        return limits

    # -- measuring and checking: the pipeline of pagelab.budgets --------------------------

    def measure(self, target: Target, runs: int | GateRule, outcome: RecordedOutcome,
                devices: Sequence[str] | None = None,
                locations: Sequence[str] | None = None, build: Any = None) -> pd.DataFrame:
        """The wide frame of ``target``'s runs (from the replay file when set): a number of
        them, or with a :class:`GateRule` (``auto``) until its checks and the baseline
        comparison are decided (where each cell stopped noted in ``outcome``). An engine
        failure (crash, timeout) is measured once more; a second one raises
        :class:`EngineFailure`. ``build``: the build the runs measure (else
        ``PAGELAB_COMMIT``..., the CI's variables, git: ``budgets.matrix_measure``)."""
        from pagelab import DiscoveryError, Flow, InvalidInputError, budgets, measure

        chosen = (list(devices or target.devices), list(locations or target.locations))
        replay, source = self.replay(), str(self.setting("replay"))
        try:
            if replay is not None and isinstance(target.page, Flow):
                return budgets.replayed_flow(replay, target.page, *chosen, source)
            if replay is not None and target.template is not None:
                return budgets.replayed_template(replay, target.template, *chosen, source)
            if replay is not None:
                return budgets.replayed_cells(replay, budgets.target_urls(target), *chosen,
                                              source)
            frame, notes = budgets.measure_target(
                budgets.matrix_measure(measure, self.runner(), build=build), target, runs,
                devices=chosen[0],
                locations=chosen[1], baseline=self.baseline(),
                limits=self.regression_limits() if self.baseline() else None,
                keeps_baseline=bool(self.setting("save_baseline")), sample=self.scan_sample)
        except budgets.EngineFailureError as exc:
            raise EngineFailure(str(exc)) from exc
        except (InvalidInputError, DiscoveryError) as exc:
            pytest.fail(str(exc), pytrace=False)
        outcome.notes.extend(notes)
        return frame

    def scan_sample(self, scan: TemplateScan) -> Mapping[str, Sequence[str]]:
        """The pages a budget file's scan samples per template: its site discovered once
        per session (every template item of the file shares it; a discovery error is
        every one of them's), on the server when the session's runner is an ApiRunner."""
        from pagelab import DiscoveryError, scan_sample

        if scan not in self._samples:
            try:
                self._samples[scan] = scan_sample(scan, self.runner())
            except DiscoveryError as exc:
                self._samples[scan] = exc
        found = self._samples[scan]
        if isinstance(found, DiscoveryError):
            raise found
        return found

    def check(self, frame: pd.DataFrame, checks: Sequence[Check], outcome: RecordedOutcome, *,
              aggregation: str, only_cell: tuple[str, str, str] | None = None,
              adaptive: bool = False) -> list[str]:
        """Evaluate ``checks`` (and the baseline) on ``frame``; record everything in
        ``outcome``; warn for warn-level misses; return the failure lines."""
        from pagelab.budgets import check_frame
        from pagelab.frames import to_records

        outcome.runs.extend(to_records(frame))
        found = check_frame(frame, checks, aggregation=aggregation, baseline=self.baseline(),
                            limits=self.regression_limits() if self.baseline() else None,
                            rule=self.rule(), adaptive=adaptive, only_cell=only_cell)
        outcome.warnings.extend(found.warnings)
        if self.setting("against"):  # which builds of the history each page met
            pages = dict.fromkeys((r.url, r.device, r.location) for kind, r in found.results
                                  if kind == "baseline")
            outcome.notes.extend(n for page in pages for n in self.history().notes.get(page, []))
        failures = found.failures
        # "budget" for the test's own limits, "baseline" for a regression check against
        # --pagelab-compare; the summary shows them apart.
        for kind, result in found.results:
            failures += self.record([result], outcome, kind)
        return failures

    def check_resources(self, frame: pd.DataFrame, limits: Sequence[Any],
                        outcome: RecordedOutcome, *, aggregation: str | None = None
                        ) -> list[str]:
        """Resource budgets on the runs' LHRs, recorded and warned like every budget."""
        from pagelab.budgets import check_resources

        if not limits:
            return []
        replay = None if self.replay() is None else str(self.setting("replay"))
        results, errors = check_resources(
            frame, limits, None if replay else self.runner().lhr,
            aggregation=self.aggregation(aggregation), replay=replay)
        return errors + self.record(results, outcome)

    def record(self, results: Sequence[BudgetResult], outcome: RecordedOutcome,
               kind: str = "budget") -> list[str]:
        """Record ``results`` in ``outcome``, warn for warn-level misses, return the
        error-level misses' messages."""
        failures: list[str] = []
        for result in results:
            outcome.checks.append({**result.to_dict(), "kind": kind})
            if not result.passed:
                if result.level == "error":
                    failures.append(result.message)
                else:
                    warnings.warn(BudgetWarning(result.message), stacklevel=4)
        return failures
