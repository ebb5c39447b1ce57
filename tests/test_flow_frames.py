"""User flows downstream of the engine: the wide frame (a row per step), the step in the
cell, summaries / comparisons / budgets per step, ``perf.flow`` on replayed steps and
``pagelab flow``'s table. The reports are built from the models (the engine's side is in
tests/test_flows_engine.py and tests/test_flow_runs_engine.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

# Loaded before pytester snapshots the modules: scipy cannot be imported twice.
import scipy.stats  # noqa: F401

import pagelab
from pagelab import ApiRunner, Flow, InvalidInputError, budgets
from pagelab.cli import main
from pagelab.frames import CELL, cell_label, from_records, to_frame, to_records
from pagelab.models import FlowReport, FlowStep, LighthouseError, Metrics

pytest_plugins = ["pytester"]

SHOP = "http://demo.test/shop"
START = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def cart_run(flow: str, inp: float, run: int, *, failed: bool = False) -> FlowReport:
    """One run of an add-to-cart flow: navigation, timespan (INP ``inp``), snapshot."""
    steps = [
        FlowStep(index=1, name="shop", mode="navigation", url=SHOP,
                 metrics=Metrics(largest_contentful_paint=900 + run, performance_score=98)),
        FlowStep(index=2, name="add", mode="timespan", url=SHOP,
                 metrics=Metrics(interaction_to_next_paint=inp + run, total_blocking_time=inp,
                                 cumulative_layout_shift=0.0)),
        FlowStep(index=3, name="cart", mode="snapshot", url=SHOP),
    ]
    if failed:
        return FlowReport(flow=flow, status="failed", steps=steps[:1], failed_step="add",
                          error=LighthouseError(code="FLOW_ACTION_FAILED",
                                                message="No element found for selector: #add"),
                          device="mobile", location="us", connection="4g",
                          started_at=START + timedelta(minutes=run))
    return FlowReport(flow=flow, status="success", steps=steps, device="mobile",
                      location="us", connection="4g",
                      started_at=START + timedelta(minutes=run))


@pytest.fixture
def results() -> pagelab.Results:
    """5 runs of a 300 ms and of a 50 ms add-to-cart handler, and a failed run of the second."""
    reports = [cart_run("slow", 340, i) for i in range(5)]
    reports += [cart_run("quick", 90, i) for i in range(5)]
    reports.append(cart_run("quick", 0, 5, failed=True))
    return pagelab.Results(reports, runs=[0, 1, 2, 3, 4] * 2 + [5])


def test_a_row_per_step_with_the_step_columns(results: pagelab.Results) -> None:
    frame = results.frame
    assert list(frame.columns[:7]) == ["id", "batch_id", "url", "flow", "step", "step_index",
                                       "mode"]
    assert (str(frame["flow"].dtype), str(frame["step_index"].dtype)) == ("string", "Int64")
    assert list(frame["mode"].cat.categories) == ["navigation", "timespan", "snapshot"]
    assert len(frame) == 10 * 3 + 2  # the failed run: its measured step and its failed one
    first = frame[frame["run"] == 0].iloc[:3]
    assert first[["step", "step_index", "mode"]].astype(object).values.tolist() == [
        ["shop", 1, "navigation"], ["add", 2, "timespan"], ["cart", 3, "snapshot"]]
    assert first["interaction_to_next_paint"].isna().tolist() == [True, False, True]
    assert first["largest_contentful_paint"].notna().tolist() == [True, False, False]
    assert first["connection"].astype(str).tolist() == ["4g"] * 3
    failed = frame[frame["status"] == "failed"]
    assert failed[["flow", "step", "step_index", "error_code", "url"]].astype(
        object).values.tolist() == [["quick", "add", 2, "FLOW_ACTION_FAILED", SHOP]]
    assert pd.isna(failed["mode"].iloc[0])
    assert repr(results) == "<Results: 32 runs (steps of 2 flows) in 6 cells, 1 failed>"
    assert (len(results), len(results.flow_reports), results.reports) == (32, 11, [])


def test_the_frame_round_trips_through_records_and_mixes_with_pages(
    results: pagelab.Results,
) -> None:
    frame = results.frame
    pd.testing.assert_frame_equal(from_records(to_records(frame)), frame)
    page = pagelab.Results.from_frame(from_records([{
        "url": SHOP, "device": "mobile", "location": "us", "status": "success",
        "largest_contentful_paint": 950.0}]))
    mixed = to_frame([*page.reports, *results.flow_reports[:1]])
    assert mixed["flow"].isna().tolist() == [True, False, False, False]
    # A page's cell is what it was; a flow step's adds flow and step.
    assert CELL[-2:] == ("flow", "step")
    assert cell_label(("u", "mobile", "us", None)) == "mobile/us u"
    assert cell_label({"url": SHOP, "device": "mobile", "location": "us", "flow": "quick",
                       "step": "add"}) == f"mobile/us flow 'quick' step 'add' {SHOP}"


def test_summary_and_compare_work_per_step(results: pagelab.Results) -> None:
    summary = results.summary(metrics="interaction_to_next_paint").frame
    assert summary[["flow", "step", "runs", "failed"]].astype(object).values.tolist() == [
        ["quick", "add", 6, 1], ["quick", "cart", 5, 0], ["quick", "shop", 6, 0],
        ["slow", "add", 5, 0], ["slow", "cart", 5, 0], ["slow", "shop", 5, 0]]
    compared = results.compare("flow", "quick", "slow", "interaction_to_next_paint").frame
    add = compared[compared["step"] == "add"].iloc[0]
    assert add["verdict"] == "b is slower"
    assert (add["a_median"], add["b_median"]) == (92.0, 342.0)
    # Only the steps that measure a metric compare it: INP on the timespan, LCP on the
    # navigation, nothing on the snapshot.
    both = results.compare("flow", "quick", "slow", ["INP", "LCP"]).frame
    assert both[["step", "metric"]].astype(str).values.tolist() == [
        ["add", "interaction_to_next_paint"], ["shop", "largest_contentful_paint"]]


def test_budgets_per_step_name_the_flow_and_step(results: pagelab.Results) -> None:
    frame = results.frame
    # No step named: INP is checked where it is measured (the timespans), LCP on the
    # navigations; the snapshot measures nothing and gets no record.
    everywhere = budgets.evaluate({"interaction_to_next_paint": 200,
                                   "largest_contentful_paint": 2500}, frame)
    assert sorted((r.flow, r.step, r.metric, r.passed) for r in everywhere) == [
        ("quick", "add", "interaction_to_next_paint", True),
        ("quick", "shop", "largest_contentful_paint", True),
        ("slow", "add", "interaction_to_next_paint", False),
        ("slow", "shop", "largest_contentful_paint", True)]
    miss = next(r for r in everywhere if not r.passed)
    assert miss.message == (
        "interaction_to_next_paint 342 ms > 200 ms (median of 5: 340, 341, 342, 343, 344) "
        f"mobile/us/4g flow 'slow' step 'add' {SHOP}")
    # A step named: that step only, and a metric it does not measure is a failed record.
    checks = budgets.checks_from_mapping({"largest_contentful_paint": 2500}, step="add",
                                         flow="slow")
    (named,) = budgets.evaluate(checks, frame)
    assert (named.step, named.passed, named.actual) == ("add", False, None)
    assert "no value in 5 runs" in named.message
    assert budgets.run_failures(frame) == {
        (SHOP, "mobile", "us", "4g", "quick", "add"): ["FLOW_ACTION_FAILED"]}


def test_flows_are_refused_where_they_cannot_run() -> None:
    flow = Flow("f").navigate("http://127.0.0.1:9/")
    with pytest.raises(InvalidInputError, match="runs='auto' measures pages only"):
        pagelab.measure(flow, runs="auto")
    with pytest.raises(InvalidInputError, match="two flows named 'f'"):
        pagelab.measure([flow, flow.snapshot("again")], runs=1)
    with pytest.raises(InvalidInputError, match="local engine only"):
        pagelab.measure(flow, runs=1, runner=ApiRunner("http://127.0.0.1:9", "key"),
                        progress=False)


def test_perf_flow_budget_names_flow_step_value_and_budget(
    pytester: pytest.Pytester, results: pagelab.Results, tmp_path: Path
) -> None:
    recorded = tmp_path / "flows.json"
    recorded.write_text(json.dumps({"runs": to_records(results.frame)}))
    (pytester.path / "slow.yaml").write_text(
        f"name: slow\nsteps:\n  - navigate: {SHOP}\n    name: shop\n"
        "  - timespan: add\n    actions: [{click: '#add-slow'}]\n  - snapshot: cart\n")
    pytester.makepyfile(f"""
        import pytest
        from pagelab import Flow

        @pytest.mark.budget(interaction_to_next_paint=200, step="add")
        def test_slow(perf):
            perf.flow("slow.yaml")

        @pytest.mark.budget(interaction_to_next_paint=200, largest_contentful_paint=2500)
        def test_quick(perf):
            results = perf.flow(Flow("quick").navigate("{SHOP}", name="shop"))
            assert set(results.frame["step"]) == {{"shop", "add", "cart"}}
    """)
    result = pytester.runpytest(f"--pagelab-replay={recorded}")
    result.assert_outcomes(passed=0, failed=2)
    result.stdout.re_match_lines([
        r"E?\s*interaction_to_next_paint 342 ms > 200 ms \(median of 5: 340, 341, 342, 343, "
        rf"344\) mobile/us/4g flow 'slow' step 'add' {SHOP}",
        r"E?\s*page failed to load: mobile/us/4g flow 'quick' step 'add' "
        rf"{SHOP}: FLOW_ACTION_FAILED",
    ])
    (pytester.path / "test_perf_flow_budget_names_flow_step_value_and_budget.py").unlink()
    pytester.makepyfile(test_marker="""
        import pytest

        @pytest.mark.budget(interaction_to_next_paint=200, step=3)
        def test_bad_marker(perf):
            perf.flow("slow.yaml")
    """)
    result = pytester.runpytest(f"--pagelab-replay={recorded}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*budget on test_marker.py::test_bad_marker: step= takes a "
                                 "step's name, got 3"])


def test_cli_flow_refuses_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nsteps:\n  - click: '#a'\n")
    for argv, message in (
        ([str(bad)], "flow 'bad', before step 1, action 1 (click '#a'): an action outside a page"),
        ([str(tmp_path / "none.yaml")], "cannot read the flow file"),
        ([str(bad), "--runs", "0"], "--runs: must be at least 1, got 0"),
        ([str(bad), "--out", "x.pdf"], "--out x.pdf: unknown suffix '.pdf'"),
    ):
        assert main(["flow", *argv]) == 2
        err = capsys.readouterr().err
        assert message in err, err
        assert err.count("\n") == 1, err


def test_cli_step_tables_show_each_mode_its_metrics(results: pagelab.Results) -> None:
    from pagelab.cli._flow import step_tables

    text = step_tables(results)
    blocks = text.split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == [
        f"slow \u00b7 step 1 'shop' (navigation)  {SHOP}",
        f"slow \u00b7 step 2 'add' (timespan)  {SHOP}",
        f"slow \u00b7 step 3 'cart' (snapshot)  {SHOP}",
        f"quick \u00b7 step 1 'shop' (navigation)  {SHOP}",
        f"quick \u00b7 step 2 'add' (timespan)  {SHOP}",
        f"quick \u00b7 step 3 'cart' (snapshot)  {SHOP}",
    ]
    assert ("INP" in blocks[1], "LCP" in blocks[1], "342" in blocks[1]) == (True, False, True)
    assert ("LCP" in blocks[0], "INP" in blocks[0]) == (True, False)
    assert "measures no metric" in blocks[2]


def test_two_flows_on_different_urls_compare_step_by_step(results: pagelab.Results) -> None:
    frame = results.frame.copy()
    slow = frame["flow"] == "slow"
    frame["url"] = frame["url"].where(~slow, SHOP + "?block=300")
    compared = pagelab.Results.from_frame(frame).compare(
        "flow", "quick", "slow", "interaction_to_next_paint").frame
    add = compared[compared["step"] == "add"].iloc[0]
    assert (add["verdict"], add["note"]) == ("b is slower", "")
    assert "url" not in compared.columns


def test_a_flow_report_shows_its_steps_in_a_notebook() -> None:
    html = cart_run("<b>cart</b>", 340, 0)._repr_html_()
    assert "&lt;b&gt;cart&lt;/b&gt;" in html  # escaped, as everything from outside
    assert [name in html for name in (">shop<", ">add<", ">cart<", ">INP<", "340 ms")] == [
        True] * 5
    failed = cart_run("quick", 0, 1, failed=True)._repr_html_()
    assert "FLOW_ACTION_FAILED" in failed
    assert "No element found for selector: #add" in failed


def test_a_plot_of_inp_shows_the_steps_that_measure_it(results: pagelab.Results) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    ax = results.plot("INP", by="flow")
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "quick\n6 runs, 1 failed, median 92 ms", "slow\n5 runs, median 342 ms"]
    ax = results.plot("LCP", by=["flow", "step"])
    assert [t.get_text().split("\n")[0] for t in ax.get_yticklabels()] == [
        "quick \u00b7 add", "quick \u00b7 shop", "slow \u00b7 shop"]


FLOW_BUDGETS = """
budgets:
  largest_contentful_paint: 2500
