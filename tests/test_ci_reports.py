"""Reports where reviewers look: the Markdown summary ($GITHUB_STEP_SUMMARY, PR comments),
GitHub workflow commands and GitLab's Code Quality report, from the plugin (pytester on
recorded real runs, ``--pagelab-replay``), from ``pagelab check``, and as pure functions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pandas  # noqa: F401  (imported once here: pytester's in-process runs cannot reimport numpy)
import pytest
import scipy.stats  # noqa: F401  (the gate's test, for the same reason)

from pagelab.budgets import (
    budget_source_line,
    code_quality_issues,
    markdown_summary,
    workflow_commands,
)
from pagelab.cli import main

pytest_plugins = ["pytester"]

DATA = Path(__file__).parent / "data"
RUNS = DATA / "runs-demo.csv"
REPLAY = f"--pagelab-replay={RUNS}"
SCHEMA = json.loads((DATA / "gitlab-codequality.schema.json").read_text())
HEADER = "| Status | Check | Metric | Value | Budget or baseline | Reports |"
GATE_HEADER = ("| Status | Check | Metric | Value | Budget or baseline | Difference (interval) "
               "| Reports |")

TESTS = """
import pytest

@pytest.mark.budget(largest_contentful_paint=2500, cumulative_layout_shift=0.1)
def test_fast(perf):
    perf.measure("http://demo.test/fast")

@pytest.mark.budget(total_blocking_time={"limit": 500, "level": "warn"})
def test_heavy_warns(perf):
    perf.measure("http://demo.test/heavy")

@pytest.mark.budget(largest_contentful_paint=2500)
def test_heavy(perf):
    perf.measure("http://demo.test/heavy")
"""

BUDGET_FILE = """\
base_url: http://demo.test
budgets:
  largest_contentful_paint: 2500
pages:
  - url: /fast
  - url: /heavy
    budgets:
      largest_contentful_paint: 8000
      total_blocking_time: {limit: 500, level: warn}
