"""The recycling rule on the real engine: Chromium restarted between runs, runs unharmed.

The rule's decisions are unit-tested in ``test_recycling.py``; here a real engine recycles
after every 2 runs of its Chromium, then once its tree is over 1 MB (always).
"""

from __future__ import annotations

import pytest

from pagelab.demo import DemoServer
from pagelab.engine import Engine
from pagelab.models import TestStatus
from processes import still_running

pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]


def _gone(pid: int) -> bool:
    return not still_running([pid])


def test_chromium_is_recycled_between_runs_and_the_runs_still_measure() -> None:
    with DemoServer() as site, Engine(run_timeout=120, recycle_after_runs=2,
                                      recycle_above_mb=0) as engine:
        url = site.page_url("fast")
        browsers: list[int] = []
        results = []
        for _ in range(5):
            results.append(engine.run(url, "mobile"))
            # The browser the next run uses, already (re)started between the runs.
            browsers.append(engine.process_ids("browser")[0])
        driver = engine.process_ids("driver")[0]
        # Recycled after runs 2 and 4: three Chromiums for five runs, the old ones gone.
        assert browsers[0] != browsers[1] == browsers[2] != browsers[3] == browsers[4]
        assert len(set(browsers)) == 3
        assert _gone(browsers[0])
        assert _gone(browsers[2])
        assert engine.stats() == {"runs": 5, "browser_starts": 3, "driver_starts": 1,
                                  "recycles": 2}
        for result in results:
            assert result.status == TestStatus.SUCCESS, result.error
            assert result.metrics is not None
            fcp = result.metrics.first_contentful_paint
            lcp = result.metrics.largest_contentful_paint
            assert fcp is not None
            assert lcp is not None
            assert 0 < fcp <= lcp < 10_000
            assert result.metrics.performance_score is not None
            assert result.metrics.performance_score > 50

        # By memory: any tree is over 1 MB, so every run is followed by a restart.
        engine.recycling = type(engine.recycling)(after_runs=0, above_mb=1)
        before = engine.process_ids("browser")[0]
        result = engine.run(url, "mobile")
        assert result.status == TestStatus.SUCCESS, result.error
        assert engine.process_ids("browser")[0] != before
        assert engine.process_ids("driver")[0] == driver
        assert engine.stats()["recycles"] == 3
