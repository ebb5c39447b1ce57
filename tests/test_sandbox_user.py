"""Who the browser runs as, without starting Chromium (issue 10, item 4).

The real Chromium side is tests/test_engine_sandbox.py; here: the choice of user, the
profile's place, the environment a browser of another user gets, and a child started as
another user dying with the Python that started it (the parent-death signal)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pagelab.engine import find_chromium
from pagelab.engine._process import ChildProcess
from pagelab.engine._sandbox import (
    BROWSER_USER,
    BrowserSandbox,
    browser_env,
    chown_tree,
    new_profile,
    profile_parent,
    sandbox_plan,
    sandbox_status,
)
from processes import still_running

ROOT = os.geteuid() == 0
NOBODY = pwd.getpwnam("nobody")
needs_root = pytest.mark.skipif(not ROOT, reason="switching users needs root")


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A dir under /tmp (not pytest's 0700 tree) that other users can reach."""
    root = Path(tempfile.mkdtemp(prefix="pagelab-sandbox-unit-", dir="/tmp"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _other_user_plan() -> BrowserSandbox:
    return BrowserSandbox(sandboxed=True, user="nobody", uid=NOBODY.pw_uid, gid=NOBODY.pw_gid,
                          switches_user=True)


def test_as_root_the_browser_never_runs_as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    binary = find_chromium() or Path("/usr/lib/chromium/chromium")
    monkeypatch.delenv("PAGELAB_BROWSER_USER", raising=False)
    plan = sandbox_plan(binary)
    if not ROOT:
        assert plan.uid == os.geteuid()
        assert not plan.switches_user
        return
    assert plan.uid != 0
    assert plan.switches_user
    try:
        pwd.getpwnam(BROWSER_USER)
        assert plan.user == BROWSER_USER
    except KeyError:
        assert plan.user == "nobody"
    monkeypatch.setenv("PAGELAB_BROWSER_USER", "nobody")
    assert sandbox_plan(binary).user == "nobody"
    monkeypatch.setenv("PAGELAB_BROWSER_USER", "root")
    as_root = sandbox_plan(binary)
    assert (as_root.user, as_root.sandboxed) == ("root", False)
    assert as_root.reason is not None
    monkeypatch.setenv("PAGELAB_BROWSER_USER", "no-such-user-pagelab")
    with pytest.raises(RuntimeError, match="no such user"):
        sandbox_plan(binary)
    # /healthz must not fail on it: the status carries the reason.
    monkeypatch.setattr("pagelab.engine._sandbox._last_start", None)
    status = sandbox_status(binary)
    assert status is not None
    assert not status.sandboxed
    assert status.reason is not None
    assert "no such user" in status.reason


def test_no_sandbox_among_the_engine_flags_is_reported() -> None:
    binary = find_chromium() or Path("/usr/lib/chromium/chromium")
    plan = sandbox_plan(binary, ("--no-sandbox",))
    assert not plan.sandboxed
    assert plan.reason is not None
    assert "--no-sandbox" in plan.reason


def test_the_profile_goes_where_the_browser_user_can_reach_it(shared_tmp: Path) -> None:
    closed = shared_tmp / "closed"
    closed.mkdir(mode=0o700)
    open_ = shared_tmp / "open"
    open_.mkdir(mode=0o755)
    plan = _other_user_plan()
    if os.geteuid() == NOBODY.pw_uid:
        pytest.skip("runs as nobody")
    assert profile_parent(plan, [closed, open_]) == open_.resolve()
    with pytest.raises(RuntimeError, match="no temp directory"):
        profile_parent(plan, [closed])
    same_user = BrowserSandbox(sandboxed=True, user="me", uid=os.geteuid(), gid=os.getegid(),
                               switches_user=False)
    assert profile_parent(same_user) == Path(tempfile.gettempdir())


def test_a_browser_of_another_user_gets_none_of_the_servers_variables(
    monkeypatch: pytest.MonkeyPatch, shared_tmp: Path
) -> None:
    monkeypatch.setenv("PAGELAB_REPORT_LINK_SECRET", "secret-9d1")
    monkeypatch.setenv("LC_TIME", "C")
    env = browser_env(_other_user_plan(), shared_tmp)
    assert env is not None
    assert "PAGELAB_REPORT_LINK_SECRET" not in env
    assert "secret-9d1" not in json.dumps(env)
    assert env["LC_TIME"] == "C"
    assert env["HOME"] == env["TMPDIR"] == str(shared_tmp)
    assert env["USER"] == "nobody"
    # Chromium's singleton socket lives under TMPDIR: a path too long for a Unix socket
    # made every start fail, so a deep profile keeps the system's temp dir.
    deep = browser_env(_other_user_plan(), shared_tmp / ("d" * 80))
    assert deep is not None
    assert "TMPDIR" not in deep
    same_user = BrowserSandbox(sandboxed=True, user="me", uid=os.geteuid(), gid=os.getegid(),
                               switches_user=False)
    assert browser_env(same_user, shared_tmp) is None  # inherits, as before


@needs_root
def test_chown_tree_gives_everything_to_the_user(shared_tmp: Path) -> None:
    (shared_tmp / "Default").mkdir()
    (shared_tmp / "Default" / "Preferences").write_text("{}")
    chown_tree(shared_tmp, NOBODY.pw_uid, NOBODY.pw_gid)
    for path in (shared_tmp, shared_tmp / "Default", shared_tmp / "Default" / "Preferences"):
        assert (path.stat().st_uid, path.stat().st_gid) == (NOBODY.pw_uid, NOBODY.pw_gid)


_CHILD = """
import json, sys, time
from pagelab.engine._process import ChildProcess

child = ChildProcess(["sleep", "120"], user=int(sys.argv[1]), group=int(sys.argv[2]))
print(json.dumps(child.pid), flush=True)
time.sleep(120)
"""


def _status(pid: int, field: str) -> list[str]:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return line.split()[1:]
    raise AssertionError(field)


@needs_root
def test_a_child_of_another_user_dies_with_the_python_that_started_it() -> None:
    """The kernel clears the parent-death signal when credentials change: it is set after
    the switch, so a SIGKILLed engine leaves no browser of another user behind."""
    parent = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(NOBODY.pw_uid), str(NOBODY.pw_gid)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert parent.stdout is not None
    line = parent.stdout.readline()
    assert line, parent.stderr.read() if parent.stderr else ""
    pid = int(json.loads(line))
    assert {int(u) for u in _status(pid, "Uid")} == {NOBODY.pw_uid}
    assert {int(g) for g in _status(pid, "Gid")} == {NOBODY.pw_gid}
    assert _status(pid, "Groups") == []  # no supplementary groups (root's dropped)
    parent.send_signal(signal.SIGKILL)
    with parent:  # closes its pipes
        parent.wait(timeout=10)
    if still_running([pid], poll=0.05):
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the child of another user outlived its parent")


@needs_root
def test_kill_ends_a_child_of_another_user() -> None:
    child = ChildProcess(["sleep", "120"], user=NOBODY.pw_uid, group=NOBODY.pw_gid)
    assert child.alive
    child.kill()
    assert not child.alive


_PROFILE_CHILD = """
import sys, tempfile, time
from pagelab.engine._sandbox import new_profile, sandbox_plan
from pathlib import Path

tempfile.tempdir = sys.argv[1]
profile = new_profile(sandbox_plan(Path("/usr/lib/chromium/chromium")))
(profile / "DevToolsActivePort").write_text("1234")
print(profile, flush=True)
time.sleep(120)
"""


def test_profiles_of_a_killed_engine_are_removed_at_the_next_start(shared_tmp: Path) -> None:
    """A SIGKILLed engine cannot remove its browser's profile: the next one does, and
    leaves the profiles of live engines (and names it does not know) alone."""
    killed = subprocess.Popen([sys.executable, "-c", _PROFILE_CHILD, str(shared_tmp)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    live = subprocess.Popen([sys.executable, "-c", _PROFILE_CHILD, str(shared_tmp)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert killed.stdout is not None
        assert live.stdout is not None
        stale = Path(killed.stdout.readline().strip())
        alive = Path(live.stdout.readline().strip())
        assert stale.is_dir()
        assert alive.is_dir()
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=10)
        foreign = shared_tmp / "pagelab-chromium-notours"
        foreign.mkdir()
        same_user = BrowserSandbox(sandboxed=True, user="me", uid=os.geteuid(),
                                   gid=os.getegid(), switches_user=False)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(tempfile, "tempdir", str(shared_tmp))
            mine = new_profile(same_user)
        assert not stale.exists()
        assert alive.is_dir()
        assert foreign.is_dir()
        assert mine.name.startswith(f"pagelab-chromium-{os.getpid()}-")
        assert mine.stat().st_mode & 0o777 == 0o700
    finally:
        for child in (killed, live):
            child.kill()
            with child:  # closes its pipes
                child.wait(timeout=10)
