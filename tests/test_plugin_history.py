"""``--pagelab-against=history`` through pytester (issue 37, point 4): this build's runs,
replayed from tests/data/runs-demo.csv (10 real runs of the demo's /fast page, median LCP
670 ms), compared with the builds of its branch stored in the session's real SQLite store
(the ``data_dir`` fixture's), with the gate a baseline file gets."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

# Loaded before pytester snapshots the modules (as in tests/test_plugin.py).
import scipy.stats  # noqa: F401

import pagelab
from pagelab import budgets
from pagelab.frames import from_records
from pagelab.models import Build, Device, LighthouseConfig, Location, Metrics, TestStatus
from pagelab.store import Store, create_test, finish_test, transaction

# What these tests measure is not Lighthouse's doing: the short quiet window (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")

pytest_plugins = ["pytester"]

RUNS = Path(__file__).parent / "data" / "runs-demo.csv"
REPLAY = f"--pagelab-replay={RUNS}"
FAST = "http://demo.test/fast"
LIMITS = "--pagelab-compare-fail=largest_contentful_paint:10%"
#: The build being checked.
THIS = "f" * 40
TEST = """
def test_fast(perf):
    perf.measure("http://demo.test/fast")
"""
#: The real runs' LCPs, the dispersion every stored build's runs get.
LCP = pd.read_csv(RUNS).query("url == @FAST").sort_values("run")[
    "largest_contentful_paint"].tolist()


def _commit(n: int) -> str:
    return hashlib.sha1(str(n).encode()).hexdigest()


class History:
    """Builds stored one after another (3 runs each, a minute apart) in the store the
    plugin's LocalRunner reads."""

    def __init__(self, data_dir: Path) -> None:
        self.store = Store(data_dir)
        # Unexpired: within the store's retention.
        self.clock = int(datetime.now(UTC).timestamp() * 1000) - 1000 * 60_000
        self.runs = 0

    def build(self, commit: str, level: float, *, branch: str = "main", runs: int = 3) -> None:
        """``runs`` runs of /fast at ``level`` times the real runs' LCP."""
        with self.store.connection() as conn, transaction(conn):
            for _ in range(runs):
                self.clock += 60_000
                test_id = create_test(
                    conn, url=FAST, device=Device.MOBILE, location=Location.US,
                    config=LighthouseConfig(), retention=self.store.retention,
                    created_at=self.clock, build=Build(commit=commit, branch=branch))
                finish_test(conn, test_id, status=TestStatus.SUCCESS,
                            lighthouse_version="13.5.0",
                            metrics=Metrics(largest_contentful_paint=LCP[self.runs % len(LCP)]
                                            * level),
                            error=None, vantage="local", environment=None)
                self.runs += 1


@pytest.fixture
def history(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> History:
    monkeypatch.setenv("PAGELAB_COMMIT", THIS)
    monkeypatch.setenv("PAGELAB_BRANCH", "main")
    return History(data_dir)


def _check(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, object]]:
    pytester.makepyfile(test_pages=TEST)
    result = pytester.runpytest(REPLAY, "--pagelab-against=history", LIMITS,
                                "--pagelab-results=results.json", *args)
    checks = json.loads((pytester.path / "results.json").read_text())["checks"]
    return result, next((c for c in checks if c["kind"] == "baseline"), {})


def test_a_regression_against_the_stable_history_fails(pytester: pytest.Pytester,
                                                         history: History) -> None:
    for n in range(8):  # main was 20 % faster than these runs
        history.build(_commit(n), 1 / 1.2)
    # Neither another branch's builds nor this build's own runs (measured before, at this
    # level) are history: either would have made these runs the baseline, and passed.
    for n in range(8, 11):
        history.build(_commit(n), 1.0, branch="feature")
    history.build(THIS, 1.0, runs=6)
    result, check = _check(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "largest_contentful_paint regression: median 670 ms vs baseline 5* ms, +1* ms "
        "(95% interval +* ms to +* ms), p=*, n=10 vs 24, limit largest_contentful_paint:10% "
        "(at most 6* ms) mobile/us http://demo.test/fast report:*",
    ])
    result.stdout.re_match_lines([
        r"baseline comparison \(history of main\)",
        rf"history baseline for mobile/us http://demo.test/fast: 8 builds of main \(24 runs\), "
        rf"{_commit(0)[:7]} to {_commit(7)[:7]}: no change among them",
    ])
    assert check["verdict"] == "regression"
    assert check["n_baseline"] == 24


