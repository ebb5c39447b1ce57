"""A virtualenv with Apache Otava for the agreement tests (tests/test_change_points_otava.py)
and the benchmark's side-by-side figures (benchmarks/change_points.py --otava). Not a test
module.

Otava cannot share the test environment: ``apache-otava`` pins ``numpy==2.2.0`` and
``scipy<1.17`` (and pulls in BigQuery, PostgreSQL and Slack clients), which would hold the
whole suite on older numpy and scipy than users get (docs/decisions.md). So it lives in a
venv of its own, made once per machine under pagelab's cache dir (beside the engine) and
reused; a lock keeps two xdist workers from building it at once. ``make setup-test`` makes
it (``python tests/otava_venv.py``); a test that finds none makes it then.
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

from filelock import FileLock

from pagelab._paths import cache_dir

__all__ = ["OTAVA_VERSION", "otava_changes", "otava_python"]

#: The Otava the tests compare with (a new release is a deliberate change here).
OTAVA_VERSION = "0.8.0"
#: Otava's own default threshold of its t-test's p-value (``otava analyze``).
OTAVA_PVALUE = 0.001
#: Otava's default window (builds) for its E-divisive search.
OTAVA_WINDOW = 50

_SCRIPT = """
import json, sys
from otava.analysis import compute_change_points
series, window, pvalue = json.load(sys.stdin)
out = []
for values in series:
    points, _ = compute_change_points(values, window_len=window, max_pvalue=pvalue)
    out.append([int(p.index) for p in points])
json.dump(out, sys.stdout)
"""


def _directory() -> Path:
    return cache_dir() / "otava" / OTAVA_VERSION


def otava_python() -> Path:
    """The venv's Python, the venv made (pip, from the package index) if it is not there."""
    directory = _directory()
    python = directory / "venv" / "bin" / "python"
    installed = directory / ".installed"
    if installed.exists():
        return python
    directory.mkdir(parents=True, exist_ok=True)
    with FileLock(str(directory) + ".lock"):
        if installed.exists():
            return python
        venv.create(directory / "venv", clear=True, with_pip=True)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             f"apache-otava=={OTAVA_VERSION}"], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"pip install apache-otava=={OTAVA_VERSION} into {directory} "
                               f"failed: {done.stderr[-2000:]}")
        installed.write_text(OTAVA_VERSION + "\n")
    return python


def otava_changes(series: list[list[float]], *, window: int = OTAVA_WINDOW,
                  pvalue: float = OTAVA_PVALUE, python: Path | None = None) -> list[list[int]]:
    """Otava's change points (``otava.analysis.compute_change_points``, E-divisive with its
    t-test) of each series of values (one per build): the index of each build that starts
    a new level, in order. ``python``: a Python with Otava (default: :func:`otava_python`)."""
    done = subprocess.run([str(python or otava_python()), "-c", _SCRIPT],
                          input=json.dumps([series, window, pvalue]), text=True,
                          capture_output=True, check=True)
    result: list[list[int]] = json.loads(done.stdout)
    return result


if __name__ == "__main__":
    sys.stdout.write(f"Otava {OTAVA_VERSION}: {otava_python()}\n")
