"""Waiting for the engine says so: a real second process holds the lock, the waiter names it.

The holder is a child process that takes the lock the way a run does (``hold_engine``) and
keeps it until the test writes a line to its stdin, so each wait ends when the test has seen
it reported, never after a guessed delay.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pagelab.engine._lock import EngineWait, engine_lock, engine_waits, hold_engine, lock_holder

# What these tests measure is not Lighthouse's doing: the short quiet window (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")

HOLDER = """
import sys
from pathlib import Path
from pagelab.engine._lock import engine_lock, hold_engine

path = Path(sys.argv[1]) if len(sys.argv) > 1 else None
with hold_engine(engine_lock(path)):
    print("held", flush=True)
    sys.stdin.readline()
"""

#: A guard against a hang only (other suites' runs may hold the machine-wide lock first).
HANG_GUARD_S = 900


class Holder:
    """A child process holding the engine lock until :meth:`release`."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == "held\n"
        self.pid = self.process.pid

    def release(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write("go\n")
            self.process.stdin.flush()

    def close(self) -> None:
        self.release()
        with self.process:  # closes its pipes once it has ended
            self.process.wait(timeout=60)


@pytest.fixture
def holder_factory() -> Iterator[type[Holder]]:
    made: list[Holder] = []

    class Tracked(Holder):
        def __init__(self, *args: str) -> None:
            super().__init__(*args)
            made.append(self)

    yield Tracked
    for holder in made:
        holder.close()


def test_a_wait_names_the_holding_process(tmp_path: Path,
                                          holder_factory: type[Holder]) -> None:
    path = tmp_path / "engine.lock"
    holder = holder_factory(str(path))
    lock = engine_lock(path)
    assert lock_holder(lock) == holder.pid
    seen: list[EngineWait] = []

    def listener(wait: EngineWait) -> None:
        seen.append(wait)
        holder.release()  # the wait has been reported: let the run go on

    with engine_waits(listener), hold_engine(lock):
        assert lock_holder(lock) == os.getpid()  # the new holder wrote its own PID
    first, last = seen[0], seen[-1]
    assert first.pid == holder.pid
    assert not first.acquired
    assert str(first).startswith(f"waiting for the engine held by PID {holder.pid} since ")
    assert last.acquired
    assert all(not w.acquired for w in seen[:-1])


def test_no_listener_is_called_without_a_wait(tmp_path: Path) -> None:
    seen: list[EngineWait] = []
    with engine_waits(seen.append), hold_engine(engine_lock(tmp_path / "engine.lock")):
        pass
    assert seen == []


def test_a_run_asking_again_goes_after_the_one_waiting(tmp_path: Path) -> None:
    """First come, first served: the holder lets the lock go and asks again at once, as a
    process running back to back does; the run that was waiting goes first."""
    path = tmp_path / "engine.lock"
    order: list[str] = []
    waiting = threading.Event()

    def listener(wait: EngineWait) -> None:
        if not wait.acquired:
            waiting.set()

    def waiter() -> None:
        with hold_engine(engine_lock(path)):
            order.append("the waiting run")

    lock = engine_lock(path)
    with engine_waits(listener):
        with hold_engine(lock):
            other = threading.Thread(target=waiter)
            other.start()
            assert waiting.wait(HANG_GUARD_S)
        with hold_engine(lock):
            order.append("the holder again")
        other.join(HANG_GUARD_S)
    assert order == ["the waiting run", "the holder again"]
    assert list((tmp_path / "engine.lock.line").iterdir()) == []  # both left the line


def test_the_holder_asking_again_is_not_put_behind_a_waiting_run(tmp_path: Path) -> None:
    """A test holds the engine around its own run (which takes it again) while another
    process's run waits: the holder goes on at once. Behind the waiting run it would wait
    for a lock it holds itself: in CI, the test and the server's run waited so until both
    timed out at 600 s."""
    path = tmp_path / "engine.lock"
    waiting = threading.Event()
    done = threading.Event()

    def listener(wait: EngineWait) -> None:
        if not wait.acquired:
            waiting.set()

    def waiter() -> None:
        with hold_engine(engine_lock(path)):
            pass

    def holder() -> None:
        lock = engine_lock(path)
        with hold_engine(lock):
            other = threading.Thread(target=waiter)
            other.start()
            assert waiting.wait(HANG_GUARD_S)
            with hold_engine(lock):  # the run inside the test's hold
                done.set()
        other.join(HANG_GUARD_S)

    with engine_waits(listener):
        # In a thread of its own, so a hang fails this test instead of stopping the suite.
        thread = threading.Thread(target=holder, daemon=True)
        thread.start()
        assert done.wait(60), "the holder waited behind the run waiting for it"
        thread.join(HANG_GUARD_S)
    assert list((tmp_path / "engine.lock.line").iterdir()) == []


def test_a_place_in_line_nobody_renews_holds_no_one_back(tmp_path: Path) -> None:
    path = tmp_path / "engine.lock"
    line = tmp_path / "engine.lock.line"
    line.mkdir()
    forgotten = line / f"{0:020d}-1-1"  # asked long ago, by a process that died waiting
    forgotten.touch()
    os.utime(forgotten, (1, 1))
    seen: list[EngineWait] = []
    with engine_waits(seen.append), hold_engine(engine_lock(path)):
        pass
    assert seen == []  # no wait
    assert not forgotten.exists()  # and cleared


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_until_seen(command: list[str], text: str, holder: Holder) -> tuple[str, str]:
    """Run ``command``; release ``holder`` once its stderr shows ``text``. (stdout, stderr)"""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stderr is not None
    chunks: list[bytes] = []
    seen = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        while chunk := os.read(process.stderr.fileno(), 4096):
            chunks.append(chunk)
            if text.encode() in b"".join(chunks):
                seen.set()
                holder.release()
        seen.set()  # the process ended (with or without the text)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert seen.wait(HANG_GUARD_S)
    holder.release()
    assert process.stdout is not None
    stdout = process.stdout.read()
    process.wait(timeout=HANG_GUARD_S)
    reader.join(timeout=60)
    process.stdout.close()
    process.stderr.close()
    return stdout.decode(), b"".join(chunks).decode(errors="replace")


@pytest.mark.engine
def test_run_waits_visibly_and_names_the_refused_connection(
    holder_factory: type[Holder],
) -> None:
    # The real machine-wide lock, held by another process; the real engine on a closed port.
    holder = holder_factory()
    url = f"http://127.0.0.1:{_closed_port()}/"
    stdout, stderr = _run_until_seen(
        [sys.executable, "-m", "pagelab", "run", url, "--devices", "mobile,desktop", "--json"],
        f"waiting for the engine held by PID {holder.pid} since", holder,
    )
    reports = json.loads(stdout)
    assert [r["device"] for r in reports] == ["mobile", "desktop"]
    for report in reports:
        assert report["status"] == "failed"
        assert report["error"]["code"] == "CHROME_INTERSTITIAL_ERROR"  # Lighthouse's code kept
        assert report["error"]["message"].startswith(
            "net::ERR_CONNECTION_REFUSED: connection refused. Chrome prevented page load")
    assert f"waiting for the engine held by PID {holder.pid} since" in stderr


@pytest.mark.engine
def test_check_shows_a_progress_bar_and_its_wait(
    holder_factory: type[Holder], tmp_path: Path,
) -> None:
    budgets = tmp_path / "budgets.yaml"
    budgets.write_text(f"budgets: {{largest_contentful_paint: 2500}}\n"
                       f"pages: [{{url: 'http://127.0.0.1:{_closed_port()}/'}}]\n")
    holder = holder_factory()
    stdout, stderr = _run_until_seen(
        [sys.executable, "-m", "pagelab", "check", str(budgets), "--runs", "1"],
        f"waiting for the engine held by PID {holder.pid} since", holder,
    )
    assert "pagelab:" in stderr
    assert "1/1" in stderr
    assert f"waiting for the engine held by PID {holder.pid} since" in stderr
    assert "page failed to load:" in stdout
    assert "CHROME_INTERSTITIAL_ERROR" in stdout
    assert "pagelab: 0%" not in stdout  # the bar never goes to stdout
