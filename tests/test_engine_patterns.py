"""Issue 22, finding 5: URL-pattern matching is bounded per URL and per run, and a run
that its own patterns make too slow fails as the test's fault (charged), not the
engine's (refunded). Real Lighthouse runs."""

from __future__ import annotations

import pytest

from fixtures_site import RecordingSite, page
from pagelab.engine import Engine
from pagelab.models import LighthouseConfig

# What the browser may do, not what Lighthouse measures: the short quiet window (conftest.py).
pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]

# One '*' and 492 characters: the worst case of the greedy match against a URL of 'a's.
SLOW_PATTERN = "*" + "a" * 490 + "b"


def test_patterns_that_exhaust_the_budget_fail_the_run_as_the_tests_fault(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAGELAB_PATTERN_BUDGET_MS", "1")
    with RecordingSite() as site:
        long_path = "/" + "a" * 4000
        site.add(long_path, b"GIF89a", content_type="image/gif")
        images = "".join(f'<img src="{long_path}?{n}">' for n in range(20))
        url = site.add("/", page("patterns", head=images))
        config = LighthouseConfig(blacklist=[SLOW_PATTERN])
        result = engine.run(url, "desktop", config)
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "URL_PATTERNS_TOO_SLOW", result.error
    assert result.engine_failure is False  # charged: the request's own patterns did it


def test_urls_longer_than_the_bound_are_blocked_by_a_blacklist(engine: Engine) -> None:
    with RecordingSite() as site:
        site.add("/" + "a" * 5000, b"GIF89a", content_type="image/gif")
        site.add("/short.gif", b"GIF89a", content_type="image/gif")
        url = site.add("/", page("long", head=f'<img src="/{"a" * 5000}"><img src="/short.gif">'))
        result = engine.run(url, "desktop", LighthouseConfig(blacklist=["*.js"]))
        assert result.status == "success", result.error
        assert site.requests_for("/short.gif")
        assert not site.requests_for("/" + "a" * 5000)
