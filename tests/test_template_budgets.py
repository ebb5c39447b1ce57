"""Budgets per scan template (issue 39): the budget file's ``scan`` and ``templates``, the
pooled evaluation, ``pagelab check`` and the pytest plugin, on recorded real runs.

The runs are tests/data/runs-demo.csv (10 real runs of the demo's /fast page, 5 of
/heavy), each page split into two by run parity (``/fast-a``, ``/fast-b``...) and given its
template (``/fast-*``, ``/heavy-*``): two templates of two pages each, as a scan with
``per_template=2`` records them. The one real scan of the demo store is at the end
(engine).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

# Loaded before pytester snapshots the modules (see tests/test_plugin.py).
import scipy.stats  # noqa: F401
import yaml

from fixtures_http import closed_port
from pagelab import InvalidInputError, budgets
from pagelab._scan import scan_sample
from pagelab.budgets import TemplateScan, budget_source_line, check_table, parse_budgets
from pagelab.cli import main
from pagelab.demo import DemoServer
from pagelab.frames import read_runs, with_template

# What these tests measure is not Lighthouse's doing: the short quiet window (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")

pytest_plugins = ["pytester"]

RUNS = Path(__file__).parent / "data" / "runs-demo.csv"

BUDGET_FILE = """\
scan: {url: "http://demo.test/", per_template: 2}
budgets:
  largest_contentful_paint: 2500
