"""The engine lock: no two Lighthouse runs overlap on one machine, whoever starts them."""

from __future__ import annotations

from pathlib import Path

import filelock

from pagelab._paths import cache_dir

__all__ = ["engine_lock"]


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
