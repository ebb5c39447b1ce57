"""A flow run on the real engine is stored like page runs: each step a test in
``runner.list()`` carrying its flow, step, index and mode, its LHR read by ``Results.lhr``
and its own HTML report behind ``report_url``. One flow, one run."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pytest

import pagelab
from pagelab import Flow, LocalRunner
from pagelab.demo import DemoServer
from pagelab.engine import Engine
from pagelab.models import FlowStepRef, TestStatus
from pagelab.runners import read_history

pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]


def test_a_flow_run_is_stored_listed_and_linked(engine: Engine, data_dir: Path) -> None:
    with DemoServer() as site, LocalRunner(engine=engine) as runner:
        flow = (Flow("add to cart")
                .navigate(site.page_url("shop"), name="shop")
                .start_timespan("add").click("#add").wait_for('#cart-count[data-count="1"]')
                .end_timespan()
                .snapshot("cart"))
        results = pagelab.measure(flow, runs=1, runner=runner, progress=False)
        (report,) = results.flow_reports
        assert report.status is TestStatus.SUCCESS, report.error
        listed = runner.list()
        history = read_history(runner)
    # Newest first; one run's steps share their start time, so the last step comes first.
    assert [r.flow_step for r in listed] == [
        FlowStepRef(flow="add to cart", step="cart", step_index=3, mode="snapshot"),
        FlowStepRef(flow="add to cart", step="add", step_index=2, mode="timespan"),
        FlowStepRef(flow="add to cart", step="shop", step_index=1, mode="navigation"),
    ]
    assert [r.id for r in listed] == [s.id for s in reversed(report.steps)]
    assert [r.id for r in history] == [s.id for s in report.steps]
    assert all(r.status is TestStatus.SUCCESS and r.vantage == "local" for r in listed)
    add = report.step("add")
    stored_add = next(r for r in listed if r.id == add.id)
    assert stored_add.metrics == add.metrics
    assert add.metrics.interaction_to_next_paint is not None
    for step in report.steps:
        lhr = results.lhr(step)
        assert lhr["gatherMode"] == step.mode
        assert lhr["finalDisplayedUrl"] == step.url
        # The step's own Lighthouse report (not the whole flow's), as a page test has.
        assert step.report_url is not None
        assert step.report_url == next(r.report_url for r in listed if r.id == step.id)
        html = Path(url2pathname(urlsplit(step.report_url).path)).read_text(encoding="utf-8")
        assert "__LIGHTHOUSE_JSON__" in html
        assert "__LIGHTHOUSE_FLOW_JSON__" not in html
        assert f'"gatherMode":"{step.mode}"' in html
    assert results.frame["id"].tolist() == [s.id for s in report.steps]
