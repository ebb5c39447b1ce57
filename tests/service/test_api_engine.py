"""The service with its worker on the real engine: one end-to-end test, and a server
killed with SIGKILL while tests are queued. ``python -m pagelab serve`` runs as a child
process against the bundled demo site."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from live_server import ServerProcess, run_cli

from pagelab.client import Client
from pagelab.models import TestReport, TestStatus
from pagelab.runners import Runner
from pagelab.runners._api import ApiRunner

pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]

# Another process may hold the engine lock for a while: waits are generous.
WAIT = 600.0


def _new_key(data_dir: Path, lighthouse: int) -> str:
    created = run_cli("keys", "create", "--data-dir", str(data_dir),
                      "--lighthouse-credits", str(lighthouse))
    assert created.returncode == 0, created.stderr
    return created.stdout.strip()


def _render(url: str, profile: Path) -> str:
    """The DOM of ``url`` after its scripts ran, in headless Chromium."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    return subprocess.run(
        [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={profile}", "--virtual-time-budget=5000",
         "--dump-dom", url],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout


def _files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


def test_end_to_end(tmp_path: Path, demo_url: str) -> None:
    data_dir = tmp_path / "data"
    log = tmp_path / "server.log"
    key = _new_key(data_dir, lighthouse=5)
    password = f"canary-{secrets.token_hex(8)}"
    cookie = f"canary-{secrets.token_hex(8)}"
    basic = base64.b64encode(f"alice:{password}".encode())
    server = ServerProcess(data_dir, log).start()
    try:
        seen: list[TestStatus] = []
        with ApiRunner(server.base_url, key, poll_interval=0.5, wait_timeout=WAIT) as runner:
            assert isinstance(runner, Runner)
            report = runner.lighthouse(
                f"{demo_url}/fast", "desktop", "de",
                config={"auth_username": "alice", "auth_password": password,
                        "cookies": [f"session={cookie}"]},
                progress=lambda r: seen.append(r.status),
            )
            client = runner.client
            assert report.status == TestStatus.SUCCESS, report.error
            assert seen[0] == TestStatus.IDLE
            assert seen[-1] == TestStatus.SUCCESS
            assert report.metrics is not None
            assert report.metrics.performance_score is not None
            assert report.metrics.largest_contentful_paint is not None
            assert report.lighthouse_version
            assert report.vantage == "local"
            assert report.error is None
            assert report.config.auth_password == "***"
            lhr = json.loads(client.get_resource(report.id or "", "lighthouse-json"))
            assert lhr["lighthouseVersion"] == report.lighthouse_version
            assert lhr["finalDisplayedUrl"].startswith(demo_url)
            assert lhr["categories"]["performance"]["score"] * 100 == pytest.approx(
                report.metrics.performance_score, abs=1)
            assert client.get_resource(report.id or "", "screenshot").startswith("data:image/")
            html = client.get_resource(report.id or "", "html-report")
            assert "<html" in html.lower()
            assert client.get_credits().lighthouse.available_credits == 4
            fetched = client.http.get(f"/v1/lighthouse-tests/{report.id}").text
            listed = client.http.get("/v1/lighthouse-tests").text
        # The hosted report renders in a real browser.
        assert report.report_url is not None
        assert report.report_url.startswith(server.base_url)
        dom = _render(report.report_url, tmp_path / "profile")
        assert "lh-category" in dom
        assert "Performance" in dom
        # The secrets are nowhere: responses, database, artifacts, log.
        for text in (report.model_dump_json(), fetched, listed, json.dumps(lhr), html, dom):
            assert password not in text
            assert cookie not in text
            assert basic.decode() not in text
        for path in _files(data_dir):
            content = path.read_bytes()
            for canary in (password.encode(), cookie.encode(), basic):
                assert canary not in content, f"{canary!r} found in {path}"
    finally:
        server.stop()
    server_log = log.read_bytes()
    assert server_log
    for canary in (password.encode(), cookie.encode(), basic):
        assert canary not in server_log
    # Nothing lingers after a clean stop either.
    for path in _files(data_dir):
        assert password.encode() not in path.read_bytes()


def _statuses(data_dir: Path, ids: list[str]) -> list[str]:
    with sqlite3.connect(data_dir / "pagelab.sqlite3") as conn:
        return [conn.execute("SELECT status FROM tests WHERE id = ?", (test_id,)).fetchone()[0]
                for test_id in ids]


def test_sigkill_with_queued_tests_then_restart(tmp_path: Path, demo_url: str) -> None:
    data_dir = tmp_path / "data"
    key = _new_key(data_dir, lighthouse=10)
    first = ServerProcess(data_dir, tmp_path / "first.log").start()
    started_processes: list[int] = []
    try:
        with Client(first.base_url, key) as client:
            test = client.create_test(f"{demo_url}/slow?ms=1500", "desktop")
            batch = client.create_batch([f"{demo_url}/fast", f"{demo_url}/shift"], ["desktop"],
                                        ["us"], "multiple-urls")
        ids = [test.id or "", *(item.id or "" for item in batch.reports)]
        deadline = time.monotonic() + WAIT
        while _statuses(data_dir, ids)[0] != "active":
            assert time.monotonic() < deadline, "the first test never started"
            time.sleep(0.1)
        started_processes = first.descendants()
        first.kill()
    finally:
        # The engine's Chromium and Node lost their parent: end them, by pid.
        for pid in started_processes:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        first.stop()
    assert _statuses(data_dir, ids) == ["active", "idle", "idle"]

    second = ServerProcess(data_dir, tmp_path / "second.log").start()
    try:
        with Client(second.base_url, key) as client:
            finals: list[TestReport] = [
                client.wait_test(test_id, timeout=WAIT, poll_interval=0.5) for test_id in ids
            ]
            final_batch = client.wait_batch(batch.id or "", timeout=WAIT)
            credits = client.get_credits().lighthouse
        health = second.health()
    finally:
        second.stop()
    assert [report.status for report in finals] == [TestStatus.SUCCESS] * 3, [
        report.error for report in finals]
    assert final_batch.status.value == "completed"
    assert credits.available_credits == 10 - 3  # charged once each, nothing refunded
    assert health["worker"]["idle"] == health["worker"]["active"] == 0
    assert "requeued 1 test" in (tmp_path / "second.log").read_text()
