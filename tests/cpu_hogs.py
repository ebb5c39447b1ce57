"""Busy-loop processes: a machine whose cores other processes keep busy, for the fitness
rule's tests (tests/test_engine_load.py, tests/test_fitness_engine.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cpu_hogs(count: int) -> Iterator[None]:
    """``count`` busy-loop processes, stopped (and reaped) on the way out."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
