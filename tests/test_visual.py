"""Visual progress, filmstrips on one axis and side-by-side videos, from recorded runs.

``tests/data/screenshots-demo-mobile.json`` holds one real run of the demo's /fast and
/heavy (every screenshot of the trace, the ``metrics`` audit's observed values and the
video; recorded by ``tests/data/record_screenshots.py``). The engine's side is in
``tests/test_visual_engine.py``.
"""

from __future__ import annotations

import base64
import io
import json
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pagelab import InvalidInputError
from pagelab.export import compare_video
from pagelab.frames._visual import (
    frame_progress,
    speed_index_ms,
    timed_images,
    visual_progress_curve,
    visually_complete_ms,
)

DATA = Path(__file__).parent / "data"


@cache
def recorded() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / "screenshots-demo-mobile.json").read_text())
    return loaded


def screenshots(page: str) -> list[tuple[float, bytes]]:
    return timed_images(recorded()[page]["screenshots"])


def png(pixels: np.ndarray) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(pixels.astype(np.uint8), "RGB").save(out, format="PNG")
    return out.getvalue()


def page(painted_rows: int, colour: tuple[int, int, int] = (30, 60, 200)) -> bytes:
    """A 10 x 10 white page with its first ``painted_rows`` rows in ``colour``."""
    pixels = np.full((10, 10, 3), 255)
    pixels[:painted_rows] = colour
    return png(pixels)


# -- the maths --------------------------------------------------------------------------------


def test_progress_is_the_histogram_distance_moved_towards_the_last_frame() -> None:
    progress = frame_progress([page(0), page(3), page(5), page(10)])
    assert progress == [0.0, 30.0, 50.0, 100.0]


def test_white_pixels_are_the_empty_page_and_do_not_count() -> None:
    # An almost-white paint (every channel >= 249) is no progress at all.
    assert frame_progress([page(0), page(6, (250, 252, 249)), page(10)]) == [0.0, 0.0, 100.0]
    # Identical first and last frames: nothing to wait for, 100 throughout (speedline's rule).
    assert frame_progress([page(4), page(4)]) == [100.0, 100.0]


def test_a_disappearing_paint_does_not_take_progress_back() -> None:
    frames = [(0.0, page(0)), (100.0, page(6)), (200.0, page(2)), (300.0, page(10))]
    assert frame_progress([image for _, image in frames]) == [0.0, 60.0, 20.0, 100.0]
    curve = visual_progress_curve(frames)
    assert curve["progress"].tolist() == [0.0, 60.0, 60.0, 100.0]
    assert curve["time_ms"].tolist() == [0.0, 100.0, 200.0, 300.0]


def test_speed_index_is_the_area_above_the_curve_from_navigation_start() -> None:
    # Blank until 200 ms (the frame at 100 ms too), half done until 300 ms: 200 + 100 * 0.5.
    assert speed_index_ms([100, 200, 300], [0, 50, 100]) == pytest.approx(250.0)
    assert speed_index_ms([0, 400], [0, 100]) == pytest.approx(400.0)
    assert visually_complete_ms([100, 200, 300], [0, 50, 100]) == 300.0
    assert np.isnan(visually_complete_ms([100], [40]))


def test_a_screenshot_that_is_no_image_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="not an image"):
        frame_progress([b"not a jpeg", page(1)])


# -- recorded runs of /fast and /heavy ---------------------------------------------------------


@pytest.mark.parametrize("name", ["fast", "heavy"])
def test_speed_index_from_the_curve_agrees_with_lighthouse(name: str) -> None:
    curve = visual_progress_curve(screenshots(name))
    progress = curve["progress"].to_numpy()
    assert progress[0] == 0
    assert progress[-1] == 100
    assert (np.diff(progress) >= 0).all()
    observed = recorded()[name]["observed"]["observedSpeedIndex"]
    ours = speed_index_ms(curve["time_ms"], curve["progress"])
    assert ours == pytest.approx(observed, rel=0.10)


