"""pagelab.export on real recorded runs: every format read back by pandas, and the HTML
report opened in headless Chromium (the screenshot kept under ``tests/artifacts/``)."""

from __future__ import annotations

import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

import pagelab
from html_page import HtmlParts
from pagelab._exceptions import InvalidInputError
from pagelab.export import SUFFIXES, export, html_report
from pagelab.frames import COLUMNS
from pagelab.models import HEADLINE_METRICS, METRIC_NAMES, METRICS, Metric
from pagelab.stats import change_points
from recorded_runs import artifact, build_history, commit_of, matrix_2x2, matrix_frame

CHROMIUM = "/usr/bin/chromium"
#: Where the service would host reports: the links the HTML report may hold.
REPORT_BASE = "http://127.0.0.1:8000/reports"
URL_REF = re.compile(r"https?://", re.IGNORECASE)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return matrix_frame()


@pytest.fixture(scope="module")
def results(frame: pd.DataFrame) -> pagelab.Results:
    return pagelab.Results.from_frame(frame)


def same_metrics(read: pd.DataFrame, frame: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(
        read[list(METRIC_NAMES)].astype("float64").reset_index(drop=True),
        frame[list(METRIC_NAMES)].reset_index(drop=True),
    )


# -- table formats ---------------------------------------------------------------------------


def test_csv_round_trip(results: pagelab.Results, frame: pd.DataFrame, tmp_path: Path) -> None:
    path = results.export(tmp_path / "runs.csv")
    assert path == tmp_path / "runs.csv"
    first = path.read_text().splitlines()[1]
    assert re.search(r",\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z,", first)
    read = pd.read_csv(path, parse_dates=["created_at"])
    assert list(read.columns) == list(COLUMNS)
    assert len(read) == len(frame) == 18
    assert str(read["created_at"].dt.tz) == "UTC"
    assert (read["created_at"] == frame["created_at"]).all()
    assert read["id"].tolist() == frame["id"].tolist()
    assert read["status"].tolist().count("failed") == 1
    same_metrics(read, frame)


def test_json_records_with_iso_utc_times(results: pagelab.Results, frame: pd.DataFrame,
                                          tmp_path: Path) -> None:
    path = export(results, tmp_path / "runs.json")
    records = json.loads(path.read_text())
    assert len(records) == 18
    assert set(records[0]) == set(COLUMNS)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r["created_at"])
               for r in records)
    assert "\\/" not in path.read_text()  # URLs readable
    failed = [r for r in records if r["status"] == "failed"]
    assert failed[0]["largest_contentful_paint"] is None  # missing, not 0 or NaN
    assert failed[0]["error_code"] == "CHROME_INTERSTITIAL_ERROR"
    read = pd.read_json(path, orient="records", dtype=False)
    read["created_at"] = pd.to_datetime(read["created_at"], utc=True, format="ISO8601")
    assert str(read["created_at"].dt.tz) == "UTC"
    assert (read["created_at"] == frame["created_at"].dt.floor("ms")).all()
    same_metrics(read, frame)


def test_parquet_keeps_the_dtypes(results: pagelab.Results, frame: pd.DataFrame,
                                  tmp_path: Path) -> None:
    read = pd.read_parquet(export(results, tmp_path / "runs.parquet"))
    pd.testing.assert_frame_equal(read, frame)
    assert str(read["created_at"].dtype) == "datetime64[ns, UTC]"
    assert str(read["run"].dtype) == "Int64"


def test_xlsx_runs_and_summary_in_utc(results: pagelab.Results, frame: pd.DataFrame,
                                      tmp_path: Path) -> None:
    sheets = pd.read_excel(export(results, tmp_path / "runs.xlsx"), sheet_name=None)
    assert list(sheets) == ["runs", "summary"]
    runs = sheets["runs"]
    assert len(runs) == 18
    assert list(runs.columns) == list(COLUMNS)
    # Excel holds no zone: UTC wall time, equal to the run's time to the millisecond.
    expected = frame["created_at"].dt.tz_convert("UTC").dt.tz_localize(None)
    assert (runs["created_at"] - expected).abs().max() < pd.Timedelta(milliseconds=1)
    same_metrics(runs, frame)
    summary = sheets["summary"]
    assert len(summary) == 5  # four URLs on mobile, heavy on desktop
    assert {"runs", "failed", "largest_contentful_paint", "representative_id"} <= set(
        summary.columns)


def test_a_bare_frame_and_its_index(frame: pd.DataFrame, tmp_path: Path) -> None:
    summary = pagelab.Results.from_frame(frame).summary()
    read = pd.read_csv(export(summary, tmp_path / "summary.csv"))
    assert len(read) == len(summary)
    indexed = frame.set_index("id")[["largest_contentful_paint"]]
    read = pd.read_csv(export(indexed, tmp_path / "indexed.csv"))
    assert list(read.columns) == ["id", "largest_contentful_paint"]  # the index kept


