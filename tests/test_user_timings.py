"""User timings as metrics (``user_timing:<name>``, ms, lower is better): from the recorded
/lean and /bloated LHRs through the mapping, the wide frame, its codec, summaries,
comparisons and budgets."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pagelab.budgets import evaluate
from pagelab.engine._mapping import summarize_lhr
from pagelab.frames import from_records, to_frame, to_long, to_records, to_reports
from pagelab.models import Direction, TestReport, metric
from pagelab.stats import compare, summarize

DATA = Path(__file__).parent / "data"
MARK = "user_timing:article-ready"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    reports = []
    for i, page in enumerate(["lean", "bloated", "lean", "bloated"]):
        lhr = json.loads((DATA / f"lhr-{page}-desktop.json").read_text())
        reports.append(TestReport(
            id=f"lt_{i}", url=f"http://x/{page}", device="desktop", location="us",
            status="success", metrics=summarize_lhr(lhr).metrics))
    return to_frame(reports)


def test_the_registry_knows_user_timings() -> None:
    m = metric(MARK)
    assert (m.unit, m.direction, m.label) == ("ms", Direction.LOWER, "article-ready")
    with pytest.raises(KeyError, match="user_timing:<mark or measure>"):
        metric("user_timing:")


def test_marks_and_measures_become_columns(frame: pd.DataFrame) -> None:
    timings = [c for c in frame.columns if c.startswith("user_timing:")]
    assert timings == ["user_timing:app-init", "user_timing:app-start", MARK]
    assert (frame[timings].dtypes == "float64").all()
    assert frame.loc[0, MARK] == pytest.approx(49.122)  # a mark: its start
    assert frame.loc[0, "user_timing:app-init"] == pytest.approx(0.637)  # a measure: duration
    long = to_long(frame)
    assert set(long.loc[long["metric"] == MARK, "unit"]) == {"ms"}


def test_only_where_present() -> None:
    plain = to_frame([TestReport(url="http://x/", device="mobile", location="us",
                                 status="success")])
    assert not [c for c in plain.columns if c.startswith("user_timing:")]


def test_round_trips_through_the_codec(frame: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(from_records(to_records(frame)), frame)
    metrics = to_reports(frame)[0].metrics
    assert metrics is not None
    assert metrics.user_timings is not None
    assert metrics.user_timings[MARK] == pytest.approx(49.122)


def test_in_summaries_comparisons_and_budgets(frame: pd.DataFrame) -> None:
    summary = summarize(frame, metrics=[MARK])
    assert summary[MARK].notna().all()
    compared = compare(frame, "url", "http://x/lean", "http://x/bloated")
    row = compared[compared["metric"] == MARK].iloc[0]
    assert row["unit"] == "ms"
    assert row["diff"] == pytest.approx(row["b_median"] - row["a_median"])
    results = evaluate({MARK: 40}, frame)
    by_url = {r.url: r for r in results}
    assert not by_url["http://x/lean"].passed
    assert "user_timing:article-ready 49 ms > 40 ms" in by_url["http://x/lean"].message
    assert by_url["http://x/bloated"].passed
