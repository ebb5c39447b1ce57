"""The trace's screenshots: kept as the ``screenshots`` resource, and encoded with FFmpeg
into a page-load video.

Chromium paints a ``Screenshot`` trace event whenever the page's pixels change; Lighthouse
records them anyway (filmstrip, Speed Index), so the video costs the run nothing and matches
the filmstrip exactly. The frames come at irregular times; the video shows each one for as
long as it was on screen, at a constant :data:`VIDEO_FPS`, and holds the last frame for
:data:`TAIL_MS` so the finished page stays visible.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TAIL_MS", "VIDEO_FPS", "VideoError", "encode_video", "find_ffmpeg",
           "screenshots_text", "side_by_side"]

VIDEO_FPS = 10
TAIL_MS = 1000.0
# The encoder may not hang a run: a few seconds of 10 fps video encode in well under this.
_ENCODE_TIMEOUT_S = 60.0


class VideoError(RuntimeError):
    """FFmpeg is missing or failed."""


@dataclass(frozen=True, slots=True)
class Frame:
    """A screenshot file and when it was painted (ms after the navigation started)."""

    file: Path
    ms: float


def screenshots_text(frames: Sequence[Frame]) -> str | None:
    """JSON text of every screenshot, in order: ``[{timing (ms), data (JPEG data URI)}]``,
    the filmstrip's item shape, so one reader parses both."""
    if not frames:
        return None
    items = [
        {"timing": round(frame.ms, 3),
         "data": "data:image/jpeg;base64," + base64.b64encode(frame.file.read_bytes()).decode()}
        for frame in sorted(frames, key=lambda f: f.ms)
    ]
    return json.dumps(items)


def find_ffmpeg() -> Path | None:
    """``$PAGELAB_FFMPEG``, else ``ffmpeg`` on PATH (Debian's, installed by ``pagelab setup``)."""
    import os

    configured = os.environ.get("PAGELAB_FFMPEG")
    if configured:
        return Path(configured) if Path(configured).exists() else None
    found = shutil.which("ffmpeg")
    return Path(found) if found else None


def encode_video(frames: Sequence[Frame], out: Path) -> bytes:
    """WebM (VP8) bytes of ``frames``; raises :class:`VideoError` when it cannot."""
    ffmpeg = find_ffmpeg()
    if ffmpeg is None:
        raise VideoError("ffmpeg is missing: run `pagelab setup`")
    if not frames:
        raise VideoError("the trace has no screenshots")
    ordered = sorted(frames, key=lambda f: f.ms)
    # The concat demuxer shows each file for its `duration`; the first frame starts at 0 so
    # the video's clock is the page's (frame at 1.2 s in the video = painted at 1.2 s).
    lines = ["ffconcat version 1.0"]
    times = [0.0] + [f.ms for f in ordered[1:]] + [ordered[-1].ms + TAIL_MS]
    for frame, start, end in zip(ordered, times, times[1:], strict=False):
        lines += [f"file '{frame.file.resolve()}'", f"duration {max(end - start, 1) / 1000:.3f}"]
    # The demuxer ignores the last entry's duration unless the file is listed once more.
    lines.append(f"file '{ordered[-1].file.resolve()}'")
    listing = out.with_suffix(".ffconcat")
    listing.write_text("\n".join(lines) + "\n")
    command = [
        str(ffmpeg), "-hide_banner", "-loglevel", "error", "-y",
        "-f", "concat", "-safe", "0", "-i", str(listing),
        # Constant frame rate; even dimensions, which the 4:2:0 encoder needs.
        "-vf", f"fps={VIDEO_FPS},scale=trunc(iw/2)*2:trunc(ih/2)*2,format=yuv420p",
        # VP8 in realtime mode: a load video encodes in a fraction of a second on two cores.
        "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "1M",
        "-an", str(out),
    ]
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=_ENCODE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VideoError(f"ffmpeg failed: {exc}") from exc
    if completed.returncode != 0 or not out.exists():
        tail = " | ".join(completed.stderr.strip().splitlines()[-3:])
        raise VideoError(f"ffmpeg failed: {tail or completed.returncode}")
    return out.read_bytes()


# The band above the two videos that holds their labels and the running timer (pixels).
_BAND = 64


def side_by_side(first: Path, second: Path, out: Path, labels: tuple[str, str]) -> None:
    """One MP4 (H.264) of two page-load videos side by side (``second`` scaled to
    ``first``'s height), in sync from navigation start, each labelled, with a running timer
    (ms since navigation start); the shorter video holds its last frame until the longer
    ends. Raises :class:`VideoError` when it cannot."""
    ffmpeg = find_ffmpeg()
    if ffmpeg is None:
        raise VideoError("ffmpeg is missing: run `pagelab setup`")
    # Labels go through files: text in a filter graph would need escaping of its own.
    label_files = [out.with_name(f".{out.name}.label{i}.txt") for i in (0, 1)]
    for file, label in zip(label_files, labels, strict=True):
        file.write_text(label)
    # drawtext finds the font through fontconfig: Debian's ffmpeg depends on it, and it on a
    # font (fonts-dejavu-core or an alternative), so "Sans" is always there.
    text = "font=Sans:fontsize=20:fontcolor=black"
    graph = (
        "[1:v][0:v]scale2ref=w=-2:h=ih[right][left];"
        "[left][right]hstack=inputs=2:shortest=0,"
        f"pad=iw:ih+{_BAND}:0:{_BAND}:white,"
        f"drawtext={text}:x=10:y=10:textfile='{label_files[0]}',"
        f"drawtext={text}:x=w/2+10:y=10:textfile='{label_files[1]}',"
        f"drawtext={text}:x=(w-tw)/2:y=38:text='%{{eif\\:t*1000\\:d}} ms',"
        "format=yuv420p"
    )
    command = [
        str(ffmpeg), "-hide_banner", "-loglevel", "error", "-y",
        "-i", str(first), "-i", str(second), "-filter_complex", graph,
        "-c:v", "libx264", "-preset", "veryfast", "-movflags", "+faststart", "-an", str(out),
    ]
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=_ENCODE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VideoError(f"ffmpeg failed: {exc}") from exc
    finally:
        for file in label_files:
            file.unlink(missing_ok=True)
    if completed.returncode != 0 or not out.exists():
        tail = " | ".join(completed.stderr.strip().splitlines()[-3:])
        raise VideoError(f"ffmpeg failed: {tail or completed.returncode}")