def test_heavy_is_behind_fast_until_fast_is_complete() -> None:
    fast = visual_progress_curve(screenshots("fast"))
    heavy = visual_progress_curve(screenshots("heavy"))
    done = visually_complete_ms(fast["time_ms"].tolist(), fast["progress"].tolist())
    heavy_done = visually_complete_ms(heavy["time_ms"].tolist(), heavy["progress"].tolist())
    assert heavy_done > done
    at_done = heavy[heavy["time_ms"] <= done]["progress"]
    assert (at_done.empty or at_done.iloc[-1] < 100)


def test_the_lhr_thumbnails_give_a_coarser_curve() -> None:
    lhr = json.loads((DATA / "lhr-success-heavy-desktop.json").read_text())
    curve = visual_progress_curve(timed_images(lhr))
    assert len(curve) == len(lhr["audits"]["screenshot-thumbnails"]["details"]["items"])
    assert curve["progress"].iloc[-1] == 100
    assert curve["progress"].iloc[0] == 0


# -- the side-by-side video -----------------------------------------------------------------


def video(name: str) -> bytes:
    uri = recorded()[name]["video"]
    return base64.b64decode(uri.partition(",")[2])


def probe(path: Path) -> dict[str, Any]:
    completed = subprocess.run(
        ["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", str(path)],
        capture_output=True, text=True, check=True,
    )
    found: dict[str, Any] = json.loads(completed.stdout)
    return found


def test_compare_video_puts_both_side_by_side_for_the_longer_run(tmp_path: Path) -> None:
    fast, heavy = tmp_path / "fast.webm", tmp_path / "heavy.webm"
    fast.write_bytes(video("fast"))
    heavy.write_bytes(video("heavy"))
    written = compare_video(video("fast"), video("heavy"), tmp_path / "both.mp4",
                            labels=("/fast", "/heavy"))
    assert written == tmp_path / "both.mp4"
    both, one, other = probe(written), probe(fast), probe(heavy)
    streams = both["streams"]
    assert len(streams) == 1
    assert streams[0]["codec_type"] == "video"
    assert streams[0]["codec_name"] == "h264"
    assert streams[0]["width"] == one["streams"][0]["width"] + other["streams"][0]["width"]
    longer = max(float(one["format"]["duration"]), float(other["format"]["duration"]))
    assert float(both["format"]["duration"]) == pytest.approx(longer, abs=0.11)  # one frame


def test_compare_video_refuses_what_it_cannot_play(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"\.mp4"):
        compare_video(video("fast"), video("heavy"), tmp_path / "both.webm")
    with pytest.raises(InvalidInputError, match="runner="):
        compare_video("lt_0123", video("heavy"), tmp_path / "both.mp4")
    with pytest.raises(InvalidInputError, match="report_b: expected"):
        compare_video(video("fast"), 42, tmp_path / "both.mp4")
    assert not (tmp_path / "both.mp4").exists()


# -- the plots' input checks (the pictures themselves: tests/test_visual_engine.py) -----------


def test_the_plots_refuse_what_they_cannot_draw() -> None:
    import matplotlib

    from pagelab import Results, plots
    from recorded_runs import load_runs

    matplotlib.use("Agg")
    frame = load_runs()
    fast, heavy = sorted(frame["url"].astype(str).unique())
    with pytest.raises(InvalidInputError, match="interval_ms: expected a positive number"):
        plots.filmstrip_compare(Results.from_frame(frame), "url", fast, heavy, interval_ms=0)
    with pytest.raises(InvalidInputError, match="CLS is not a time"):
        plots.filmstrip_compare(Results.from_frame(frame), "url", fast, heavy,
                                metrics=("cumulative_layout_shift",))
    with pytest.raises(InvalidInputError, match="results: expected Results"):
        plots.filmstrip_compare(frame, "url", fast, heavy)
    with pytest.raises(InvalidInputError, match="b: no run has url"):
        plots.filmstrip_compare(Results.from_frame(frame), "url", fast, "http://nowhere.test/")
    # Rebuilt from a frame: no runner to read the screenshots from, and it says so.
    with pytest.raises(InvalidInputError, match="no runner to read LHRs from"):
        plots.filmstrip_compare(Results.from_frame(frame), "url", fast, heavy)
    with pytest.raises(InvalidInputError, match="no runner to read LHRs from"):
        Results.from_frame(frame).visual_progress()
    with pytest.raises(InvalidInputError, match="results: expected Results"):
        plots.visual_progress(frame)
