"""Inside one run, on real runs of the demo site: every resource helper on both runners (the
API runner against a live ``pagelab serve`` with its worker on), the request frame of the heavy
page, the HTML reprs of real reports, and the waterfall and filmstrip saved as PNGs for a
person to look at (``build/test-artifacts/inside-one-run/``, or ``$PAGELAB_TEST_ARTIFACTS``).

Two engine runs in all: the heavy page with video on the LocalRunner, the fast page without
video through the service."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit
from urllib.request import url2pathname

import httpx
import pytest
from live_server import ServerProcess, run_cli

import pagelab
from pagelab import ApiRunner, LocalRunner, NotFoundError, Runner, TestReport, TestStatus

if TYPE_CHECKING:
    from matplotlib.axes import Axes

pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]

WAIT = 600.0  # another process may hold the engine lock for a while
JPEG = b"\xff\xd8\xff"
WEBM = b"\x1a\x45\xdf\xa3"


def artifacts_dir() -> Path:
    root = os.environ.get("PAGELAB_TEST_ARTIFACTS")
    base = Path(root) if root else Path(__file__).resolve().parents[2] / "build/test-artifacts"
    path = base / "inside-one-run"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def local_run(
    tmp_path_factory: pytest.TempPathFactory, engine: object, demo_url: str
) -> Iterator[tuple[LocalRunner, TestReport]]:
    runner = LocalRunner(tmp_path_factory.mktemp("local-data"), engine=engine)  # type: ignore[arg-type]
    report = runner.lighthouse(f"{demo_url}/heavy", "desktop", config={"video": True})
    assert report.status is TestStatus.SUCCESS, report.error
    yield runner, report
    runner.close()


@pytest.fixture(scope="module")
def api_run(
    tmp_path_factory: pytest.TempPathFactory, demo_url: str
) -> Iterator[tuple[ApiRunner, TestReport]]:
    root = tmp_path_factory.mktemp("api")
    data_dir = root / "data"
    created = run_cli("keys", "create", "--data-dir", str(data_dir), "--lighthouse-credits", "5")
    assert created.returncode == 0, created.stderr
    server = ServerProcess(data_dir, root / "server.log").start()
    try:
        with ApiRunner(server.base_url, created.stdout.strip(), poll_interval=0.5,
                       wait_timeout=WAIT) as runner:
            report = runner.lighthouse(f"{demo_url}/fast", "mobile")
            assert report.status is TestStatus.SUCCESS, report.error
            yield runner, report
    finally:
        server.stop()


def _check_helpers(runner: Runner, report: TestReport) -> None:
    assert report.id is not None
    lhr = runner.lhr(report)
    assert isinstance(lhr, dict)
    assert lhr["lighthouseVersion"] == report.lighthouse_version
    # A report, its id and its batch-item form name the same test.
    assert runner.lhr(report.id)["fetchTime"] == lhr["fetchTime"]
    assert json.loads(runner.resource(report, "lighthouse-json")) == lhr
    assert "<html" in runner.resource(report.id, "html-report").lower()
    assert runner.resource(report, "screenshot").startswith("data:image/")
    shot = runner.screenshot(report)
    assert isinstance(shot, bytes)
    assert shot.startswith(JPEG)
    strip = runner.filmstrip(report)
    assert isinstance(strip, list)
    assert len(strip) >= 2
    times = [ms for ms, _ in strip]
    assert times == sorted(times)
    assert all(isinstance(ms, float) and image.startswith(JPEG) for ms, image in strip)
    # The HAR (GET .../resources/har through the API): every request of the run.
    har = runner.har(report)
    assert har["log"]["version"] == "1.2"
    urls = {entry["request"]["url"] for entry in har["log"]["entries"]}
    assert set(pagelab.frames.requests(lhr)["url"]) <= urls
    # The report finds it by itself, beside its report_url (no runner, no API key).
    assert report.har_url is not None
    assert report.har() == har
    if report.har_url.startswith("http"):
        forged = report.model_copy(update={"report_url": re.sub(
            r"token=[^&]*", "token=1-forged", str(report.report_url))})
        with pytest.raises(NotFoundError, match="link expired"):
            forged.har()
    with pytest.raises(NotFoundError, match="lt_nope"):
        runner.lhr("lt_nope")
    with pytest.raises(pagelab.InvalidInputError, match="unknown resource"):
        runner.resource(report, "trace")


def test_local_runner_resources(local_run: tuple[LocalRunner, TestReport]) -> None:
    runner, report = local_run
    _check_helpers(runner, report)
    video = runner.video(report)
    assert isinstance(video, bytes)
    assert video.startswith(WEBM)
    assert runner.resource(report, "video").startswith("data:video/webm;base64,")
    shown = pagelab.plots.video(video)
    assert shown._repr_html_().startswith("<video controls")
    assert "data:video/webm;base64," in shown._repr_html_()
    shown.save(str(artifacts_dir() / "heavy.webm"))


def test_api_runner_resources(api_run: tuple[ApiRunner, TestReport]) -> None:
    runner, report = api_run
    _check_helpers(runner, report)
    # Run without config.video: no video, said as None; a helper that needs one raises.
    assert runner.video(report) is None
    with pytest.raises(NotFoundError, match="has no video"):
        runner.resource(report, "video")


def test_both_runners_give_the_same_string(
    local_run: tuple[LocalRunner, TestReport], api_run: tuple[ApiRunner, TestReport]
) -> None:
    # The service's string and the LocalRunner's are made by one function: same shapes.
    for runner, report in (local_run, api_run):
        strip = json.loads(runner.resource(report, "filmstrip"))
        assert {"timing", "data"} <= set(strip[0])


def test_heavy_page_request_frame_lists_its_large_image(
    local_run: tuple[LocalRunner, TestReport],
) -> None:
    runner, report = local_run
    frame = pagelab.frames.requests(runner.lhr(report))
    hero = frame[frame["url"].str.endswith("/static/hero.jpg")]
    assert len(hero) == 1
    row = hero.iloc[0]
    assert row["resource_type"] == "Image"
    assert row["status"] == 200
    assert row["transfer_size"] > 1_000_000  # bytes, the 1.3 MB hero image
    assert row["end_ms"] > row["start_ms"] >= 0
    assert frame["transfer_size"].dtype == "Int64"
    assert {"FCP", "LCP"} <= set(frame.attrs["observed_ms"])
    audits = pagelab.frames.audits(runner.lhr(report))
    image_audit = audits[audits["id"] == "image-delivery-insight"].iloc[0]
    assert image_audit["group"] == "opportunity"
    assert image_audit["savings_bytes"] > 500_000


def test_real_reports_show_themselves(
    local_run: tuple[LocalRunner, TestReport], api_run: tuple[ApiRunner, TestReport]
) -> None:
    for runner, report in (local_run, api_run):
        html = report._repr_html_()
        assert report.metrics is not None
        lcp = pagelab.metric("LCP")
        assert lcp.format(report.metrics.largest_contentful_paint) in html  # "1,234 ms"
        assert report.report_url is not None
        # The one link is the report; nothing is loaded from anywhere. A stored file is
        # served from loopback: a notebook's browser refuses file:// links (issue 33).
        links = re.findall(r'href="([^"]*)"', html)
        if report.report_url.startswith("file://"):
            assert len(links) == 1
            assert links[0].startswith("http://127.0.0.1:")
            stored = Path(url2pathname(urlsplit(report.report_url).path))
            assert httpx.get(links[0]).content == stored.read_bytes()
        else:
            assert links == [report.report_url.replace("&", "&amp;")]
        assert not re.search(r"\bsrc=|<script|<link|@import|url\(", html)
        assert str(report).startswith(report.id or "")
        batch_html = runner.get(report.id or "")._repr_html_()
        assert "pagelab-report" in batch_html


def _save(ax: Axes, path: Path) -> None:
    figure = ax.get_figure(root=True)
    assert figure is not None
    figure.savefig(path, dpi=110, bbox_inches="tight")


def test_waterfall_and_filmstrip_pictures(local_run: tuple[LocalRunner, TestReport]) -> None:
    import matplotlib.pyplot as plt

    runner, report = local_run
    lhr = runner.lhr(report)
    out = artifacts_dir()
    ax = pagelab.plots.waterfall(lhr)
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    assert "hero.jpg" in labels
    _save(ax, out / "waterfall-heavy.png")
    # The frame gives the same picture as the LHR.
    ax2 = pagelab.plots.waterfall(pagelab.frames.requests(lhr))
    assert [t.get_text() for t in ax2.get_yticklabels()] == labels
    ax3 = pagelab.plots.filmstrip(runner.filmstrip(report))
    _save(ax3, out / "filmstrip-heavy.png")
    assert len(ax3.get_images()) >= 2
    plt.close("all")
    for name in ("waterfall-heavy.png", "filmstrip-heavy.png"):
        assert (out / name).read_bytes().startswith(b"\x89PNG")
