"""pagelab.measure on the ApiRunner: a live `pagelab serve` (child process, worker on the real
engine) against the bundled demo site, submitted ahead as spec batches and polled."""

from __future__ import annotations

from pathlib import Path

import pytest
from live_server import ServerProcess, run_cli

from pagelab import ApiRunner, TestReport, measure

pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]

# Another process may hold the engine lock for a while: waits are generous.
WAIT = 600.0


def test_matrix_runs_on_the_service_as_batches(tmp_path: Path, demo_url: str) -> None:
    data_dir = tmp_path / "data"
    created = run_cli("keys", "create", "--data-dir", str(data_dir),
                      "--lighthouse-credits", "10")
    assert created.returncode == 0, created.stderr
    server = ServerProcess(data_dir, tmp_path / "server.log").start()
    fast, heavy = f"{demo_url}/fast", f"{demo_url}/heavy"
    seen: list[TestReport] = []
    try:
        with ApiRunner(server.base_url, created.stdout.strip(), poll_interval=0.3,
                       wait_timeout=WAIT) as runner:
            results = measure([fast, heavy], devices="desktop", runs=2, runner=runner,
                              progress=seen.append)
            assert results.runner is runner  # a runner passed in stays open
            listed = runner.list(per_page=100)
            credits = runner.client.get_credits().lighthouse.available_credits
    finally:
        server.stop()
    frame = results.frame
    assert not results.interrupted
    assert len(frame) == 4
    assert len(seen) == 4
    assert (frame["status"] == "success").all(), frame[["url", "error_code"]]
    assert frame["run"].tolist() == [0, 0, 1, 1]
    assert frame["url"].tolist() == [fast, heavy, fast, heavy]
    # One spec batch (multiple-urls) per round, submitted round after round.
    batches = frame.groupby("run")["batch_id"].unique()
    assert all(len(ids) == 1 and str(ids[0]).startswith("lbt_") for ids in batches)
    assert batches[0][0] != batches[1][0]
    stored = frame.sort_values("created_at", kind="stable")
    assert stored["run"].tolist() == [0, 0, 1, 1]
    assert {r.id for r in listed} == set(frame["id"])
    assert credits == 10 - 4
    summary = results.summary()
    assert len(summary) == 2
    assert summary["runs"].tolist() == [2, 2]
