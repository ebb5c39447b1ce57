"""What a notebook shows of runs, summaries and comparisons, and the one HTML home:
escaping, the safe-link rule and the autoescaping templates, on real recorded runs."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pandas as pd
import pytest

import pagelab
from html_page import HtmlParts
from pagelab import _html
from pagelab._readable import Comparison, Summary
from pagelab.export import html_report
from pagelab.models import (
    HEADLINE_METRICS,
    RATING_COLOURS,
    BatchItem,
    BatchReport,
    LighthouseError,
    Metrics,
    TestReport,
)
from pagelab.service._pages import batch_comparison_page, message_page
from recorded_runs import matrix_frame

HOSTILE_URL = 'http://demo.test/x?q="><script>alert(1)</script>'
HOSTILE_LINKS = (
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "//evil.test/x",
    "report.html",
)


@pytest.fixture(scope="module")
def results() -> pagelab.Results:
    """18 recorded runs in 5 cells, one failed (connection refused)."""
    return pagelab.Results.from_frame(matrix_frame())


# -- summary() ----------------------------------------------------------------------------


def test_summary_is_a_dataframe_that_displays_readably(results: pagelab.Results) -> None:
    summary = results.summary()
    assert isinstance(summary, pd.DataFrame)
    assert isinstance(summary, Summary)
    # The plain frame, one attribute away: the same data, pandas' own display.
    plain = summary.frame
    assert type(plain) is pd.DataFrame
    pd.testing.assert_frame_equal(plain, pagelab.stats.summarize(results.frame))
    # Anything derived is plain again.
    assert type(summary[["url", "runs"]]) is pd.DataFrame
    assert type(summary.head(2)) is pd.DataFrame
    shown = summary._repr_html_()
    page = HtmlParts(shown)
    # Short headers with units, in the registry's reading order; FMP (always empty) hidden.
    metric_headers = [h for h in page.headers if h not in
                      ("url", "device", "location", "connection", "runs", "failed", "report")]
    assert metric_headers == ["Score", "FCP (ms)", "LCP (ms)", "TBT (ms)", "CLS", "SI (ms)",
                              "TTI (ms)", "TTFB (ms)"]
    assert "first_meaningful_paint" not in shown
    assert "FMP" not in page.headers
    # Rounded per metric: ms to the unit with grouping, CLS to 3 decimals, CV in percent.
    assert not re.search(r"\d\.\d{4,}", shown)
    assert ">7,741<" in shown  # the heavy page's median LCP on mobile
    assert ">0.318<" in shown  # the shifting page's CLS
    assert re.search(r"CV \d+ %", shown)
    # Rating colours from the registry's palette.
    for background, text in RATING_COLOURS.values():
        assert f"background:{background};color:{text}" in shown
    # The failed run is visible: its cell's failed count in red, the row tinted.
    poor = RATING_COLOURS["poor"]
    assert re.search(rf'background:{poor[0]};color:{poor[1]};[^"]*">1<', shown)
    assert f'style="background:{RATING_COLOURS["poor"][0]}"' in shown
    assert ".frame" in shown  # the display says where the plain data is


def test_results_display_shows_summary_and_failed_runs(results: pagelab.Results) -> None:
    shown = results._repr_html_()
    page = HtmlParts(shown)
    assert "18 runs in 5 cells, 1 failed" in shown
    assert {"LCP (ms)", "runs", "failed", "error"} <= set(page.headers)
    assert "CHROME_INTERSTITIAL_ERROR" in shown
    assert "lt_rec_failed_connection_refused" in shown
    assert "first_meaningful_paint" not in shown


def test_compare_is_a_dataframe_with_labelled_readable_display(
        results: pagelab.Results) -> None:
    compared = results.compare(by="url", a="http://demo.test/fast",
                               b="http://demo.test/heavy", metrics=["LCP", "TBT", "CLS"])
    assert isinstance(compared, Comparison)
    assert type(compared.frame) is pd.DataFrame
    assert list(compared.frame.columns) == list(pagelab.stats.compare(
        results.frame, "url", "http://demo.test/fast", "http://demo.test/heavy",
        metrics=["LCP"]).columns)
    shown = compared._repr_html_()
    page = HtmlParts(shown)
    # What a reader came for first: the verdict, the medians, the difference; the evidence
    # last, folded into one column (issue 33: the verdict was off-screen). The cell every
    # row compares within (one device, one location here) is said once, above.
    assert page.headers == ["metric", "verdict",
                            "http://demo.test/fast (a)", "http://demo.test/heavy (b)",
                            "b \u2212 a", "95 % interval of b\u00a0\u2212\u00a0a"]
    assert "Within device <b>mobile</b> \u00b7 location <b>us</b>" in shown
    assert "rel_diff" not in shown
    assert "LCP (ms)" in shown
    assert re.search(r">\+\d[\d,.]* %<", shown)  # the relative difference, with its unit
    # p, Cliff's delta and the runs beneath the interval, each labelled.
    assert re.search(r"p &lt; 0\.001 \u00b7 \u03b4 \+1\.00 \u00b7 runs \d+ / \d+", shown)
    # The footer counts the columns the table has, not the frame's alone.
    assert f"{len(compared.columns)} columns shown as {len(page.headers)} " in shown
    assert not re.search(r"\d\.\d{4,}", shown)
    # A significant verdict is coloured: heavy is slower (worse) on LCP.
    poor = RATING_COLOURS["poor"]
    assert re.search(rf"background:{poor[0]};color:{poor[1]}[^>]*>b is slower<", shown)


def test_a_note_every_row_shares_is_said_once() -> None:
    """Issue 33: "interval from under 5 runs a side" under each of 8 verdicts made the
    table tall and wide; said once under the table, it is still there."""
    frame = matrix_frame()
    few = pagelab.Results.from_frame(
        frame[frame.groupby(["url", "device"]).cumcount() < 2].reset_index(drop=True))
    compared = few.compare(by="url", a="http://demo.test/fast", b="http://demo.test/heavy")
    note = str(compared["note"].iloc[0])
    assert note.startswith("interval from under 5 runs")
    assert (compared["note"] == note).all()
    shown = compared._repr_html_()
    assert shown.count(note) == 1
    assert f"Every row: {note}." in shown
    # A note only some rows have stays under their verdicts.
    mixed = Comparison(compared.frame.assign(note=[note] + [""] * (len(compared) - 1)))
    assert "Every row" not in mixed._repr_html_()
    assert mixed._repr_html_().count(note) == 1


def test_compare_shows_columns_it_does_not_know(results: pagelab.Results) -> None:
    """Columns another version of compare adds (the cell a row compares within) are shown
    as text before the metric; one every row shares is said once, above the table."""
    plain = results.compare(by="url", a="http://demo.test/fast", b="http://demo.test/heavy",
                            metrics=["LCP", "CLS"]).frame
    compared = Comparison(plain.assign(browser=["chromium", "firefox"]))
    page = HtmlParts(compared._repr_html_())
    assert page.headers[:2] == ["browser", "metric"]
    assert "Within device <b>mobile</b>" in compared._repr_html_()
    same = Comparison(plain.assign(browser="chromium"))._repr_html_()
    assert HtmlParts(same).headers[0] == "metric"
    assert "location <b>us</b> \u00b7 browser <b>chromium</b>" in same


def test_hostile_url_and_report_address_stay_inert(results: pagelab.Results) -> None:
    frame = results.frame.copy()
    frame["url"] = frame["url"].astype("string").str.replace(
        "http://demo.test/fast", HOSTILE_URL, regex=False)
    frame["report_url"] = pd.array(["javascript:alert(1)"] * len(frame), dtype="string")
    hostile = pagelab.Results.from_frame(frame)
    for shown in (hostile._repr_html_(), hostile.summary()._repr_html_(),
                  hostile.compare(by="url", a=HOSTILE_URL, b="http://demo.test/heavy")
                  ._repr_html_()):
        page = HtmlParts(shown)
        assert page.scripts == 0
        assert "<script>" not in shown
        assert "&lt;script&gt;" in shown
        assert page.links == []  # a javascript: report address is no link
        assert "javascript:" not in shown


# -- the one safe-link rule ---------------------------------------------------------------


@pytest.mark.parametrize("url", HOSTILE_LINKS)
def test_safe_url_refuses_everything_but_web_and_file_addresses(url: str) -> None:
    assert _html.safe_url(url) is None
    assert str(_html.link(url, "report")) == ""
    assert str(_html.link(url, "report", fallback="run-1")) == "run-1"


@pytest.mark.parametrize("url", ["https://a.test/r?x=1&y=2", "http://127.0.0.1:8000/r",
                                 "file:///tmp/report.html", "HTTPS://A.TEST/"])
def test_safe_url_keeps_web_and_file_addresses(url: str) -> None:
    assert _html.safe_url(url) == url
    link = str(_html.link(url, "report"))
    assert link.startswith('<a href="')
    assert 'rel="noopener noreferrer"' in link
    assert "&y" not in url or "&amp;y" in link


def _report(url: str, report_url: str, status: str = "success") -> TestReport:
    return TestReport(
        id="lt_1", url=url, device="mobile", location="us", status=status,
        metrics=Metrics(largest_contentful_paint=2100.4, performance_score=91)
        if status == "success" else None,
        error=LighthouseError(code="NO_FCP", message="<b>no</b> paint")
        if status == "failed" else None,
        report_url=report_url,
    )


@pytest.mark.parametrize("url", HOSTILE_LINKS)
def test_every_face_refuses_the_same_links(url: str, results: pagelab.Results) -> None:
    report = _report(HOSTILE_URL, url)
    item = BatchItem(**report.model_dump(include=set(BatchItem.model_fields)))
    batch = BatchReport(id="<b>", urls=[HOSTILE_URL], devices=["mobile"], locations=["us"],
                        batch_type="multiple-urls", status="completed", report_url=url,
                        reports=[item, item])
    frame = results.frame.assign(report_url=pd.array([url] * len(results.frame),
                                                     dtype="string"))
    for shown in (report._repr_html_(), batch._repr_html_(), batch_comparison_page(batch),
                  pagelab.Results.from_frame(frame).summary()._repr_html_(),
                  html_report(frame, metrics=["LCP"])):
        page = HtmlParts(shown)
        assert page.links == [], shown
        assert page.scripts == 0


def test_every_face_links_a_web_report() -> None:
    target = "https://reports.test/lt_1/report.html?token=a&b"
    report = _report("http://demo.test/fast", target)
    item = BatchItem(**report.model_dump(include=set(BatchItem.model_fields)))
    batch = BatchReport(id="b1", urls=[report.url], devices=["mobile"], locations=["us"],
                        batch_type="multiple-urls", status="completed", reports=[item])
    for shown in (report._repr_html_(), batch._repr_html_(), batch_comparison_page(batch)):
        assert HtmlParts(shown).links == [target]


def test_notebook_faces_serve_a_report_file_that_documents_keep(
        tmp_path: Path, results: pagelab.Results) -> None:
    """Issue 33: a notebook's browser refuses a ``file://`` link ("Not allowed to load local
    resource"). In a notebook's display a stored report is linked from the kernel's loopback
    server, which serves that file and nothing else; a document written to disk (the export
    report) keeps the file's address."""
    stored = tmp_path / "reports" / "lt 1.html"
    stored.parent.mkdir()
    stored.write_text("<!doctype html><title>Lighthouse Report</title>")
    other = tmp_path / "secret.txt"
    other.write_text("not linked")
    file_url = stored.as_uri()
    report = _report("http://demo.test/fast", file_url)
    item = BatchItem(**report.model_dump(include=set(BatchItem.model_fields)))
    batch = BatchReport(id="b1", urls=[report.url], devices=["mobile"], locations=["us"],
                        batch_type="multiple-urls", status="completed", reports=[item])
    frame = results.frame.assign(report_url=pd.array([file_url] * len(results.frame),
                                                     dtype="string"))
    with_file = pagelab.Results.from_frame(frame)
    shown = [report._repr_html_(), item._repr_html_(), batch._repr_html_(),
             with_file.summary()._repr_html_(), with_file._repr_html_()]
    links = [link for html in shown for link in HtmlParts(html).links]
    assert len(links) >= len(shown)
    assert len(set(links)) == 1  # one file, one address
    served = links[0]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/[\w-]+/\d+/lt%201\.html", served)
    assert f'title="{file_url}"' in shown[0]  # where the file is, in the tooltip
    answer = httpx.get(served)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/html"
    assert answer.text == stored.read_text()
    # Nothing but the linked file: another name, another number, another token.
    origin, token, number, _ = served.rsplit("/", 3)
    for wrong in (f"{origin}/{token}/{number}/secret.txt", f"{origin}/{token}/99/lt%201.html",
                  f"{origin}/{'x' * len(token)}/{number}/lt%201.html", f"{origin}/{token}/"):
        assert httpx.get(wrong).status_code == 404, wrong
    # The export report is a file on disk: its links stay file addresses.
    assert file_url in HtmlParts(html_report(frame, metrics=["LCP"])).links
    assert served not in html_report(frame, metrics=["LCP"])


