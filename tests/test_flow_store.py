"""Flow runs stored as tests, without the engine: the recorded FlowResult of the demo's
add-to-cart flow (``tests/data/flow-demo-cart.json``, ``tests/data/record_flow.py``) mapped
to steps, each step stored as a test on SQLite and on PostgreSQL and read back (list, get,
LHR, frame), and the one check of a flow run's input (``FlowCell.of``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pagelab import ApiRunner, Flow, InvalidFlowError, InvalidInputError, LocalRunner, Results
from pagelab.engine._flows import flow_steps
from pagelab.frames import to_frame
from pagelab.models import (
    FLOW_ACTION_FAILED,
    METRICS,
    Device,
    FlowReport,
    FlowStepRef,
    LighthouseConfig,
    LighthouseError,
    Location,
    Metrics,
    TestReport,
    TestStatus,
    measured_metrics,
    mode_measures,
)
from pagelab.runners import FlowCell, MatrixCell
from pagelab.runners._flows import store_flow_run
from pagelab.store import Store, TestQuery, get_test, list_tests

RECORDED = Path(__file__).parent / "data" / "flow-demo-cart.json"
SHOP = "http://demo.test/shop?block=300"
FLOW = (Flow("add to cart")
        .navigate(SHOP, name="shop")
        .start_timespan("add").click("#add-slow").wait_for('#cart-count[data-count="1"]')
        .end_timespan()
        .snapshot("cart"))
STARTED = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def flow_result() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECORDED.read_text(encoding="utf-8"))
    return data


def recorded_report(flow_result: dict[str, Any], *, fail_after: int | None = None
                    ) -> FlowReport:
    """The recorded run as the engine reports it (a failed one: cut after ``fail_after``
    steps, failing in the next step's action)."""
    steps = flow_steps(flow_result)
    failed = fail_after is not None
    return FlowReport(
        flow=FLOW.name, status=TestStatus.FAILED if failed else TestStatus.SUCCESS,
        steps=steps[:fail_after] if failed else steps, device=Device.MOBILE,
        location=Location.US,
        error=LighthouseError(code=FLOW_ACTION_FAILED, message="no element") if failed
        else None,
        failed_step=steps[fail_after].name if fail_after is not None else None,
        lighthouse_version=flow_result["steps"][0]["lhr"]["lighthouseVersion"],
        started_at=STARTED, finished_at=STARTED,
    )


# -- the mapping ---------------------------------------------------------------------------


def test_the_recorded_flow_maps_to_its_steps_with_their_lhrs(
        flow_result: dict[str, Any]) -> None:
    steps = flow_steps(flow_result)
    assert [(s.index, s.name, s.mode) for s in steps] == [
        (1, "shop", "navigation"), (2, "add", "timespan"), (3, "cart", "snapshot")]
    shop, add, cart = steps
    assert shop.url == SHOP
    assert shop.metrics.largest_contentful_paint is not None
    assert shop.metrics.interaction_to_next_paint is None
    assert add.metrics.interaction_to_next_paint is not None
    assert add.metrics.largest_contentful_paint is None
    assert cart.metrics == Metrics()
    for step, recorded in zip(steps, flow_result["steps"], strict=True):
        assert json.loads(step.resources["lighthouse-json"]) == recorded["lhr"]


def test_what_each_mode_measures_is_one_fact(flow_result: dict[str, Any]) -> None:
    every = Metrics(**{name: 1.0 for name in METRICS}, user_timings={"mark:x": 1.0})
    for mode in ("navigation", "timespan", "snapshot"):
        measured = measured_metrics(mode, every)
        for name, value in measured:
            assert (value is not None) == mode_measures(mode, name), (mode, name)


# -- one check, typed ------------------------------------------------------------------


def test_a_flow_cell_is_checked_once_and_typed() -> None:
    cell = FlowCell.of(FLOW, "desktop", "de", {"connection": "4g"})
    assert (cell.device, cell.location) == (Device.DESKTOP, Location.DE)
    assert cell.config.connection == "4g"
    assert FlowCell.of(FLOW, Device.MOBILE, Location.US, None).device is Device.MOBILE
    with pytest.raises(InvalidFlowError, match="no steps"):
        FlowCell.of(Flow("empty"), "mobile", "us", None)
    with pytest.raises(InvalidFlowError, match="the timespan is not closed"):
        FlowCell.of(Flow("open").navigate(SHOP).start_timespan("t"), "mobile", "us", None)
    with pytest.raises(InvalidInputError, match="device"):
        FlowCell.of(FLOW, "toaster", "us", None)
    with pytest.raises(InvalidFlowError, match="expected a pagelab Flow"):
        FlowCell.of("flow.yaml", "mobile", "us", None)  # type: ignore[arg-type]


def test_the_api_runner_refuses_a_flow_cell_before_submitting() -> None:
    # Port 9 (discard) on loopback: submitting the page cell would fail to connect.
    page = MatrixCell(SHOP, Device.MOBILE, Location.US, LighthouseConfig())
    with ApiRunner("http://127.0.0.1:9", "key") as api, \
            pytest.raises(InvalidInputError, match="local engine only"):
        api.run_matrix([page, FlowCell.of(FLOW, "mobile", "us", None)], 1, lambda *_: None)


# -- stored, listed, read --------------------------------------------------------------


def test_each_step_is_stored_as_a_test_and_listed(
        store: Store, flow_result: dict[str, Any]) -> None:
    cell = FlowCell.of(FLOW, "mobile", "us", None)
    stored = store_flow_run(store, recorded_report(flow_result), cell, vantage="local")
    ids = [step.id for step in stored.steps]
    assert all(isinstance(test_id, str) and test_id.startswith("lt_") for test_id in ids)
    with store.connection() as conn:
        listed = list_tests(conn, TestQuery(per_page=10))
        # Newest first; the steps of one run share their creation time: last step first.
        assert [r.id for r in listed] == ids[::-1]
        for step, test_id in zip(stored.steps, ids, strict=True):
            report = get_test(conn, str(test_id))
            assert report is not None
            assert report.flow_step == FlowStepRef(flow="add to cart", step=step.name,
                                                   step_index=step.index, mode=step.mode)
            assert (report.status, report.url) == (TestStatus.SUCCESS, step.url)
            assert (report.device, report.location) == (Device.MOBILE, Location.US)
            assert report.metrics == step.metrics
            assert report.created_at == STARTED
            lhr = store.artifacts.read(conn, str(test_id), "lighthouse-json")
            assert lhr is not None
            assert json.loads(lhr) == flow_result["steps"][step.index - 1]["lhr"]


def test_a_failed_run_stores_its_steps_and_the_failed_step(
        store: Store, flow_result: dict[str, Any]) -> None:
    cell = FlowCell.of(FLOW, "mobile", "us", None)
    report = recorded_report(flow_result, fail_after=1)
    stored = store_flow_run(store, report, cell, vantage="local")
    with store.connection() as conn:
        failed, shop = list_tests(conn, TestQuery(per_page=10))
    assert shop.id == stored.steps[0].id
    assert shop.flow_step == FlowStepRef(flow="add to cart", step="shop", step_index=1,
                                         mode="navigation")
    assert failed.flow_step == FlowStepRef(flow="add to cart", step="add", step_index=2)
    assert failed.status is TestStatus.FAILED
    assert failed.error == LighthouseError(code=FLOW_ACTION_FAILED, message="no element")
    assert failed.url == SHOP  # the page it was on


def test_the_runner_lists_steps_and_results_read_their_lhr(
        tmp_path: Path, flow_result: dict[str, Any]) -> None:
    """The LocalRunner's own reading: runner.list(), runner.lhr(step id), Results.lhr(step),
    the stored steps' frame equal to the run's own (flow columns, ids, metrics)."""
    with LocalRunner(tmp_path / "runner") as runner:
        cell = FlowCell.of(FLOW, "mobile", "us", None)
        stored = store_flow_run(runner.store, recorded_report(flow_result), cell,
                                vantage=runner.vantage)
        listed = runner.list()
        assert all(isinstance(r, TestReport) for r in listed)
        assert [(r.flow_step.step_index if r.flow_step else None) for r in listed] == [3, 2, 1]
        shop = stored.step("shop")
        assert runner.lhr(str(shop.id))["gatherMode"] == "navigation"
        results = Results([stored], runner=runner)
        assert results.lhr(stored.step("add"))["gatherMode"] == "timespan"
        assert results.frame["id"].tolist() == [s.id for s in stored.steps]
        history = to_frame(listed[::-1])
        columns = ["id", "url", "flow", "step", "step_index", "mode", "status",
                   "largest_contentful_paint", "interaction_to_next_paint"]
        assert history[columns].equals(results.frame[columns])
