"""Child processes that never outlive their use: own process group, killed with descendants."""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from threading import Thread
from typing import IO

import psutil

__all__ = ["ChildProcess"]

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # Linux: SIGKILL this child when the thread that started it dies (the launcher thread,
    # which lives as long as the process), so a killed Python leaves no Chromium or Node.
    # Harmless where prctl is missing. subprocess calls this after it switched to
    # ``user``/``group``: the kernel clears the parent-death signal when a process's
    # credentials change, so it must be set after the switch (it then survives the exec,
    # and a root parent's death may signal any user's process).
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


#: A request to the launcher thread: how to start the child, and where its Popen goes.
_Start = tuple[Callable[[], subprocess.Popen[str]], Future[subprocess.Popen[str]]]


class _Launcher:
    """Starts every child on one thread that lives as long as this process.

    The kernel sends the parent-death signal when the *thread* that forked a child ends, not
    the process: a Chromium started on a short-lived thread (a notebook widget's worker, a
    caller's thread pool) was SIGKILLed as that thread returned and stayed a zombie of the
    kernel, its engine none the wiser. From this thread, children die with the process only.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: queue.SimpleQueue[_Start] | None = None
        self._pid: int | None = None

    def start(self, start: Callable[[], subprocess.Popen[str]]) -> subprocess.Popen[str]:
        with self._lock:
            if self._requests is None or self._pid != os.getpid():
                # First use, or a forked child (threads do not survive a fork): a new thread.
                self._requests = queue.SimpleQueue()
                self._pid = os.getpid()
                Thread(target=self._serve, args=(self._requests,), name="pagelab-launcher",
                       daemon=True).start()
            requests = self._requests
        future: Future[subprocess.Popen[str]] = Future()
        requests.put((start, future))
        try:
            return future.result()
        except BaseException:
            # Interrupted while waiting (Ctrl-C): what still starts is ended, not left over.
            future.add_done_callback(_end_unwanted)
            raise

    @staticmethod
    def _serve(requests: queue.SimpleQueue[_Start]) -> None:
        while True:
            start, future = requests.get()
            try:
                future.set_result(start())
            except BaseException as exc:  # the caller's to handle, on its own thread
                future.set_exception(exc)


def _end_unwanted(future: Future[subprocess.Popen[str]]) -> None:
    if future.exception() is None:
        popen = future.result()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(popen.pid, signal.SIGKILL)
        popen.wait()


_LAUNCHER = _Launcher()


def _wait_ended(processes: Sequence[psutil.Process], timeout: float) -> None:
    """Wait until each process has ended: gone, or a zombie. A zombie is dead; reaping it
    is its parent's job, or for an orphan init's, which may come late (1-2 s on some
    virtual machines: ``psutil.wait_procs`` waited for it at every engine close) or, in a
    container without an init, never."""
    deadline = time.monotonic() + timeout
    pending = list(processes)
    while pending and time.monotonic() < deadline:
        pending = [process for process in pending if _running(process)]
        if pending:
            time.sleep(0.01)


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


class ChildProcess:
    """A process in a new session; ``kill()`` ends its whole process group and descendants
    and reaps it. Started from the launcher thread (``_Launcher``): it dies with this
    process, not with the thread that asked for it.

    stderr is drained by a thread into the last ``stderr_lines`` lines, for error messages.
    With ``user`` and ``group`` (uids, root only) the process runs as that user and group,
    with no supplementary groups.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        pipe_stdin: bool = False,
        pipe_stdout: bool = False,
        stderr_lines: int = 40,
        user: int | None = None,
        group: int | None = None,
    ) -> None:
        self.argv = list(argv)
        self.user = user
        self.popen = _LAUNCHER.start(lambda: subprocess.Popen(
            self.argv,
            env=env,
            cwd=cwd,
            user=user,
            group=group,
            extra_groups=[] if user is not None else None,
            stdin=subprocess.PIPE if pipe_stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE if pipe_stdout else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_die_with_parent,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        ))
        self.stderr_tail: deque[str] = deque(maxlen=stderr_lines)
        assert self.popen.stderr is not None
        Thread(target=self._drain, args=(self.popen.stderr,), daemon=True).start()

    def _drain(self, stream: IO[str]) -> None:
        # Closed at its end (the process exited or was killed): an open pipe left to the
        # garbage collector is a ResourceWarning.
        with contextlib.suppress(ValueError, OSError), stream:
            for line in stream:
                self.stderr_tail.append(line.rstrip())

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def descendants(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.pid).children(recursive=True)
        except psutil.Error:
            return []

    def kill(self, *, grace: float = 0.0) -> None:
        """End the process, its process group and every descendant; wait for them."""
        family = self.descendants()
        if grace > 0 and self.alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=grace)
        # Chromium's helpers may have left the group: kill them by pid as well.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        for process in family:
            with contextlib.suppress(psutil.Error):
                process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)
        _wait_ended(family, timeout=5)
        for stream in (self.popen.stdin, self.popen.stdout):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()

    def wait_for_file(self, path: Path, timeout: float) -> str:
        """Wait until ``path`` exists with content (or the process dies)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                text = path.read_text()
                if text.strip():
                    return text
            if not self.alive:
                raise RuntimeError("exited before writing " + path.name)
            time.sleep(0.05)
        raise TimeoutError(f"{path.name} not written within {timeout:.0f} s")
