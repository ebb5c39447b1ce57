"""Resource budgets on recorded real LHRs (tests/data): values from resource-summary, the
largest requests from network-requests, aggregation over runs, refusals named."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pagelab import InvalidInputError
from pagelab.budgets import format_value
from pagelab.budgets._resources import evaluate_resources, largest_requests, resource_limits

DATA = Path(__file__).parent / "data"
HEAVY = json.loads((DATA / "lhr-all-heavy-desktop.json").read_text())
FAST = json.loads((DATA / "lhr-all-fast-mobile.json").read_text())
LHRS = {"heavy-1": HEAVY, "heavy-2": HEAVY, "fast-1": FAST}


def _frame() -> pd.DataFrame:
    rows: list[dict[str, Any]] = [
        {"id": test_id, "url": lhr["finalUrl"], "device": "desktop" if "heavy" in test_id
         else "mobile", "location": "us", "connection": None, "status": "success", "run": n}
        for n, (test_id, lhr) in enumerate(LHRS.items())]
    return pd.DataFrame(rows)


def test_limits_from_keywords() -> None:
    rest, limits = resource_limits({"largest_contentful_paint": 2500,
                                    "resource_size": {"image": 300_000, "script": {
                                        "limit": 50_000, "level": "warn"}},
                                    "third_party_count": 0})
    assert rest == {"largest_contentful_paint": 2500}
    assert [(x.metric, x.limit, x.level) for x in limits] == [
        ("resource_size:image", 300_000, None), ("resource_size:script", 50_000, "warn"),
        ("resource_count:third-party", 0, None)]
    for bad, named in (({"resource_size": {"scripts": 1}}, "unknown resource type 'scripts'"),
                       ({"resource_size": 5}, "takes a mapping of resource type"),
                       ({"resource_count": {"total": -1}}, "greater than or equal to 0")):
        with pytest.raises(InvalidInputError, match=named):
            resource_limits(bad)


def test_sizes_fail_naming_the_type_bytes_and_largest_requests() -> None:
    _, limits = resource_limits({"resource_size": {"image": 300_000, "total": 2_000_000},
                                 "resource_count": {"total": 3}})
    results = evaluate_resources(limits, _frame(), LHRS.__getitem__)
    by = {(r.url.rsplit("/", 1)[-1], r.metric): r for r in results}
    image = by["heavy", "resource_size:image"]
    assert not image.passed
    assert image.values == (1345417.0, 1345417.0)
    assert image.message.startswith("resource_size:image 1,345.4 KB > 300.0 KB (median of 2")
    assert "largest image: http://127.0.0.1:45421/static/hero.jpg (1,345.4 KB)" in image.message
    assert by["heavy", "resource_size:total"].passed
    assert not by["heavy", "resource_count:total"].passed  # 4 requests
    assert by["fast", "resource_size:image"].actual == 0
    assert format_value("resource_count:total", 4) == "4 requests"


def test_third_party_requests_are_those_outside_first_party_entities() -> None:
    assert largest_requests(HEAVY, "third-party") == []
    assert [url.rsplit("/", 1)[-1] for url, _ in largest_requests(HEAVY, "total", 2)] == [
        "hero.jpg", "heavy"]


# -- in pagelab's own budget files ------------------------------------------------------------

BUDGET_YAML = """
base_url: http://127.0.0.1:45421
devices: [mobile, desktop]
budgets:
  largest_contentful_paint: 4000
  resource_size: {image: 300000, script: 200000}
  third_party_size: 0
pages:
  - url: /heavy
    devices: [desktop]
    budgets:
      resource_count: {total: {limit: 3, level: warn}}
  - url: /fast
    devices: [mobile]
    budgets:
      resource_size: {image: 10000000}
"""


def _wide_frame() -> pd.DataFrame:
    """The runs of :func:`_frame` as the wide frame, metrics by the engine's own mapping."""
    from pagelab.engine._mapping import summarize_lhr
    from pagelab.frames import to_frame
    from pagelab.models import TestReport

    reports = []
    for row in _frame().to_dict("records"):
        summary = summarize_lhr(LHRS[row["id"]])
        reports.append(TestReport(id=row["id"], url=row["url"], device=row["device"],
                                  location="us", status=summary.status,
                                  metrics=summary.metrics))
    return to_frame(reports)


def _budget_file(tmp_path: Path, text: str = BUDGET_YAML) -> Any:
    from pagelab.budgets import load_budgets

    path = tmp_path / "budgets.yaml"
    path.write_text(text)
    return load_budgets(path)


def test_budget_files_hold_resource_limits_scoped_to_their_pages(tmp_path: Path) -> None:
    budget_file = _budget_file(tmp_path)
    # Metric checks are unchanged by them.
    assert [c.metric for c in budget_file.checks()] == ["largest_contentful_paint"] * 2
    found = [(r.url.rsplit("/", 1)[-1], r.metric, r.limit, r.level, r.devices)
             for r in budget_file.resource_limits()]
    assert found == [
        ("heavy", "resource_size:image", 300_000, "error", ("desktop",)),
        ("heavy", "resource_size:script", 200_000, "error", ("desktop",)),
        ("heavy", "resource_size:third-party", 0, "error", ("desktop",)),
        ("heavy", "resource_count:total", 3, "warn", ("desktop",)),
        ("fast", "resource_size:image", 300_000, "error", ("mobile",)),
        ("fast", "resource_size:script", 200_000, "error", ("mobile",)),
        ("fast", "resource_size:third-party", 0, "error", ("mobile",)),
        ("fast", "resource_size:image", 10_000_000, "error", ("mobile",)),
    ]


