"""The engine lock: no two Lighthouse runs overlap on one machine, whoever starts them, and
runs take turns in the order they asked.

A process waiting for it says so: the holder writes its PID beside the lock when it takes
it, and every wait is reported to the listeners registered with :func:`engine_waits` (the
progress bars), about once a second, as "waiting for the engine held by PID N since 12 s".
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import filelock

from pagelab._paths import cache_dir

__all__ = ["EngineWait", "engine_lock", "engine_waits", "hold_engine", "lock_holder"]

#: Seconds between two reports of a wait (and two tries of the lock).
WAIT_REPORT_INTERVAL = 1.0


@dataclass(frozen=True, slots=True)
class EngineWait:
    """A run waiting for the engine another process (or thread) holds.

    ``pid``: the holder's process id, None when unknown; ``waited``: seconds waited so far;
    ``acquired``: True once, when the wait is over and the run starts.
    """

    pid: int | None
    waited: float
    acquired: bool = False

    def __str__(self) -> str:
        if self.acquired:
            return f"got the engine after {self.waited:.0f} s"
        holder = f"PID {self.pid}" if self.pid is not None else "another process"
        return f"waiting for the engine held by {holder} since {self.waited:.0f} s"


EngineWaitListener = Callable[[EngineWait], None]

_listeners: list[EngineWaitListener] = []
_listeners_lock = threading.Lock()


@contextlib.contextmanager
def engine_waits(listener: EngineWaitListener) -> Iterator[None]:
    """Call ``listener`` with an :class:`EngineWait` while a run of this process waits for
    the engine (from the waiting thread), and once more when it gets it."""
    with _listeners_lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _listeners_lock:
            _listeners.remove(listener)


def _notify(wait: EngineWait) -> None:
    with _listeners_lock:
        listeners = list(_listeners)
    for listener in listeners:
        listener(wait)


def engine_lock(path: Path | None = None) -> filelock.FileLock:
    """A cross-process lock in the per-user cache dir.

    Held by a notebook, the server's worker or a pytest-xdist worker alike for the length of
    one run: concurrent runs on two cores skew each other's CPU-bound metrics. It is an
    ``flock`` on an open file, so a process that dies releases it at once.
    """
    lock_path = path if path is not None else cache_dir() / "engine.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    # Thread-local (the default): two threads of one process each take their own flock and
    # so exclude each other, as two processes do.
    return filelock.FileLock(str(lock_path))


def _holder_path(lock: filelock.BaseFileLock) -> Path:
    # Beside the lock, not in it: filelock opens the lock file with O_TRUNC, so every
    # waiter would erase a PID written there.
    return Path(f"{lock.lock_file}.holder")


def _write_holder(lock: filelock.BaseFileLock) -> None:
    path = _holder_path(lock)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        temporary.write_text(f"{os.getpid()}\n", encoding="ascii")
        os.replace(temporary, path)  # atomic: a reader sees the old PID or the new one
    except OSError:
        temporary.unlink(missing_ok=True)  # the PID is a courtesy; the lock still holds


def lock_holder(lock: filelock.BaseFileLock) -> int | None:
    """The PID that took ``lock`` last (None when unknown)."""
    try:
        return int(_holder_path(lock).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


#: Seconds a waiting run's place in line stays valid without being renewed (it renews it
#: every :data:`_POLL_INTERVAL`).
TURN_TIMEOUT = 2.0
#: Seconds after which a place nobody renews is cleared from the line (its waiter died).
_FORGOTTEN_AFTER = 60.0
#: Seconds between two tries of the lock while waiting (filelock's own poll interval).
_POLL_INTERVAL = 0.05
#: A place's file name: when it asked (ns, zero-padded to sort), PID, thread.
_PLACE = re.compile(r"\d{20}-\d+-\d+")


class _Line:
    """A run's place in the line for ``lock``: a file in the directory beside it, named by
    when the run asked (so names sort in arrival order) and renewed while the run waits.
    A place not renewed for :data:`TURN_TIMEOUT` seconds is a waiter that died or stopped:
    the runs behind it go on."""

    def __init__(self, lock: filelock.BaseFileLock) -> None:
        self.directory = Path(f"{lock.lock_file}.line")
        self.directory.mkdir(exist_ok=True)
        self.path = self.directory / f"{time.time_ns():020d}-{os.getpid()}-{threading.get_ident()}"
        self.path.touch()

    def first(self) -> bool:
        """Whether no run that asked earlier is still waiting."""
        now = time.time()
        try:
            entries = list(os.scandir(self.directory))
        except OSError:  # the line is gone: nobody is ahead
            return True
        for entry in entries:
            if entry.name >= self.path.name or not _PLACE.fullmatch(entry.name):
                continue
            try:
                age = now - entry.stat().st_mtime
            except FileNotFoundError:  # it got the lock meanwhile
                continue
            if age < TURN_TIMEOUT:
                return False
            if age > _FORGOTTEN_AFTER:  # a dead waiter's, long gone
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        return True

    def renew(self) -> None:
        with contextlib.suppress(OSError):  # recreated if cleared as forgotten: same place
            self.path.touch()

    def leave(self) -> None:
        self.path.unlink(missing_ok=True)


@contextlib.contextmanager
def hold_engine(lock: filelock.BaseFileLock) -> Iterator[None]:
    """Hold ``lock`` for one run, in turn: first come, first served. A run that asks while
    others wait goes after them, so a process running back to back does not take the
    engine again and again from one waiting beside it (an ``flock`` alone goes to whoever
    asks at the right moment, usually the process that just let it go). While another
    holds it, the wait is reported to the :func:`engine_waits` listeners every
    :data:`WAIT_REPORT_INTERVAL` seconds.

    A thread that holds ``lock`` already (a test holding the engine around its own run)
    takes it again at once: it is not a new run, and a place behind those who wait for it
    would wait forever."""
    if lock.is_locked:  # thread-local: this thread's hold
        with lock:
            yield
        return
    try:
        line: _Line | None = _Line(lock)
    except OSError:  # no line where the lock lies: the lock alone, not in turn
        line = None
    started = time.monotonic()
    reported: float | None = None
    try:
        while True:
            if line is None or line.first():
                try:
                    lock.acquire(timeout=0)
                    break
                except filelock.Timeout:
                    pass
            now = time.monotonic()
            if reported is None or now - reported >= WAIT_REPORT_INTERVAL:
                _notify(EngineWait(lock_holder(lock), now - started))
                reported = now
            time.sleep(_POLL_INTERVAL)
            if line is not None:
                line.renew()
    finally:
        if line is not None:
            line.leave()
    if reported is not None:
        _notify(EngineWait(os.getpid(), time.monotonic() - started, acquired=True))
    try:
        _write_holder(lock)
        yield
    finally:
        lock.release()
