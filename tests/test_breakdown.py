"""Per-run breakdowns from recorded real LHRs: /lean and /bloated of the demo site on the
desktop engine (the second differs by a 300 kB script from a second loopback host, a third
party, and a 300 ms long task)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pagelab import frames
from pagelab.frames import (
    MAIN_THREAD_COLUMNS,
    REQUEST_COLUMNS,
    RESOURCE_SUMMARY_COLUMNS,
    THIRD_PARTY_COLUMNS,
    USER_TIMING_COLUMNS,
)

DATA = Path(__file__).parent / "data"


def load(page: str) -> dict[str, Any]:
    return json.loads((DATA / f"lhr-{page}-desktop.json").read_text())


@pytest.fixture(scope="module")
def bloated() -> dict[str, Any]:
    return load("bloated")


def dtypes(frame: pd.DataFrame) -> dict[str, str]:
    return {name: str(dtype) for name, dtype in frame.dtypes.items()}


def test_requests_name_entity_party_and_render_blocking(bloated: dict[str, Any]) -> None:
    table = frames.requests(bloated)
    expected = {k: str(pd.Series([], dtype=v).dtype) for k, v in REQUEST_COLUMNS.items()}
    assert dtypes(table) == expected
    widget = table[table["url"].str.contains("widget.js")].iloc[0]
    assert widget["entity"] == "127.0.0.2"
    assert widget["party"] == "third"
    assert widget["resource_type"] == "Script"
    assert widget["resource_size"] == 300_000
    assert not widget["render_blocking"]
    assert set(table.loc[table["party"] == "first", "entity"]) == {"127.0.0.1"}
    heavy = frames.requests(json.loads((DATA / "lhr-success-heavy-desktop.json").read_text()))
    assert heavy.loc[heavy["url"].str.endswith("blocking.js"), "render_blocking"].all()


def test_resource_summary_matches_lighthouse_totals(bloated: dict[str, Any]) -> None:
    summary = frames.resource_summary(bloated)
    assert list(summary.columns) == list(RESOURCE_SUMMARY_COLUMNS)
    lighthouse = {item["resourceType"]: item for item in
                  bloated["audits"]["resource-summary"]["details"]["items"]}
    assert summary["transfer_bytes"].sum() == lighthouse["total"]["transferSize"]
    assert summary["requests"].sum() == lighthouse["total"]["requestCount"]
    third = summary[summary["party"] == "third"]
    assert third["transfer_bytes"].sum() == lighthouse["third-party"]["transferSize"]
    assert third["resource_type"].tolist() == ["script"]


def test_third_parties_from_lighthouse_entities(bloated: dict[str, Any]) -> None:
    table = frames.third_parties(bloated)
    assert list(table.columns) == list(THIRD_PARTY_COLUMNS)
    rows = table.set_index("entity")
    assert rows.loc["127.0.0.2", "party"] == "third"
    assert rows.loc["127.0.0.2", "transfer_bytes"] > 300_000
    # The long task is the page's own inline script: first-party blocking time.
    assert rows.loc["127.0.0.1", "blocking_ms"] == pytest.approx(251, abs=5)
    assert rows.loc["127.0.0.1", "main_thread_ms"] > 250
    assert frames.third_parties(load("lean"))["entity"].tolist() == ["127.0.0.1"]


def test_main_thread_and_user_timings(bloated: dict[str, Any]) -> None:
    work = frames.main_thread(bloated).set_index("category")
    lean = frames.main_thread(load("lean")).set_index("category")
    assert list(frames.main_thread(bloated).columns) == list(MAIN_THREAD_COLUMNS)
    assert work.loc["scriptEvaluation", "time_ms"] - lean.loc["scriptEvaluation", "time_ms"] > 250
    timings = frames.user_timings(bloated)
    assert list(timings.columns) == list(USER_TIMING_COLUMNS)
    by_name = timings.set_index("name")
    assert by_name.loc["article-ready", "kind"] == "mark"
    assert by_name.loc["article-ready", "value_ms"] == by_name.loc["article-ready", "start_ms"]
    assert by_name.loc["app-init", "value_ms"] == by_name.loc["app-init", "duration_ms"]


class _Runs:
    """Two stored runs, as Results holds them (a wide frame and lhr())."""

    def __init__(self) -> None:
        self.lhrs = {"lt_a": load("lean"), "lt_b": load("bloated")}
        self.frame = pd.DataFrame({
            "id": pd.array(["lt_a", "lt_b", "lt_c"], dtype="string"),
            "run": pd.array([0, 0, 0], dtype="Int64"),
            "url": pd.array(["http://x/lean", "http://x/bloated", "http://x/lean"],
                            dtype="string"),
            "device": ["desktop"] * 3, "location": ["us"] * 3,
            "connection": [None] * 3, "status": ["success", "success", "failed"],
        })

    def lhr(self, report: Any) -> dict[str, Any]:
        return self.lhrs[report]


def test_many_runs_lead_with_run_and_cell_columns() -> None:
    runs = _Runs()
    summary = frames.resource_summary(runs)
    assert list(summary.columns)[:6] == ["id", "run", "url", "device", "location", "connection"]
    assert set(summary["id"]) == {"lt_a", "lt_b"}  # the failed run has no LHR
    per_url = summary.groupby("url", observed=True)["transfer_bytes"].sum()
    assert per_url["http://x/bloated"] > per_url["http://x/lean"] + 300_000
    assert str(frames.third_parties(runs)["run"].dtype) == "Int64"


def test_a_report_needs_its_runner() -> None:
    from pagelab import InvalidInputError

    with pytest.raises(InvalidInputError, match="runner="):
        frames.main_thread("lt_abc")


# -- explain and its pictures, on the recorded twins ------------------------------------------


def test_explain_on_recorded_twins() -> None:
    from pagelab.stats import explain

    explanation = explain(_Runs(), "url", "http://x/lean", "http://x/bloated")
    frame = explanation.frame
    widget = frame[(frame["kind"] == "request") & (frame["unit"] == "bytes")].iloc[0]
    assert widget["item"].endswith("/static/widget.js?cb=*")
    assert widget["delta"] == pytest.approx(300_206)
    # 300 kB at the desktop profile's 10 Mbit/s: 234.5 ms of download
    assert widget["weight_ms"] == pytest.approx(300_206 * 8 / 10_240)
    assert list(frame["weight_ms"]) == sorted(frame["weight_ms"], reverse=True)
    assert explanation.summary == (
        "http://x/bloated loads 1 more script (300 KB, 127.0.0.2) and spends +296 ms in "
        "script evaluation."
    )
    assert "&lt;" not in explanation._repr_html_()


def test_cache_busters_are_normalised() -> None:
    from pagelab._explain import normalise_url

    assert normalise_url("https://cdn.test/a.js?cb=8f3a9c01&lang=en") == (
        "https://cdn.test/a.js?cb=*&lang=en")
    assert normalise_url("https://cdn.test/a.js?v=1700000000123") == "https://cdn.test/a.js?v=*"
    assert normalise_url("https://cdn.test/a.js?page=2") == "https://cdn.test/a.js?page=2"


def test_pictures_keep_legends_beside_the_data() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pagelab import plots
    from pagelab.stats import explain
    from test_plot_layout import check_layout

    try:
        top, bottom = plots.compare_waterfalls(load("lean"), load("bloated"))
        assert top.get_xlim() == bottom.get_xlim()
        check_layout(top.figure)
        # The twins' filmstrips on one time axis, from their LHRs' thumbnails.
        strips = plots.filmstrip_compare(_Reported(), "url", "http://x/lean",
                                         "http://x/bloated")
        top, bottom = strips.axes
        assert top.get_shared_x_axes().joined(top, bottom)
        check_layout(strips)
        ax = plots.contributions(explain(_Runs(), "url", "http://x/lean", "http://x/bloated"))
        check_layout(ax.figure)
    finally:
        plt.close("all")


def test_explain_stays_within_cells_and_says_what_is_wrong() -> None:
    from pagelab import InvalidInputError
    from pagelab.stats import explain

    runs = _Runs()
    other = runs.frame.copy()
    other["id"] = pd.array(["lt_a", "lt_b", "lt_c"], dtype="string")
    other["device"] = ["mobile"] * 3
    runs.frame = pd.concat([runs.frame, other], ignore_index=True)
    explanation = explain(runs, "url", "http://x/lean", "http://x/bloated")
    assert set(explanation.frame["device"]) == {"desktop", "mobile"}
    assert explanation.summary.startswith("desktop/us: ")
    assert "mobile/us: " in explanation.summary
    pooled = explain(runs, "url", "http://x/lean", "http://x/bloated", within=[])
    assert "device" not in pooled.frame.columns
    assert pooled.runs == (2, 2)
    with pytest.raises(InvalidInputError, match="a bare frame"):
        explain(pd.DataFrame(runs.frame), "url", "http://x/lean", "http://x/bloated")
    with pytest.raises(InvalidInputError, match="no run has url"):
        explain(runs, "url", "http://x/lean", "http://x/nowhere")


# -- the HTML of an explanation and the report's "why" section --------------------------------


class _Reported(_Runs):
    """The twins as Results hold them after a run: the wide frame with their metrics (the
    engine's own mapping of the recorded LHRs) and lhr()."""

    def __init__(self) -> None:
        from datetime import datetime

        from pagelab.engine._mapping import summarize_lhr
        from pagelab.models import TestReport

        super().__init__()
        reports = []
        for test_id, page in (("lt_a", "lean"), ("lt_b", "bloated")):
            lhr = self.lhrs[test_id]
            summary = summarize_lhr(lhr)
            reports.append(TestReport(
                id=test_id, url=f"http://x/{page}", device="desktop", location="us",
                status=summary.status, metrics=summary.metrics,
                lighthouse_version=summary.lighthouse_version,
                created_at=datetime.fromisoformat(lhr["fetchTime"]), vantage="local"))
        self.frame = frames.to_frame(reports)


def _section(page: str) -> str:
    start = page.index('<h2 id="explain">')
    return page[start:page.index("<h2", start + 1)]


def test_explanation_html_is_the_shared_table_and_escapes() -> None:
    from pagelab.stats import explain

    explanation = explain(_Runs(), "url", "http://x/lean", "http://x/bloated")
    explanation.b_label = "<b>bloated</b>"
    page = explanation._repr_html_()
    assert '<table class="pagelab-explanation"' in page
    assert "Why &lt;b&gt;bloated&lt;/b&gt; differs from http://x/lean</b> (1 vs 1 runs)" in page
    assert "<b>bloated</b>" not in page
    # b's extra script: its sizes with units, the delta signed and coloured as a loss; the
    # URL breaks between its parts, never inside one (issue 33)
    assert "/<wbr>static/<wbr>widget.<wbr>js?<wbr>cb=<wbr>*" in page
    assert "overflow-wrap:anywhere" not in page
    page = page.replace("<wbr>", "")
    row = page[page.index("widget.js?cb=*"):]
    row = row[:row.index("</tr>")]
    assert ">0 B<" in row
    assert ">300 KB<" in row
    assert "#a50e0e" in row
    assert ">+300 KB</span>" in row
    assert ">235<" in row  # its weight: 300,206 bytes at 10 Mbit/s


def test_each_cause_once_and_in_words() -> None:
    """Issue 33: one added script read as three causes (the request, its entity's bytes,
    its resource type's bytes) and the main thread as ``scriptEvaluation``. The causes are
    ranked once; the totals by entity and type are a table of their own, not bars; the
    categories are words."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pagelab import plots
    from pagelab._explain import causes, totals
    from pagelab.stats import explain

    explanation = explain(_Runs(), "url", "http://x/lean", "http://x/bloated")
    frame = explanation.frame
    # The frame keeps every level (the data); the display tells them apart.
    assert {"request", "entity", "resource type"} <= set(frame["kind"].astype(str))
    assert len(causes(frame)) + len(totals(frame)) == len(frame)
    assert not ((causes(frame)["kind"] == "resource type").any())
    assert set(totals(frame)["unit"]) <= {"bytes", "requests"}
    page = explanation._repr_html_().replace("<wbr>", "")
    ranked = page[page.index('<table class="pagelab-explanation"'):]
    ranked, summed = ranked.split('<table class="pagelab-explanation-totals"')
    assert ranked.count(">+300 KB</span>") == 1  # the script, once
    assert ">script evaluation<" in ranked
    assert "scriptEvaluation" not in page
    assert ">127.0.0.2<" in summed
    assert ">script<" in summed
    assert ">+1 request</span>" in summed
    assert "requests</span>" not in summed.replace(">+1 request</span>", "")
    try:
        ax = plots.contributions(explanation)
        names = [t.get_text() for t in ax.get_yticklabels()]
    finally:
        plt.close("all")
    assert sum("+300 KB" in n for n in names) == 1, names
    assert any(n.startswith("script evaluation (") for n in names), names
    assert not any(n.startswith("script (") for n in names), names


def test_amounts_read_as_a_reader_writes_them() -> None:
    from pagelab._explain import amount

    assert amount(300_206.0, "bytes") == "300 KB"
    assert amount(-999.0, "bytes", signed=True) == "-999 B"
    assert amount(-0.4, "ms", signed=True) == "0 ms"
    assert amount(1.0, "requests", signed=True) == "+1 request"
    assert amount(-1.0, "requests", signed=True) == "-1 request"
    assert amount(2.0, "requests", signed=True) == "+2 requests"
    assert amount(float("nan"), "ms") == "\u2013"


def test_html_report_explains_two_cells() -> None:
    from pagelab.export import html_report

    runs = _Reported()
    page = html_report(runs)
    section = _section(page).replace("<wbr>", "")
    assert "Why http://x/bloated (b) differs from http://x/lean (a)" in section
    assert ("http://x/bloated loads 1 more script (300 KB, 127.0.0.2) and spends +296 ms in "
            "script evaluation.") in section
    assert section.index(">script evaluation<") < section.index("widget.js?cb=*")
    # contributions and the waterfalls on one axis: embedded PNGs with alt text
    images = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,', section)
    assert len(images) == 2
    assert images[0] == "Why it differs: contributions, largest first"
    assert images[1].startswith("http://x/lean: Requests of ")
    assert "the representative run of each side, lt_a (http://x/lean) and lt_b" in section
    # The filmstrips are the comparison's (here from the LHRs' thumbnails: these runs have
    # no runner to read every screenshot through), once; the visual progress says why not.
    start = page.index('<h3 id="visual">')
    visual = page[start:page.index("<h2", start)]
    (filmstrips,) = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,', visual)
    assert filmstrips == "/lean (desktop/us): lt_a"
    assert "No visual progress: results: expected Results" in visual
    assert page.count("data:image/png") == page.count("<img")
    # the same report without it, and a frame (no LHRs) has no section
    assert 'id="explain"' not in html_report(runs, explain=False)
    assert 'id="explain"' not in html_report(runs.frame)


def test_html_report_says_why_it_cannot_explain() -> None:
    import pagelab
    from pagelab.export import html_report

    # Results rebuilt from a frame have no runner to read LHRs through.
    page = html_report(pagelab.Results.from_frame(_Reported().frame))
    section = _section(page)
    assert "No explanation: these Results have no runner to read LHRs from" in section
    assert "<img" not in section
