"""Why is it slower, on the real engine: the demo's /lean and /bloated twins differ by one
300 kB script from a second loopback host (a third party) and by a 300 ms long task."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pagelab import LocalRunner, Results, measure
from pagelab.demo import WIDGET_BYTES, DemoServer
from pagelab.frames import resource_summary, third_parties, user_timings

pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]
RUNS = 3


@pytest.fixture(scope="module")
def site() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
def twins(site: DemoServer, engine: Any,
          tmp_path_factory: pytest.TempPathFactory) -> Results:
    site.clear()
    with LocalRunner(tmp_path_factory.mktemp("explain"), engine=engine) as runner:
        results = measure([site.page_url("lean"), site.page_url("bloated")], runs=RUNS,
                          runner=runner, progress=False)
    assert (results.frame["status"] == "success").all(), results.frame["error_code"]
    return results


def test_explain_ranks_the_added_script_first(twins: Results, site: DemoServer) -> None:
    explanation = twins.explain("url", site.page_url("lean"), site.page_url("bloated"))
    top = explanation.frame.iloc[0]
    assert top["kind"] == "request"
    assert "/static/widget.js?cb=*" in top["item"]  # the cache buster normalised
    assert top["unit"] == "bytes"
    served = site.bytes_sent(f"{site.third_party_url}/static/widget.js") / RUNS
    assert top["delta"] == pytest.approx(served, rel=0.05)
    assert served > WIDGET_BYTES
    work = explanation.frame[explanation.frame["kind"] == "main thread"].set_index("item")
    assert work.loc["scriptEvaluation", "delta"] > 200  # the long task
    assert "1 more script" in explanation.summary
    assert "127.0.0.2" in explanation.summary
    assert "script evaluation" in explanation.summary
    assert '<table class="pagelab-explanation"' in explanation._repr_html_()


def test_resource_summary_agrees_with_the_bytes_served(twins: Results,
                                                       site: DemoServer) -> None:
    summary = resource_summary(twins)
    assert set(summary["id"]) == set(twins.frame["id"])
    assert summary["transfer_bytes"].sum() == pytest.approx(site.bytes_sent(), rel=0.05)
    per_run = summary.groupby("id")["transfer_bytes"].sum()
    assert len(per_run) == 2 * RUNS


def test_third_parties_and_user_timings(twins: Results, site: DemoServer) -> None:
    parties = third_parties(twins)
    third = parties[parties["party"] == "third"]
    assert set(third["entity"]) == {"127.0.0.2"}
    assert (third["transfer_bytes"] > WIDGET_BYTES).all()
    assert len(third) == RUNS  # only the bloated runs load it
    marks = user_timings(twins)
    assert set(marks["name"]) >= {"article-ready", "app-init"}
    assert twins.main_thread().groupby("url")["time_ms"].sum().loc[
        site.page_url("bloated")] > 300


def test_a_user_timing_mark_is_a_metric_and_can_be_budgeted(twins: Results) -> None:
    from pagelab.budgets import evaluate

    mark = "user_timing:article-ready"
    assert twins.frame[mark].notna().all()
    assert mark in set(twins.summary()[[mark]].columns)
    median = float(twins.frame[mark].median())
    assert all(r.passed for r in evaluate({mark: median * 10 + 100}, twins.frame))
    assert not any(r.passed for r in evaluate({mark: median / 100}, twins.frame))


def test_the_html_report_explains_the_twins(twins: Results, site: DemoServer,
                                            tmp_path: Path) -> None:
    lean, bloated = site.page_url("lean"), site.page_url("bloated")
    page = twins.export(tmp_path / "report.html").read_text()
    start = page.index('<h2 id="explain">')
    # URLs in the tables break between their parts (<wbr>); read the text as shown.
    section = page[start:page.index("<h2", start + 1)].replace("<wbr>", "")
    assert f"Why {bloated} (b) differs from {lean} (a)" in section
    summary = re.search(r'<p class="pagelab-explain-summary">([^<]*)</p>', section)
    assert summary is not None
    assert f"{bloated} loads 1 more script (" in summary.group(1)
    # Then the main-thread time the script costs ("... and spends +410 ms in script
    # evaluation", with smaller deltas listed too when a busy machine makes them large).
    assert re.search(r"127\.0\.0\.2\),? (and )?spends \+[\d,]+ ms in script evaluation",
                     summary.group(1)), summary.group(1)
    # On mobile the script's bytes outweigh the long task: its row comes first.
    assert section.index("/static/widget.js?cb=*") < section.index(">script evaluation<")
    images = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,', section)
    assert images[0] == "Why it differs: contributions, largest first"
    assert images[1].startswith(f"{lean}: Requests of ")
    assert len(images) == 2  # the filmstrips are the comparison's (issue 40, point 5)
    visual = page[page.index('<h3 id="visual">How they paint</h3>'):start]
    assert re.findall(r'<img alt="[^"]*" src="data:image/png;base64,', visual)


def test_a_resource_budget_names_the_script(twins: Results, site: DemoServer,
                                            tmp_path: Path) -> None:
    from pagelab.budgets import assert_runs, evaluate, load_budgets

    lean, bloated = site.page_url("lean"), site.page_url("bloated")
    path = tmp_path / "budgets.yaml"
    path.write_text("budgets:\n  resource_size: {script: 100000}\n"
                    f"pages:\n  - url: {lean}\n  - url: {bloated}\n")
    results = {r.url: r for r in evaluate(load_budgets(path), twins.frame,
                                          read_lhr=twins.lhr)}
    assert results[lean].passed
    miss = results[bloated]
    assert not miss.passed
    assert miss.metric == "resource_size:script"
    assert miss.actual is not None
    assert miss.actual > WIDGET_BYTES
    assert f"largest script: {site.third_party_url}/static/widget.js?cb=" in miss.message
    lhci = assert_runs({"assertions": {"resource-summary:script:size": [
        "error", {"maxNumericValue": 100_000}]}}, twins.frame, read_lhr=twins.lhr)
    assert {r.url: r.passed for r in lhci} == {lean: True, bloated: False}
