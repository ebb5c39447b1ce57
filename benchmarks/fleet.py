"""Fleet throughput: 40 tests through `pagelab serve --broker` and 1, 2, 4 workers.

Real redis-server, real server and real Celery worker processes; only the engine is
replaced, here and nowhere else, by a stand-in that takes exactly 1 s per test (so the
figures show the fleet, not Lighthouse). Prints tests/min per worker count and the
overhead per test (wall time of one worker minus 1 s a test: dispatch, broker, ingestion).
Targets: overhead under 50 ms a test; 4 workers at least 3.5x one worker.

    .venv/bin/python benchmarks/fleet.py
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

TESTS = 40
STAND_IN_SECONDS = 1.0
SECRET = "benchmark-fleet-secret-0123"
ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PAGELAB_FLEET_SECRET": SECRET}


class _StandInEngine:
    """A fixed 1 s "run" (the benchmark's only stand-in)."""

    def run(self, url: str, device: object, config: object, *, on_start: object = None,
            target_policy: object = None) -> object:
        from pagelab.engine import RunResult
        from pagelab.models import Metrics, TestStatus

        if callable(on_start):
            on_start()
        started = datetime.now(UTC)
        time.sleep(STAND_IN_SECONDS)
        return RunResult(status=TestStatus.SUCCESS, lighthouse_version="stand-in",
                         metrics=Metrics(performance_score=100), error=None, environment=None,
                         started_at=started, finished_at=datetime.now(UTC))

    def close(self) -> None:
        pass


def _worker_main(broker: str, key: str) -> None:
    from pagelab.fleet import FleetWorker, WorkerKeys

    worker = FleetWorker(broker, WorkerKeys(key))
    stand_in = _StandInEngine()
    worker._engine_instance = lambda: stand_in  # type: ignore[method-assign,assignment,return-value]
    worker.run(log_level="warning")


def _wait(condition: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.05)
    raise RuntimeError("timed out")


def _round(workers: int, tmp: Path) -> float:
    """Seconds from the first POST until all TESTS are final."""
    redis_port, api_port = _free_port(), _free_port()
    broker = f"redis://127.0.0.1:{redis_port}/0"
    data = tmp / f"data-{workers}"
    procs: list[subprocess.Popen[bytes]] = []
    log = (tmp / f"round-{workers}.log").open("ab")
    try:
        procs.append(subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--dir", str(tmp),
             "--appendonly", "yes", "--appendfilename", f"r{workers}.aof", "--save", ""],
            stdout=log, stderr=subprocess.STDOUT))
        time.sleep(0.3)
        from pagelab.fleet import FleetKeys
        from pagelab.store import (
            Store,
            create_account,
            ensure_fleet_tables,
            issue_fleet_worker_key,
            transaction,
        )

        with Store(data).connection() as conn, transaction(conn, immediate=True):
            _, key = create_account(conn, lighthouse_credits=TESTS, ttfb_credits=0)
            ensure_fleet_tables(conn)
            worker_keys = [
                FleetKeys(SECRET).credential(issue_fleet_worker_key(conn, f"bench-{i}", ["de"]))
                for i in range(workers)
            ]
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "pagelab", "serve", "--port", str(api_port), "--data-dir",
             str(data), "--broker", broker, "--allow-private-targets", "--log-level", "warning"],
            env=_env(), stdout=log, stderr=subprocess.STDOUT))
        for index in range(workers):
            procs.append(subprocess.Popen(
                [sys.executable, __file__, "--worker", broker],
                env={**_env(), "PAGELAB_WORKER_KEY": worker_keys[index]}, stdout=log,
                stderr=subprocess.STDOUT))
        base = f"http://127.0.0.1:{api_port}"

        def up() -> bool:
            try:
                return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        _wait(up, 60)
        time.sleep(3)  # the workers connect (Celery start-up is not what is measured)
        with httpx.Client(base_url=base, headers={"X-API-KEY": key}, timeout=30) as client:
            start = time.perf_counter()
            ids = [
                client.post("/v1/lighthouse-tests",
                            json={"url": "http://127.0.0.1:9/", "location": "de"}).json()["id"]
                for _ in range(TESTS)
            ]

            def all_done() -> bool:
                page = client.get("/v1/lighthouse-tests", params={"per_page": 100}).json()
                finished = sum(t["status"] == "success" for t in page["data"])
                return bool(finished == len(ids))

            _wait(all_done, TESTS * STAND_IN_SECONDS * 3 + 60)
            return time.perf_counter() - start
    finally:
        for proc in reversed(procs):
            proc.send_signal(signal.SIGTERM)
        for proc in reversed(procs):
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()


def main() -> None:
    if shutil.which("redis-server") is None:
        sys.exit("redis-server is missing: apt-get install -y redis-server")
    tmp = Path(tempfile.mkdtemp(prefix="pagelab-fleet-bench-"))
    results: dict[int, float] = {}
    for workers in (1, 2, 4):
        results[workers] = _round(workers, tmp)
        rate = TESTS / results[workers] * 60
        print(f"{workers} worker(s): {TESTS} tests in {results[workers]:.2f} s = "
              f"{rate:.1f} tests/min", flush=True)
    overhead = (results[1] - TESTS * STAND_IN_SECONDS) / TESTS * 1000
    speedup = results[1] / results[4]
    print(f"overhead per test (1 worker): {overhead:.1f} ms (target < 50 ms)")
    print(f"4 workers vs 1: {speedup:.2f}x (target >= 3.5x); 2 vs 1: "
          f"{results[1] / results[2]:.2f}x")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        _worker_main(sys.argv[2], os.environ["PAGELAB_WORKER_KEY"])
    else:
        main()