def test_bad_input_is_a_clear_error(frame: pd.DataFrame, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"unknown suffix '\.txt'.*\.csv, \.parquet, "
                       r"\.xlsx, \.json, \.html"):
        export(frame, tmp_path / "runs.txt")
    with pytest.raises(InvalidInputError, match="unknown suffix '\\(none\\)'"):
        export(frame, tmp_path / "runs")
    with pytest.raises(InvalidInputError, match="no directory"):
        export(frame, tmp_path / "missing" / "runs.csv")
    with pytest.raises(InvalidInputError, match="expected Results or a DataFrame"):
        export([1, 2, 3], tmp_path / "runs.csv")
    with pytest.raises(InvalidInputError, match="give all three"):
        html_report(frame, by="url")
    assert SUFFIXES == (".csv", ".parquet", ".xlsx", ".json", ".html")


# -- HTML --------------------------------------------------------------------------------------


class _References(HTMLParser):
    """Every attribute value, text and style of a page, to account for each http(s)://."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.other_attributes: list[tuple[str, str, str]] = []
        self.text: list[str] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_style = tag == "style"
        for name, value in attrs:
            if tag == "a" and name == "href":
                self.links.append(value or "")
            elif name in ("alt", "title"):  # shown as text, never fetched
                self.text.append(value or "")
            else:
                self.other_attributes.append((tag, name, value or ""))

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.styles if self._in_style else self.text).append(data)


def headers(page: str) -> list[str]:
    return HtmlParts(page).headers


def check_self_contained(page: str, report_urls: set[str]) -> _References:
    """Every http(s):// in ``page`` is a report link or visible text (a tested URL)."""
    found = _References()
    found.feed(page)
    assert not [a for a in found.other_attributes if URL_REF.search(a[2])], "external reference"
    assert all(src.startswith("data:image/png;base64,") for tag, name, src in
               found.other_attributes if name == "src")
    assert set(found.links) <= report_urls
    css = "".join(found.styles)
    assert not re.search(r"url\(|@import|@font-face", css)
    in_text = sum(len(URL_REF.findall(t)) for t in found.text)
    in_links = sum(len(URL_REF.findall(link)) for link in found.links)
    attributes = sum(len(URL_REF.findall(v)) for _, _, v in found.other_attributes)
    assert attributes == 0
    # Text of attributes counted once: the parser unescapes, so count on the raw page.
    assert len(URL_REF.findall(page)) == in_text + in_links
    assert not re.search(r"<(script|link|iframe|object|embed)\b", page, re.IGNORECASE)
    return found


@pytest.fixture(scope="module")
def hosted(frame: pd.DataFrame) -> pd.DataFrame:
    """The recorded runs with their reports where the service would host them (the
    recording's file:// reports went with its temporary directory)."""
    out = frame.copy()
    ok = out["status"] == "success"
    out.loc[ok, "report_url"] = REPORT_BASE + "/" + out.loc[ok, "id"] + "/report.html"
    return out