"""


def _line_of(path: Path, text: str, after: int = 0) -> int:
    """The 1-based number of the first line after line ``after`` containing ``text``."""
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if i > after and text in line)


def _validate(issues: Any) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(issues)


# -- the plugin ---------------------------------------------------------------------------


def test_markdown_summary_failures_first(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_perf=TESTS)
    result = pytester.runpytest(REPLAY, "--pagelab-markdown=out/summary.md")
    result.assert_outcomes(passed=2, failed=1, warnings=1)
    result.stdout.fnmatch_lines(["Markdown summary written to out/summary.md"])
    lines = (pytester.path / "out" / "summary.md").read_text().splitlines()
    assert lines[0] == "## \u274c pagelab budgets: failed"
    assert "**4 budget checks: 2 passed, 1 failed, 1 warned**" in lines
    start = lines.index(HEADER)
    assert lines[start + 1] == "| --- | --- | --- | --- | --- | --- |"
    rows = lines[start + 2:start + 6]
    # The failure first, then the warning, then the passes (whatever the test order).
    assert rows[0].startswith("| \u274c fail | `mobile/us http://demo.test/heavy` | "
                              "`largest_contentful_paint` | 7741 ms | \\<= 2500 ms | `/")
    assert rows[0].endswith("/report.html` |")
    assert rows[1].startswith("| \u26a0\ufe0f warn | `mobile/us http://demo.test/heavy` | "
                              "`total_blocking_time` | 1064 ms | \\<= 500 ms |")
    assert [row.split(" | ")[0] for row in rows[2:]] == ["| \u2705 pass"] * 2
    assert "### Details" in lines
    assert any(line.startswith("- \u274c largest\\_contentful\\_paint 7741 ms \\> 2500 ms")
               for line in lines)


def test_step_summary_is_appended_under_github_actions(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = pytester.path / "step-summary.md"
    summary.write_text("# Earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile(test_perf=TESTS)
    pytester.runpytest(REPLAY).assert_outcomes(passed=2, failed=1, warnings=1)
    pytester.runpytest(REPLAY, "-k", "fast").assert_outcomes(passed=1, deselected=2)
    text = summary.read_text()
    assert text.startswith("# Earlier step\n## \u274c pagelab budgets: failed\n")
    assert text.count(HEADER) == 2
    assert "## \u2705 pagelab budgets: passed" in text
    # A session that checked nothing adds nothing (pagelab is installed in every project).
    pytester.makepyfile(test_perf="def test_plain():\n    pass\n")
    pytester.runpytest().assert_outcomes(passed=1)
    assert summary.read_text() == text


def test_github_annotations_point_at_the_test_and_budget_lines(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    test_file = pytester.makepyfile(test_perf=TESTS)
    pytester.makefile(".yaml", budgets=BUDGET_FILE)
    result = pytester.runpytest(REPLAY)
    result.assert_outcomes(passed=4, failed=1, warnings=2)
    assert "::error" not in result.stdout.str()
    assert "::warning" not in result.stdout.str()

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = pytester.runpytest(REPLAY)
    heavy = _line_of(test_file, "def test_heavy(") - 1  # the marker's line
    warns = _line_of(test_file, "def test_heavy_warns(") - 1
    budgets = pytester.path / "budgets.yaml"
    page_tbt = _line_of(budgets, "total_blocking_time")
    commands = [line for line in result.stdout.lines if line.startswith("::")]
    assert commands == [
        f"::error file=test_perf.py,line={heavy},title=pagelab budget missed%3A "
        "largest_contentful_paint::largest_contentful_paint 7741 ms > 2500 ms (median of 5: "
        "7655, 7658, 7741, 7758, 8144) mobile/us http://demo.test/heavy report: "
        + commands[0].split(" report: ")[1],
        f"::warning file=budgets.yaml,line={page_tbt},title=pagelab budget warning%3A "
        "total_blocking_time::" + commands[1].split("::", 2)[2],
        f"::warning file=test_perf.py,line={warns},title=pagelab budget warning%3A "
        "total_blocking_time::" + commands[2].split("::", 2)[2],
    ]
    assert commands[1].split("::", 2)[2].startswith("total_blocking_time 1064 ms > 500 ms")


def test_code_quality_report_validates_with_stable_fingerprints(
    pytester: pytest.Pytester,
) -> None:
    test_file = pytester.makepyfile(test_perf=TESTS)
    pytester.makefile(".yaml", budgets=BUDGET_FILE)
    pytester.runpytest(REPLAY, "--pagelab-codequality=gl-code-quality.json")
    first = json.loads((pytester.path / "gl-code-quality.json").read_text())
    _validate(first)
    assert [(i["severity"], i["check_name"], i["location"]["path"]) for i in first] == [
        ("major", "pagelab/budget/largest_contentful_paint", "test_perf.py"),
        ("minor", "pagelab/budget/total_blocking_time", "budgets.yaml"),
        ("minor", "pagelab/budget/total_blocking_time", "test_perf.py"),
    ]
    assert first[0]["location"]["lines"]["begin"] == _line_of(test_file, "def test_heavy(") - 1
    assert first[0]["description"].startswith("largest_contentful_paint 7741 ms > 2500 ms")
    assert len({i["fingerprint"] for i in first}) == 3

    # Another run with other limits (and so other messages): the same issues, the same
    # fingerprints, so the merge-request widget does not report them as fixed and new.
    pytester.makepyfile(test_perf=TESTS.replace("=2500)", "=2400)").replace("500,", "450,"))
    pytester.runpytest(REPLAY, "--pagelab-codequality=gl-code-quality.json")
    second = json.loads((pytester.path / "gl-code-quality.json").read_text())
    _validate(second)
    assert second[0]["description"] != first[0]["description"]
    assert [i["fingerprint"] for i in second] == [i["fingerprint"] for i in first]

    # Everything met: an empty report, still valid (GitLab then shows no issues).
    pytester.makepyfile(test_perf="def test_plain():\n    pass\n")
    (pytester.path / "budgets.yaml").unlink()
    pytester.runpytest(REPLAY, "--pagelab-codequality=gl-code-quality.json")
    assert json.loads((pytester.path / "gl-code-quality.json").read_text()) == []


def test_check_records_carry_file_and_line(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", budgets=BUDGET_FILE)
    pytester.runpytest(REPLAY, "--pagelab-results=results.json")
    checks = json.loads((pytester.path / "results.json").read_text())["checks"]
    budgets = pytester.path / "budgets.yaml"
    located = {(c["url"], c["metric"]): (c["file"], c["line"]) for c in checks}
    assert located == {
        # /fast has no limit of its own: the file-wide one.
        ("http://demo.test/fast", "largest_contentful_paint"):
            ("budgets.yaml", _line_of(budgets, "largest_contentful_paint")),
        ("http://demo.test/heavy", "largest_contentful_paint"):
            ("budgets.yaml", _line_of(budgets, "largest_contentful_paint: 8000")),
        ("http://demo.test/heavy", "total_blocking_time"):
            ("budgets.yaml", _line_of(budgets, "total_blocking_time")),
    }


# -- pagelab check ------------------------------------------------------------------------


def test_check_writes_markdown_codequality_and_annotations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    budgets = tmp_path / "budgets.yaml"
    budgets.write_text(BUDGET_FILE.replace("8000", "7000"))  # /heavy misses its own limit
    monkeypatch.chdir(tmp_path)  # CI runs from the project root: paths relative to it
    markdown, quality = tmp_path / "summary.md", tmp_path / "quality.json"
    args = ["check", str(budgets), "--replay", str(RUNS), "--no-progress",
            "--markdown", str(markdown), "--codequality", str(quality)]
    assert main(args) == 1
    assert "::" not in capsys.readouterr().out
    lines = markdown.read_text().splitlines()
    assert lines[0] == "## \u274c pagelab budgets: failed"
    assert "**3 budget checks: 1 passed, 1 failed, 1 warned**" in lines
    assert lines[lines.index(HEADER) + 2].startswith(
        "| \u274c fail | `mobile/us http://demo.test/heavy` | `largest_contentful_paint` |")
    issues = json.loads(quality.read_text())
    _validate(issues)
    lcp = _line_of(budgets, "largest_contentful_paint: 7000")
    assert [(i["severity"], i["location"]["path"], i["location"]["lines"]["begin"])
            for i in issues] == [("major", "budgets.yaml", lcp),
                                 ("minor", "budgets.yaml", _line_of(budgets, "total_blocking"))]

    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["check", "budgets.yaml", "--replay", str(RUNS), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert (f"::error file=budgets.yaml,line={lcp},title=pagelab budget missed%3A "
            "largest_contentful_paint::largest_contentful_paint 7741 ms > 7000 ms") in out
    assert summary.read_text().startswith("## \u274c pagelab budgets: failed\n")


#: Where the recorded runs' reports were written (their ``file://`` report URLs).
RECORDED_REPORTS = "file:///tmp/tmp6dunv3dt/"


def test_under_github_actions_reports_are_named_relative_to_the_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The recorded runs, their reports moved into the checkout (PAGELAB_DATA_DIR there, as
    # docs/pytest-plugin.md's workflow does), at a path a file:// URL percent-encodes.
    workspace = tmp_path / "work space"
    workspace.mkdir()
    store = (workspace / "pagelab-data").as_uri() + "/"
    assert RECORDED_REPORTS in RUNS.read_text()
    (workspace / "runs.csv").write_text(RUNS.read_text().replace(RECORDED_REPORTS, store))
    (workspace / "budgets.yaml").write_text(BUDGET_FILE.replace("8000", "7000"))
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace))
    monkeypatch.chdir(tmp_path)  # not the workspace: GITHUB_WORKSPACE decides
    args = ["check", str(workspace / "budgets.yaml"), "--replay", str(workspace / "runs.csv"),
            "--no-progress"]

    def reports_named() -> tuple[list[str], str]:
        assert main(args) == 1
        # The annotations' messages (their file= is relative to the working directory).
        commands = [line.split("::", 2)[2] for line in capsys.readouterr().out.splitlines()
                    if line.startswith("::")]
        text = summary.read_text()
        summary.unlink()
        return commands, text

    commands, text = reports_named()
    assert len(commands) == 2
    for shown in (*commands, text):
        assert str(tmp_path) not in shown
        assert "file:" not in shown
        assert "%20" not in shown
    assert " report: pagelab-data/artifacts/lt_" in commands[0]
    assert commands[0].endswith("/report.html")
    row = next(line for line in text.splitlines() if line.startswith("| \u274c fail"))
    assert row.endswith("/report.html` |")
    assert "| `pagelab-data/artifacts/lt_" in row
    assert "report: pagelab-data/artifacts/lt\\_" in text  # the failure line, Markdown-escaped

    # No GITHUB_WORKSPACE: the working directory is the workspace.
    monkeypatch.delenv("GITHUB_WORKSPACE")
    monkeypatch.chdir(workspace)
    assert reports_named() == (commands, text)

    # A report outside the workspace is named by its whole path (decoded), not a URL.
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "elsewhere"))
    commands, text = reports_named()
    assert f" report: {workspace}/pagelab-data/artifacts/lt_" in commands[0]
    assert f"| `{workspace}/pagelab-data/artifacts/lt_" in text

    # Outside GitHub Actions the Markdown file names the report by its whole path.
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name)
    assert main([*args, "--markdown", str(tmp_path / "local.md")]) == 1
    assert f"| `{workspace}/pagelab-data/artifacts/lt_" in (tmp_path / "local.md").read_text()


# -- the pure functions -------------------------------------------------------------------


def _record(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "url": "http://demo.test/fast", "device": "mobile", "location": "us",
        "metric": "largest_contentful_paint", "operator": "<=", "expected": 2500.0,
        "actual": 670.0, "values": [670.0], "aggregation": "median", "passed": True,
        "level": "error", "report_url": None, "message": "ok", "kind": "budget",
    }
    return {**base, **fields}


def test_markdown_renders_the_baseline_statistics_when_present() -> None:
    # The fields of a significance-tested comparison (issue 23): rendered when present.
    regression = _record(
        kind="baseline", passed=False, actual=780.0, expected=737.0, median=780.0,
        baseline_median=670.0, difference=110.0, interval=[62.5, 151.0], p_value=0.0004,
        n=10, n_baseline=10, significant=True, verdict="regression",
        report_url="https://ci.example/reports/a|b <x>.html", message="LCP regressed")
    inconclusive = _record(kind="baseline", expected=737.0, baseline_median=670.0,
                           difference=80.0, interval=[-20.0, 160.0], p_value=0.21, n=3,
                           n_baseline=5, significant=False, verdict="inconclusive",
                           message="LCP inconclusive (n=3 vs 5)")
    old_style = _record(kind="baseline", expected=737.0)  # a record without statistics
    text = markdown_summary([_record(), old_style, inconclusive, regression])
    lines = text.splitlines()
    assert lines[0] == "## \u274c pagelab budgets: failed"
    assert ("**1 budget check: 1 passed, 0 failed, 0 warned \u00b7 3 regression checks: "
            "2 passed, 1 failed, 0 warned, 1 inconclusive**") in lines
    header = ("| Status | Check | Metric | Value | Budget or baseline | Difference (interval)"
              " | Reports |")
    rows = lines[lines.index(header) + 2:]
    assert rows[0] == (
        "| \u274c regression | `mobile/us http://demo.test/fast` | `largest_contentful_paint` "
        "| 780 ms | baseline 670 ms, allowed \\<= 737 ms | +110 ms \\[+62 ms, +151 ms\\], "
        "p \\< 0.001, n = 10 vs 10 | "
        "[report](<https://ci.example/reports/a%7Cb%20%3Cx%3E.html>) |")
    assert rows[1].startswith("| \u2754 inconclusive | ")
    assert "| +80 ms \\[-20 ms, +160 ms\\], p = 0.210, n = 3 vs 5 |" in rows[1]
    assert rows[2].endswith("| 670 ms | \\<= 2500 ms | \u2013 | \u2013 |")
    assert rows[3].endswith("| 670 ms | allowed \\<= 737 ms | \u2013 | \u2013 |")  # old style


def test_markdown_links_every_run_report_and_escapes_text() -> None:
    record = _record(url="http://demo.test/a|b", passed=False, actual=3000.0,
                     report_url="https://r.example/2.html",
                     message="<img src=x> *bold* | pipe\nnext line")
    runs = [{"url": "http://demo.test/a|b", "device": "mobile", "location": "us", "run": i,
             "report_url": f"https://r.example/{i}.html"} for i in (2, 0, 1)]
    text = markdown_summary([record], runs=runs, errors=["engine | crashed"],
                            notes=["baseline has no runs"])
    assert "`mobile/us http://demo.test/a\\|b`" in text
    assert ("[report](<https://r.example/2.html>) \u00b7 runs [1](<https://r.example/0.html>)"
            " [2](<https://r.example/1.html>)") in text
    assert "- \u274c \\<img src=x\\> \\*bold\\* \\| pipe next line" in text
    assert "### Errors\n\n- engine \\| crashed" in text
    assert "### Notes\n\n- baseline has no runs" in text
    # Links only for http(s): anything else is shown as text.
    other = markdown_summary([_record(report_url="javascript:alert(1)")])
    assert "](" not in other
    assert "`javascript:alert(1)`" in other
    assert markdown_summary([]).splitlines()[:3] == [
        "## \u2705 pagelab budgets: passed", "", "No checks ran."]


#: A URL a tested page gave itself (history.replaceState): a double backtick closed the
#: summary's code span, then a link and a remote image rendered (issue 34, point 3).
HOSTILE_URL = ("http://demo.test/done?q=`` [link](https://evil.test/a) "
               "![img](https://evil.test/p.png) ``` <img src=https://evil.test/i> "
               "www.evil.test/x https://evil.test/y <https://evil.test/z> `")


def _rendered(markdown: str) -> list[Any]:
    """The inline tokens of ``markdown`` rendered as CommonMark with GitHub's tables."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(markdown)
    inline = [t for t in tokens if t.type == "inline"]
    return [child for t in inline for child in t.children or []] + [
        t for t in tokens if t.type == "html_block"]