# -- templates ----------------------------------------------------------------------------


def test_templates_autoescape_a_script_title(results: pagelab.Results) -> None:
    script = "<script>alert(1)</script>"
    report = html_report(results, title=script)
    assert HtmlParts(report).scripts == 0
    assert f"<title>{_html.escape(script)}</title>" in report
    assert f"<h1>{_html.escape(script)}</h1>" in report
    page = message_page(script, f"gone {script}")
    assert HtmlParts(page).scripts == 0
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    failed = _report(f"https://a.test/{script}", "", status="failed")
    item = BatchItem(**failed.model_dump(include=set(BatchItem.model_fields)))
    batch = BatchReport(id=script, urls=[failed.url], devices=["mobile"], locations=["us"],
                        batch_type="multiple-urls", status="active",
                        lighthouse_version=script, reports=[item])
    hosted = batch_comparison_page(batch)
    assert HtmlParts(hosted).scripts == 0
    assert "<b>no</b>" not in hosted  # the error message too
    assert 'http-equiv="refresh"' in hosted  # not completed: it refreshes itself


def test_template_environment_escapes_by_default() -> None:
    environment = _html._environment()
    rendered = environment.from_string("{{ value }}|{{ safe }}").render(
        value="<i>", safe=_html.Markup("<i>"))
    assert rendered == "&lt;i&gt;|<i>"


