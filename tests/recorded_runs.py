"""Real recorded runs for the plot and export tests (not a test module).

- ``tests/data/runs-demo.csv``: 15 real engine runs of the demo site (10 ``/fast``, 5
  ``/heavy``, mobile, us; ``tests/data/record_runs.py`` says how they were made).
- ``tests/data/runs-demo-desktop.csv``: 10 more (5 ``/fast``, 5 ``/heavy``, desktop, us),
  so together a real 2-URL x 2-device matrix (``matrix_2x2``).
- ``tests/data/lhr-*.json``: three recorded real Lighthouse results (heavy on desktop, shift
  on mobile, and a run that failed because the connection was refused), turned into reports
  with the engine's own LHR mapping, so a matrix has a second device and a failed run.

URLs use the stable origin ``http://demo.test`` of the recording.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pandas as pd

from pagelab.engine._mapping import summarize_lhr
from pagelab.frames import COLUMNS, to_frame
from pagelab.models import METRICS, TestReport

DATA = Path(__file__).resolve().parent / "data"
RUNS_CSV = DATA / "runs-demo.csv"
DESKTOP_CSV = DATA / "runs-demo-desktop.csv"
ORIGIN = "http://demo.test"
#: Recorded LHR file -> the device it ran as.
LHRS = {
    "lhr-success-heavy-desktop.json": "desktop",
    "lhr-success-shift-mobile.json": "mobile",
    "lhr-failed-connection-refused.json": "mobile",
}
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def load_runs(path: Path = RUNS_CSV) -> pd.DataFrame:
    """The recorded wide frame with the wide frame's dtypes (CSV keeps only text)."""
    frame = pd.read_csv(path)
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True)
    # Columns added after the recording (the machine load) are missing: NA, as they would be.
    frame = frame.reindex(columns=list(COLUMNS))
    return frame.astype(COLUMNS)


def lhr_report(name: str) -> TestReport:
    """A report from one recorded LHR, as the engine's mapping reads it."""
    lhr = json.loads((DATA / name).read_text())
    summary = summarize_lhr(lhr)
    path = urlsplit(lhr["requestedUrl"]).path
    return TestReport(
        id=f"lt_rec_{name.removeprefix('lhr-').removesuffix('.json').replace('-', '_')}",
        url=f"{ORIGIN}{path}",
        device=LHRS[name],
        location="us",
        status=summary.status,
        lighthouse_version=summary.lighthouse_version,
        metrics=summary.metrics,
        error=summary.error,
        environment=summary.environment,
        created_at=datetime.fromisoformat(lhr["fetchTime"]),
        vantage="local",
    )


def matrix_2x2() -> pd.DataFrame:
    """25 real runs: /fast and /heavy on mobile (10 + 5) and on desktop (5 + 5), us."""
    return pd.concat([load_runs(), load_runs(DESKTOP_CSV)], ignore_index=True).astype(COLUMNS)


def matrix_frame() -> pd.DataFrame:
    """The 15 recorded runs plus the three LHR runs: 18 rows, two devices, one failed."""
    extra = to_frame([lhr_report(name) for name in LHRS])
    frame = pd.concat([load_runs(), extra], ignore_index=True)
    return frame.astype(COLUMNS)


def artifact(name: str) -> Path:
    """Where a test keeps a picture for a person to look at (``tests/artifacts/``)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


#: The dispersions of :func:`synthetic_runs`: the recorded runs' own, and a pessimistic
#: lognormal one with a coefficient of variation of 10 % (finding 6's setting).
DISPERSIONS = ("recorded", "cv10")


def synthetic_runs(
    rng: np.random.Generator, shape: tuple[int, int], *, dispersion: str = "recorded",
    shift: float = 1.0,
) -> np.ndarray:
    """Synthetic LCP values (ms) of ``shape`` (comparisons x runs), multiplied by ``shift``.

    ``recorded``: a smoothed bootstrap of the 10 recorded real runs of ``/fast`` (values drawn
    from them, times a 2 % lognormal jitter so that no two tie): their bimodal spread, CV
    about 8 %. ``cv10``: lognormal around the same median with a CV of 10 %.
    """
    frame = load_runs()
    fast = frame[frame["url"] == f"{ORIGIN}/fast"]["largest_contentful_paint"].to_numpy(float)
    if dispersion == "recorded":
        values = rng.choice(fast, size=shape) * rng.lognormal(0.0, 0.02, size=shape)
    elif dispersion == "cv10":
        sigma = float(np.sqrt(np.log(1 + 0.10**2)))
        values = float(np.median(fast)) * rng.lognormal(0.0, sigma, size=shape)
    else:
        raise ValueError(f"dispersion: one of {DISPERSIONS}, got {dispersion!r}")
    return values * shift


def commit_of(build: int) -> str:
    """Build ``build``'s commit: a full hash, as a CI names it."""
    return hashlib.sha1(f"build {build}".encode()).hexdigest()


def build_history(levels: Sequence[float], runs: int = 5, *, seed: int = 0,
                  urls: Sequence[str] = ("/fast",)) -> pd.DataFrame:
    """A history of builds made of the recorded runs of ``/fast``: build ``b``
    (:func:`commit_of`) holds ``runs`` runs of each of ``urls`` (paths on the recording's
    origin), each a recorded run drawn at random with every column, its times (ms metrics)
    times ``levels[b]`` and a 2 % lognormal jitter; builds an hour apart, rows shuffled."""
    rng = np.random.default_rng(seed)
    recorded = load_runs()
    fast = recorded[recorded["url"] == f"{ORIGIN}/fast"].reset_index(drop=True)
    times = [name for name, m in METRICS.items() if m.unit == "ms" and name in fast.columns]
    start = pd.Timestamp("2026-03-01", tz="UTC")
    parts = []
    for build, level in enumerate(levels):
        for path in urls:
            part = fast.iloc[rng.integers(0, len(fast), runs)].reset_index(drop=True)
            part["url"] = f"{ORIGIN}{path}"
            part["id"] = [f"lt_b{build}_{path.strip('/')}_{run}" for run in range(runs)]
            part["created_at"] = [start + pd.Timedelta(hours=build, seconds=run)
                                  for run in range(runs)]
            for name in times:
                part[name] = part[name] * level * rng.lognormal(0.0, 0.02, runs)
            part["commit"] = commit_of(build)
            parts.append(part)
    frame = pd.concat(parts, ignore_index=True)
    frame["commit"] = frame["commit"].astype("string")
    return frame.sample(frac=1, random_state=seed).reset_index(drop=True)
