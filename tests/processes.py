"""Whether the processes a test started have ended: the one check the engine's process tests
share (a process that ends while it is asked about counts as ended, not as an error); and
how the tests end the servers and workers they start."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterable
from typing import Any

import psutil


def running(pid: int) -> bool:
    """Whether ``pid`` runs: it exists and is not a zombie (a zombie has ended; reaping it
    is its parent's job)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def still_running(pids: Iterable[int], *, timeout: float = 30, poll: float = 0.1) -> list[int]:
    """The ``pids`` still running once they have all ended (then none) or ``timeout``
    seconds have passed: returns as soon as they end, waits the whole timeout only if
    some never do."""
    deadline = time.monotonic() + timeout
    alive = [pid for pid in pids if running(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(poll)
        alive = [pid for pid in alive if running(pid)]
    return alive


def kill(process: subprocess.Popen[Any]) -> None:
    """SIGKILL: no shutdown code runs, as when the machine loses power."""
    process.send_signal(signal.SIGKILL)
    process.wait(30)


def stop(process: subprocess.Popen[Any], *, timeout: float = 60) -> None:
    """SIGTERM, the way a service manager stops a process; waits for a clean exit (SIGKILL
    after ``timeout`` seconds)."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
