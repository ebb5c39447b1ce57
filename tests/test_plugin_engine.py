"""pytest-pagelab on the real engine: the demo site's fast page passes a budget, the heavy
page misses it with the readable message, a refused connection fails with its error code.

One pytester session, one run per page and connection (``--pagelab-runs=1``): five engine
runs. The regression gate's baseline is the session's ``gate_baseline``
(tests/conftest.py), replayed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import scipy.stats  # noqa: F401

# Loaded before pytester snapshots the modules: numpy cannot be imported twice in a process.
import pagelab.stats  # pandas, numpy
from pagelab.demo import DemoServer

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    from pagelab.demo import serve

    with serve() as url:
        yield url


def test_real_engine_budgets(
    pytester: pytest.Pytester, site: str, engine_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAGELAB_CACHE_DIR", engine_cache)
    pytester.makepyfile(f"""
        import pytest

        BUDGET = dict(largest_contentful_paint=2500, performance_score=90)

        @pytest.mark.budget(**BUDGET)
        def test_fast(perf):
            results = perf.measure("{site}/fast", devices="desktop")
            assert len(results.frame) == 1

        @pytest.mark.budget(**BUDGET)
        def test_heavy(perf):
            perf.measure("{site}/heavy")

        def test_connections(perf):
            results = perf.measure("{site}/fast", devices="desktop", connections=["fiber", "3g"])
            lcp = results.frame.set_index("connection")["largest_contentful_paint"]
            assert lcp["3g"] > 2 * lcp["fiber"]

        @pytest.mark.budget(**BUDGET)
        def test_refused(perf):
            perf.measure("http://127.0.0.1:9/", devices="desktop")
    """)
    result = pytester.runpytest("--pagelab-runs=1", "--pagelab-results=results.json")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.re_match_lines([
        rf"largest_contentful_paint \d+ ms > 2500 ms \(median of 1: \d+\) mobile/us "
        rf"{site}/heavy report: \S+/report.html",
        r"page failed to load: desktop/us http://127.0.0.1:9/: [A-Z_]+",
    ])
    checks = json.loads((pytester.path / "results.json").read_text())["checks"]
    fast = [c for c in checks if c["url"] == f"{site}/fast"]
    assert fast
    assert all(c["passed"] for c in fast)


def test_real_engine_regression_gate_with_auto_runs(
    pytester: pytest.Pytester, engine_cache: str, monkeypatch: pytest.MonkeyPatch,
    gate_site: DemoServer, gate_baseline: pagelab.Results,
) -> None:
    # A baseline of the fast demo page (8 runs); the same page again with runs=auto passes
    # and stops before the maximum; the same URL slowed by 300 ms fails with the gate's line.
    # The baseline's runs are the session's gate_baseline (tests/conftest.py), replayed into
    # --pagelab-save-baseline (they were 8 runs measured here); the plugin measuring N runs
    # on the real engine is tests/test_plugin_history.py's.
    monkeypatch.setenv("PAGELAB_CACHE_DIR", engine_cache)
    # This test is about the gate's statistics on real runs; the machine the suite shares
    # is often busy, and runs the fitness rule marks noisy cannot call a regression alone
    # (tests/test_fitness.py). Every run counts as fit here.
    monkeypatch.setenv("PAGELAB_FIT_MIN_BENCHMARK_INDEX", "0")
    monkeypatch.setenv("PAGELAB_FIT_MAX_LOAD_PER_CPU", "1000")
    monkeypatch.setenv("PAGELAB_FIT_MAX_CPU_PRESSURE", "100")
    monkeypatch.setenv("PAGELAB_FIT_MIN_CPU_SHARE", "0")
    url = gate_site.page_url("fast")
    pytester.makepyfile(f"""
        def test_fast(perf):
            perf.measure("{url}", devices="desktop")
    """)
    recorded = gate_baseline.export(pytester.path / "baseline-runs.csv")
    result = pytester.runpytest(f"--pagelab-replay={recorded}",
                                "--pagelab-save-baseline=base.json")
    result.assert_outcomes(passed=1)
    [cell] = json.loads((pytester.path / "base.json").read_text())["cells"]
    assert len(cell["values"]["largest_contentful_paint"]) == 8

    gate = ["--pagelab-compare=base.json", "--pagelab-runs=auto",
            "--pagelab-compare-fail=largest_contentful_paint:25%",
            "--pagelab-results=results.json"]
    result = pytester.runpytest(*gate)
    result.assert_outcomes(passed=1)
    [check] = json.loads((pytester.path / "results.json").read_text())["checks"]
    assert check["verdict"] == "ok"
    assert 5 <= check["n"] < 15
    result.stdout.fnmatch_lines(
        [f"runs=auto: desktop/us {url} decided after * runs; power * for a true *"])

    gate_site.delay_ms = 300
    try:
        result = pytester.runpytest(*gate)
    finally:
        gate_site.delay_ms = 0  # the session's gate site, as the other tests measure it
    result.assert_outcomes(failed=1)
    result.stdout.re_match_lines([
        rf"largest_contentful_paint regression: median \d+ ms vs baseline \d+ ms, \+\d+ ms "
        rf"\([\d.]+% interval \+\d+ ms to \+\d+ ms\), p=\S+, n=\d+ vs 8, limit "
        rf"largest_contentful_paint:25% \(at most \d+ ms\) desktop/us {url} report: \S+",
    ])
    [check] = json.loads((pytester.path / "results.json").read_text())["checks"]
    assert check["verdict"] == "regression"
    # Lighthouse's simulated throttling models the slower server: LCP grows, by less
    # than the 300 ms of waiting on the desktop profile (measured: +162 ms).
    assert check["difference"] >= 100
    assert check["n"] < 15
