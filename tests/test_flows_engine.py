"""User flows on the real engine, on the demo site's shop page (issue 25's done-when)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from demo_shop import ADDED
from pagelab import ApiRunner, Flow, InvalidFlowError, InvalidInputError, LocalRunner
from pagelab.demo import DemoServer
from pagelab.engine import Engine
from pagelab.models import FLOW_ACTION_FAILED, FlowReport, Metrics, TestStatus

# The steps, their errors and INP (measured in the timespans, which the quiet window does not
# touch) are under test: the short window for the navigation steps (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")


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
        assert snapshot.metrics == Metrics()  # an object, every field None
        assert b"__LIGHTHOUSE_FLOW_JSON__" in report.resources["flow-report"]
    slow_inp = slow.step("add").metrics.interaction_to_next_paint
    fast_inp = fast.step("add").metrics.interaction_to_next_paint
    assert slow_inp is not None
    assert 300 <= slow_inp < 450
    assert fast_inp is not None
    assert fast_inp < 100


@pytest.fixture(scope="module")
def failed_at_checkout(engine: Engine, site: DemoServer,
                       tmp_path_factory: pytest.TempPathFactory) -> FlowReport:
    """One run of the sign-in flow, then a click on a button the page does not have, then a
    snapshot: it fails in its fourth step, after three that were measured, and never
    reaches the fifth. Both tests of a failing step read it (each ran a failing flow of
    its own before)."""
    flow = (Flow("sign in")
            .navigate(site.page_url("members"), name="members first")
            .type("#user", "ada").type("#password", site.password, secret=True)
            .start_timespan("sign in").click("#sign-in").wait_for("#members").end_timespan()
            .wait_for('#visits[data-count="1"]', timeout_ms=3000)
            .snapshot("members")
            .start_timespan("checkout").click("#checkout").end_timespan()
            .snapshot("never"))
    with LocalRunner(tmp_path_factory.mktemp("failed-flow"), engine=engine) as runner:
        return runner.flow(flow)


@pytest.mark.engine
def test_a_missing_selector_fails_naming_the_step_and_keeps_earlier_steps(
    failed_at_checkout: FlowReport,
) -> None:
    report = failed_at_checkout
    assert report.status is TestStatus.FAILED
    assert report.error is not None
    assert report.error.code == FLOW_ACTION_FAILED
    assert "step 4 (timespan 'checkout'), action 1" in report.error.message
    assert "#checkout" in report.error.message
    assert report.failed_step == "checkout"
    assert [s.name for s in report.steps] == ["members first", "sign in", "members"]


@pytest.mark.engine
def test_the_error_the_frame_and_the_table_number_steps_alike(
    failed_at_checkout: FlowReport,
) -> None:
    """Actions between steps (two ``type``s, a ``wait_for``) are not steps: the failing
    timespan is step 4 in the error, the frame and the CLI's table, not entry 7 of the
    flow; and a loop over the steps reads each one's metrics, the snapshot's included."""
    from pagelab import Results
    from pagelab.cli._flow import step_tables

    report = failed_at_checkout
    assert report.status is TestStatus.FAILED
    assert report.error is not None
    assert [(s.index, s.name, s.mode) for s in report.steps] == [
        (1, "members first", "navigation"), (2, "sign in", "timespan"),
        (3, "members", "snapshot")]
    assert report.error.message.startswith(
        "flow 'sign in', step 4 (timespan 'checkout'), action 1 (click '#checkout'): "
    ), report.error.message
    lcp = [step.metrics.largest_contentful_paint for step in report.steps]
    assert lcp[0] is not None
    assert lcp[1:] == [None, None]  # a timespan and a snapshot measure no LCP
    assert report.steps[2].metrics == Metrics()
    frame = Results([report]).frame
    assert frame[["step_index", "step"]].astype(object).values.tolist() == [
        [1, "members first"], [2, "sign in"], [3, "members"], [4, "checkout"]]
    titles = [line for line in step_tables(Results([report])).splitlines()
              if "\u00b7 step" in line]
    assert [t.split("  ")[0] for t in titles] == [
        "sign in \u00b7 step 1 'members first' (navigation)",
        "sign in \u00b7 step 2 'sign in' (timespan)",
        "sign in \u00b7 step 3 'members' (snapshot)",
        "sign in \u00b7 step 4 'checkout' (failed)"]


def test_flows_are_refused_before_anything_runs(data_dir: Path) -> None:
    unclosed = Flow("f").navigate("http://127.0.0.1:9/shop").start_timespan("t").click("#a")
    with pytest.raises(InvalidFlowError, match="not closed"):
        LocalRunner(engine=Engine(chromium=Path("/nonexistent"))).flow(unclosed)
    with ApiRunner("http://127.0.0.1:9", api_key="k") as api, pytest.raises(
        InvalidInputError, match="local engine only"
    ):
        api.flow(unclosed.end_timespan())
