"""Inside one run, on recorded real LHRs (fast): audits and requests frames, the waterfall
and filmstrip, the reports' HTML and text displays, the resource helpers' input checks.
Real engine runs of the same things: ``tests/service/test_run_resources.py``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import pagelab
from pagelab import InvalidInputError, NotFoundError
from pagelab.frames import AUDIT_COLUMNS, REQUEST_COLUMNS, audits, requests
from pagelab.models import BatchItem, BatchReport, TestReport, TTFBResult
from pagelab.runners._resources import decode_data_uri, report_test_id

DATA = Path(__file__).parent / "data"


def _lhr(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / f"lhr-{name}.json").read_text())
    return loaded


@pytest.fixture(scope="module")
def heavy() -> dict[str, Any]:
    return _lhr("success-heavy-desktop")


def test_request_frame_of_the_heavy_page(heavy: dict[str, Any]) -> None:
    frame = requests(heavy)
    assert list(frame.columns) == list(REQUEST_COLUMNS)
    assert {c: str(t) for c, t in frame.dtypes.items()} == {
        c: str(t) for c, t in REQUEST_COLUMNS.items()
    }
    hero = frame[frame["url"].str.endswith("/static/hero.jpg")].iloc[0]
    assert hero["transfer_size"] == 1_345_417  # bytes, as Lighthouse recorded them
    assert hero["resource_type"] == "Image"
    assert hero["duration_ms"] == pytest.approx(hero["end_ms"] - hero["start_ms"])
    assert not frame["blocked"].any()
    assert not frame["from_cache"].any()
    # On the navigation clock: the document went out first, before FCP.
    assert frame["start_ms"].iloc[0] < frame.attrs["observed_ms"]["FCP"]


def test_audit_frame_puts_what_to_fix_first(heavy: dict[str, Any]) -> None:
    frame = audits(heavy)
    assert list(frame.columns) == list(AUDIT_COLUMNS)
    assert list(frame["group"].cat.categories) == ["opportunity", "diagnostic", "passed"]
    assert frame["group"].is_monotonic_increasing
    assert frame.iloc[0]["id"] == "image-delivery-insight"
    assert frame.iloc[0]["savings_ms"] == 900
    assert frame.iloc[0]["savings_bytes"] == 1_147_205
    assert "render-blocking-insight" in set(frame[frame["group"] == "opportunity"]["id"])
    # Metrics and hidden audits (network-requests, screenshots) are not advice.
    assert not {"largest-contentful-paint", "network-requests"} & set(frame["id"])


def test_a_failed_run_gives_empty_requests_and_failing_audits() -> None:
    failed = _lhr("failed-connection-refused")
    assert requests(failed).empty
    assert list(requests(failed).columns) == list(REQUEST_COLUMNS)
    assert set(audits(failed)["group"]) == {"diagnostic"}


@pytest.mark.parametrize("bad", [{}, [], "not json", {"audits": 3}, 42])
def test_frames_refuse_what_is_not_an_lhr(bad: Any) -> None:
    with pytest.raises(InvalidInputError, match="(?i)lhr"):
        requests(bad)
    with pytest.raises(InvalidInputError, match="(?i)lhr"):
        audits(bad)


def test_frames_read_the_resource_text_too(heavy: dict[str, Any]) -> None:
    assert requests(json.dumps(heavy)).equals(requests(heavy))


def test_waterfall_and_filmstrip_from_recorded_lhrs(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    for name in ("success-heavy-desktop", "success-shift-mobile"):
        lhr = _lhr(name)
        ax = pagelab.plots.waterfall(lhr)
        assert ax.get_xlabel() == "time since navigation start (ms)"
        marks = " ".join(t.get_text() for t in ax.texts)
        assert "FCP" in marks
        assert "LCP" in marks
        strip = pagelab.plots.filmstrip(lhr, max_frames=4)
        assert len(strip.get_images()) == 4
        assert strip.texts[-1].get_text().endswith(" ms")
    plt.close("all")
    with pytest.raises(InvalidInputError, match="no thumbnails"):
        pagelab.plots.filmstrip(_lhr("failed-connection-refused"))
    import pandas as pd

    with pytest.raises(InvalidInputError, match="frame lacks"):
        pagelab.plots.waterfall(pd.DataFrame({"url": ["x"]}))


def test_video_display() -> None:
    shown = pagelab.plots.video(b"\x1a\x45\xdf\xa3webm")
    assert shown._repr_html_().count("data:video/webm;base64,") == 1
    assert pagelab.plots.video(shown.data_uri).data == shown.data
    with pytest.raises(InvalidInputError, match="no video"):
        pagelab.plots.video(None)


_HOSTILE = "http://127.0.0.1:8080/p?q=<script>alert(1)</script>&x=\"'"


def _report(**extra: Any) -> TestReport:
    values: dict[str, Any] = {
        "id": "lt_1", "url": _HOSTILE, "device": "mobile", "location": "us",
        "status": "success", "lighthouse_version": "13.5.0", "vantage": "local",
        "report_url": "http://127.0.0.1:8000/reports/lighthouse-tests/lt_1?token=a&b=c",
        "metrics": {
            "cumulative_layout_shift": 0.318, "first_contentful_paint": 1044.0,
            "largest_contentful_paint": 7893.0, "server_response_time": 2.0,
            "speed_index": 3639.0, "total_blocking_time": 150.0,
            "time_to_interactive": 7900.0, "performance_score": 54.0,
        },
    }
    return TestReport.model_validate({**values, **extra})


def _no_external_reference(html: str, allowed_links: list[str]) -> None:
    assert re.findall(r'href="([^"]*)"', html) == allowed_links
    assert not re.search(r"\bsrc=|<script|<link|@import|url\(|<img", html)


def test_report_html_escapes_and_colours() -> None:
    report = _report()
    html = report._repr_html_()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    _no_external_reference(html, [
        "http://127.0.0.1:8000/reports/lighthouse-tests/lt_1?token=a&amp;b=c"
    ])
    for text in ("7,893 ms", "1,044 ms", "0.318", "150 ms", "54"):
        assert text in html
    # LCP 7.9 s is poor (red), FCP 1.0 s good (green), TBT 150 ms good, CLS 0.318 poor.
    assert 'title="poor"' in html
    assert 'title="good"' in html
    assert 'title="needs-improvement"' in html  # the score, 54


def test_failed_report_shows_its_escaped_error_and_a_javascript_link_is_dropped() -> None:
    report = _report(status="failed", metrics=None, report_url="javascript:alert(1)",
                     error={"code": "NO_FCP", "message": "no <b>paint</b>"})
    html = report._repr_html_()
    assert "no &lt;b&gt;paint&lt;/b&gt;" in html
    assert "NO_FCP" in html
    _no_external_reference(html, [])
    assert "NO_FCP: no <b>paint</b>" in str(report)


def test_batch_and_ttfb_html() -> None:
    item = BatchItem.model_validate(_report().model_dump(include=set(BatchItem.model_fields)))
    batch = BatchReport(id="lbt_1", urls=[_HOSTILE], devices=["mobile"], locations=["us"],
                        batch_type="multiple-urls", status="completed", reports=[item])
    html = batch._repr_html_()
    assert "<script>" not in html
    assert "LCP (ms)" in html
    assert "7,893" in html
    assert "lbt_1" in str(batch)
    ttfb = TTFBResult.model_validate({
        "url": _HOSTILE, "region": "europe", "vantage": "local",
        "result": [
            {"location_id": "de", "location_name": "Frankfurt", "status": "success",
             "data": {"timings": {"dns_lookup": 0.1, "tcp_connection": 0.2,
                                  "tls_handshake": 0.0, "server_processing": 201.3,
                                  "ttfb": 201.8, "total": 202.5},
                      "http_version": 1.1, "http_status": 200}},
            {"location_id": "fr", "location_name": "Paris", "status": "failed",
             "error": {"code": "TIMEOUT", "message": "<slow>"}},
        ],
    })
    html = ttfb._repr_html_()
    assert "TTFB (ms)" in html
    assert "201.8" in html
    assert "&lt;slow&gt;" in html
    _no_external_reference(html, [])
    assert "TTFB 201.8 ms" in str(ttfb)


def test_resource_helpers_check_their_input() -> None:
    assert report_test_id("lt_abc") == "lt_abc"
    assert report_test_id(_report(id="lt_x")) == "lt_x"
    with pytest.raises(InvalidInputError, match="no id"):
        report_test_id(_report(id=None))
    with pytest.raises(NotFoundError, match="lbt_1"):
        report_test_id("lbt_1")
    with pytest.raises(InvalidInputError, match="got int"):
        report_test_id(3)  # type: ignore[arg-type]
    assert decode_data_uri("data:image/jpeg;base64,/9j/", "x") == b"\xff\xd8\xff"
    with pytest.raises(ValueError, match="data URI"):
        decode_data_uri("/9j/", "screenshot")


def test_local_runner_resources_of_unknown_or_unfinished_tests(tmp_path: Path) -> None:
    from pagelab.models import LighthouseConfig
    from pagelab.store import create_test, transaction

    with pagelab.LocalRunner(tmp_path) as runner:
        with pytest.raises(NotFoundError, match="lt_missing"):
            runner.screenshot("lt_missing")
        with runner.store.connection() as conn, transaction(conn):
            queued = create_test(conn, url="https://a.test/", device=pagelab.Device.MOBILE,
                                 location=pagelab.Location.US, config=LighthouseConfig(),
                                 retention=runner.store.retention)
        with pytest.raises(NotFoundError, match=f"{queued} has no lighthouse-json"):
            runner.lhr(queued)
        assert runner.video(queued) is None
