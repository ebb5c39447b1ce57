"""Issue 10, item 4: ``/healthz`` says whether Chromium runs with its sandbox, and as whom.

No Chromium is started here (the real-engine side: tests/test_engine_sandbox.py): before
the first test a server reports how its browser will be started."""

from __future__ import annotations

import os
import pwd

import pytest
from live_server import StartServer

from pagelab.engine import Engine, _sandbox


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
