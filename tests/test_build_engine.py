"""Build context on the real engine (issue 37, point 1): a pytest-pagelab session in a git
repository stores its run under the repository's HEAD and branch (the plugin's git
fallback), and ``pagelab.history`` reads it back. One engine run."""

from __future__ import annotations

import subprocess

import pytest
import scipy.stats  # noqa: F401

# Loaded before pytester snapshots the modules: numpy cannot be imported twice in a process.
import pagelab.stats  # noqa: F401  (pandas, numpy)

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]


def test_the_plugin_stores_its_run_under_the_git_head(
    pytester: pytest.Pytester, demo_url: str, engine_cache: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pagelab

    site = demo_url
    monkeypatch.setenv("PAGELAB_CACHE_DIR", engine_cache)
    pytester.makepyfile(f"""
        def test_fast(perf):
            results = perf.measure("{site}/fast", devices="desktop", runs=1)
            assert results.frame["branch"].tolist() == ["perf-work"]
    """)

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=pytester.path, check=True, text=True,
                              capture_output=True).stdout.strip()

    git("init", "-q", "-b", "perf-work")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "t")
    head = git("rev-parse", "HEAD")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    stored = pagelab.history(f"{site}/fast")  # the store the plugin's LocalRunner used
    assert stored.frame[["commit", "branch"]].values.tolist() == [[head, "perf-work"]]
    report = stored.reports[0]
    assert report.build is not None
    assert report.build.commit == head