def test_page_text_renders_as_text_in_the_summary() -> None:
    failed = _record(url=HOSTILE_URL, passed=False, actual=3000.0,
                     report_url="https://ci.example/r/1.html",
                     message=f"largest_contentful_paint 3000 ms > 2500 ms mobile/us {HOSTILE_URL}")
    summary = markdown_summary(
        [failed, _record(url="http://demo.test/`a``b`")],
        errors=[f"# {HOSTILE_URL}", f"1. {HOSTILE_URL}", f"- {HOSTILE_URL}"],
        notes=["+ www.evil.test"])
    children = _rendered(summary)
    links = [t.attrGet("href") for t in children if t.type == "link_open"]
    assert links == ["https://ci.example/r/1.html"]  # the report link, nothing from the page
    assert not [t for t in children if t.type in ("image", "html_inline", "html_block")]
    # The URL in its table cell, shown exactly as written; the odd runs of backticks too.
    codes = [t.content for t in children if t.type == "code_inline"]
    assert f"mobile/us {HOSTILE_URL}" in codes
    assert "mobile/us http://demo.test/`a``b`" in codes
    # Errors and notes are plain list items: no heading, no nested list.
    from markdown_it import MarkdownIt

    blocks = [t.type for t in MarkdownIt("commonmark").parse(summary)]
    assert blocks.count("bullet_list_open") == 3  # details, errors, notes
    assert "ordered_list_open" not in blocks
    assert [t.tag for t in MarkdownIt("commonmark").parse(summary)
            if t.type == "heading_open"] == ["h2", "h3", "h3", "h3"]
    texts = "".join(t.content for t in children if t.type == "text")
    assert f"# {HOSTILE_URL}" in texts  # shown, not obeyed
    # GitHub's autolink extension (not CommonMark's, so not rendered above) links a bare
    # http:// or www. as it parses them: their ":" and "." are escaped in plain text.
    plain = "\n".join(line for line in summary.splitlines() if line.startswith("- "))
    assert "://" not in plain.replace("\\://", "")
    assert "www." not in plain
    assert "https\\://evil.test/y" in plain
    assert "www\\.evil.test" in plain


