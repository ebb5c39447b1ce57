"""``pagelab serve`` as operators run it: a child process, stopped with SIGTERM."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from live_server import ServerProcess, create_key, run_cli


def test_serve_starts_answers_and_stops_cleanly(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    log = tmp_path / "serve.log"
    server = ServerProcess(data_dir, log, "--no-worker", "--rate-limit", "5").start()
    try:
        key = create_key(data_dir)
        health = server.health()
        response = httpx.get(f"{server.base_url}/v1/account/credits",
                             headers={"X-API-KEY": key})
    finally:
        server.stop()
    assert health["status"] == "ok"
    assert health["worker"]["enabled"] is False
    assert response.status_code == 200
    assert response.headers["X-RateLimit-Limit"] == "5"
    assert server.process is not None
    # uvicorn shuts down gracefully, then re-raises SIGTERM so the exit status says why.
    assert server.process.returncode in (0, -15)
    output = log.read_text()
    assert "no API key yet" in output  # the hint for a fresh data dir
    assert "Application shutdown complete" in output
    assert key not in output


def test_one_worker_per_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = ServerProcess(data_dir, tmp_path / "first.log").start()
    try:
        second = ServerProcess(data_dir, tmp_path / "second.log")
        with pytest.raises(RuntimeError, match="the server exited"):
            second.start()
        reader = ServerProcess(data_dir, tmp_path / "reader.log", "--no-worker").start()
        reader.stop()
    finally:
        first.stop()
    assert "another `pagelab serve` runs the tests of" in (tmp_path / "second.log").read_text()


def test_serve_rejects_bad_arguments(tmp_path: Path) -> None:
    result = run_cli("serve", "--port", "70000", "--data-dir", str(tmp_path))
    assert result.returncode == 2
    assert "--port" in result.stderr

