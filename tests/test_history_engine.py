"""Change points on the real engine (issue 37, "Done when"): a demo page whose server delay
changes at known builds (20 builds x 3 runs) gives exactly those change points, and an
unchanged page measured in the same runs gives none; ``pagelab changes
--fail-on-regression`` exits 1 while the newest level is a regression.

One module-scoped measurement: 20 builds of a two-step user flow, 3 runs a build (60
Lighthouse flow runs, 120 navigations). The flow's first step loads ``/fast``, which waits
``DemoServer.delay_ms`` before its first byte; its second loads ``/lean``, which the delay
does not touch. Both pages are thus measured in the same runs, back to back, under the same
load of a shared machine, and each step is a test of its own in the store (a cell of its
own in the history). The delay steps up by 250 ms at build 8 and again at build 15: on
loopback the pages' TTFB is a few ms and varies by a few ms, so every run of a level lies
far from every run of the next (the ranks the method tests separate completely), and the
newest level is a regression.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import pagelab
from pagelab import Flow, LocalRunner
from pagelab.demo import DemoServer
from pagelab.engine import Engine

# The first test carries the measurement (60 flow runs, each waiting its turn at the
# machine-wide engine lock): above the suite's 600 s. Only TTFB is read: navigations that
# end at the load event (conftest.py, LOAD_ONLY_WINDOW_MS) take half as long.
pytestmark = [pytest.mark.engine, pytest.mark.timeout(2400),
              pytest.mark.usefixtures("load_only_navigation")]

BUILDS = 20
RUNS = 3
#: Where the server delay steps up (the first build of each new level), and by how much.
STEPS = {8: 250, 15: 500}
METRIC = "server_response_time"


def commit(build: int) -> str:
    return f"build-{build:02d}"


def delay_ms(build: int) -> int:
    """The demo server's delay while ``build`` is measured."""
    return max((ms for first, ms in STEPS.items() if build >= first), default=0)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of this module's measurement (the autouse ``data_dir`` is per test)."""
    return tmp_path_factory.mktemp("history") / "data"


@pytest.fixture(scope="module")
def site() -> Iterator[DemoServer]:
    # A server of its own, not the session's demo_url: its delay changes every page it
    # serves, and other modules measure the session's site at its default.
    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
def measured(engine: Engine, site: DemoServer, data: Path) -> pagelab.Results:
    """20 builds of the two-page flow, 3 runs each, stored with their build."""
    flow = (Flow("two pages")
            .navigate(site.page_url("fast"), name="delayed")
            .navigate(site.page_url("lean"), name="unchanged"))
    runs = []
    with LocalRunner(data, engine=engine) as runner:
        for build in range(1, BUILDS + 1):
            site.delay_ms = delay_ms(build)
            results = pagelab.measure(flow, devices="desktop", runs=RUNS, runner=runner,
                                      progress=False,
                                      build={"commit": commit(build), "branch": "main"})
            runs.extend(results.flow_reports)
        site.delay_ms = 0
        history = pagelab.history(branch="main", runner=runner)
    failed = [(r.build, r.error) for r in runs if r.status.value != "success"]
    assert not failed
    assert len(runs) == BUILDS * RUNS
    return history


def step(history: pagelab.Results, name: str) -> pd.DataFrame:
    return history.frame[history.frame["step"] == name]


def test_the_history_holds_every_run_in_build_order(measured: pagelab.Results,
                                                    site: DemoServer) -> None:
    frame = measured.frame
    assert len(frame) == BUILDS * RUNS * 2  # two steps a run
    builds = list(dict.fromkeys(frame["commit"]))
    assert builds == [commit(b) for b in range(1, BUILDS + 1)]
    assert set(frame["branch"]) == {"main"}
    assert set(step(measured, "delayed")["url"]) == {site.page_url("fast")}
    assert set(step(measured, "unchanged")["url"]) == {site.page_url("lean")}


def test_the_delayed_page_changes_exactly_at_the_known_builds(
    measured: pagelab.Results,
) -> None:
    changes = measured.changes(METRIC)
    delayed = changes[changes["step"] == "delayed"]
    assert delayed["commit"].tolist() == [commit(b) for b in STEPS], changes
    assert delayed["previous_commit"].tolist() == [commit(b - 1) for b in STEPS]
    assert delayed["direction"].tolist() == ["regression", "regression"]
    # Each level's median TTFB sits the delay's step above the last (within the few ms the
    # page itself takes on loopback).
    steps = (delayed["after"] - delayed["before"]).tolist()
    assert steps == pytest.approx([250, 250], abs=50)


def test_the_unchanged_page_has_no_change_point(measured: pagelab.Results) -> None:
    changes = measured.changes(METRIC)
    assert changes[changes["step"] == "unchanged"].empty, changes
    # The unchanged page's TTFB is the same few ms as the delayed page's before the delay.
    unchanged = step(measured, "unchanged")[METRIC]
    assert unchanged.median() < 100


def run_cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pagelab ARGS`` in a child process on the measurement's store."""
    env = {**os.environ, "PAGELAB_DATA_DIR": str(data)}
    return subprocess.run([sys.executable, "-m", "pagelab", *args], capture_output=True,
                          text=True, timeout=120, check=False, env=env)


def test_pagelab_changes_fails_on_the_open_regression(measured: pagelab.Results,
                                                      site: DemoServer, data: Path) -> None:
    result = run_cli(data, "changes", "--branch", "main", "--metric", "TTFB",
                     "--fail-on-regression")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"{BUILDS * RUNS * 2} runs of {BUILDS} builds on main"
    # Two steps up, none restored: the page has been slower since the first.
    assert lines[-1] == f"open regression: {METRIC} since {commit(8)}"
    rows = [line.split() for line in lines[2:-1]]
    # The cell, then the metric, the commit and the one before: the delayed page's two steps.
    assert [row[row.index(METRIC) + 1:row.index(METRIC) + 3] for row in rows] == [
        [commit(8), commit(7)], [commit(15), commit(14)]]
    assert all(site.page_url("fast") in row and "'delayed'" in row for row in rows)
    unchanged = run_cli(data, "changes", "--url", site.page_url("lean"), "--metric", "TTFB",
                        "--fail-on-regression")
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr
    assert unchanged.stdout.splitlines()[-1] == "no change found"