def test_workflow_commands_escape_as_github_documents() -> None:
    record = _record(passed=False, file="perf/a,b:c%.py", line=7,
                     message="100% slower\r\nsee: report, now")
    [command] = workflow_commands([record, _record()])
    assert command == (
        "::error file=perf/a%2Cb%3Ac%25.py,line=7,title=pagelab budget missed%3A "
        "largest_contentful_paint::100%25 slower%0D%0Asee: report, now")
    [warning] = workflow_commands([_record(passed=False, level="warn")])
    assert warning.startswith("::warning title=pagelab budget warning%3A ")  # no file known


def test_code_quality_issues_severities_and_fingerprints() -> None:
    failed = _record(passed=False, file="test_perf.py", line=4, nodeid="test_perf.py::t")
    warned = _record(passed=False, level="warn", metric="total_blocking_time")
    inconclusive = _record(kind="baseline", verdict="inconclusive")
    issues = code_quality_issues([_record(), warned, inconclusive, failed, dict(failed)])
    _validate([{**i, "location": {**i["location"], "path": "x"}} for i in issues])
    assert [i["severity"] for i in issues] == ["major", "minor", "info"]
    assert issues[0]["location"] == {"path": "test_perf.py", "lines": {"begin": 4}}
    assert issues[1]["location"]["lines"] == {"begin": 1}
    # Not the value, the limit or the line: what the check is.
    moved = _record(passed=False, file="test_perf.py", line=40, nodeid="test_perf.py::t",
                    actual=9000.0, expected=3000.0, message="other")
    assert code_quality_issues([moved])[0]["fingerprint"] == issues[0]["fingerprint"]
    other_cell = {**moved, "device": "desktop"}
    assert code_quality_issues([other_cell])[0]["fingerprint"] != issues[0]["fingerprint"]
    as_baseline = {**moved, "kind": "baseline"}
    assert code_quality_issues([as_baseline])[0]["fingerprint"] != issues[0]["fingerprint"]


