"""pagelab.measure and Results: the matrix on the real engine against the demo site, and the
planning, input checks and Results plumbing without it (recorded real runs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import pagelab
from pagelab import InvalidInputError, LocalRunner, Results, TestReport, measure
from pagelab._measure import _cells
from pagelab.engine._settings import QUIET_WINDOW_SETTINGS
from pagelab.models import BatchType
from pagelab.runners._api import _units
from pagelab.runners._local import INTERRUPTED
from pagelab.stats import MIN_RUNS
from pagelab.store._records import run_timing
from quiet_windows import QUICK_WINDOW_MS
from recorded_runs import load_runs

# What these tests measure is not Lighthouse's doing: the short quiet window (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")

LCP, TBT = "largest_contentful_paint", "total_blocking_time"


# -- without the engine ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"urls": "ftp://x/"}, "urls[0]: must be an absolute http"),
        ({"urls": []}, "urls: give at least one value"),
        ({"urls": "http://x/", "devices": ["mobile", "fridge"]}, "devices[1]: unknown 'fridge'"),
        ({"urls": "http://x/", "locations": "mars"}, "locations[0]: unknown 'mars'"),
        ({"urls": "http://x/", "connections": ["4g", "9g"]}, "connections[1]: unknown '9g'"),
        ({"urls": "http://x/", "runs": 0}, "runs: expected a positive integer"),
        ({"urls": "http://x/", "runs": True}, "runs: expected a positive integer"),
        ({"urls": "http://x/", "config": {"video": "maybe"}}, "config.video"),
        ({"urls": "http://x/", "progress": "yes"}, "progress: expected"),
        ({"urls": "http://x/", "runner": object()}, "runner: expected a pagelab Runner"),
    ],
)
def test_bad_input_is_refused_before_anything_runs(
    kwargs: dict[str, Any], message: str, data_dir: Path
) -> None:
    with pytest.raises(InvalidInputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        measure(**kwargs)
    assert not data_dir.exists() or not LocalRunner(data_dir).list()


def test_cells_are_url_major_and_connections_replace_the_config_one() -> None:
    cells = _cells(["http://a/", "http://b/", "http://a/"], ["mobile", "iphone11"], "us",
                   ["4g", "3g"], {"connection": "fiber", "video": True})
    assert len(cells) == 2 * 2 * 2  # the repeated URL is one cell
    assert [(c.url, c.device.value, c.config.connection) for c in cells[:4]] == [
        ("http://a/", "mobile", "4g"), ("http://a/", "mobile", "3g"),
        ("http://a/", "phone11", "4g"), ("http://a/", "phone11", "3g"),
    ]
    assert all(c.config.video for c in cells)
    (default,) = _cells("http://a/", "mobile", "us", None, None)
    assert default.config.connection is None  # the device's default connection


def test_one_round_is_a_spec_batch_per_varied_dimension() -> None:
    two_by_two = _units(_cells(["http://a/", "http://b/"], ["mobile", "desktop"], "us", None,
                               None), run=3)
    assert [(u.batch_type, len(u.cells), u.run) for u in two_by_two] == [
        (BatchType.MULTIPLE_URLS, 2, 3), (BatchType.MULTIPLE_URLS, 2, 3)
    ]
    locations = _units(_cells("http://a/", "mobile", ["us", "de", "jp"], None, None), 0)
    assert [(u.batch_type, len(u.cells)) for u in locations] == [
        (BatchType.MULTIPLE_LOCATIONS, 3)
    ]
    # A batch has one config: each connection is its own request; one cell is one test.
    per_connection = _units(_cells("http://a/", "mobile", "us", ["4g", "3g"], None), 0)
    assert [(u.batch_type, len(u.cells)) for u in per_connection] == [(None, 1), (None, 1)]


def test_results_from_a_frame_round_trip_to_reports() -> None:
    frame = load_runs()
    results = Results.from_frame(frame)
    assert len(results) == len(frame)
    assert isinstance(results.reports[0], TestReport)
    rebuilt = pagelab.frames.to_frame(results.reports)
    pd.testing.assert_frame_equal(
        rebuilt.drop(columns="run"), frame.drop(columns="run"), check_dtype=True
    )
    summary = results.summary(by="url")
    assert summary.set_index("url")["runs"].to_dict() == frame["url"].value_counts().to_dict()
    assert "<table" in results._repr_html_()
    with pytest.raises(InvalidInputError, match="no url"):
        Results.from_frame(frame.drop(columns="url"))
    with pytest.raises(InvalidInputError, match="2 run indices"):
        Results(results.reports[:1], runs=[0, 1])


def test_results_delegate_to_export_and_plots(tmp_path: Path) -> None:
    results = Results.from_frame(load_runs())
    written = results.export(tmp_path / "runs.csv")
    assert len(pd.read_csv(written)) == len(results)
    ax = results.plot(LCP, by="url")
    labels = ax.get_xlabel() + ax.get_ylabel()
    assert "LCP" in labels
    assert "ms" in labels
    ax.figure.clf()


# -- the real engine -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pages(demo_url: str) -> tuple[str, str]:
    return f"{demo_url}/fast", f"{demo_url}/heavy"


@pytest.fixture(scope="module")
def runner(engine: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    with LocalRunner(tmp_path_factory.mktemp("measure"), engine=engine) as local:
        yield local


#: Runs a cell of the matrix: ``stats.MIN_RUNS`` (4), so that its mobile cells are also the
#: heavy-against-fast comparison's sides (which measured 5 + 5 runs of its own before).
RUNS = MIN_RUNS
#: 2 URLs x 2 devices.
CELLS = 4


@pytest.fixture(scope="module")
def matrix(runner: LocalRunner, pages: tuple[str, str]) -> Results:
    """2 URLs x 2 devices x 4 runs: 16 engine runs, read by two tests."""
    seen: list[TestReport] = []
    results = measure(list(pages), devices=["mobile", "desktop"], runs=RUNS, runner=runner,
                      progress=seen.append)
    assert len(seen) == CELLS * RUNS  # the callback saw every finished run
    return results


@pytest.mark.engine
def test_matrix_gives_every_run_interleaved(matrix: Results, runner: LocalRunner,
                                            pages: tuple[str, str]) -> None:
    frame = matrix.frame
    assert len(frame) == CELLS * RUNS
    assert not matrix.interrupted
    assert matrix.runner is runner
    assert (frame["status"] == "success").all(), frame[["url", "device", "error_code"]]
    assert frame.groupby(["url", "device"], observed=True).size().tolist() == [RUNS] * CELLS
    # Stored order (creation and engine start) is run 1 of every cell, then run 2, ...
    with runner.store.connection() as conn:
        started = [run_timing(conn, test_id)[0] for test_id in frame["id"]]
    stored = frame.assign(started=pd.Series(started, dtype="Int64")).sort_values(
        "created_at", kind="stable")
    assert stored["run"].tolist() == [run for run in range(RUNS) for _ in range(CELLS)]
    assert stored["started"].is_monotonic_increasing
    for run in range(RUNS):
        cells = stored[stored["run"] == run][["url", "device"]].astype(str)
        assert len(cells.drop_duplicates()) == CELLS
    # Every run is in the store as well.
    assert {r.id for r in runner.list(per_page=100)} >= set(frame["id"])
    # Measured with this module's quiet window, which the stored LHR records.
    settings = matrix.lhr(str(frame["id"].iloc[0]))["configSettings"]
    assert [settings[name] for name in QUIET_WINDOW_SETTINGS] == [int(QUICK_WINDOW_MS)] * 4

    summary = matrix.summary()
    assert len(summary) == CELLS
    assert summary["runs"].tolist() == [RUNS] * CELLS
    assert summary["failed"].sum() == 0
    assert summary["representative_id"].isin(frame["id"]).all()
    long = matrix.long
    assert len(long) == CELLS * RUNS * len(pagelab.models.METRIC_NAMES)
    assert set(matrix.describe(metrics=[LCP])["n"]) == {RUNS}
    assert repr(matrix) == f"<Results: {CELLS * RUNS} runs in {CELLS} cells, 0 failed>"
    assert pages[0] in set(frame["url"])


@pytest.mark.engine
def test_an_interrupt_returns_what_finished(pages: tuple[str, str], engine: Any,
                                            tmp_path: Path) -> None:
    finished: list[TestReport] = []

    def stop_after_two(report: TestReport) -> None:
        finished.append(report)
        if len(finished) == 2:
            raise KeyboardInterrupt

    with LocalRunner(tmp_path / "store", engine=engine) as runner:
        results = measure(list(pages), runs=3, runner=runner, progress=stop_after_two)
        stored = runner.list(per_page=100)
    assert results.interrupted
    assert [r.id for r in results.reports] == [r.id for r in finished]
    assert results.frame["run"].tolist() == [0, 0]
    # Nothing was submitted after the interrupt; what finished is in the store too.
    assert sorted(r.id or "" for r in stored) == sorted(r.id or "" for r in finished)
    assert "interrupted" in repr(results)


@pytest.mark.engine
def test_heavy_page_is_slower_than_fast_page(matrix: Results,
                                             pages: tuple[str, str]) -> None:
    """On mobile, from the matrix's runs (4 a side, interleaved). 4 a side decide only when
    every run of one side beats every run of the other (docs/analysis.md): these pages are
    that far apart (recorded mobile runs: LCP 0.64-0.76 s against 7.6-8.1 s, TBT at most
    170 ms against at least 790 ms), so no fifth run a side is needed."""
    fast, heavy = pages
    mobile = Results.from_frame(matrix.frame[matrix.frame["device"] == "mobile"])
    assert len(mobile) == 2 * RUNS
    comparison = mobile.compare(by="url", a=fast, b=heavy, metrics=[LCP, TBT])
    verdicts = dict(zip(comparison["metric"].astype(str), comparison["verdict"], strict=True))
    assert verdicts == {LCP: "b is slower", TBT: "b is slower"}, comparison.to_string()
    assert (comparison["n_a"] == RUNS).all()
    assert (comparison["n_b"] == RUNS).all()
    assert (comparison["ci_low"] > 0).all()


@pytest.mark.engine
def test_a_local_run_interrupted_midway_is_recorded_failed(pages: tuple[str, str],
                                                          tmp_path: Path) -> None:
    def stop_once_active(report: TestReport) -> None:
        if report.status == "active":
            raise KeyboardInterrupt

    # Its own engine: an interrupt mid-run must not disturb the shared one.
    with LocalRunner(tmp_path / "store") as runner:
        with pytest.raises(KeyboardInterrupt):
            runner.lighthouse(pages[0], progress=stop_once_active)
        (stored,) = runner.list()
    # Not left "active" for good: failed, with a code saying why.
    assert stored.status == "failed"
    assert stored.error is not None
    assert stored.error.code == INTERRUPTED
