"""The real engine: Lighthouse in Chromium against the bundled demo site.

These tests run real Lighthouse (about 6 s a run, warm); they are grouped so that one run
checks several things.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Collection, Iterator
from pathlib import Path

import psutil
import pytest

from pagelab import LocalRunner, TestReport
from pagelab.demo import DemoServer
from pagelab.engine import ENGINE_CRASHED, Engine, pinned_lighthouse_version
from pagelab.engine._lock import engine_lock
from pagelab.frames import to_frame
from pagelab.models import TIMEOUT, Device, LighthouseConfig, Location, TestStatus
from pagelab.runners import MatrixCell
from pagelab.store import Store
from pagelab.store._records import run_timing
from processes import still_running

pytestmark = pytest.mark.engine

ENGINE_METRICS = (
    "cumulative_layout_shift", "first_contentful_paint", "time_to_interactive",
    "largest_contentful_paint", "server_response_time", "speed_index", "total_blocking_time",
    "performance_score",
)


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _assert_gone(pids: list[int]) -> None:
    alive = still_running(pids)
    assert not alive, f"processes left behind: {alive}"


@pytest.fixture
def site() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


def test_batch_of_demo_pages_measures_their_traits(
    engine: Engine, site: DemoServer, data_dir: Path
) -> None:
    runner = LocalRunner(engine=engine)
    seen: list[tuple[str, ...]] = []
    canary = {"auth_username": "ann", "auth_password": "canary-pass-9f3",
              "cookies": ["sid=canary-cookie-7c1"]}
    batch = runner.batch(
        [site.page_url(p) for p in ("fast", "heavy", "shift")], ["mobile"], ["de"],
        "multiple-urls", canary,
        progress=lambda b: seen.append(tuple(item.status.value for item in b.reports)),
    )
    assert batch.status == "completed"
    assert seen[0] == ("idle", "idle", "idle")
    assert ("active", "idle", "idle") in seen
    assert seen[-1] == ("success", "success", "success")
    fast, heavy, shift = batch.reports
    for item in batch.reports:
        assert item.metrics is not None
        for name in ENGINE_METRICS:
            assert isinstance(getattr(item.metrics, name), float), name
        # Lighthouse 13 no longer computes FMP: null, never invented.
        assert item.metrics.first_meaningful_paint is None
        assert item.report_url is not None
        assert item.report_url.startswith("file://")
        assert item.vantage == "local"
        assert item.lighthouse_version == pinned_lighthouse_version()
        assert item.location == "de"
        # How busy the machine was when the run started.
        assert item.environment is not None
        assert item.environment.cpu_count == os.cpu_count()
        assert item.environment.load_average is not None
        assert item.environment.load_average >= 0
        pressure = item.environment.cpu_pressure
        assert pressure is None or 0 <= pressure <= 100
    assert fast.metrics
    assert heavy.metrics
    assert shift.metrics
    assert fast.metrics.performance_score is not None
    assert fast.metrics.performance_score >= 90
    assert heavy.metrics.largest_contentful_paint > fast.metrics.largest_contentful_paint  # type: ignore[operator]
    assert heavy.metrics.total_blocking_time > 0  # type: ignore[operator]
    assert shift.metrics.cumulative_layout_shift > 0.1  # type: ignore[operator]

    # The page really got the credentials; no stored byte holds them.
    auth = [r.headers.get("authorization") for r in site.requests if r.path == "/fast"]
    assert auth
    assert auth[0]
    assert auth[0].startswith("Basic ")
    stored = b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())
    assert b"canary-pass-9f3" not in stored
    assert b"canary-cookie-7c1" not in stored

    # Artifacts: the full LHR, the HTML report, the final screenshot, the filmstrip, every
    # screenshot of the trace and the HAR of the run (built from the DevTools log, secrets
    # scrubbed).
    store = Store(data_dir)
    with store.connection() as conn:
        names = set(store.artifacts.names(conn, fast.id or ""))
        lhr = json.loads(store.artifacts.read(conn, fast.id or "", "lighthouse-json") or b"{}")
    assert names == {"lighthouse-json", "html-report", "screenshot", "filmstrip", "screenshots",
                     "har"}
    assert lhr["lighthouseVersion"] == pinned_lighthouse_version()
    assert lhr["audits"]["largest-contentful-paint"]["numericValue"] == pytest.approx(
        fast.metrics.largest_contentful_paint
    )

    # History survives: a new runner on the same data dir reads it back.
    again = LocalRunner(engine=engine)
    assert again.get(batch.id or "") == batch
    assert [r.id for r in again.list(per_page=3)] == [i.id for i in reversed(batch.reports)]
    frame = to_frame(batch)
    assert frame["status"].tolist() == ["success"] * 3
    assert frame["chrome_version"].notna().all()


@pytest.mark.usefixtures("quick_navigation_in_test")  # processes, not measurements
def test_run_matrix_trusts_its_checked_cells_and_reads_each_report_once(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36 point 3: ``run_matrix`` runs the cells ``measure`` checked without validating
    them again, and each test's report is read once when no progress callback listens (it
    was read three times: queued, active, final). A closed port fails fast in the browser."""
    import pagelab.runners._local as local
    from pagelab.models import LighthouseTestRequest

    validations: list[object] = []
    original_validate = LighthouseTestRequest.model_validate

    def counting_validate(obj: object, *args: object, **kwargs: object) -> object:
        validations.append(obj)
        return original_validate(obj, *args, **kwargs)  # type: ignore[arg-type]

    reads: list[str] = []
    original_get_test = local.get_test

    def counting_get_test(conn: object, test_id: str, **kwargs: object) -> object:
        reads.append(test_id)
        return original_get_test(conn, test_id, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(LighthouseTestRequest, "model_validate", counting_validate)
    monkeypatch.setattr(local, "get_test", counting_get_test)
    runner = LocalRunner(engine=engine)
    url = f"http://127.0.0.1:{_closed_port()}/"
    cell = MatrixCell(url, Device.DESKTOP, Location.US, LighthouseConfig())
    got: list[tuple[TestReport, int, int]] = []
    runner.run_matrix([cell], 1, lambda report, run, index: got.append((report, run, index)))
    [(report, run, index)] = got
    assert (report.status, run, index) == ("failed", 0, 0)
    assert validations == []
    assert reads == [report.id]
    # A listener still sees every state, and the final report is the one returned.
    seen: list[TestReport] = []
    reads.clear()
    final = runner.lighthouse(url, "desktop", progress=seen.append)
    assert [r.status.value for r in seen] == ["idle", "active", "failed"]
    assert seen[-1] == final
    assert len(validations) == 1
    assert reads == [final.id] * 3


@pytest.mark.usefixtures("quick_navigation_in_test")  # processes, not measurements
def test_two_cli_runs_never_overlap_and_report_json(site: DemoServer, data_dir: Path) -> None:
    closed = f"http://127.0.0.1:{_closed_port()}/"
    env = {**os.environ, "PAGELAB_DATA_DIR": str(data_dir)}
    command = [sys.executable, "-m", "pagelab", "run", "--json"]
    processes = [
        subprocess.Popen([*command, url], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        for url in (site.page_url("fast"), closed)
    ]
    outputs = [p.communicate(timeout=300) for p in processes]
    # The failed page is exit status 1, its report printed all the same.
    assert [p.returncode for p in processes] == [0, 1], outputs
    ok, failed = (TestReport.model_validate_json(out) for out, _ in outputs)

    assert ok.status == "success"
    assert ok.metrics is not None
    for name in ENGINE_METRICS:
        assert isinstance(getattr(ok.metrics, name), float), name
    assert failed.status == "failed"
    assert failed.metrics is None
    assert failed.error is not None
    assert failed.error.code in {"CHROME_INTERSTITIAL_ERROR", "FAILED_DOCUMENT_REQUEST"}
    assert failed.report_url is None

    with Store(data_dir).connection() as conn:
        spans = sorted(run_timing(conn, r.id or "") for r in (ok, failed))
    (start_a, end_a), (start_b, end_b) = spans
    assert None not in (start_a, end_a, start_b, end_b)
    assert end_a <= start_b, f"runs overlapped: {spans}"  # type: ignore[operator]


@pytest.mark.usefixtures("quick_navigation_in_test")  # processes, not measurements
def test_hard_timeout_kills_everything_and_the_next_run_works(site: DemoServer) -> None:
    with Engine(run_timeout=6) as engine:
        # A cold engine's first run takes longer than 6 s: give warm-up runs more.
        assert engine.run(site.page_url("fast"), "desktop", timeout=60).status == "success"
        pids = engine.process_ids()
        assert pids
        result = engine.run(site.url + "/slow?ms=30000", "desktop")
        assert result.error is not None
        assert result.error.code == TIMEOUT
        assert result.engine_failure
        _assert_gone(pids)
        after = engine.run(site.page_url("fast"), "desktop", timeout=60)
        assert after.status == "success"
        pids = engine.process_ids()
    _assert_gone(pids)  # closing the engine ends everything it started


@pytest.mark.usefixtures("quick_navigation_in_test")  # processes, not measurements
def test_chromium_killed_mid_run_is_a_crash_and_the_next_run_works(site: DemoServer) -> None:
    with Engine(run_timeout=60) as engine:
        started = threading.Event()
        results = []

        def run() -> None:
            results.append(engine.run(site.url + "/slow?ms=8000", "mobile",
                                      on_start=started.set))

        worker = threading.Thread(target=run)
        worker.start()
        assert started.wait(60)
        time.sleep(3)  # Lighthouse is waiting for the slow page by now
        pids = engine.process_ids()
        browser = engine._processes.browser
        assert browser is not None
        os.kill(browser.process.pid, signal.SIGKILL)
        worker.join(60)
        assert results
        assert results[0].error is not None
        assert results[0].error.code == ENGINE_CRASHED
        assert results[0].engine_failure
        _assert_gone(pids)
        after = engine.run(site.page_url("fast"), "mobile")
        assert after.status == "success"
        pids = engine.process_ids()
    _assert_gone(pids)


_CHILD = """
import json, sys, threading, time
from pagelab.engine import Engine

engine = Engine()
assert engine.run(sys.argv[1] + "/fast").status == "success"
print(json.dumps(engine.process_ids()), flush=True)
if sys.argv[2] == "hang":
    engine.run(sys.argv[1] + "/slow?ms=30000")  # killed while Lighthouse waits
# "exit": leave without closing the engine
"""


@pytest.mark.usefixtures("quick_navigation_in_test")  # processes, not measurements
@pytest.mark.parametrize("how", ["exit", "hang"])
def test_no_orphans_after_interpreter_exit_or_sigkill(site: DemoServer, how: str) -> None:
    """Chromium and Node end with the Python process that started them, however it ends."""
    with subprocess.Popen([sys.executable, "-c", _CHILD, site.url, how],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        pids = json.loads(child.stdout.readline() or "[]")
        assert pids, child.stderr.read() if child.stderr else ""
        if how == "hang":
            time.sleep(3)
            child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    _assert_gone(pids)


def _children(*, recursive: bool, since: Collection[int] = ()) -> dict[int, str]:
    """This test process's child processes (all descendants with ``recursive``): pid ->
    status, zombies included. With ``since``, only those started after it was listed: not
    in it, and not below a process in it (the session's shared engine's Chromium or
    PostgreSQL start helpers of their own at any time)."""
    me = os.getpid()
    found: dict[int, str] = {}
    for process in psutil.Process().children(recursive=recursive):
        try:
            ancestors = {parent.pid for parent in process.parents()}
            if process.pid in since or (ancestors - {me}) & set(since):
                continue
            found[process.pid] = process.status()
        except psutil.NoSuchProcess:
            continue  # ended and reaped while listed
    return found


@pytest.mark.usefixtures("quick_navigation_in_test")  # processes, not measurements
def test_measure_leaves_no_child_process_alive_or_zombie(site: DemoServer) -> None:
    """Issue 33 point 10: after ``measure`` no Chromium or Node of its engine is left, alive
    or zombie; a runner kept open (a notebook widget's, used from a worker thread that then
    ends) keeps its engine warm and alive until it is closed."""
    import pagelab

    before = set(_children(recursive=True))  # e.g. the session's shared engine
    url = site.page_url("fast")
    results = pagelab.measure(url, devices="desktop", runs=1, progress=False)
    assert results.frame["status"].tolist() == ["success"]
    assert _children(recursive=True, since=before) == {}
    with LocalRunner() as runner:
        measured: list[pagelab.Results] = []
        worker = threading.Thread(target=lambda: measured.append(
            pagelab.measure(url, devices="desktop", runs=1, runner=runner, progress=False)))
        worker.start()
        worker.join()
        assert measured[0].frame["status"].tolist() == ["success"]
        # The worker thread has ended: Chromium and Node were started for the runner, not
        # for that thread, and are alive (not zombies of this process) until it closes.
        started = _children(recursive=False, since=before)
        assert len(started) == 2, started
        assert psutil.STATUS_ZOMBIE not in started.values(), started
        assert set(started) <= set(runner.engine.process_ids())
    assert _children(recursive=True, since=before) == {}


@pytest.mark.usefixtures("quick_navigation_in_test")  # processes, not measurements
def test_the_cpu_benchmark_reading_is_the_machine_s(site: DemoServer, tmp_path: Path) -> None:
    """Lighthouse's CPU benchmark (~1 s a reading) is kept beside the engine lock, so a new
    engine's first run reuses a fresh reading another engine took; a stale one is taken
    again and written back. The engine gets a lock of its own (its file is this test's);
    the machine's lock is held around its runs, so no other run overlaps them."""
    lock_path = tmp_path / "engine.lock"
    shared = tmp_path / "engine.lock.benchmark.json"
    now_ms = time.time() * 1000
    shared.write_text(json.dumps({"value": 4321.5, "measuredAt": now_ms, "reused": 0}))
    url = site.page_url("fast")
    with Engine(lock=engine_lock(lock_path)) as engine, engine_lock():
        reused = engine.run(url, "desktop")
        shared.write_text(json.dumps({"value": 4321.5, "measuredAt": now_ms - 600_000,
                                      "reused": 0}))
        measured = engine.run(url, "desktop")
    assert reused.status is measured.status is TestStatus.SUCCESS
    assert reused.environment is not None
    assert measured.environment is not None
    assert reused.environment.benchmark_index == 4321.5
    reading = json.loads(shared.read_text())
    assert measured.environment.benchmark_index == reading["value"] != 4321.5
    assert reading["reused"] == 0
    assert reading["measuredAt"] > now_ms