def test_an_unchanged_build_passes_against_the_newest_builds(pytester: pytest.Pytester,
                                                            history: History) -> None:
    for n in range(12):
        history.build(_commit(n), 1.0)
    result, check = _check(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.re_match_lines([
        r"mobile/us http://demo.test/fast\s+largest_contentful_paint\s+.*10 vs 30\s+ok\s+pass",
        rf"history baseline for mobile/us http://demo.test/fast: 10 builds of main \(30 runs\), "
        rf"{_commit(2)[:7]} to {_commit(11)[:7]}: the newest 10 of 12, no change among them",
    ])
    assert check["n_baseline"] == 30


def test_only_the_builds_after_the_newest_change_are_the_baseline(
        pytester: pytest.Pytester, history: History) -> None:
    # Main was 40 % faster, then slowed down to these runs' level 4 builds ago: these
    # runs regress against the old level, not against the new one.
    for n in range(8):
        history.build(_commit(n), 1 / 1.4)
    for n in range(8, 12):
        history.build(_commit(n), 1.0)
    result, check = _check(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "history baseline for mobile/us http://demo.test/fast: 4 builds of main (12 runs), "
        f"{_commit(8)[:7]} to {_commit(11)[:7]}: since largest_contentful_paint changed at "
        f"{_commit(8)[:7]}",
    ])
    assert check["n_baseline"] == 12
    assert check["verdict"] == "ok"
    # Without the change point the newest 10 builds, 6 of them at the old level, would
    # have been the baseline: the same runs then fail as a regression.
    stored = pagelab.history(FAST, branch="main").frame
    mixed = budgets.baseline_from_history(stored, [], branch="main", exclude_commit=THIS)
    assert mixed.baseline.cells[0].runs == 30
    replayed = pd.read_csv(RUNS).query("url == @FAST")
    [unsplit] = budgets.compare_baseline(
        mixed.baseline, replayed, budgets.parse_regression_limits("largest_contentful_paint:10%"),
    ).results
    assert unsplit.verdict == "regression"


def test_a_page_without_history_is_not_compared_and_said(pytester: pytest.Pytester,
                                                         history: History) -> None:
    history.build(_commit(1), 1.0, branch="feature")  # another branch's only
    result, check = _check(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "baseline warning: baseline has no runs for mobile/us http://demo.test/fast: not "
        "compared",
    ])
    assert check == {}


def test_usage_errors(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_pages=TEST)
    monkeypatch.setenv("PAGELAB_COMMIT", THIS)
    result = pytester.runpytest(REPLAY, "--pagelab-against=history", LIMITS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*--pagelab-against=history: no branch: set PAGELAB_BRANCH (with PAGELAB_COMMIT) or "
        "run in a git checkout on a branch*",
    ])
    monkeypatch.setenv("PAGELAB_BRANCH", "main")
    pytester.path.joinpath("baseline.json").write_text("{}")
    result = pytester.runpytest(REPLAY, "--pagelab-against=history",
                                "--pagelab-compare=baseline.json", LIMITS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*--pagelab-against=history and --pagelab-compare=BASELINE are two baselines: give "
        "one*",
    ])
    result = pytester.runpytest(REPLAY, "--pagelab-against=yesterday", LIMITS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--pagelab-against: expected history, got 'yesterday'*"])
    result = pytester.runpytest(REPLAY, LIMITS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*--pagelab-compare-fail needs --pagelab-compare=BASELINE or --pagelab-against=history*",
    ])


@pytest.mark.engine
def test_each_build_s_runs_are_the_next_build_s_history(
        pytester: pytest.Pytester, demo_url: str, engine_cache: str, data_dir: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The real engine, 2 builds x 4 runs: the first build has no history (said, not
    # compared); the plugin stores its runs with their build, so the second build is
    # compared with them.
    monkeypatch.setenv("PAGELAB_CACHE_DIR", engine_cache)
    monkeypatch.setenv("PAGELAB_BRANCH", "main")
    pytester.makepyfile(test_pages=f"""
        def test_fast(perf):
            perf.measure("{demo_url}/fast", devices="desktop")
    """)
    args = ("--pagelab-runs=4", "--pagelab-against=history",
            "--pagelab-compare-fail=largest_contentful_paint:50%")
    monkeypatch.setenv("PAGELAB_COMMIT", "a" * 40)
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"baseline warning: baseline has no runs for desktop/us "
                                 f"{demo_url}/fast: not compared"])
    monkeypatch.setenv("PAGELAB_COMMIT", "b" * 40)
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1)
    result.stdout.re_match_lines([
        rf"desktop/us {demo_url}/fast\s+largest_contentful_paint\s+.*4 vs 4\s+\S+\s+pass",
        rf"history baseline for desktop/us {demo_url}/fast: 1 build of main \(4 runs\), "
        r"aaaaaaa to aaaaaaa: no change among them",
    ])
    stored = pagelab.history(branch="main").frame
    assert stored["commit"].tolist() == ["a" * 40] * 4 + ["b" * 40] * 4


