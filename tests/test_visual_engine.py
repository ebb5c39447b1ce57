"""See the difference, on the real engine: the demo's /fast and /heavy side by side
(filmstrips on one axis, visual progress against Lighthouse's observed Speed Index, one
video of both). Three runs shared by every test: /fast and /heavy with video, /fast
without."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pytest

from pagelab import InvalidInputError, LocalRunner, Results, TestReport, measure, plots
from pagelab.demo import DemoServer
from pagelab.export import compare_video
from pagelab.frames._visual import speed_index_ms, visually_complete_ms

matplotlib.use("Agg")
pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def site() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
def runs(site: DemoServer, engine: Any, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[tuple[Results, TestReport]]:
    with LocalRunner(tmp_path_factory.mktemp("visual"), engine=engine) as runner:
        results = measure([site.page_url("fast"), site.page_url("heavy")], runs=1,
                          config={"video": True}, runner=runner, progress=False)
        assert (results.frame["status"] == "success").all(), results.frame["error_code"]
        results.runner = runner  # measure closes only a runner it opened
        without_video = runner.lighthouse(site.page_url("fast"))
        yield results, without_video


def test_filmstrips_share_one_axis_and_heavy_paints_later(
    runs: tuple[Results, TestReport], site: DemoServer, tmp_path: Path,
) -> None:
    results, _ = runs
    figure = plots.filmstrip_compare(results, "url", site.page_url("fast"),
                                     site.page_url("heavy"))
    figure.savefig(tmp_path / "filmstrips.png", dpi=90)
    top, bottom = figure.axes
    assert top.get_shared_x_axes().joined(top, bottom)
    assert top.get_title(loc="left").startswith("/fast")
    assert bottom.get_title(loc="left").startswith("/heavy")

    def lcp_at(ax: Any) -> float:
        (mark,) = [t for t in ax.texts if "LCP" in t.get_text()]
        return float(mark.get_position()[0])

    assert lcp_at(bottom) > lcp_at(top)
    outlined = [p for ax in (top, bottom) for p in ax.patches if p.get_linewidth() > 2]
    assert len(outlined) == 2  # one visually complete frame per side


def test_visual_progress_agrees_with_lighthouse_speed_index(
    runs: tuple[Results, TestReport], site: DemoServer, tmp_path: Path,
) -> None:
    results, _ = runs
    curves = results.visual_progress()
    assert list(curves.columns[:2]) == ["id", "run"]
    assert {"url", "device", "time_ms", "progress"} <= set(curves.columns)
    by_url = {url: part for url, part in curves.groupby(curves["url"].astype(str))}
    fast, heavy = by_url[site.page_url("fast")], by_url[site.page_url("heavy")]
    for curve in (fast, heavy):
        assert curve["progress"].iloc[-1] == 100
        assert (np.diff(curve["progress"].to_numpy()) >= 0).all()
        lhr = results.lhr(str(curve["id"].iloc[0]))
        observed = lhr["audits"]["metrics"]["details"]["items"][0]["observedSpeedIndex"]
        ours = speed_index_ms(curve["time_ms"].tolist(), curve["progress"].tolist())
        assert ours == pytest.approx(observed, rel=0.10)
    fast_done = visually_complete_ms(fast["time_ms"].tolist(), fast["progress"].tolist())
    heavy_before = heavy[heavy["time_ms"] <= fast_done]["progress"]
    assert heavy_before.max() < 100
    ax = plots.visual_progress(results, by="url")
    ax.figure.savefig(tmp_path / "progress.png", dpi=90)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["/fast", "/heavy"]


def probe(path: Path) -> dict[str, Any]:
    completed = subprocess.run(
        ["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", str(path)],
        capture_output=True, text=True, check=True,
    )
    found: dict[str, Any] = json.loads(completed.stdout)
    return found


def test_compare_video_of_two_video_runs(runs: tuple[Results, TestReport],
                                         tmp_path: Path) -> None:
    results, without_video = runs
    runner = results.runner
    assert runner is not None
    fast, heavy = results.reports
    written = compare_video(fast, heavy, tmp_path / "both.mp4", runner=runner)
    singles = []
    for report in (fast, heavy):
        single = tmp_path / f"{report.id}.webm"
        single.write_bytes(runner.video(report) or b"")
        singles.append(probe(single))
    both = probe(written)
    assert [s["codec_type"] for s in both["streams"]] == ["video"]
    assert both["streams"][0]["width"] == sum(s["streams"][0]["width"] for s in singles)
    longer = max(float(s["format"]["duration"]) for s in singles)
    assert float(both["format"]["duration"]) == pytest.approx(longer, abs=0.11)
    with pytest.raises(InvalidInputError, match=rf"report_b: test {without_video.id} has no "
                                                r"video \(run it with config"):
        compare_video(fast, without_video, tmp_path / "none.mp4", runner=runner)
    assert not (tmp_path / "none.mp4").exists()


def test_the_report_and_the_widget_show_how_each_side_paints(
    runs: tuple[Results, TestReport], site: DemoServer,
) -> None:
    import re
    import struct

    import matplotlib.pyplot as plt

    from pagelab.export import html_report
    from pagelab.widgets import BatchComparison

    results, _ = runs
    open_figures = plt.get_fignums()
    page = html_report(results, by="url", a=site.page_url("fast"), b=site.page_url("heavy"))
    start = page.index('<h3 id="visual">')
    visual = page[start:page.index("<h2", start)]
    # The comparison's pictures: the filmstrips (its first row /fast), the curves.
    alts = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,', visual)
    assert len(alts) == 2, visual[-600:]
    assert alts[0].startswith("/fast")
    assert alts[1].startswith("Visual progress")
    assert "No filmstrips" not in visual
    assert "No visual progress" not in visual
    # Shown once: the explain section keeps its contributions and waterfalls only.
    explained = page[page.index('<h2 id="explain">'):]
    assert "filmstrip" not in explained.lower().split("<h2", 2)[1]
    # The widget's Filmstrips view of the chosen cell against the baseline.
    widget = BatchComparison(results.runner)
    widget._show(results)
    assert (widget.baseline.value, widget.explain_cell.value) == ("/fast", "/heavy")
    widget.filmstrips.value = True
    assert widget.filmstrip_note.value == ""
    assert list(widget._filmstrip_area.children) == [widget.filmstrip_plot]
    png = bytes(widget.filmstrip_plot.value)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])
    assert width > height  # two rows of frames side by side in time
    # Neither leaves a pyplot figure behind (a notebook would show it twice).
    assert plt.get_fignums() == open_figures
