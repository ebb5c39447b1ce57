"""The plugin's session state: settings, the runner, measuring with retry, checking budgets.

pagelab (and so pandas) is imported here only inside functions: pytest loads the plugin in
every session, and a suite that never measures pays nothing for it.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._errors import BudgetWarning, EngineFailure
from ._measure import measure_cells
from ._outcome import RecordedOutcome

if TYPE_CHECKING:
    import pandas as pd

    from pagelab import Flow, Runner
    from pagelab._cells import CellKey
    from pagelab.budgets import Baseline, BudgetResult, Check, GateRule, RegressionLimit

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
    "compare_fail": "regression limits against --pagelab-compare, e.g. "
    "largest_contentful_paint:10%,performance_score:5",
    "alpha": "false-alarm rate of the regression gate against --pagelab-compare "
    "(default 0.05): a regression must be significant at this level",
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
        self._replay: pd.DataFrame | None = None
        self._baseline: Baseline | None = None
        self._limits: dict[str, RegressionLimit] | None = None
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
        raw = self.setting("runs", file_value)
        if isinstance(raw, str) and raw.strip().lower().startswith("auto"):
            from pagelab import InvalidInputError
            from pagelab.budgets import parse_auto_runs

            try:
                rule = parse_auto_runs(raw, self.rule())
            except InvalidInputError as exc:
                raise pytest.UsageError(f"--pagelab-runs: {exc}") from exc
            if rule is not None:
                return rule
        try:
            runs = int(raw)
        except (TypeError, ValueError):
            raise pytest.UsageError(
                f"--pagelab-runs: expected a whole number or auto, got {raw!r}"
            ) from None
        if not 1 <= runs <= 100:
            raise pytest.UsageError(f"--pagelab-runs: must be from 1 to 100, got {runs}")
        return runs

    def alpha(self) -> float:
        raw = self.setting("alpha")
        try:
            alpha = float(raw)
        except (TypeError, ValueError):
            raise pytest.UsageError(f"--pagelab-alpha: expected a number such as 0.05, got "
                                    f"{raw!r}") from None
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
        """Check the settings that need no pagelab import; the rest on first use."""
        runner = self.setting("runner")
        if runner not in ("local", "api"):
            raise pytest.UsageError(f"--pagelab-runner: expected local or api, got {runner!r}")
        self.alpha()
        self.inconclusive_fails()
        self.runs()
        if self.setting("aggregation") != DEFAULTS["aggregation"]:
            self.aggregation()
        if self.setting("compare_fail") and not self.setting("compare"):
            raise pytest.UsageError("--pagelab-compare-fail needs --pagelab-compare=BASELINE")
        if self.setting("compare_fail"):
            self.regression_limits()
        if self.setting("compare"):
            self.baseline()

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

    def replay(self) -> pd.DataFrame | None:
        path = self.setting("replay")
        if path is None:
            return None
        if self._replay is None:
            from pagelab import InvalidInputError
            from pagelab.frames import read_runs

            try:
                self._replay = read_runs(path)
            except InvalidInputError as exc:
                raise pytest.UsageError(f"--pagelab-replay: {exc}") from exc
        return self._replay

    def baseline(self) -> Baseline | None:
        path = self.setting("compare")
        if path is None:
            return None
        if self._baseline is None:
            from pagelab import InvalidInputError
            from pagelab.budgets import load_baseline

            try:
                self._baseline = load_baseline(path)
            except InvalidInputError as exc:
                raise pytest.UsageError(f"--pagelab-compare: {exc}") from exc
        return self._baseline

    def regression_limits(self) -> dict[str, RegressionLimit]:
        if self._limits is None:
            from pagelab import InvalidInputError
            from pagelab.budgets import parse_regression_limits

            text = self.setting("compare_fail") or ""
            try:
                self._limits = parse_regression_limits(text)
            except InvalidInputError as exc:
                raise pytest.UsageError(f"--pagelab-compare-fail: {exc}") from exc
        return self._limits

    # -- measuring --------------------------------------------------------------------

    def measure(
        self,
        urls: Sequence[str],
        devices: Sequence[str],
        locations: Sequence[str],
        config: Mapping[str, Any] | None,
        runs: int | GateRule,
        checks: Sequence[Check] = (),
        outcome: RecordedOutcome | None = None,
    ) -> pd.DataFrame:
        """The wide frame of ``runs`` runs per cell (from the replay file when set), or with
        a :class:`GateRule` (``auto``) runs added until ``checks`` and the baseline
        comparison are decided (the stops noted in ``outcome``).

        An engine failure (crash, timeout) is retried once; a second one raises
        :class:`EngineFailure`.
        """
        replay = self.replay()
        if replay is not None:
            chosen = _select(replay, urls, devices, locations, self.setting("replay"))
            engine = chosen[chosen["engine_failure"].fillna(False).astype(bool)]
            if not engine.empty:
                # A recorded engine failure says nothing about the page; nothing to retry.
                row = engine.iloc[0]
                raise EngineFailure(
                    f"the engine failed on {row['device']}/{row['location']} {row['url']}: "
                    f"{row['error_code']} (recorded in {self.setting('replay')})"
                )
            return chosen
        if isinstance(runs, int):
            return measure_cells(self.runner(), urls, devices, locations, config, runs)
        from pagelab._cells import cell_key
        from pagelab.budgets import AutoRuns

        auto = AutoRuns(runs, self.baseline(), self.regression_limits() if self.baseline()
                        else {}, checks, keeps_baseline=bool(self.setting("save_baseline")))

        def measure(cells: Sequence[CellKey], count: int) -> pd.DataFrame:
            import pandas as pd

            if list(cells) == every_cell:
                return measure_cells(self.runner(), urls, devices, locations, config, count)
            return pd.concat([measure_cells(self.runner(), [str(u)], [str(d)], [str(loc)],
                                            config, count)
                              for u, d, loc, _ in cells], ignore_index=True)

        # The connection is the config's (None: each device's default), as in the frame.
        connection = (config or {}).get("connection")
        every_cell = [cell_key({"url": u, "device": d, "location": loc,
                                "connection": connection})
                      for u in urls for d in devices for loc in locations]
        frame = auto.run(measure, every_cell)
        if outcome is not None:
            outcome.notes.extend(auto.notes())
        return frame

    def measure_flow(
        self,
        flow: Flow,
        devices: Sequence[str],
        locations: Sequence[str],
        config: Mapping[str, Any] | None,
        runs: int,
    ) -> pd.DataFrame:
        """The wide frame of ``runs`` runs of ``flow`` per device x location, a row per step
        (from the replay file when set: the flow's recorded steps). An engine failure
        (crash, timeout) raises :class:`EngineFailure`: flows are not retried."""
        replay = self.replay()
        if replay is not None:
            source = self.setting("replay")
            frame = replay[replay["flow"].astype(object) == flow.name] if (
                "flow" in replay.columns) else replay[:0]
            frame = frame[frame["device"].astype(str).isin(list(devices))
                          & frame["location"].astype(str).isin(list(locations))]
            if frame.empty:
                pytest.fail(f"no recorded runs of flow {flow.name!r} in {source}",
                            pytrace=False)
            return frame.reset_index(drop=True)
        from pagelab import measure

        frame = measure(flow, devices=list(devices), locations=list(locations), runs=runs,
                        config=dict(config) if config is not None else None,
                        runner=self.runner(), progress=False).frame
        engine = frame[frame["engine_failure"].fillna(False).astype(bool)]
        if not engine.empty:
            row = engine.iloc[0]
            raise EngineFailure(
                f"the engine failed on {row['device']}/{row['location']} flow {flow.name!r} "
                f"step {row['step']!r}: {row['error_code']} (not a budget miss)")
        return frame

    # -- checking ---------------------------------------------------------------------

    def check(
        self,
        frame: pd.DataFrame,
        checks: Sequence[Check],
        outcome: RecordedOutcome,
        *,
        aggregation: str,
        only_cell: tuple[str, str, str] | None = None,
        adaptive: bool = False,
    ) -> list[str]:
        """Evaluate ``checks`` (and the baseline) on ``frame``; record everything in
        ``outcome``; warn for warn-level misses; return the failure lines."""
        from pagelab.budgets import compare_baseline, evaluate, run_failures
        from pagelab.frames import cell_label, to_records

        outcome.runs.extend(to_records(frame))
        failures: list[str] = []
        for cell, codes in run_failures(frame).items():
            if only_cell is None or cell[:3] == only_cell:
                counted = ", ".join(f"{c} x{codes.count(c)}" if codes.count(c) > 1 else c
                                    for c in sorted(set(codes)))
                failures.append(f"page failed to load: {cell_label(cell)}: {counted}")
        # (kind, result): "budget" for the test's own limits, "baseline" for a regression
        # check against --pagelab-compare; the summary shows them apart.
        results: list[tuple[str, BudgetResult]] = [
            ("budget", r) for r in evaluate(checks, frame, aggregation=aggregation)]
        baseline = self.baseline()
        if baseline is not None:
            comparison = compare_baseline(baseline, frame, self.regression_limits(),
                                          rule=self.rule(), adaptive=adaptive)
            results.extend(("baseline", r) for r in comparison.results)
            outcome.warnings.extend(comparison.warnings)
        if only_cell is not None:
            results = [(kind, r) for kind, r in results
                       if (r.url, r.device, r.location) == only_cell]
        for kind in dict.fromkeys(kind for kind, _ in results):
            failures += self.record([r for k, r in results if k == kind], outcome, kind)
        return failures

    def check_resources(self, frame: pd.DataFrame, limits: Sequence[Any],
                        outcome: RecordedOutcome, *, aggregation: str | None = None
                        ) -> list[str]:
        """Resource budgets on the runs' LHRs, recorded and warned like every budget."""
        from pagelab import InvalidInputError
        from pagelab.budgets import evaluate_resources, replayed_lhrs

        if not limits:
            return []
        # Replayed runs: the LHRs their reports embed (report_url), if they still open.
        read_lhr = self.runner().lhr if self.replay() is None else replayed_lhrs(frame)
        if read_lhr is None:
            return [f"resource budgets (resource_size, resource_count, third_party_*) need the "
                    f"runs' LHRs: the runs replayed from {self.setting('replay')} have no "
                    "report_url to read them from"]
        try:
            results = evaluate_resources(limits, frame, read_lhr,
                                         aggregation=self.aggregation(aggregation))
        except InvalidInputError as exc:
            return [str(exc)]
        return self.record(results, outcome)

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


def _select(
    frame: pd.DataFrame,
    urls: Sequence[str],
    devices: Sequence[str],
    locations: Sequence[str],
    source: str,
) -> pd.DataFrame:
    chosen = frame[
        frame["url"].astype(str).isin(list(urls))
        & frame["device"].astype(str).isin(list(devices))
        & frame["location"].astype(str).isin(list(locations))
    ]
    for url in urls:
        for device in devices:
            for location in locations:
                cell = chosen[(chosen["url"].astype(str) == url)
                              & (chosen["device"].astype(str) == device)
                              & (chosen["location"].astype(str) == location)]
                if cell.empty:
                    pytest.fail(
                        f"no recorded runs for {device}/{location} {url} in {source}",
                        pytrace=False,
                    )
    return chosen.reset_index(drop=True)