templates:
  /heavy-*: {}
  /fast-*:
    budgets:
      performance_score: {limit: 90, level: warn}
  /gone/*:
    budgets:
      speed_index: 4000
"""


def template_runs() -> pd.DataFrame:
    """The recorded runs as a scan's: two pages per template, with a ``template`` column."""
    frame = read_runs(RUNS)
    frame["url"] = [f"{url}-{'ab'[int(run) % 2]}" for url, run in
                    zip(frame["url"], frame["run"], strict=True)]
    return with_template(frame, [
        "/heavy-*" if "heavy" in url else "/fast-*" for url in frame["url"]])


@pytest.fixture
def scan_csv(tmp_path: Path) -> Path:
    path = tmp_path / "scan-runs.csv"
    template_runs().to_csv(path, index=False)
    return path


def test_each_template_is_checked_on_its_pages_runs_pooled() -> None:
    results = budgets.evaluate(parse_budgets(yaml.safe_load(BUDGET_FILE)), template_runs())
    by = {(r.template, r.metric): r for r in results}
    assert set(by) == {("/heavy-*", "largest_contentful_paint"),
                       ("/fast-*", "largest_contentful_paint"),
                       ("/fast-*", "performance_score"),
                       ("/gone/*", "largest_contentful_paint"), ("/gone/*", "speed_index")}
    heavy = by["/heavy-*", "largest_contentful_paint"]
    # Both /heavy pages' runs (5 in all), in one record named by the template.
    assert len(heavy.values) == 5
    assert heavy.url == "/heavy-*"
    assert heavy.actual == pytest.approx(7741, abs=1)
    assert not heavy.passed
    assert heavy.level == "error"
    assert heavy.message.startswith("largest_contentful_paint 7741 ms > 2500 ms (median of 5")
    assert "mobile/us template /heavy-*" in heavy.message
    fast = by["/fast-*", "largest_contentful_paint"]
    assert len(fast.values) == 10
    assert fast.passed
    assert by["/fast-*", "performance_score"].level == "warn"
    record = heavy.to_dict()
    assert {"metric", "operator", "expected", "actual", "values", "passed", "level",
            "template"} <= set(record)
    assert (record["operator"], record["expected"]) == ("<=", 2500.0)


def test_a_template_without_runs_is_a_failed_record_not_an_exception() -> None:
    results = budgets.evaluate(parse_budgets(yaml.safe_load(BUDGET_FILE)), template_runs())
    gone = [r for r in results if r.template == "/gone/*"]
    assert [r.passed for r in gone] == [False, False]
    assert all(r.actual is None and r.values == () for r in gone)
    assert gone[1].message == ("speed_index no runs: no page of template /gone/* was "
                               "measured, budget <= 4000 ms mobile/us template /gone/*")


def test_page_records_read_as_before_and_name_no_template() -> None:
    results = budgets.evaluate({"largest_contentful_paint": 2500}, template_runs())
    assert {r.url for r in results} == {"http://demo.test/fast-a", "http://demo.test/fast-b",
                                        "http://demo.test/heavy-a", "http://demo.test/heavy-b"}
    assert all("template" not in r.to_dict() for r in results)


def test_the_table_names_the_template() -> None:
    results = budgets.evaluate(parse_budgets(yaml.safe_load(BUDGET_FILE)), template_runs())
    lines = check_table([r.to_dict() for r in results], "budget check")
    assert lines[1].split("  ")[0] == "mobile/us template /heavy-*"
    assert lines[-1] == "5 budget checks: 2 passed, 3 failed, 0 warned"


@pytest.mark.parametrize(("data", "message"), [
    ({"templates": {"/p/*": {}}},
     "b.yaml: templates: budgets per template need the site to scan: add scan: {url: "
     "START_URL}"),
    ({"scan": {"url": "/"}}, "b.yaml: scan: name the templates to budget under templates"),
    ({"scan": {"url": "/"}, "templates": {"p/*": {}}},
     "b.yaml: templates: 'p/*': a template is a URL path glob starting with '/'"),
    ({"scan": {"url": "/", "per_template": 0}, "templates": {"/p/*": {}}},
     "b.yaml: scan.per_template: Input should be greater than or equal to 1"),
    ({"scan": {"url": "/", "depth": 2}, "templates": {"/p/*": {}}},
     "b.yaml: scan: unknown key 'depth' (valid: url, per_template, max_pages, include, "
     "exclude, seed)"),
    ({"scan": {"url": "/"}, "templates": {"/p/*": {"budgets": {"resource_size": {"script": 1}}}}},
     "b.yaml: templates./p/*.budgets: resource_size: resource budgets apply to pages, not "
     "to templates"),
    ({"scan": {"url": "/"}, "templates": {"/p/*": {"budgets": {"lcpp": 1}}}},
     "b.yaml: templates./p/*.budgets: unknown metric 'lcpp': did you mean 'lcp'?"),
    ({"scan": {"url": "/"}, "templates": {"/p/*": {}}, "lhci": {"assertions": {}}},
     "b.yaml: templates: Lighthouse CI assertions are checked per page"),
])
def test_bad_template_budgets_name_the_file_and_key(data: object, message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_budgets(data, "b.yaml")
    assert str(caught.value).startswith(message)


def test_a_relative_scan_url_needs_a_base_url() -> None:
    budget_file = parse_budgets({"scan": {"url": "/store/"}, "templates": {"/p/*": {}}})
    with pytest.raises(InvalidInputError, match=r"b.yaml: scan.url '/store/' is relative"):
        budgets.plan_targets(budget_file, None, source="b.yaml", base_url_option="--base-url")
    [target] = budgets.plan_targets(budget_file, "http://shop.test", source="b.yaml",
                                    base_url_option="--base-url")
    assert target.page == "http://shop.test/store/"
    assert target.template == "/p/*"
    assert target.scan == TemplateScan("http://shop.test/store/", ("/p/*",))


def test_annotations_point_at_the_templates_line() -> None:
    assert budget_source_line(BUDGET_FILE, "/gone/*", "speed_index") == 11
    # A template without its own limit on the metric: the file's limit.
    assert budget_source_line(BUDGET_FILE, "/heavy-*", "largest_contentful_paint") == 3


def test_pagelab_check_replays_a_scans_runs(scan_csv: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "budgets.yaml"
    file.write_text(BUDGET_FILE)
    assert main(["check", str(file), "--replay", str(scan_csv)]) == 1
    out = capsys.readouterr().out
    assert "mobile/us template /heavy-*  largest_contentful_paint  <= 2500 ms  7741 ms  FAIL" \
        in out
    assert "mobile/us template /fast-*   performance_score" in out
    assert ("error: speed_index no runs: no page of template /gone/* was measured, budget "
            "<= 4000 ms mobile/us template /gone/*") in out
    assert "5 checks: 2 passed, 3 failed, 0 warned" in out


def test_the_plugin_collects_an_item_per_template(pytester: pytest.Pytester,
                                                  scan_csv: Path) -> None:
    pytester.makefile(".yaml", budgets=BUDGET_FILE)
    result = pytester.runpytest(f"--pagelab-replay={scan_csv}", "-v",
                                "--pagelab-results=results.json",
                                "--pagelab-markdown=summary.md", "--junitxml=junit.xml")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([
        "*budgets.yaml::template /heavy-[*][[]mobile-us[]] FAILED*",
        "*budgets.yaml::template /fast-[*][[]mobile-us[]] PASSED*",
        "*budgets.yaml::template /gone/[*][[]mobile-us[]] FAILED*",
        "*largest_contentful_paint 7741 ms > 2500 ms (median of 5:*mobile/us template /heavy-**",
        "*speed_index no runs: no page of template /gone/* was measured*",
    ])
    import json

    checks = json.loads((pytester.path / "results.json").read_text())["checks"]
    heavy = next(c for c in checks if c["template"] == "/heavy-*")
    assert (heavy["line"], heavy["passed"], len(heavy["values"])) == (3, False, 5)
    assert "`mobile/us template /heavy-*`" in (pytester.path / "summary.md").read_text()
    assert 'name="pagelab largest_contentful_paint mobile/us template /heavy-*"' in (
        pytester.path / "junit.xml").read_text()


def unreachable_site_budgets() -> str:
    return (f'scan: {{url: "http://127.0.0.1:{closed_port()}/store/"}}\n'
            "templates: {/store/product/*: {budgets: {largest_contentful_paint: 2500}}, "
            "/store/about: {}}\n")


def test_pagelab_check_stops_when_the_site_cannot_be_found(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "budgets.yaml"
    file.write_text(unreachable_site_budgets())
    assert main(["check", str(file), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pagelab: error: start URL http://127.0.0.1:")
    assert "cannot be reached" in err
    assert err.count("\n") == 1


def test_the_plugin_fails_each_template_with_the_discovery_error(
        pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", budgets=unreachable_site_budgets())
    result = pytester.runpytest()
    result.assert_outcomes(failed=2)
    assert result.stdout.str().count("cannot be reached") >= 2


@pytest.fixture(scope="module")
def store() -> Iterator[str]:
    with DemoServer() as site:
        yield site.url


def test_the_scan_samples_the_budgeted_templates_only(store: str) -> None:
    sample = scan_sample(TemplateScan(f"{store}/store/", (
        "/store/product/*", "/store/about", "/store/nothing/*"), (("per_template", 2),)))
    assert set(sample) == {"/store/about", "/store/product/*"}
    assert len(sample["/store/product/*"]) == 2
    assert all("/store/product/" in url for url in sample["/store/product/*"])
    assert sample["/store/about"] == [f"{store}/store/about"]
    assert "/store/nothing/*" not in sample


@pytest.mark.engine
def test_pagelab_check_scans_the_demo_store_per_template(
        demo_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "budgets.yaml"
    file.write_text(f"""\
base_url: {demo_url}
runs: 1
scan: {{url: /store/, per_template: 1}}
budgets:
  server_response_time: 1000
templates:
  /store/product/*: {{}}
  /store/about: {{}}
  /store/gone/*: {{}}
""")
    status = main(["check", str(file), "--no-progress"])
    out = capsys.readouterr().out
    assert status == 1, out
    rows = {line.split("  ")[0]: line.split()[-1] for line in out.splitlines()
            if line.startswith("mobile/us template")}
    # The product template answers 1.5 s late on purpose; the about page does not.
    assert rows == {"mobile/us template /store/product/*": "FAIL",
                    "mobile/us template /store/about": "pass",
                    "mobile/us template /store/gone/*": "FAIL"}
    assert "template /store/gone/*: the scan of " in out
