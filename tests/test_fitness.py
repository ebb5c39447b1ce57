"""The fitness rule (issue 35.2): a run measured on an unfit machine is marked ``noisy``, the
frame, summaries and HTML report show it, and the gate does not call a regression from
unfit runs alone.

The fit and unfit machines are recorded Lighthouse results (``tests/data/lhr-*.json``, read
by the engine's own mapping) with the machine's load as the engine records it at a run's
start. The unfit variants change only the recorded environment: the LHR's
``environment.benchmarkIndex`` (Lighthouse's CPU benchmark, 1629 in the recorded heavy page
on a quiet 2-core machine) and the load / PSI figures of
:class:`pagelab.engine._load.MachineLoad`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pagelab import InvalidInputError, budgets, stats
from pagelab._readable import summary_table
from pagelab.engine._engine import _with_load
from pagelab.engine._load import MachineLoad
from pagelab.engine._mapping import summarize_lhr
from pagelab.export import html_report
from pagelab.frames import to_frame
from pagelab.models import EngineEnvironment, FitnessRule, TestReport, TestStatus

DATA = Path(__file__).parent / "data"
LCP = "largest_contentful_paint"
#: The recorded machine: quiet (load 0.3 on 2 CPUs, 4 % CPU pressure, a core free).
QUIET = MachineLoad(load_average=0.3, cpu_pressure=4.0, cpu_count=2, cpu_share=1.0)


def _lhr(benchmark_index: float | None = None) -> dict[str, Any]:
    lhr: dict[str, Any] = json.loads((DATA / "lhr-success-heavy-desktop.json").read_text())
    if benchmark_index is not None:
        lhr["environment"]["benchmarkIndex"] = benchmark_index
    return lhr


def _environment(lhr: dict[str, Any], load: MachineLoad = QUIET) -> EngineEnvironment:
    """What the engine stores for a run that gave ``lhr`` on a machine loaded as ``load``."""
    return _with_load(summarize_lhr(lhr, chrome_version="156").environment, load)


def test_the_recorded_quiet_machine_is_fit() -> None:
    environment = _environment(_lhr())
    assert environment.benchmark_index == 1629
    assert environment.noisy is False
    assert environment.unfit_reasons == []


@pytest.mark.parametrize(("lhr", "load", "reason"), [
    # A slow CPU: Lighthouse's own slow-host line is a benchmark index of 1000.
    (_lhr(benchmark_index=640), QUIET, "benchmark index 640 below 1000"),
    # A loaded machine: 5.8 runnable tasks on 2 CPUs for a minute.
    (_lhr(), MachineLoad(5.8, 4.0, 2), "load 2.9 per CPU above 1"),
    # A contended one: some task waited for a CPU 97 % of the last 10 s.
    (_lhr(), MachineLoad(0.3, 97.0, 2), "CPU pressure 97 % above 60 %"),
    # One busy process per core: the load per CPU tends to 1 and no more, pressure stays
    # low between the run's bursts, but a busy task gets half a core.
    (_lhr(), MachineLoad(1.9, 13.0, 2, cpu_share=0.48), "CPU share 0.48 below 0.75"),
])
def test_an_unfit_machine_marks_the_run_noisy(
    lhr: dict[str, Any], load: MachineLoad, reason: str
) -> None:
    environment = _environment(lhr, load)
    assert environment.noisy is True
    assert environment.unfit_reasons == [reason]
    # The report carries it to every reader (JSON of the API, the store, the fleet).
    data = json.loads(environment.model_dump_json())
    assert (data["noisy"], data["unfit_reasons"]) == (True, [reason])


def test_the_thresholds_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # This machine's own rule: a faster CPU required, and less load tolerated.
    monkeypatch.setenv("PAGELAB_FIT_MIN_BENCHMARK_INDEX", "2000")
    assert _environment(_lhr()).unfit_reasons == ["benchmark index 1629 below 2000"]
    monkeypatch.setenv("PAGELAB_FIT_MIN_BENCHMARK_INDEX", "1000")
    monkeypatch.setenv("PAGELAB_FIT_MAX_LOAD_PER_CPU", "0.1")
    assert _environment(_lhr()).unfit_reasons == ["load 0.15 per CPU above 0.1"]
    monkeypatch.setenv("PAGELAB_FIT_MAX_LOAD_PER_CPU", "1")
    monkeypatch.setenv("PAGELAB_FIT_MIN_CPU_SHARE", "0.4")
    assert _environment(_lhr(), MachineLoad(1.9, 13.0, 2, cpu_share=0.48)).noisy is False
    monkeypatch.setenv("PAGELAB_FIT_MIN_CPU_SHARE", "1.5")
    assert _environment(_lhr()).unfit_reasons == ["CPU share 1 below 1.5"]
    monkeypatch.setenv("PAGELAB_FIT_MAX_CPU_PRESSURE", "high")
    with pytest.raises(InvalidInputError, match="PAGELAB_FIT_MAX_CPU_PRESSURE: expected a "
                                                "number, got 'high'"):
        FitnessRule.from_environment()
    with pytest.raises(InvalidInputError, match="max_load_per_cpu: expected a number"):
        FitnessRule(max_load_per_cpu=-1)


def test_missing_figures_never_make_a_run_noisy() -> None:
    rule = FitnessRule()
    # No PSI (an older kernel) on a quiet machine: judged by the rest, fit.
    assert rule.noisy(EngineEnvironment(benchmark_index=1629, load_average=0.3,
                                        cpu_count=2)) is False
    # A report older than the CPU share probe: judged by the rest, fit.
    old = json.loads(FIT.model_dump_json(exclude={"cpu_share", "noisy", "unfit_reasons"}))
    assert "cpu_share" not in old
    assert rule.noisy(EngineEnvironment.model_validate(old)) is False
    # The probe alone judges a run.
    assert rule.reasons(EngineEnvironment(cpu_share=0.3)) == ["CPU share 0.3 below 0.75"]
    # A report without any figure (another server of the API): not judged.
    assert rule.noisy(EngineEnvironment(chrome_version="156")) is None


def _report(value: float, environment: EngineEnvironment, run: int) -> TestReport:
    return TestReport(
        id=f"lt_{run:024x}", url="http://demo.test/heavy", device="desktop", location="us",
        status=TestStatus.SUCCESS, metrics={LCP: value}, environment=environment,
        created_at=datetime(2026, 11, 28, 9, run, tzinfo=UTC), lighthouse_version="13.5.0",
    )


FIT = _environment(_lhr())
UNFIT = _environment(_lhr(), MachineLoad(0.3, 97.0, 2))


def test_frames_summaries_and_the_report_show_noisy_runs() -> None:
    reports = [_report(1000.0 + run, FIT if run % 2 else UNFIT, run) for run in range(4)]
    frame = to_frame(reports)
    assert str(frame["noisy"].dtype) == "boolean"
    assert frame["noisy"].tolist() == [True, False, True, False]
    summary = stats.summarize(frame)
    assert summary.loc[0, "noisy"] == 2
    assert 'title="runs measured on a machine unfit to measure' in str(summary_table(summary))
    assert "machine unfit: 2 of 4 runs" in html_report(frame, explain=False)
    # Runs never judged have no noisy count, and the tables no noisy column.
    unjudged = to_frame([_report(1000.0, EngineEnvironment(), 0)])
    assert "noisy" not in stats.summarize(unjudged).columns
    assert ">noisy<" not in str(summary_table(stats.summarize(unjudged)))


def _gate(new: list[float], noisy: list[bool]) -> budgets.RegressionResult:
    baseline = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0, 1008.0, 993.0, 1003.0, 997.0]
    limit = budgets.parse_regression_limits("LCP:5%")[LCP]
    cell = ("http://demo.test/heavy", "desktop", "us", None, None, None)
    return budgets.decide(LCP, baseline, new, limit, cell=cell, noisy=noisy)


def test_unfit_runs_alone_do_not_call_a_regression() -> None:
    slow = [1300.0, 1310.0, 1290.0, 1320.0, 1305.0, 1298.0, 1312.0]
    usual = [1001.0, 1004.0]
    # Every slow run was measured on an unfit machine: inconclusive, and why.
    result = _gate(slow + usual, [True] * 7 + [False] * 2)
    assert result.verdict == "inconclusive"
    assert result.passed
    assert result.unfit == "machine unfit: 7 of 9 runs"
    assert result.message.startswith(
        "largest_contentful_paint inconclusive (machine unfit: 7 of 9 runs): median ")
    assert "p=" in result.message
    assert "n=9 vs 10" in result.message
    # The same runs without the marks are a regression (the unfit ones decided it).
    assert _gate(slow + usual, [False] * 9).verdict == "regression"
    # A regression the fit runs show too stands, noisy runs or not.
    result = _gate(slow + usual, [False] * 6 + [True] * 3)
    assert (result.verdict, result.unfit) == ("regression", None)
    # Every run unfit: nothing fit to decide on.
    assert _gate(slow, [True] * 7).unfit == "machine unfit: 7 of 7 runs"


def test_the_baseline_gate_reads_the_frame_noisy_column() -> None:
    base_frame = to_frame([_report(1000.0 + 5 * (run % 3), FIT, run) for run in range(6)])
    baseline = budgets.make_baseline(base_frame, commit="abc")
    new = to_frame([_report(1300.0 + run, UNFIT, run) for run in range(6)])
    limits = budgets.parse_regression_limits("LCP:5%")
    comparison = budgets.compare_baseline(baseline, new, limits)
    (result,) = comparison.results
    assert (result.verdict, result.unfit) == ("inconclusive", "machine unfit: 6 of 6 runs")
    assert comparison.warnings == ["desktop/us http://demo.test/heavy: machine unfit: 6 of 6 runs"]
    fit = to_frame([_report(1300.0 + run, FIT, run) for run in range(6)])
    assert budgets.compare_baseline(baseline, fit, limits).results[0].verdict == "regression"


def test_the_smallest_detectable_shift_is_where_the_power_reaches_80_percent() -> None:
    for n, t_test in ((5, 2.0), (10, 1.32), (20, 0.91)):
        shift = budgets.detectable_shift(n, n, 0.05)
        assert budgets.rank_test_power(n, n, shift, 0.05) >= budgets.DETECTION_POWER
        assert budgets.rank_test_power(n, n, round(shift - 0.02, 4), 0.05) < 0.8
        # The rank test needs a little more than the t-test's textbook figure, not much.
        assert t_test < shift < t_test * 1.2, (n, shift)
    # 3 against 3 can never reach p < 0.05: no change is detectable.
    assert budgets.detectable_shift(3, 3, 0.05) == float("inf")


def test_a_noisy_report_says_so_when_shown() -> None:
    report = _report(1000.0, UNFIT, 0)
    assert "  noisy: CPU pressure 97 % above 60 %" in str(report)
    assert "noisy: CPU pressure 97 % above 60 %" in report._repr_html_()
    fit = _report(1000.0, FIT, 0)
    assert "noisy" not in str(fit)
    assert "noisy" not in fit._repr_html_()
