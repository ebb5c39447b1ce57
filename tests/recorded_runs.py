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

import json
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd

from pagelab.engine._mapping import summarize_lhr
from pagelab.frames import COLUMNS, to_frame
from pagelab.models import TestReport

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
