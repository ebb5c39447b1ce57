"""Chromium's sandbox on the real engine (issue 10, item 4; docs/security.md).

As root the engine starts Chromium as an unprivileged user with its sandbox on; read from
``/proc``: every Chromium process's real, effective, saved and filesystem uid, its command
line (no ``--no-sandbox``) and, for renderers, the seccomp-bpf filter the sandbox installs.
"""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pagelab.demo import DemoServer
from pagelab.engine import Engine, TargetPolicy, find_chromium, parse_networks
from pagelab.engine._sandbox import BROWSER_USER, kernel_blocks_sandbox
from pagelab.models import LighthouseConfig
from processes import still_running

# What the browser may do, not what Lighthouse measures: the short quiet window (conftest.py).
pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]

ENGINE_METRICS = (
    "cumulative_layout_shift", "first_contentful_paint", "time_to_interactive",
    "largest_contentful_paint", "server_response_time", "speed_index", "total_blocking_time",
    "performance_score",
)


@pytest.fixture
def site() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.fixture
def temp_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temp dir of this test's own (0755: the browser's user can reach it), so the
    profiles the engine creates there can be counted."""
    root = Path(tempfile.mkdtemp(prefix="pagelab-sandbox-test-"))
    root.chmod(0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _profiles(root: Path) -> list[Path]:
    return sorted(root.glob("pagelab-chromium-*"))


def _cmdline(pid: int) -> str:
    """The command line as one string: Chromium's children rewrite their argv area (the
    process title), so arguments may be joined by spaces instead of NULs."""
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().replace("\0", " ")


def _status(pid: int, field: str) -> list[str]:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return line.split()[1:]
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _uids(pid: int) -> set[int]:
    """Real, effective, saved and filesystem uid."""
    return {int(uid) for uid in _status(pid, "Uid")}


def _browser_pids(engine: Engine) -> list[int]:
    browser = engine._processes.browser
    assert browser is not None
    return [browser.process.pid, *(p.pid for p in browser.process.descendants())]


def _assert_gone(pids: list[int]) -> None:
    alive = still_running(pids)
    assert not alive, f"processes left behind: {alive}"


def _expected_user() -> str:
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid()).pw_name
    configured = os.environ.get("PAGELAB_BROWSER_USER")
    if configured:
        return configured
    try:
        pwd.getpwnam(BROWSER_USER)
    except KeyError:
        return "nobody"
    return BROWSER_USER


def test_chromium_runs_sandboxed_as_an_unprivileged_user(
    site: DemoServer, temp_root: Path
) -> None:
    binary = find_chromium()
    assert binary is not None
    blocked = kernel_blocks_sandbox(binary)
    if blocked:
        pytest.skip(blocked)
    user = _expected_user()
    uid = pwd.getpwnam(user).pw_uid
    if os.geteuid() == 0:
        assert uid != 0
    # A guarded run (the server's: its connections go through the egress proxy, and the
    # profile gets a Preferences file before the start, which must belong to the browser's
    # user too). Loopback re-opened for the demo site.
    policy = TargetPolicy(allowed=tuple(parse_networks(["127.0.0.0/8"])))
    with Engine(target_policy=policy) as engine:
        result = engine.run(site.page_url("fast"), "mobile", LighthouseConfig(video=True))
        assert result.status == "success", result.error
        assert result.metrics is not None
        for name in ENGINE_METRICS:
            assert isinstance(getattr(result.metrics, name), float), name
        # Every artifact comes through DevTools and Node, not the browser's files.
        assert {"lighthouse-json", "html-report", "screenshot", "filmstrip", "video"} <= set(
            result.artifacts
        ), result.artifact_errors
        assert result.artifacts["video"][:4] == b"\x1aE\xdf\xa3"  # WebM (EBML)

        browser = engine._processes.browser
        assert browser is not None
        status = browser.sandbox
        assert status.sandboxed
        assert status.verified
        assert status.user == user
        assert status.reason is None
        assert Engine.sandbox_status() == status
        assert Engine.runs_sandboxed()

        pids = _browser_pids(engine)
        assert len(pids) >= 3  # browser, zygotes, renderer, utilities
        renderers = []
        for pid in pids:
            argv = _cmdline(pid)
            assert "--no-sandbox" not in argv, argv
            assert _uids(pid) == {uid}, (pid, argv[:80], _status(pid, "Uid"))
            if "--type=renderer" in argv:
                renderers.append(pid)
        assert renderers
        for pid in renderers:
            assert _status(pid, "Seccomp") == ["2"], pid  # seccomp-bpf: the sandbox is on
            assert len(_status(pid, "NSpid")) >= 2, pid  # in the sandbox's pid namespace

        profile = browser.profile
        assert _profiles(temp_root) == [profile]
        assert profile.stat().st_uid == uid
        assert (profile / "Default" / "Preferences").stat().st_uid == uid
        # Node (Lighthouse) stays the engine's user and reaches Chromium over DevTools.
        driver = engine._processes.driver
        assert driver is not None
        assert _uids(driver.process.pid) == {os.geteuid()}

        # A second run on the same warm browser.
        again = engine.run(site.page_url("fast"), "mobile")
        assert again.status == "success", again.error
        pids = [*_browser_pids(engine), driver.process.pid]
    _assert_gone(pids)
    assert _profiles(temp_root) == []


def test_a_sandbox_that_cannot_start_falls_back_to_no_sandbox(
    site: DemoServer, temp_root: Path
) -> None:
    """Without user namespaces Debian's Chromium has no sandbox to use (no SUID helper):
    ``--disable-namespace-sandbox`` makes a sandboxed start fail for real. The engine starts
    it again with ``--no-sandbox``, still as the unprivileged user, and says why."""
    binary = find_chromium()
    assert binary is not None
    if (binary.resolve().parent / "chrome-sandbox").exists():
        pytest.skip("this Chromium has a SUID sandbox helper")
    user = _expected_user()
    uid = pwd.getpwnam(user).pw_uid
    with Engine(chromium_flags=("--disable-namespace-sandbox",)) as engine:
        result = engine.run(site.page_url("fast"), "desktop")
        assert result.status == "success", result.error
        browser = engine._processes.browser
        assert browser is not None
        status = browser.sandbox
        assert not status.sandboxed
        assert status.verified
        assert status.reason is not None
        assert "sandbox did not start" in status.reason
        assert status.user == user
        assert "--no-sandbox" in _cmdline(browser.process.pid)
        assert _uids(browser.process.pid) == {uid}
        # The failed start left nothing behind: one profile, the live one.
        assert _profiles(temp_root) == [browser.profile]
        # The next start skips the sandbox attempt (remembered), the flags being the same.
        pids = _browser_pids(engine)
        engine.close()
        _assert_gone(pids)
        again = engine.run(site.page_url("fast"), "desktop")
        assert again.status == "success", again.error
        assert engine._processes.browser is not None
        assert not engine._processes.browser.sandbox.sandboxed
        pids = _browser_pids(engine)
    _assert_gone(pids)
    assert _profiles(temp_root) == []