def test_budget_source_line_in_all_three_formats() -> None:
    lhci = json.dumps({"ci": {
        "collect": {"url": ["http://demo.test/fast", "http://demo.test/heavy"]},
        "assert": {"assertions": {
            "largest-contentful-paint": ["error", {"maxNumericValue": 2500}],
            "categories:performance": ["warn", {"minScore": 0.9}]}}}}, indent=2)
    lines = lhci.splitlines()
    assert budget_source_line(lhci, "http://demo.test/heavy", "largest_contentful_paint") == \
        1 + next(i for i, x in enumerate(lines) if '"largest-contentful-paint"' in x)
    assert budget_source_line(lhci, "http://demo.test/fast", "performance_score") == \
        1 + next(i for i, x in enumerate(lines) if "categories:performance" in x)

    budget_json = json.dumps([
        {"path": "/*", "timings": [{"metric": "interactive", "budget": 5000}]},
        {"path": "/heavy$", "timings": [{"metric": "interactive", "budget": 9000}]},
        {"path": "/fast"}], indent=2)
    lines = budget_json.splitlines()
    nine = 1 + next(i for i, x in enumerate(lines) if "9000" in x)
    assert budget_source_line(budget_json, "http://demo.test/heavy", "time_to_interactive") \
        == nine - 1  # the "metric" line of the /heavy entry
    assert budget_source_line(budget_json, "http://demo.test/fast", "time_to_interactive") \
        == 1 + next(i for i, x in enumerate(lines) if '"/fast"' in x)

    assert budget_source_line(BUDGET_FILE, "http://demo.test/heavy", "speed_index") == 6
    assert budget_source_line("pages: [", "http://demo.test/", "speed_index") == 1
    assert budget_source_line("", "http://demo.test/", "speed_index") == 1


