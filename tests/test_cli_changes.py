"""``pagelab changes`` (issue 37, point 4) over a real store: one row per change, and
``--fail-on-regression`` exits 1 on an open regression and 0 once a later build restores
the level. The command runs as a child process on the test's store (``PAGELAB_DATA_DIR``),
the runner ``pagelab.measure`` would use."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta

from pagelab import LocalRunner
from pagelab.models import Build, Device, LighthouseConfig, Location, Metrics, TestStatus
from pagelab.store import create_test, finish_test, transaction

PAGE = "http://demo.test/fast"
def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pagelab ARGS`` in a child process, on this test's store (the environment's
    ``PAGELAB_DATA_DIR``)."""
    return subprocess.run([sys.executable, "-m", "pagelab", *args], capture_output=True,
                          text=True, timeout=120, check=False)


START = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)


def _store_builds(levels: list[float], *, first: int = 0, branch: str = "main") -> None:
    """Build ``first + k`` of ``branch`` with 4 runs at ``levels[k]`` ms of LCP (+0-3 ms),
    an hour apart."""
    with LocalRunner() as runner, runner.store.connection() as conn, transaction(conn):
        for k, level in enumerate(levels):
            number = first + k
            for run in range(4):
                created = START + timedelta(hours=number, minutes=run)
                test_id = create_test(
                    conn, url=PAGE, device=Device.MOBILE, location=Location.US,
                    config=LighthouseConfig(), retention=runner.store.retention,
                    created_at=int(created.timestamp() * 1000),
                    build=Build(commit=f"{branch}-{number:03d}", branch=branch))
                finish_test(conn, test_id, status=TestStatus.SUCCESS, lighthouse_version="13",
                            metrics=Metrics(largest_contentful_paint=level + run,
                                            performance_score=90.0 + run), error=None,
                            vantage="local", environment=None)


def test_an_open_regression_fails_until_a_later_build_restores_the_level() -> None:
    _store_builds([1000.0] * 6 + [1300.0] * 6)
    _store_builds([2000.0] * 6, branch="other")  # another branch, never read below
    result = run_cli("changes", "--branch", "main", "--metric", "LCP", "--fail-on-regression")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "48 runs of 12 builds on main"
    assert lines[1].split() == ["cell", "metric", "commit", "previous", "before", "after",
                                "change", "p", "direction"]
    assert len(lines) == 4  # the table's one change, then the open regression
    assert lines[2].split()[:8] == [
        "mobile/us", PAGE, "largest_contentful_paint", "main-006", "main-005", "1,002",
        "ms", "1,302"]
    assert lines[2].split()[-1] == "regression"
    assert lines[3] == "open regression: largest_contentful_paint since main-006"

    _store_builds([1250.0] * 6, first=12)  # 50 ms better: an improvement, not a fix
    partly = run_cli("changes", "--branch", "main", "--metric", "LCP", "--fail-on-regression")
    assert partly.returncode == 1, partly.stdout + partly.stderr
    lines = partly.stdout.splitlines()
    assert [line.split()[-1] for line in lines[2:4]] == ["regression", "improvement"]
    assert lines[4] == "open regression: largest_contentful_paint since main-006"

    _store_builds([1000.0] * 6, first=18)  # fixed
    restored = run_cli("changes", "--branch", "main", "--metric", "LCP",
                       "--fail-on-regression")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    directions = [line.split()[-1] for line in restored.stdout.splitlines()[2:]]
    assert directions == ["regression", "improvement", "improvement"]
    # Without --fail-on-regression the exit status says nothing of the history.
    assert run_cli("changes", "--branch", "main").returncode == 0


def test_since_and_url_narrow_the_history_and_bad_input_is_one_line() -> None:
    _store_builds([1000.0] * 6 + [1300.0] * 6)
    later = (START + timedelta(hours=6)).isoformat()
    result = run_cli("changes", "--since", later, "--metric", "LCP", "--fail-on-regression")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["24 runs of 6 builds", "no change found"]
    other = run_cli("changes", "--url", "http://demo.test/other")
    assert other.stdout.splitlines() == ["0 runs of 0 builds of http://demo.test/other",
                                         "no change found"]
    bad = run_cli("changes", "--since", "last week")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "pagelab: error: --since: 'last week' is not an ISO 8601 date or time "
        "(e.g. 2026-11-01 or 2026-11-01T09:30:00Z)"]
    unknown = run_cli("changes", "--metric", "speed")
    assert unknown.returncode == 2
    assert "metric: unknown metric 'speed': did you mean 'speed_index'?" in unknown.stderr


def test_min_change_sets_the_smallest_change_reported() -> None:
    _store_builds([1000.0] * 6 + [1010.0] * 6)  # +1 %: consistent, but under the default 2 %
    default = run_cli("changes", "--metric", "LCP", "--fail-on-regression")
    assert default.returncode == 0, default.stdout + default.stderr
    assert default.stdout.splitlines()[-1] == "no change found"
    every = run_cli("changes", "--metric", "LCP", "--min-change", "0", "--fail-on-regression")
    assert every.returncode == 1, every.stdout + every.stderr
    assert every.stdout.splitlines()[-1] == (
        "open regression: largest_contentful_paint since main-006")
    bad = run_cli("changes", "--min-change", "-1")
    assert bad.returncode == 2
    assert "min_change: expected a fraction of the level before" in bad.stderr


def test_min_diff_sets_the_smallest_change_in_the_metric_s_unit() -> None:
    _store_builds([1000.0] * 6 + [1030.0] * 6)  # +30 ms, +3 %: above both default floors
    default = run_cli("changes", "--metric", "LCP", "--fail-on-regression")
    assert default.returncode == 1, default.stdout + default.stderr
    larger = run_cli("changes", "--metric", "LCP", "--min-diff", "50", "--fail-on-regression")
    assert larger.returncode == 0, larger.stdout + larger.stderr
    assert larger.stdout.splitlines()[-1] == "no change found"
    bad = run_cli("changes", "--min-diff", "-5")
    assert bad.returncode == 2
    assert "min_diff: expected the smallest change in the metric's unit" in bad.stderr
