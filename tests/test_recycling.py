"""The engine's recycling rule (issue 35, point 3): when Chromium is restarted between runs.

The rule's decision is a pure function, tested here without a browser; that a real engine
restarts its Chromium and keeps measuring is ``test_engine_recycling_engine.py``.
"""

from __future__ import annotations

import pytest

from pagelab import InvalidInputError
from pagelab.engine._recycling import DEFAULT_RECYCLE_MB, DEFAULT_RECYCLE_RUNS, RecyclingRule


def test_chromium_is_recycled_after_the_run_limit() -> None:
    rule = RecyclingRule(after_runs=4, above_mb=0)
    assert [rule.due(runs, 300.0) for runs in (1, 3)] == [None, None]
    assert rule.due(4, 300.0) == "4 runs (limit 4)"


def test_chromium_is_recycled_over_the_memory_limit() -> None:
    rule = RecyclingRule(after_runs=0, above_mb=800)
    assert rule.due(10_000, 800.0) is None
    assert rule.due(1, 800.5) == "800 MB (limit 800 MB)"


def test_the_first_limit_reached_decides() -> None:
    rule = RecyclingRule(after_runs=100, above_mb=800)
    assert rule.due(99, 799.0) is None
    assert rule.due(100, 10.0) == "100 runs (limit 100)"
    assert rule.due(5, 900.0) == "900 MB (limit 800 MB)"


def test_zero_turns_the_rule_off() -> None:
    rule = RecyclingRule(after_runs=0, above_mb=0)
    assert rule.due(1_000_000, 1e6) is None
    assert str(rule) == "no run limit, no memory limit"


def test_the_limits_come_from_the_arguments_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PAGELAB_RECYCLE_RUNS", raising=False)
    monkeypatch.delenv("PAGELAB_RECYCLE_MB", raising=False)
    assert RecyclingRule.from_environment() == RecyclingRule(DEFAULT_RECYCLE_RUNS,
                                                             DEFAULT_RECYCLE_MB)
    monkeypatch.setenv("PAGELAB_RECYCLE_RUNS", "50")
    monkeypatch.setenv("PAGELAB_RECYCLE_MB", " 0 ")
    assert RecyclingRule.from_environment() == RecyclingRule(50, 0)
    assert RecyclingRule.from_environment(after_runs=7) == RecyclingRule(7, 0)
    assert RecyclingRule.from_environment(above_mb=900) == RecyclingRule(50, 900)


@pytest.mark.parametrize("text", ["many", "-1", "nan"])
def test_a_bad_variable_is_refused_by_name(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("PAGELAB_RECYCLE_RUNS", text)
    with pytest.raises(InvalidInputError, match="PAGELAB_RECYCLE_RUNS"):
        RecyclingRule.from_environment()


def test_negative_limits_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="recycling"):
        RecyclingRule(after_runs=-1)
