"""A scan's faces (issue 39) over real recorded runs, no engine: the HTML report's templates
section and the BatchComparison widget comparing templates."""

from __future__ import annotations

import pandas as pd
import pytest

import pagelab
from html_page import HtmlParts
from pagelab.export import html_report
from pagelab.frames import to_reports
from recorded_runs import ORIGIN, matrix_frame

#: Where the service would host reports (the recording's file:// reports are gone).
REPORT_BASE = "http://127.0.0.1:8000/reports"
#: Each recorded page's template: the home page's one run failed, /heavy (5 runs) is slower
#: than /shift (1 run), /fast (10 runs) is fast.
TEMPLATES = {f"{ORIGIN}/": "/", f"{ORIGIN}/heavy": "/p/*", f"{ORIGIN}/shift": "/p/*",
             f"{ORIGIN}/fast": "/fast"}


@pytest.fixture(scope="module")
def scanned() -> pagelab.ScanResults:
    """The recorded mobile runs as a scan's results, their reports hosted."""
    frame = matrix_frame()
    frame = frame[frame["device"] == "mobile"].reset_index(drop=True)
    ok = frame["status"] == "success"
    frame.loc[ok, "report_url"] = REPORT_BASE + "/" + frame.loc[ok, "id"] + "/report.html"
    reports = to_reports(frame)
    return pagelab.ScanResults(reports, list(frame["run"]), templates=TEMPLATES)


def templates_section(page: str) -> str:
    start = page.index('<h2 id="templates">')
    return page[start:page.index("</table>", start)]


def test_the_report_ranks_templates_worst_first_with_worst_page_and_run_links(
        scanned: pagelab.ScanResults) -> None:
    page = html_report(scanned, explain=False)
    section = templates_section(page)
    assert "Templates, worst first" in section
    parts = HtmlParts(section)
    rows = [row for row in parts.rows if row]
    order = list(scanned.summary(by="template")["template"])
    assert order == ["/", "/p/*", "/fast"]  # the failed template first, then by score
    assert [row[0] for row in rows] == order
    # The report's own metrics (every one with a value), median and CV, then the extras.
    assert {"Score", "LCP (ms)", "FCP (ms)", "runs", "failed"} <= set(parts.headers)
    assert parts.headers[-2:] == ["worst page", "run reports"]
    worst = parts.headers.index("worst page")
    assert [row[worst] for row in rows] == [f"{ORIGIN}/", f"{ORIGIN}/heavy", f"{ORIGIN}/fast"]
    score = parts.headers.index("Score")
    summary = scanned.summary(by="template")
    assert rows[1][score].startswith(f"{summary['performance_score'].iloc[1]:.0f}")
    assert "CV" in rows[1][score]
    # Each template's runs, every successful one linked to its report, in the runs' order.
    frame = scanned.frame
    for template, row in zip(order, rows, strict=True):
        runs = frame[(frame["template"] == template) & (frame["status"] == "success")]
        row_html = section[section.index(f'<tr data-key="{template}"'):]
        row_html = row_html[:row_html.index("</tr>")]
        links = HtmlParts(row_html).links
        expected = [f"{REPORT_BASE}/{run_id}/report.html" for run_id in runs["id"]]
        # The representative run's link, then each run's.
        assert links[1:] == expected
        if not expected:
            assert row[-1] == "\u2013"
    # No representative for the failed template; one and six, one and ten for the others.
    assert len(HtmlParts(section).links) == 0 + (1 + 6) + (1 + 10)


def test_a_report_without_templates_has_no_templates_section() -> None:
    page = html_report(matrix_frame(), metrics=["LCP"], explain=False)
    assert 'id="templates"' not in page


def test_the_templates_section_escapes_template_names(scanned: pagelab.ScanResults) -> None:
    frame = scanned.frame.copy()
    frame["template"] = frame["template"].str.replace("/p/*", '/p/<script>x</script>',
                                                      regex=False)
    page = html_report(frame, metrics=["LCP"], explain=False)
    assert "<script>" not in page
    assert "/p/&lt;script&gt;x&lt;/script&gt;" in templates_section(page)


def test_batch_comparison_compares_a_scans_templates(scanned: pagelab.ScanResults) -> None:
    from pagelab.widgets import BatchComparison

    widget = BatchComparison(results=scanned)
    assert widget.results is scanned
    assert widget._cell_columns == ["template"]
    # The failed-only template has no run to compare: every template is offered, worst first.
    assert list(widget._cells) == ["/", "/p/*", "/fast"]
    table = HtmlParts(widget.table.value)
    assert table.headers[0] == "template"
    assert "url" not in table.headers
    # The user picks two templates: the baseline and the one explained.
    widget.baseline.value = "/fast"
    widget.explain_cell.value = "/p/*"
    assert widget.comparison is not None
    shown = widget.comparison[widget.comparison["cell"] == "/p/*"]
    direct = pagelab.stats.compare(scanned.frame, ["template"], ("/fast",), ("/p/*",),
                                   within=[])
    assert list(shown["verdict"]) == list(direct["verdict"])
    assert "Against the baseline /fast" in widget.comparison_table.value
    assert "b is slower" in widget.comparison_table.value
    # No runner to read LHRs from: the explanation says so in the widget, nothing raised.
    assert "Could not explain /p/* against /fast" in widget.explanation_box.value
    assert not widget.run_button.disabled
    assert widget.status.value.count("Done: 17 runs (1 failed).") == 1


def test_batch_comparison_by_template_and_device() -> None:
    from pagelab.widgets import BatchComparison

    frame = matrix_frame()
    frame.insert(list(frame.columns).index("url") + 1, "template",
                 pd.array([TEMPLATES[u] for u in frame["url"]], dtype="string"))
    widget = BatchComparison(results=pagelab.Results.from_frame(frame))
    assert widget._cell_columns == ["template", "device"]
    assert "/p/* · desktop" in widget._cells


def test_batch_comparison_refuses_results_that_are_not_results() -> None:
    from pagelab.widgets import BatchComparison

    with pytest.raises(pagelab.InvalidInputError, match="results: expected pagelab Results"):
        BatchComparison(results=matrix_frame())  # type: ignore[arg-type]