def test_reports_under_xdist_come_from_the_controller_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_perf=TESTS)
    pytester.makefile(".yaml", budgets=BUDGET_FILE)
    summary = pytester.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = pytester.runpytest_subprocess("-n", "2", REPLAY,
                                           "--pagelab-codequality=quality.json")
    result.assert_outcomes(passed=4, failed=1)
    issues = json.loads((pytester.path / "quality.json").read_text())
    _validate(issues)
    assert sorted((i["severity"], i["location"]["path"]) for i in issues) == [
        ("major", "test_perf.py"), ("minor", "budgets.yaml"), ("minor", "test_perf.py")]
    assert len([line for line in result.stdout.lines if line.startswith("::")]) == 3
    assert summary.read_text().count(HEADER) == 1


def test_markdown_puts_a_regression_against_the_baseline_first(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_perf=TESTS)
    pytester.runpytest(REPLAY, "--pagelab-save-baseline=baseline.json")
    path = pytester.path / "baseline.json"
    baseline = json.loads(path.read_text())
    for cell in baseline["cells"]:  # an earlier, faster build of /fast
        if cell["url"].endswith("/fast"):
            cell["metrics"]["largest_contentful_paint"] /= 1.2
            cell["values"]["largest_contentful_paint"] = [
                v / 1.2 for v in cell["values"]["largest_contentful_paint"]]
    path.write_text(json.dumps(baseline))
    pytester.runpytest(REPLAY, "--pagelab-compare=baseline.json", "--pagelab-markdown=s.md",
                       "--pagelab-compare-fail=largest_contentful_paint:10%", "-k", "fast")
    lines = (pytester.path / "s.md").read_text().splitlines()
    assert ("**2 budget checks: 2 passed, 0 failed, 0 warned \u00b7 1 regression check: "
            "0 passed, 1 failed, 0 warned**") in lines
    # The gate's records carry the comparison: the table gains its interval column.
    first = lines[lines.index(GATE_HEADER) + 2]
    assert first.startswith("| \u274c regression | `mobile/us http://demo.test/fast` | "
                            "`largest_contentful_paint` | 670 ms | baseline 559 ms, allowed "
                            "\\<= 614 ms | +112 ms \\[")