def test_each_cell_has_its_own_stable_segment() -> None:
    # budgets.baseline_from_history alone, on a frame: desktop's level moved at build 9,
    # mobile's never; each cell keeps its own builds; the build checked and failed runs
    # are left out.
    start = pd.Timestamp("2026-11-01", tz="UTC")
    frame = from_records([
        {"url": FAST, "device": device, "location": "us", "status": "success",
         "commit": _commit(build),
         "created_at": (start + pd.Timedelta(hours=build, seconds=run)).isoformat(),
         "largest_contentful_paint": LCP[(3 * build + run) % len(LCP)]
         * (1.4 if device == "desktop" and build >= 9 else 1.0)}
        for build in range(15) for run in range(3) for device in ("mobile", "desktop")
    ] + [  # a newer build whose mobile runs all failed: no build of the level
        {"url": FAST, "device": "mobile", "location": "us", "status": "failed",
         "commit": _commit(15), "created_at": (start + pd.Timedelta(hours=15)).isoformat()}])
    history = budgets.baseline_from_history(frame, ["largest_contentful_paint"],
                                            branch="main", exclude_commit=_commit(14))
    desktop = history.baseline.cell(FAST, "desktop", "us")
    mobile = history.baseline.cell(FAST, "mobile", "us")
    assert desktop is not None
    assert mobile is not None
    assert (desktop.runs, mobile.runs) == (15, 30)  # builds 9-13; the newest 10 of 0-13
    assert history.notes[(FAST, "desktop", "us")] == [
        f"history baseline for desktop/us {FAST}: 5 builds of main (15 runs), "
        f"{_commit(9)[:7]} to {_commit(13)[:7]}: since largest_contentful_paint changed at "
        f"{_commit(9)[:7]}"]
    assert history.baseline.commit == _commit(13)
    assert history.notes[(FAST, "mobile", "us")] == [
        f"history baseline for mobile/us {FAST}: 10 builds of main (30 runs), "
        f"{_commit(4)[:7]} to {_commit(13)[:7]}: the newest 10 of 14, no change among them"]
    nothing = budgets.baseline_from_history(frame.iloc[:0], ["largest_contentful_paint"],
                                            branch="main")
    assert nothing.baseline.cells == []


def test_pagelab_check_against_history_is_the_plugin_s_gate(
        tmp_path: Path, history: History, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The same pipeline under `pagelab check --against history`: the same baseline, table,
    # notes and verdict as the plugin's, exit 1 on the regression.
    from pagelab.cli import main

    for n in range(8):  # main was 20 % faster than these runs
        history.build(_commit(n), 1 / 1.2)
    history.build(THIS, 1.0, runs=6)
    budget_file = tmp_path / "budgets.yaml"
    budget_file.write_text("base_url: http://demo.test\n"
                           "budgets: {largest_contentful_paint: 5000}\npages: [{url: /fast}]\n")
    check = ["check", str(budget_file), "--replay", str(RUNS)]
    limits = ["--compare-fail", "largest_contentful_paint:10%"]
    assert main([*check, "--against", "history", *limits]) == 1
    out = capsys.readouterr().out
    assert "1 check: 1 passed, 0 failed, 0 warned" in out  # the budget itself is met
    assert "\nbaseline comparison (history of main)\n" in out
    assert "/heavy" not in out  # a page of the replayed file the budget file does not name
    assert re.search(r"mobile/us http://demo.test/fast\s+largest_contentful_paint\s+5\d\d ms\s+"
                     r"670 ms\s+.*10 vs 24\s+regression\s+FAIL", out)
    assert (f"history baseline for mobile/us http://demo.test/fast: 8 builds of main (24 "
            f"runs), {_commit(0)[:7]} to {_commit(7)[:7]}: no change among them") in out
    assert main(check) == 0  # without --against: the budgets only
    # The build checked is the one the runs measure (resolved once, not again to measure).
    with pagelab.connect() as runner:
        checked = budgets.history_baseline(runner, ["largest_contentful_paint"]).build
    assert checked == Build(commit=THIS, branch="main")

    # Bad input: one line each, exit 2, as the plugin's usage errors say it.
    assert main([*check, *limits]) == 2
    assert capsys.readouterr().err.strip().endswith("--compare-fail needs --against history")
    monkeypatch.delenv("PAGELAB_BRANCH")
    assert main([*check, "--against", "history", *limits]) == 2
    assert "--against history: no branch: set PAGELAB_BRANCH" in capsys.readouterr().err
