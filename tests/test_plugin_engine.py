"""pytest-pagelab on the real engine: the demo site's fast page passes a budget, the heavy
page misses it with the readable message, a refused connection fails with its error code.

One pytester session, one run per page (``--pagelab-runs=1``): three engine runs in all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.engine


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

        @pytest.mark.budget(**BUDGET)
        def test_refused(perf):
            perf.measure("http://127.0.0.1:9/", devices="desktop")
    """)
    result = pytester.runpytest("--pagelab-runs=1", "--pagelab-results=results.json")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.re_match_lines([
        rf"largest_contentful_paint \d+ ms > 2500 ms \(median of 1: \d+\) mobile/us "
        rf"{site}/heavy report: \S+/report.html",
        r"page failed to load: desktop/us http://127.0.0.1:9/: [A-Z_]+",
    ])
    checks = json.loads((pytester.path / "results.json").read_text())["checks"]
    fast = [c for c in checks if c["url"] == f"{site}/fast"]
    assert fast
    assert all(c["passed"] for c in fast)