def test_markdown_renders_a_record_the_gate_made() -> None:
    # Not a hand-made dict: the regression gate's own record, as the plugin stores it.
    from pagelab.budgets import decide, parse_regression_limits

    limit = parse_regression_limits("LCP:10%")["largest_contentful_paint"]
    base = [650.0, 655.0, 660.0, 662.0, 670.0, 671.0, 680.0]
    result = decide("largest_contentful_paint", base, [v * 1.3 for v in base], limit,
                    cell=("http://demo.test/fast", "mobile", "us", "3g"),
                    report_url="https://ci.example/r.html")
    record = {**json.loads(json.dumps(result.to_dict())), "kind": "baseline"}
    assert (record["verdict"], record["status"], record["label"]) == (
        "regression", "fail", "FAIL")
    lines = markdown_summary([record]).splitlines()
    assert lines[0] == "## \u274c pagelab budgets: failed"
    assert "**1 regression check: 0 passed, 1 failed, 0 warned**" in lines
    header = ("| Status | Check | Metric | Value | Budget or baseline | Difference (interval)"
              " | Reports |")
    row = lines[lines.index(header) + 2]
    assert row.startswith(
        "| \u274c regression | `mobile/us/3g http://demo.test/fast` | "
        "`largest_contentful_paint` | 861 ms | baseline 662 ms, allowed \\<= 728 ms | +199 ms \\[")
    assert "n = 7 vs 7 | [report](<https://ci.example/r.html>) |" in row
    [issue] = code_quality_issues([record])
    assert issue["severity"] == "major"
    assert workflow_commands([record])[0].startswith("::error")