def test_budget_file_resource_limits_are_evaluated_on_the_lhrs(tmp_path: Path) -> None:
    from pagelab.budgets import evaluate

    budget_file = _budget_file(tmp_path)
    frame = _wide_frame()
    results = evaluate(budget_file, frame, read_lhr=LHRS.__getitem__)
    by = {(r.url.rsplit("/", 1)[-1], r.metric): r for r in results}
    assert len(results) == len(by) == 9
    assert set(by) == {("heavy", "largest_contentful_paint"), ("fast", "largest_contentful_paint"),
                       ("heavy", "resource_size:image"), ("heavy", "resource_size:script"),
                       ("heavy", "resource_size:third-party"), ("heavy", "resource_count:total"),
                       ("fast", "resource_size:image"), ("fast", "resource_size:script"),
                       ("fast", "resource_size:third-party")}
    image = by["heavy", "resource_size:image"]
    assert not image.passed
    assert image.level == "error"
    assert "largest image: http://127.0.0.1:45421/static/hero.jpg (1,345.4 KB)" in image.message
    count = by["heavy", "resource_count:total"]
    assert (count.passed, count.level, count.actual) == (False, "warn", 4)
    # the page's own image limit overrides the file's; the file's script limit still holds
    assert by["fast", "resource_size:image"].expected == 10_000_000
    assert by["fast", "resource_size:image"].passed
    assert by["fast", "resource_size:script"].expected == 200_000
    assert by["heavy", "resource_size:third-party"].passed
    # Never silently unchecked: without the LHRs the file is refused, naming what to pass.
    with pytest.raises(InvalidInputError, match=r"read_lhr=runner\.lhr"):
        evaluate(budget_file, frame)


def test_bad_resource_limits_in_a_file_are_named(tmp_path: Path) -> None:
    for text, named in (
        ("budgets: {resource_size: {scripts: 1}}\npages: []", "unknown resource type 'scripts'"),
        ("budgets: {resource_size: 5}\npages: []", "takes a mapping of resource type"),
        ("pages: [{url: /x, budgets: {resource_count: {total: -1}}}]",
         "greater than or equal to 0"),
    ):
        with pytest.raises(InvalidInputError, match=named) as raised:
            _budget_file(tmp_path, text)
        assert str(raised.value).startswith(f"{tmp_path / 'budgets.yaml'}: ")


def test_check_replay_reads_resource_budgets_from_the_runs_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pagelab check --replay``: the LHRs of replayed runs come from the HTML reports
    their report_url opens (Lighthouse embeds the LHR there); a report gone, or runs with
    no report_url, are a one-line error saying why, never a silent skip."""
    from pagelab.cli import main
    from pagelab.frames import from_records, to_records

    data = Path(__file__).parent / "data"
    records = []
    for run, page in enumerate(("lean", "bloated")):
        lhr = json.loads((data / f"lhr-{page}-desktop.json").read_text())
        report = tmp_path / f"lt_{page}" / "report.html"
        report.parent.mkdir()
        embedded = json.dumps(lhr).replace("<", "\\u003c")
        report.write_text(f"<html><script>window.__LIGHTHOUSE_JSON__ = {embedded};</script>"
                          "</html>")
        records.append({"id": f"lt_{page}", "run": run, "url": lhr["finalDisplayedUrl"],
                        "device": "desktop", "location": "us", "status": "success",
                        "report_url": report.as_uri()})
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps({"runs": to_records(from_records(records))}, default=str))
    lean, bloated = (r["url"] for r in records)
    budgets = tmp_path / "budgets.yaml"
    budgets.write_text(f"devices: [desktop]\nbudgets:\n  resource_size: {{script: 100000}}\n"
                       f"pages:\n  - url: {lean}\n  - url: {bloated}\n")
    assert main(["check", str(budgets), "--replay", str(runs)]) == 1
    out = capsys.readouterr().out
    assert f"desktop/us {lean}" in out
    assert "error: resource_size:script 300.2 KB > 100.0 KB" in out, out
    assert "largest script: http://127.0.0.2:" in out
    assert "/static/widget.js?cb=" in out
    # Lighthouse CI's resource-summary assertion on the same replayed runs names it too.
    rc = tmp_path / "lighthouserc.json"
    rc.write_text(json.dumps({"ci": {
        "collect": {"url": [lean, bloated], "settings": {"preset": "desktop"}},
        "assert": {"assertions": {"resource-summary:script:size": [
            "error", {"maxNumericValue": 100_000}]}}}}))
    assert main(["check", str(rc), "--replay", str(runs)]) == 1
    out = capsys.readouterr().out
    assert f"1 result(s) for desktop/us {bloated} :" in out, out
    assert "resource-summary.script.size failure for maxNumericValue assertion" in out
    assert re.search(r"largest script: http://127\.0\.0\.2:\d+/static/widget\.js\?cb=\S+ "
                     r"\(300\.2 KB\)", out), out

    (tmp_path / "lt_bloated" / "report.html").unlink()
    assert main(["check", str(budgets), "--replay", str(runs)]) == 2
    err = capsys.readouterr().err
    assert "the Lighthouse result of lt_bloated: its report is gone" in err, err
    assert "need each replayed run's Lighthouse result" in err

    csv = tmp_path / "runs.csv"
    from_records(records).drop(columns=["report_url"]).to_csv(csv, index=False)
    assert main(["check", str(budgets), "--replay", str(csv)]) == 2
    assert "replayed runs without a report_url" in capsys.readouterr().err
