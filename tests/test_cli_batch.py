"""``pagelab batch``: bad input in one line (exit 2), the summary table (failed cells kept),
and one real run on the demo site writing every output format."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from pagelab import Results, TestReport
from pagelab.cli._batch import summary_table
from pagelab.cli._options import OUT_FORMATS
from pagelab.export import SUFFIXES
from pagelab.frames import to_frame
from pagelab.models import LighthouseError
from pagelab.stats import AGGREGATIONS
from recorded_runs import load_runs

# What these tests measure is not Lighthouse's doing: the short quiet window (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")

FORMATS = (".csv", ".parquet", ".xlsx", ".json", ".html")


def _pagelab(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pagelab", *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "required: URL"),
        (["ftp://a.test/"], "urls[0]: must be an absolute http"),
        (["http://a.test/", "--devices", "fridge"], "devices[0]: unknown 'fridge'"),
        (["http://a.test/", "--devices", ","], "--devices: give at least one id"),
        (["http://a.test/", "--locations", "mars"], "locations[0]: unknown 'mars'"),
        (["http://a.test/", "--connections", "4g,9g"], "connections[1]: unknown '9g'"),
        (["http://a.test/", "--runs", "0"], "--runs: must be at least 1"),
        (["http://a.test/", "--runs", "x"], "invalid int value"),
        (["http://a.test/", "--aggregation", "mode"], "--aggregation: unknown 'mode'"),
        (["http://a.test/", "--config", "{bad"], "--config: not valid JSON"),
        (["http://a.test/", "--out", "results.txt"], "unknown suffix '.txt'"),
        (["http://a.test/", "--out", "/no/such/dir/r.csv"], "does not exist"),
    ],
)
def test_bad_input_gives_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = _pagelab("batch", *args)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pagelab: error: ")
    assert message in lines[0]


def test_help_names_every_aggregation_and_format() -> None:
    result = _pagelab("batch", "--help")
    assert result.returncode == 0
    for agg in AGGREGATIONS:
        assert agg in result.stdout
    # The formats checked before a run are the ones export writes.
    assert set(OUT_FORMATS) == set(SUFFIXES)


def _failed(url: str, code: str, n: int) -> TestReport:
    return TestReport(id=f"lt_failed{n}", url=url, device="mobile", location="us",
                      status="failed", created_at=1_790_000_000_000 + n,
                      error=LighthouseError(code=code, message="x"))


def test_table_keeps_failed_cells_with_their_codes() -> None:
    runs = load_runs()
    extra = to_frame([
        _failed("http://demo.test/broken", "ERRORED_DOCUMENT_REQUEST", 1),
        _failed("http://demo.test/broken", "TIMEOUT", 2),
        _failed("http://demo.test/fast", "ENGINE_CRASHED", 3),
    ])
    results = Results.from_frame(pd.concat([runs, extra.astype(runs.dtypes.to_dict())],
                                           ignore_index=True))
    table = summary_table(results)
    assert list(table.columns) == [
        "url", "device", "location", "runs", "failed", "Score", "FCP (ms)", "LCP (ms)",
        "TBT (ms)", "CLS", "SI (ms)", "TTI (ms)", "TTFB (ms)", "note",
    ]  # the cell columns holding a value (no connection given: the devices' own)
    table = table.set_index("url")
    broken = table.loc["http://demo.test/broken"]
    assert broken["runs"] == 2
    assert broken["failed"] == 2
    assert broken["note"] in ("failed: ERRORED_DOCUMENT_REQUEST, TIMEOUT",
                              "failed: TIMEOUT, ERRORED_DOCUMENT_REQUEST")
    assert pd.isna(broken["LCP (ms)"])
    assert table.loc["http://demo.test/fast", "note"] == "1 failed: ENGINE_CRASHED"
    assert table.loc["http://demo.test/heavy", "note"] == ""


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.engine
def test_real_batch_prints_the_summary_and_writes_every_format(
    demo_url: str, tmp_path: Path, data_dir: Path
) -> None:
    fast = f"{demo_url}/fast"
    refused = f"http://127.0.0.1:{_closed_port()}/"  # nothing listens: the run fails
    outs = [tmp_path / f"results{suffix}" for suffix in FORMATS]
    result = _pagelab("batch", fast, refused, "--runs", "1", "--devices", "desktop",
                      *[arg for out in outs for arg in ("--out", str(out))], timeout=600)
    # One failed run is exit 1 (the rule of every command), the table and files complete.
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3, result.stdout  # the header and one row per cell
    header = lines[0]
    for column in ("url", "device", "runs", "failed", "Score", "LCP (ms)", "TBT (ms)", "CLS",
                   "note"):
        assert column in header
    fast_row = next(line for line in lines if line.lstrip().startswith(fast))
    assert re.search(r"\b1\s+0\s+\d+", fast_row), fast_row  # 1 run, 0 failed, a score
    refused_row = next(line for line in lines if line.lstrip().startswith(refused))
    assert re.search(r"failed: [A-Z_]+", refused_row), refused_row  # kept, with its code
    assert "100%" in result.stderr  # the progress bar went to stderr
    for out in outs:
        assert out.stat().st_size > 0, out
        assert f"wrote {out}" in result.stderr
    assert len(pd.read_csv(outs[0])) == 2
    assert len(pd.read_parquet(outs[1])) == 2
    assert len(pd.read_excel(outs[2])) >= 2
    assert len(json.loads(outs[3].read_text())) == 2
    assert "<table" in outs[4].read_text()