def test_service_page_shows_the_headline_metrics_with_the_palette() -> None:
    report = _report("http://demo.test/fast", "https://r.test/1")
    item = BatchItem(**report.model_dump(include=set(BatchItem.model_fields)))
    batch = BatchReport(id="b1", urls=[report.url], devices=["mobile"], locations=["us"],
                        batch_type="multiple-urls", status="completed",
                        reports=[item, item.model_copy(update={"id": "lt_2"})])
    page = batch_comparison_page(batch)
    headers = [h.split(" ")[0] for h in HtmlParts(page).headers]
    labels = [pagelab.models.METRICS[name].label for name in HEADLINE_METRICS]
    assert headers[5:-1] == labels
    assert RATING_COLOURS["good"][0] in page  # the best value's highlight
    assert 'http-equiv="refresh"' not in page


def test_a_browser_that_hangs_up_prints_no_traceback(
        tmp_path: Path, capfd: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The report server of a notebook's links (and the demo site's) says nothing when a
    client hangs up: a closed tab reset a connection and a traceback went to the kernel's
    output (seen in a suite run)."""
    import socket
    import struct
    import threading

    from pagelab._served import QuietHTTPServer, served_url

    handled = threading.Event()
    quiet = QuietHTTPServer.handle_error

    def handle_error(self: QuietHTTPServer, request: object, address: object) -> None:
        quiet(self, request, address)
        handled.set()

    monkeypatch.setattr(QuietHTTPServer, "handle_error", handle_error)

    stored = tmp_path / "report.html"
    stored.write_text("<!doctype html><title>report</title>")
    host, port = served_url(stored.as_uri()).split("/")[2].split(":")
    with socket.create_connection((host, int(port))) as client:
        client.sendall(b"GET /")  # a request line never finished
        # A reset, not a close: the server's read then fails with ConnectionResetError.
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    assert handled.wait(30)  # the server's thread read, failed and handled it
    assert httpx.get(served_url(stored.as_uri())).status_code == 200  # still serving
    assert "Traceback" not in capfd.readouterr().err
