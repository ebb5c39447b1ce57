"""Issue 10, item 4: ``/healthz`` says whether Chromium runs with its sandbox, and as whom.

Before the first test a server reports how its browser will be started (no Chromium
started); the last test runs a real ``pagelab serve`` on the engine (more in
tests/test_engine_sandbox.py)."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import psutil
import pytest
from live_server import ServerProcess, StartServer, run_cli

from pagelab.engine import Engine, _sandbox
from pagelab.runners._api import ApiRunner


def test_health_says_how_the_browser_runs(start_server: StartServer) -> None:
    server = start_server(worker=True)
    with server.client() as client:
        health = client.get("/healthz").json()
    expected = Engine.sandbox_status()
    assert expected is not None
    assert health["browser"] == {
        "sandboxed": expected.sandboxed, "user": expected.user,
        "verified": expected.verified, "reason": expected.reason,
    }
    if os.geteuid() == 0:
        # Never root: an unprivileged user of its own (or nobody).
        assert health["browser"]["user"] != "root"
        assert pwd.getpwnam(health["browser"]["user"]).pw_uid != 0
    warned = any("without its sandbox" in w for w in health["warnings"])
    assert warned is not expected.sandboxed
    assert health["status"] == "ok"


def test_health_warns_when_the_browser_runs_without_its_sandbox(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.geteuid() != 0:
        pytest.skip("an operator's choice of root as the browser's user needs root")
    # No browser started in this process yet, and the operator names root: no sandbox.
    monkeypatch.setattr(_sandbox, "_last_start", None)
    monkeypatch.setenv("PAGELAB_BROWSER_USER", "root")
    server = start_server(worker=True)
    with server.client() as client:
        health = client.get("/healthz").json()
    assert health["browser"]["sandboxed"] is False
    assert health["browser"]["user"] == "root"
    assert "PAGELAB_BROWSER_USER=root" in health["browser"]["reason"]
    assert any("without its sandbox" in w and "as root" in w for w in health["warnings"])
    assert health["status"] == "ok"  # a warning, not a failure


def test_a_server_running_no_tests_reports_no_browser(start_server: StartServer) -> None:
    server = start_server(worker=False)
    with server.client() as client:
        health = client.get("/healthz").json()
    assert "browser" not in health
    assert not any("sandbox" in w for w in health["warnings"])


def _expected_user() -> str:
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid()).pw_name
    if os.environ.get("PAGELAB_BROWSER_USER"):
        return os.environ["PAGELAB_BROWSER_USER"]
    try:
        return pwd.getpwnam("pagelab-browser").pw_name
    except KeyError:
        return "nobody"


@pytest.mark.engine
@pytest.mark.usefixtures("quick_navigation_in_test")  # what is sent, not measured
def test_a_server_runs_its_tests_in_a_sandboxed_browser(tmp_path: Path, demo_url: str) -> None:
    """``pagelab serve`` (as root here) runs a test; its Chromium runs as the browser's
    user with the sandbox on, and ``/healthz`` says so, verified, without a warning."""
    if _sandbox.kernel_blocks_sandbox(Path("/usr/lib/chromium/chromium")):
        pytest.skip("the kernel forbids the sandbox here")
    data_dir = tmp_path / "data"
    created = run_cli("keys", "create", "--data-dir", str(data_dir), "--lighthouse-credits", "2")
    assert created.returncode == 0, created.stderr
    server = ServerProcess(data_dir, tmp_path / "server.log").start()
    try:
        assert server.health()["browser"]["verified"] is False  # nothing started yet
        with ApiRunner(server.base_url, created.stdout.strip(), poll_interval=0.5,
                       wait_timeout=600) as runner:
            report = runner.lighthouse(f"{demo_url}/fast", "desktop", "de")
        assert report.status == "success", report.error
        assert report.metrics is not None
        assert report.metrics.largest_contentful_paint is not None
        health = server.health()
        uid = pwd.getpwnam(_expected_user()).pw_uid
        seen = 0
        for pid in server.descendants():
            try:
                process = psutil.Process(pid)
                if "chromium" not in process.name():
                    continue
                uids, cmdline = set(process.uids()), " ".join(process.cmdline())
            except psutil.Error:  # a short-lived helper already gone (or a zombie)
                continue
            seen += 1
            assert uids == {uid}, cmdline[:120]
            assert "--no-sandbox" not in cmdline
        assert seen >= 3
    finally:
        server.stop()
    assert health["browser"] == {"sandboxed": True, "user": _expected_user(),
                                 "verified": True, "reason": None}
    assert not any("sandbox" in w for w in health["warnings"])
    assert health["status"] == "ok"
