"""User flows on the real engine, on the demo site's shop page (issue 25's done-when)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pagelab import ApiRunner, Flow, InvalidFlowError, InvalidInputError, LocalRunner
from pagelab.demo import DemoServer
from pagelab.engine import Engine
from pagelab.models import FLOW_ACTION_FAILED, TestStatus

ADDED = '#cart-count[data-count="1"]'


@pytest.fixture(scope="module")
def site() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


def cart_flow(url: str, button: str) -> Flow:
    return (Flow("add to cart")
            .navigate(url, name="shop")
            .start_timespan("add").click(button).wait_for(ADDED).end_timespan()
            .snapshot("cart"))


@pytest.mark.engine
def test_inp_tells_a_300_ms_handler_from_a_fast_one(
    engine: Engine, site: DemoServer, data_dir: Path
) -> None:
    runner = LocalRunner(engine=engine)
    slow = runner.flow(cart_flow(site.page_url("shop?block=300"), "#add-slow"), device="mobile")
    fast = runner.flow(cart_flow(site.page_url("shop?block=300"), "#add"), device="mobile")
    for report in (slow, fast):
        assert report.status is TestStatus.SUCCESS, report.error
        assert [(s.name, s.mode) for s in report.steps] == [
            ("shop", "navigation"), ("add", "timespan"), ("cart", "snapshot")]
        navigation, timespan, snapshot = report.steps
        assert navigation.metrics is not None
        assert navigation.metrics.largest_contentful_paint is not None
        assert navigation.metrics.interaction_to_next_paint is None
        assert timespan.metrics is not None
        assert timespan.metrics.largest_contentful_paint is None  # a timespan has no load
        assert snapshot.metrics is None
        assert b"__LIGHTHOUSE_FLOW_JSON__" in report.resources["flow-report"]
    slow_inp = slow.step("add").metrics.interaction_to_next_paint  # type: ignore[union-attr]
    fast_inp = fast.step("add").metrics.interaction_to_next_paint  # type: ignore[union-attr]
    assert slow_inp is not None
    assert 300 <= slow_inp < 450
    assert fast_inp is not None
    assert fast_inp < 100


@pytest.mark.engine
def test_a_missing_selector_fails_naming_the_step_and_keeps_earlier_steps(
    engine: Engine, site: DemoServer, data_dir: Path
) -> None:
    flow = (Flow("broken")
            .navigate(site.page_url("shop"), name="shop")
            .start_timespan("add").click("#add").wait_for(ADDED).end_timespan()
            .start_timespan("checkout").click("#checkout").end_timespan()
            .snapshot("never"))
    report = LocalRunner(engine=engine).flow(flow)
    assert report.status is TestStatus.FAILED
    assert report.error is not None
    assert report.error.code == FLOW_ACTION_FAILED
    assert "step 3 (timespan 'checkout'), action 1" in report.error.message
    assert "#checkout" in report.error.message
    assert report.failed_step == "checkout"
    assert [s.name for s in report.steps] == ["shop", "add"]


def test_flows_are_refused_before_anything_runs(data_dir: Path) -> None:
    unclosed = Flow("f").navigate("http://127.0.0.1:9/shop").start_timespan("t").click("#a")
    with pytest.raises(InvalidFlowError, match="not closed"):
        LocalRunner(engine=Engine(chromium=Path("/nonexistent"))).flow(unclosed)
    with ApiRunner("http://127.0.0.1:9", api_key="k") as api, pytest.raises(
        InvalidInputError, match="local engine only"
    ):
        api.flow(unclosed.end_timespan())
