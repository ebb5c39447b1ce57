"""History over builds (issue 37, points 1 and 2) without the engine: every test stored with
its build on SQLite and on PostgreSQL (migration 5; older rows read as none), listed by
branch and commit, carried into frames and exports, and read back by ``pagelab.history`` in
build order."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import psycopg
import pytest

import pagelab
from pagelab import InvalidInputError, LocalRunner, Results
from pagelab.frames import COLUMNS, read_runs, to_frame
from pagelab.models import (
    BatchType,
    Build,
    Device,
    LighthouseConfig,
    Location,
    Metrics,
    TestStatus,
)
from pagelab.runners import FlowCell
from pagelab.runners._flows import store_flow_run
from pagelab.store import (
    Store,
    TestQuery,
    create_batch,
    create_test,
    finish_test,
    get_batch,
    get_test,
    list_tests,
    transaction,
)

FAST, HEAVY = "http://demo.test/fast", "http://demo.test/heavy"
MAIN = Build(commit="c" * 40, branch="main", commit_time=datetime(2026, 11, 1, tzinfo=UTC),
             build_url="https://ci.example/runs/1", pull_request="12")


def _test(conn: Any, store: Store, build: Build | None, *, url: str = FAST,
          created_at: int | None = None, lcp: float | None = None) -> str:
    test_id = create_test(conn, url=url, device=Device.MOBILE, location=Location.US,
                          config=LighthouseConfig(), retention=store.retention,
                          created_at=created_at, build=build)
    if lcp is not None:
        finish_test(conn, test_id, status=TestStatus.SUCCESS, lighthouse_version="13",
                    metrics=Metrics(largest_contentful_paint=lcp), error=None,
                    vantage="local", environment=None)
    return test_id


# -- stored and listed, both stores ----------------------------------------------------------


def test_each_test_keeps_its_build_and_the_list_filters_by_it(store: Store) -> None:
    other = Build(commit="d" * 40, branch="feature")
    with store.connection() as conn, transaction(conn):
        mine = _test(conn, store, MAIN)
        theirs = _test(conn, store, other)
        unknown = _test(conn, store, None)
        batch_id, items = create_batch(
            conn, urls=[FAST, HEAVY], devices=[Device.MOBILE], locations=[Location.US],
            batch_type=BatchType.MULTIPLE_URLS, config=LighthouseConfig(),
            items=[(FAST, Device.MOBILE, Location.US), (HEAVY, Device.MOBILE, Location.US)],
            retention=store.retention, build=other)
    with store.connection() as conn:
        report = get_test(conn, mine)
        assert report is not None
        assert report.build == MAIN
        nothing = get_test(conn, unknown)
        assert nothing is not None
        assert nothing.build is None
        batch = get_batch(conn, batch_id)
        assert batch is not None
        assert [i.build for i in batch.reports] == [other, other]

        def ids(**filters: Any) -> set[str]:
            return {str(r.id) for r in list_tests(conn, TestQuery(per_page=100, **filters))}

        assert ids(branch="main") == {mine}
        assert ids(branch="feature") == {theirs, *items}
        assert ids(commit="d" * 40, branch="feature") == {theirs, *items}
        assert ids(commit="d" * 40, branch="main") == set()
        assert ids() == {mine, theirs, unknown, *items}


def test_a_deep_page_of_one_branch_is_that_branch_s(store: Store) -> None:
    # Past the first pages the list seeks by per-minute counts of every test: a branch's
    # deep page must not use them (they count the other branch's tests too).
    start = int(datetime.now(UTC).timestamp() * 1000) - 600 * 60_000  # unexpired
    with store.connection() as conn, transaction(conn):
        for n in range(500):
            _test(conn, store, MAIN if n % 2 else Build(commit="e", branch="other"),
                  created_at=start + n * 60_000)
    with store.connection() as conn:
        page = list_tests(conn, TestQuery(page=21, per_page=10, branch="main"))
    # main holds the odd n, newest first: page 21 starts at its 201st newest.
    expected = [start + n * 60_000 for n in range(499, 0, -2)][200:210]
    assert [int(r.created_at.timestamp() * 1000) for r in page if r.created_at] == expected
    assert {r.build for r in page} == {MAIN}


def test_a_sqlite_store_of_schema_4_reads_its_tests_as_of_no_build(tmp_path: Path) -> None:
    from pagelab.store._db import MIGRATIONS, SCHEMA_VERSION

    raw = sqlite3.connect(tmp_path / "pagelab.sqlite3")
    for script in MIGRATIONS[:4]:
        raw.executescript(script)
    raw.execute(
        "INSERT INTO tests (id, account_id, url, device, location, config_json, status, "
        "created_at, expires_at) VALUES ('lt_old', 'local', 'https://a.test/', 'mobile', "
        "'us', '{}', 'success', 1, 9999999999999)")
    raw.execute("PRAGMA user_version = 4")
    raw.commit()
    raw.close()
    store = Store(tmp_path)
    with store.connection() as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
        old = get_test(conn, "lt_old", now=0)
        assert old is not None
        assert old.build is None
    with store.connection() as conn, transaction(conn):
        new = _test(conn, store, MAIN)
    with store.connection() as conn:
        assert [r.id for r in list_tests(conn, TestQuery(branch="main"), now=0)] == [new]


def test_a_team_store_of_schema_4_reads_its_tests_as_of_no_build(postgres: Any) -> None:
    from pagelab.store._pg_schema import PG_MIGRATIONS

    url = postgres.new_database()
    with psycopg.connect(url, autocommit=True) as raw:  # as a pagelab of migration 4 left it
        for script in PG_MIGRATIONS[:4]:
            raw.execute(script.encode())
        raw.execute("CREATE TABLE pagelab_schema (version INTEGER NOT NULL)")
        raw.execute("INSERT INTO pagelab_schema (version) VALUES (4)")
        raw.execute(
            "INSERT INTO tests (id, account_id, url, device, location, config_json, status, "
            "created_at, expires_at) VALUES ('lt_old', 'local', 'https://a.test/', 'mobile', "
            "'us', '{}', 'success', 1, 9999999999999)")
    store = Store(database=url)
    with store.connection() as conn:
        assert conn.execute("SELECT version FROM pagelab_schema").fetchone()[0] == 5
        old = get_test(conn, "lt_old", now=0)
        assert old is not None
        assert old.build is None
        assert conn.execute("SELECT build_commit_time FROM tests").fetchone()[0] is None


# -- frames and exports ------------------------------------------------------------------------


def test_frames_name_each_run_s_build_and_exports_keep_it(tmp_path: Path) -> None:
    with LocalRunner(tmp_path / "runner") as runner:
        with runner.store.connection() as conn, transaction(conn):
            _test(conn, runner.store, MAIN, lcp=1000.0)
            _test(conn, runner.store, None, lcp=1100.0)
        frame = Results(runner.list()[::-1]).frame
    assert list(frame.columns) == list(COLUMNS)
    assert str(frame["commit"].dtype) == str(frame["branch"].dtype) == "string"
    assert frame["commit"].tolist() == [MAIN.commit, pd.NA]
    assert frame["branch"].tolist() == ["main", pd.NA]
    results = Results.from_frame(frame)
    assert [r.build for r in results.reports] == [Build(commit=MAIN.commit, branch="main"),
                                                  None]
    csv = results.export(tmp_path / "runs.csv")
    assert read_runs(csv)[["commit", "branch"]].equals(frame[["commit", "branch"]])
    parquet = pd.read_parquet(results.export(tmp_path / "runs.parquet"))
    assert parquet["commit"].tolist()[0] == MAIN.commit
    records = json.loads(results.export(tmp_path / "runs.json").read_text())
    assert [(r["commit"], r["branch"]) for r in records] == [(MAIN.commit, "main"),
                                                              (None, None)]


def test_a_flow_run_s_steps_keep_its_build(tmp_path: Path) -> None:
    from test_flow_store import FLOW, RECORDED, recorded_report

    flow_result = json.loads(RECORDED.read_text(encoding="utf-8"))
    store = Store(tmp_path / "store")
    cell = FlowCell.of(FLOW, "mobile", "us", None, MAIN)
    report = recorded_report(flow_result)
    report.build = cell.build
    stored = store_flow_run(store, report, cell, vantage="local")
    with store.connection() as conn:
        listed = list_tests(conn, TestQuery(commit=MAIN.commit))
    assert sorted(str(r.id) for r in listed) == sorted(str(s.id) for s in stored.steps)
    assert {r.build for r in listed} == {MAIN}
    frame = to_frame(stored)
    assert set(frame["commit"]) == {MAIN.commit}
    assert set(frame["step"]) == {"shop", "add", "cart"}


# -- pagelab.history -------------------------------------------------------------------------


#: (commit, branch, minute of each run): build b2's first run comes before b1's last, and
#: the commits' names are not in build order.
#: An hour ago: the runs are unexpired.
_START = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
BUILDS = [("b9", "main", (0, 1, 5)), ("b2", "main", (2, 3, 4)), ("b5", "main", (6, 7, 8)),
          ("b1", "feature", (9, 10, 11)), ("b4", "main", (12, 13, 14))]


@pytest.fixture
def history_runner(data_dir: Path) -> Iterator[LocalRunner]:
    """The default runner's store (``PAGELAB_DATA_DIR``) holding five builds of /fast (LCP
    1000 ms, 1300 ms from b5 on), a /heavy run per build and a run of no build."""
    start = int(_START.timestamp() * 1000)
    runner = LocalRunner()
    with runner.store.connection() as conn, transaction(conn):
        for commit, branch, minutes in BUILDS:
            build = Build(commit=commit, branch=branch)
            level = 1300.0 if commit in ("b5", "b1", "b4") else 1000.0
            for k, minute in enumerate(minutes):
                _test(conn, runner.store, build, created_at=start + minute * 60_000,
                      lcp=level + k)
            _test(conn, runner.store, build, url=HEAVY, created_at=start + minutes[0] * 60_000,
                  lcp=5000.0)
        _test(conn, runner.store, None, created_at=start + 3 * 60_000 + 1, lcp=999.0)
    with runner:
        yield runner


def test_history_returns_the_stored_runs_in_build_order(history_runner: LocalRunner) -> None:
    results = pagelab.history(FAST)  # the runner measure would use: this store
    frame = results.frame
    assert isinstance(results, Results)
    assert isinstance(results.runner, LocalRunner)
    # b9 (first run at minute 0) before b2 (minute 2), the run of no build (minute 3) at
    # its own time, each build's runs together in time order.
    assert frame["commit"].fillna("-").tolist() == [
        "b9", "b9", "b9", "b2", "b2", "b2", "-", "b5", "b5", "b5", "b1", "b1", "b1",
        "b4", "b4", "b4"]
    b9 = frame[frame["commit"] == "b9"]["created_at"]
    assert b9.is_monotonic_increasing
    assert set(frame["url"]) == {FAST}


def test_history_filters_by_branch_device_location_and_time(
        history_runner: LocalRunner) -> None:
    main = pagelab.history(branch="main", runner=history_runner).frame
    assert list(dict.fromkeys(main["commit"])) == ["b9", "b2", "b5", "b4"]
    assert len(main) == 16  # 4 builds x (3 + 1 heavy)
    assert len(pagelab.history(device="desktop", runner=history_runner)) == 0
    assert len(pagelab.history([FAST, HEAVY], location=["us"], runner=history_runner)) == 21
    window = pagelab.history(FAST, since=_START + timedelta(minutes=6),
                             until=_START + timedelta(minutes=11), runner=history_runner)
    assert window.frame["commit"].tolist() == ["b5"] * 3 + ["b1"] * 3
    assert len(pagelab.history(FAST, limit=4, runner=history_runner)) == 4  # the newest 4


def test_history_feeds_change_points(history_runner: LocalRunner) -> None:
    frame = pagelab.history(FAST, branch="main", runner=history_runner).frame
    changes = pagelab.stats.change_points(frame, metric="largest_contentful_paint",
                                          min_runs=3, alpha=0.2)
    assert changes[["commit", "previous_commit", "direction"]].values.tolist() == [
        ["b5", "b2", "regression"]]


def test_history_refuses_bad_arguments_before_reading(history_runner: LocalRunner) -> None:
    with pytest.raises(InvalidInputError, match="runner: expected a pagelab Runner"):
        pagelab.history(runner="local")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="branch: at most 255 characters"):
        pagelab.history(branch="b" * 256, runner=history_runner)
    with pytest.raises(InvalidInputError, match="device: unknown 'fridge'"):
        pagelab.history(device="fridge", runner=history_runner)


# -- the LocalRunner's own faces ---------------------------------------------------------------


def test_the_local_runner_stores_the_build_of_each_face(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No Chromium: each test is stored (with its build), then failed as interrupted when the
    # engine cannot start; what matters here is what was stored, not a Lighthouse run.
    from pagelab import EngineNotInstalledError

    monkeypatch.setenv("PAGELAB_CHROMIUM", str(tmp_path / "no-chromium"))
    with LocalRunner(tmp_path / "runner") as runner:
        with pytest.raises(EngineNotInstalledError):
            runner.lighthouse(FAST, build=MAIN)
        with pytest.raises(EngineNotInstalledError):
            runner.batch([FAST, HEAVY], ["mobile"], ["us"], build={"commit": "batch"})
        monkeypatch.setenv("PAGELAB_COMMIT", "from-env")
        with pytest.raises(EngineNotInstalledError):
            runner.lighthouse(FAST)
        with pytest.raises(EngineNotInstalledError):
            pagelab.measure(FAST, runs=1, runner=runner, progress=False,
                            build={"commit": "measured", "branch": "main"})
        assert [r.build for r in runner.list(commit=MAIN.commit)] == [MAIN]
        assert len(runner.list(commit="batch")) == 2
        assert [r.build for r in runner.list(commit="from-env")] == [Build(commit="from-env")]
        assert [r.build for r in runner.list(branch="main")] == [
            Build(commit="measured", branch="main"), MAIN]
        with pytest.raises(InvalidInputError, match="build: unknown key 'sha'"):
            runner.lighthouse(FAST, build={"sha": "x"})
        with pytest.raises(InvalidInputError, match="commit: expected a non-empty string"):
            runner.list(commit="")


def test_a_runner_written_before_builds_still_reads_its_history(
        history_runner: LocalRunner) -> None:
    # A Runner of one's own whose list() takes no branch / commit (the protocol before
    # issue 37): read_history asks for them only when a filter is given.
    from pagelab.models import TestReport, TimeInput
    from pagelab.runners import read_history

    class OlderRunner:
        def list(self, page: int = 1, per_page: int = 10, *,
                 created_at_gte: TimeInput = None,
                 created_at_lte: TimeInput = None) -> list[TestReport]:
            return history_runner.list(page, per_page, created_at_gte=created_at_gte,
                                       created_at_lte=created_at_lte)

    assert len(read_history(OlderRunner(), url=FAST)) == 16  # type: ignore[arg-type]
