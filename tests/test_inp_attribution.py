"""What made INP slow (issue 40, point 4): a timespan's slowest interaction, mapped from
recorded real runs.

``tests/data/flow-inp-demo-mobile.json`` (``tests/data/record_flow_inp.py``): the demo shop's
slow button with a 300 ms and a 50 ms click handler, one flow each on the real engine: the
timespan step's LHR and the driver's record of its slowest interaction. The same flows on
the engine are ``tests/test_flow_inp_attribution_engine.py``.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pagelab._explain import explain_runs
from pagelab.engine._flows import flow_steps
from pagelab.frames import COLUMNS, from_records, to_frame, to_records
from pagelab.frames import INTERACTION_COLUMNS as INP_COLUMNS
from pagelab.models import FlowReport, InteractionBreakdown, TestReport, inp_phases

RECORDED: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "flow-inp-demo-mobile.json").read_text())
SLOW, FAST = RECORDED["300"], RECORDED["50"]


def audit_durations(lhr: dict[str, Any]) -> dict[str, float]:
    """The phases as the recorded audit lists them (subpart -> ms)."""
    table = lhr["audits"]["inp-breakdown-insight"]["details"]["items"][0]
    return {row["subpart"]: row["duration"] for row in table["items"]}


def flow_result(*recorded: dict[str, Any]) -> dict[str, Any]:
    """A FlowResult of a navigation (no interaction) then the recorded timespans."""
    navigation = {"name": "shop", "lhr": {"gatherMode": "navigation", "audits": {},
                                          "categories": {}}}
    return {"steps": [navigation, *({"name": "add", "lhr": r["lhr"]} for r in recorded)]}


def flow_report(name: str, recorded: dict[str, Any]) -> FlowReport:
    steps = flow_steps(flow_result(recorded),
                       interactions=[{"step_index": 2, **recorded["interaction"]}])
    return FlowReport(flow=name, status="success", steps=steps, device="mobile",
                      started_at=datetime(2026, 11, 28, tzinfo=UTC))


def test_the_phases_are_read_from_the_lhr_as_lighthouse_lists_them() -> None:
    for recorded in (SLOW, FAST):
        durations = audit_durations(recorded["lhr"])
        assert inp_phases(recorded["lhr"]) == {
            "input_delay": durations["inputDelay"],
            "processing": durations["processingDuration"],
            "presentation": durations["presentationDelay"],
        }
    # The 300 ms handler's processing is its busy time; the 50 ms one's is less.
    assert inp_phases(SLOW["lhr"])["processing"] >= 250
    assert inp_phases(FAST["lhr"])["processing"] < inp_phases(SLOW["lhr"])["processing"]


def test_an_lhr_without_the_breakdown_has_no_phases() -> None:
    assert inp_phases({"audits": {}}) == {}
    assert inp_phases({}) == {}
    lhr = copy.deepcopy(SLOW["lhr"])
    # Not applicable (a timespan without an interaction): no details.
    lhr["audits"]["inp-breakdown-insight"] = {"score": None,
                                              "scoreDisplayMode": "notApplicable"}
    assert inp_phases(lhr) == {}
    # A value that is not a duration is left out, not read as 0.
    table = copy.deepcopy(SLOW["lhr"])
    rows = table["audits"]["inp-breakdown-insight"]["details"]["items"][0]["items"]
    rows[0]["duration"] = None
    assert set(inp_phases(table)) == {"processing", "presentation"}


def test_a_timespan_step_has_its_slowest_interaction() -> None:
    report = flow_report("300 ms", SLOW)
    navigation, add = report.steps
    assert navigation.interaction is None
    durations = audit_durations(SLOW["lhr"])
    assert add.interaction == InteractionBreakdown(
        event="click", target="body > main > p > button#add-slow",
        target_label="Add to cart (slow)", input_delay=durations["inputDelay"],
        processing=durations["processingDuration"],
        presentation=durations["presentationDelay"])
    # Stored and read back as JSON (the steps' resources are not part of it).
    assert FlowReport.model_validate_json(report.model_dump_json()).steps[1].interaction == (
        add.interaction)


def test_a_step_without_a_record_or_phases_has_none_and_phases_alone_are_kept() -> None:
    (_, add) = flow_steps(flow_result(SLOW))  # the driver sent no record
    assert add.interaction is not None
    assert (add.interaction.event, add.interaction.target) == (None, None)
    assert add.interaction.processing == audit_durations(SLOW["lhr"])["processingDuration"]
    bare = {"steps": [{"name": "idle", "lhr": {"gatherMode": "timespan", "audits": {}}}]}
    assert flow_steps(bare)[0].interaction is None
    # A record of another step is not this one's.
    assert flow_steps(bare, interactions=[{"step_index": 2, "event": "click"}])[
        0].interaction is None


def test_the_frame_has_the_interaction_columns_after_the_metrics() -> None:
    frame = to_frame([flow_report("300 ms", SLOW), flow_report("50 ms", FAST)])
    columns = list(frame.columns)
    start = columns.index("interaction_to_next_paint") + 1
    assert columns[start:start + len(INP_COLUMNS)] == list(INP_COLUMNS)
    assert {name: str(frame[name].dtype) for name in INP_COLUMNS} == {
        "inp_event": "string", "inp_target": "string", "inp_input_delay": "float64",
        "inp_processing": "float64", "inp_presentation": "float64"}
    add = frame[frame["step"] == "add"].set_index("flow")
    assert add.at["300 ms", "inp_target"] == "body > main > p > button#add-slow"
    assert add.at["300 ms", "inp_event"] == "click"
    assert add.at["300 ms", "inp_processing"] >= 250
    assert add.at["50 ms", "inp_processing"] < add.at["300 ms", "inp_processing"]
    assert add.at["50 ms", "inp_input_delay"] == audit_durations(FAST["lhr"])["inputDelay"]
    # The navigation steps have none.
    shop = frame[frame["step"] == "shop"]
    assert shop[list(INP_COLUMNS)].isna().all().all()
    # A frame of page runs only has no such columns.
    page = TestReport(id="lt_1", url="https://example.com/", device="mobile",
                      location="us", status="success")
    assert not set(INP_COLUMNS) & set(to_frame([page]).columns)
    assert not set(INP_COLUMNS) & set(COLUMNS)


def test_the_interaction_columns_round_trip_through_records_and_csv(tmp_path: Path) -> None:
    frame = to_frame([flow_report("300 ms", SLOW), flow_report("50 ms", FAST)])
    pd.testing.assert_frame_equal(from_records(to_records(frame)), frame, check_exact=True)
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    read = from_records(pd.read_csv(path, dtype=object, keep_default_na=True))
    for name in INP_COLUMNS:
        pd.testing.assert_series_equal(read[name], frame[name], check_exact=False)


def test_explain_ranks_the_phases_of_two_flows_steps() -> None:
    explanation = explain_runs([({"step": "add"}, [FAST["lhr"]], [SLOW["lhr"]])],
                               a_label="50 ms", b_label="300 ms")
    phases = explanation.frame[explanation.frame["kind"] == "INP phase"].set_index("item")
    slow, fast = inp_phases(SLOW["lhr"]), inp_phases(FAST["lhr"])
    assert phases.at["processing", "delta"] == pytest.approx(
        slow["processing"] - fast["processing"])
    assert phases.at["processing", "unit"] == "ms"
    # Each phase is one row; the processing is the largest of them, written in the summary.
    assert phases.index.is_unique
    ranked = explanation.frame["item"].tolist()
    assert all(ranked.index("processing") < ranked.index(item) for item in phases.index
               if item != "processing")
    delta = slow["processing"] - fast["processing"]
    assert f"takes {delta:+,.0f} ms in its slowest interaction's processing" in (
        explanation.summary)


def test_explain_of_page_runs_has_no_phase_rows() -> None:
    lhr = json.loads((Path(__file__).parent / "data" / "lhr-lean-desktop.json").read_text())
    explanation = explain_runs([({}, [lhr], [lhr])])
    assert "INP phase" not in set(explanation.frame["kind"].astype(str))


def test_a_flow_run_displays_its_slowest_interaction() -> None:
    page = flow_report("300 ms", SLOW)._repr_html_()
    phases = inp_phases(SLOW["lhr"])
    assert ("Step 2 &#39;add&#39;, slowest interaction: click on body &gt; main &gt; p &gt; "
            "button#add-slow (Add to cart (slow)): input delay "
            f"{phases['input_delay']:,.0f} ms \u00b7 processing {phases['processing']:,.0f} ms "
            f"\u00b7 presentation delay {phases['presentation']:,.0f} ms") in page
    # A navigation has none; a flow without any interaction shows no such line.
    bare = FlowReport(flow="idle", status="success", device="mobile",
                      steps=flow_steps(flow_result()))
    assert "slowest interaction" not in bare._repr_html_()


def test_a_report_comparing_flows_says_why_it_has_no_filmstrips(tmp_path: Path) -> None:
    """Steps of flows have no test id to read screenshots by: the report's comparison says
    so in its note (the filmstrips raised a KeyError on them and the report failed)."""
    import pagelab
    from pagelab.export import html_report

    with pagelab.LocalRunner(tmp_path) as runner:
        results = pagelab.Results([flow_report("300 ms", SLOW), flow_report("50 ms", FAST)],
                                  runner=runner)
        page = html_report(results, by="flow", a="50 ms", b="300 ms")
    start = page.index('<h3 id="visual">')
    visual = page[start:page.index("<h2", start)]
    assert ("No filmstrips: filmstrip_compare: the compared runs have no test ids to read "
            "their screenshots by") in visual
    assert "<img" not in visual


def test_explain_of_two_stored_flows_ranks_the_phases_through_results(tmp_path: Path) -> None:
    # Stored flow steps are tests with ids (issue 36): Results.explain reads their LHRs.
    from pagelab import Flow, LocalRunner, Results
    from pagelab.runners import FlowCell
    from pagelab.runners._flows import store_flow_run

    with LocalRunner(tmp_path / "runner") as runner:
        stored = []
        for name, recorded in (("50 ms", FAST), ("300 ms", SLOW)):
            flow = (Flow(name).navigate("http://demo.test/shop", name="shop")
                    .start_timespan("add").click("#add-slow").end_timespan())
            stored.append(store_flow_run(runner.store, flow_report(name, recorded),
                                         FlowCell.of(flow, "mobile", "us", None),
                                         vantage=runner.vantage))
        explanation = Results(stored, runner=runner).explain("flow", "50 ms", "300 ms",
                                                             within="step")
    assert "takes +255 ms in its slowest interaction's processing" in str(explanation)