@pytest.fixture(scope="module")
def report_file(hosted: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HTML report of the recorded runs, written once for the tests below."""
    return export(pagelab.Results.from_frame(hosted),
                  tmp_path_factory.mktemp("html") / "report.html", title="Demo <site>")


def test_html_report_holds_summary_comparison_plots_and_links(hosted: pd.DataFrame,
                                                               report_file: Path) -> None:
    page = report_file.read_text()
    found = check_self_contained(page, set(hosted["report_url"].dropna()))
    # One link per cell with a successful run (four of five cells), to its representative.
    assert len(found.links) == 4
    assert "<title>Demo &lt;site&gt;</title>" in page
    assert {"LCP (ms)", "FCP (ms)", "TBT (ms)", "CLS", "Score", "runs", "failed"} <= set(
        headers(page))
    # Default: the first two URLs with successful runs, in the runs' order.
    assert "Comparison: http://demo.test/heavy (b) vs http://demo.test/fast (a) by url" in page
    # The comparison, each headline metric with values (FMP has none), the heat map.
    assert page.count('src="data:image/png;base64,') == 1 + len(HEADLINE_METRICS) + 1
    assert "Failed runs (1)" in page
    assert "CHROME_INTERSTITIAL_ERROR" in page


def test_html_report_comparison_chosen(hosted: pd.DataFrame) -> None:
    lcp = ["LCP"]
    page = html_report(hosted, by="url", a="http://demo.test/fast", b="http://demo.test/heavy",
                       metrics=lcp)
    assert "Comparison: http://demo.test/heavy (b) vs http://demo.test/fast (a) by url" in page
    assert "b is slower" in page
    page = html_report(hosted, by="device", a="mobile", b="desktop", metrics=lcp)
    assert "Comparison: desktop (b) vs mobile (a) by device" in page
    one_cell = hosted[hosted["url"] == "http://demo.test/fast"]
    assert "Comparison" not in html_report(one_cell, metrics=lcp)


def test_html_report_default_comparison_stays_within_each_device() -> None:
    # Issue 20 item 2: on a real 2-URL x 2-device matrix the report compared the URLs with
    # both devices pooled (medians no run had).
    frame = matrix_2x2()
    page = html_report(frame, metrics=["LCP"])
    section = page[page.index("<h2>Comparison"):]
    section = section[:section.index("</table>")]
    assert "compared within each device \u00d7 location" in section
    parts = HtmlParts(section)
    # The device varies, the location (us) is said once above the table.
    assert parts.headers[:3] == ["device", "metric", "verdict"]
    assert "Within location <b>us</b>" in section
    rows = [row for row in parts.rows if row]
    assert [row[0] for row in rows] == ["mobile", "desktop"]
    lcp = frame["largest_contentful_paint"]
    a_median = parts.headers.index("http://demo.test/fast (a)")
    for row, device in zip(rows, ("mobile", "desktop"), strict=True):
        fast = lcp[(frame["url"] == "http://demo.test/fast") & (frame["device"] == device)]
        assert row[a_median] == f"{fast.median():,.0f}"  # a's median, this device's only
    pooled = lcp[frame["url"] == "http://demo.test/fast"].median()
    assert all(f"{pooled:,.0f}" not in row for row in rows)


def history_section(page: str) -> str:
    """The report's history section, from its heading to the next."""
    start = page.index('<h2 id="history">')
    end = page.find("<h2", start + 1)
    return page[start:end if end >= 0 else len(page)]


def test_html_report_history_lists_and_draws_the_changes() -> None:
    frame = build_history([1.0] * 12 + [1.25] * 12)
    page = html_report(pagelab.Results.from_frame(frame), metrics=["LCP", "FCP"])
    section = history_section(page)
    parts = HtmlParts(section)
    assert parts.headers == ["cell", "metric", "commit", "previous", "before \u2192 after",
                             "change", "p", "direction"]
    rows = [row for row in parts.rows if row]
    changes = change_points(frame, ["LCP", "FCP"])
    assert len(rows) == len(changes) == 2
    for row, change in zip(rows, changes.to_dict("records"), strict=True):
        m = METRICS[change["metric"]]
        assert row == [
            "mobile/us http://demo.test/fast", m.header, commit_of(12)[:7], commit_of(11)[:7],
            f"{m.format(change['before'])} \u2192 {m.format(change['after'])}",
            Metric.format_rel_diff(change["rel_change"]),
            "p < 0.001" if change["p_value"] < 0.001 else f"p {change['p_value']:.3f}",
            "regression",
        ]
    assert "2 change points of 2 metrics over 24 builds" in section
    # One trend per metric that changed, over the builds.
    assert re.findall(r'alt="([^"]*)"', section) == [
        "Largest Contentful Paint over builds", "First Contentful Paint over builds"]


def test_html_report_history_without_a_change_draws_the_first_metric() -> None:
    section = history_section(html_report(build_history([1.0] * 24), metrics=["LCP", "FCP"]))
    assert "No change point over 24 builds" in section
    assert "<table" not in section
    assert re.findall(r'alt="([^"]*)"', section) == ["Largest Contentful Paint over builds"]


def test_html_report_has_no_history_within_one_build(hosted: pd.DataFrame) -> None:
    assert 'id="history"' not in html_report(hosted, metrics=["LCP"])  # no commit column
    one_build = build_history([1.0] * 3)
    one_build["commit"] = "release-1"
    assert 'id="history"' not in html_report(one_build, metrics=["LCP"])
    one_build["commit"] = pd.NA  # runs stored without their build
    assert 'id="history"' not in html_report(one_build, metrics=["LCP"])


def test_html_report_history_escapes_commit_names() -> None:
    frame = build_history([1.0] * 12 + [1.25] * 12)
    frame["commit"] = frame["commit"].replace({commit_of(12): "<script>alert(1)</script>"})
    section = history_section(html_report(frame, metrics=["LCP"]))
    assert "<script>" not in section
    assert 'title="&lt;script&gt;alert(1)&lt;/script&gt;"' in section


def test_html_escapes_everything(frame: pd.DataFrame, tmp_path: Path) -> None:
    evil = frame.copy()
    evil["url"] = evil["url"].astype("string") + '?q="><script>alert(1)</script>'
    evil["report_url"] = pd.array(["javascript:alert(1)"] * len(evil), dtype="string")
    page = html_report(evil, metrics=["LCP"])
    assert "<script>" not in page
    assert "javascript:" not in page  # not a report address: no link at all
    table = export(evil.head(3), tmp_path / "table.html").read_text()
    assert "<script>" not in table
    assert "&lt;script&gt;" in table
    assert "LCP (ms)" in headers(table)


def test_html_report_in_headless_chromium(report_file: Path, tmp_path: Path) -> None:
    path = report_file
    assert path.stat().st_size < 600_000
    shot = artifact("export-report.png")
    shot.unlink(missing_ok=True)
    subprocess.run(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
         f"--screenshot={shot}", "--window-size=1280,2000", path.as_uri()],
        check=True, capture_output=True, timeout=120,
    )
    from PIL import Image

    with Image.open(shot) as image:
        assert image.size == (1280, 2000)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    # A rendered page: text, coloured cells and plots, not a blank or error page.
    assert colours is not None
    assert len(colours) > 500
    rating_green = (0xE6, 0xF4, 0xEA)  # the summary's "good" cell background
    assert any(colour == rating_green for _, colour in colours)