flows:
  - file: slow.yaml
    steps:
      add: {interaction_to_next_paint: 200}
  - file: quick.yaml
    budgets: {interaction_to_next_paint: 200}
"""


def _flow_files(where: Path) -> None:
    for name in ("slow", "quick"):
        (where / f"{name}.yaml").write_text(
            f"name: {name}\nsteps:\n  - navigate: {SHOP}\n    name: shop\n"
            "  - timespan: add\n    actions: [{click: '#add-slow'}]\n  - snapshot: cart\n")


def test_budget_files_name_flow_files_and_budgets_per_step(
    pytester: pytest.Pytester, results: pagelab.Results, tmp_path: Path
) -> None:
    recorded = tmp_path / "flows.json"
    recorded.write_text(json.dumps({"runs": to_records(results.frame)}))
    _flow_files(pytester.path)
    pytester.makefile(".yaml", budgets=FLOW_BUDGETS)
    loaded = budgets.load_budgets(pytester.path / "budgets.yaml")
    assert sorted((c.flow, c.step or "", c.metric) for c in loaded.checks()) == [
        ("quick", "", "interaction_to_next_paint"), ("quick", "", "largest_contentful_paint"),
        ("slow", "", "largest_contentful_paint"), ("slow", "add", "interaction_to_next_paint")]
    result = pytester.runpytest(f"--pagelab-replay={recorded}", "-v")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*budgets.yaml::flow slow[[]mobile-us[]] FAILED*",
        "*budgets.yaml::flow quick[[]mobile-us[]] FAILED*",
    ])
    result.stdout.re_match_lines([
        r"interaction_to_next_paint 342 ms > 200 ms \(median of 5: .*\) mobile/us/4g flow "
        rf"'slow' step 'add' {SHOP}",
        r"page failed to load: mobile/us/4g flow 'quick' step 'add' .*FLOW_ACTION_FAILED",
    ])
    # pagelab check reads the same file, on the same recorded steps.
    code = main(["check", str(pytester.path / "budgets.yaml"), "--replay", str(recorded)])
    assert code == 1


def test_a_budget_file_with_a_bad_flow_file_is_refused(tmp_path: Path) -> None:
    _flow_files(tmp_path)
    (tmp_path / "broken.yaml").write_text("name: broken\nsteps:\n  - click: '#a'\n")
    (tmp_path / "budgets.yaml").write_text("flows:\n  - file: broken.yaml\n")
    with pytest.raises(InvalidInputError, match=r"budgets.yaml: flows\[0\]: .*flow 'broken', "
                       r"before step 1, action 1 \(click '#a'\): an action outside a page"):
        budgets.load_budgets(tmp_path / "budgets.yaml")
    (tmp_path / "budgets.yaml").write_text(
        "flows:\n  - file: slow.yaml\n  - file: slow.yaml\n")
    with pytest.raises(InvalidInputError, match="two flows named 'slow'"):
        budgets.load_budgets(tmp_path / "budgets.yaml")
    (tmp_path / "budgets.yaml").write_text(
        "flows:\n  - file: slow.yaml\n    steps: {add: {interaction_to_paint: 200}}\n")
    with pytest.raises(InvalidInputError, match="interaction_to_paint"):
        budgets.load_budgets(tmp_path / "budgets.yaml")


def test_cli_step_tables_take_a_step_mode_from_any_run_that_measured_it() -> None:
    from pagelab.cli._flow import step_tables

    # The first run failed at 'add': its row for that step has no mode or URL.
    reports = [cart_run("quick", 0, 0, failed=True)]
    reports += [cart_run("quick", 90, i) for i in range(1, 4)]
    text = step_tables(pagelab.Results(reports, runs=[0, 1, 2, 3]))
    add = next(b for b in text.split("\n\n") if "'add'" in b.splitlines()[0])
    assert add.splitlines()[0] == f"quick \u00b7 step 2 'add' (timespan)  {SHOP}", add
    assert "INP" in add, add
