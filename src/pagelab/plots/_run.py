"""Pictures of one run: the request waterfall, the filmstrip, the page-load video.

matplotlib is imported inside the functions (``pagelab[notebook]``); the backend is never
switched, so plots show inline in Jupyter and render off-screen elsewhere.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pagelab._exceptions import InvalidInputError
from pagelab._extras import require
from pagelab.frames import timed_images

from ._common import shows_its_figure

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["RESOURCE_COLOURS", "Video", "filmstrip", "video", "waterfall"]

#: Bar colour per Lighthouse resource type (the rest: ``Other``), as DevTools groups them.
RESOURCE_COLOURS: dict[str, str] = {
    "Document": "#4285f4",
    "Stylesheet": "#a142f4",
    "Script": "#f9ab00",
    "Image": "#1e8e3e",
    "Media": "#12b5cb",
    "Font": "#e8710a",
    "Fetch": "#d01884",
    "XHR": "#d01884",
    "Other": "#80868b",
}
# Marks drawn on the waterfall, from frame.attrs["observed_ms"].
_MARKS = {"FCP": "#1e8e3e", "LCP": "#d93025", "load": "#5f6368"}
_LABEL_CHARS = 42


def _pyplot() -> Any:
    return require("matplotlib.pyplot", "notebook")


def _short_label(url: str) -> str:
    """The last path segment and query of a URL (``hero.jpg``), cut to a label's width."""
    parts = urlsplit(url)
    tail = parts.path.rsplit("/", 1)[-1] or parts.path or parts.netloc or url
    if parts.query:
        tail = f"{tail}?{parts.query}"
    if parts.scheme == "data":
        tail = "data: URI"
    return tail if len(tail) <= _LABEL_CHARS else tail[: _LABEL_CHARS - 1] + "\u2026"


def _size(size: Any) -> str:
    """Bytes as ``1.3 MB`` / ``421 B`` (decimal units, as DevTools shows transfer sizes)."""
    if size is None or size != size:  # NA / NaN
        return ""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1000
    return ""  # unreachable


@shows_its_figure
def waterfall(
    lhr_or_frame: Mapping[str, Any] | str | pd.DataFrame,
    ax: Axes | None = None,
    *,
    marks: Sequence[str] = ("FCP", "LCP", "load"),
) -> Axes:
    """The run's requests as bars on a time axis (ms since navigation start).

    ``lhr_or_frame`` is an LHR (``runner.lhr(report)``, or its JSON text) or the frame of
    :func:`pagelab.frames.requests`. Each request is a bar from going to the network to its
    last byte, coloured by resource type, with a pale lead-in while it queued in the renderer
    and its transfer size at the end. ``marks`` are vertical lines at the page's observed
    milestones (``FCP``, ``LCP``, ``DOMContentLoaded``, ``load``): the times this browser
    saw, on the same clock as the requests (with simulated throttling the reported metrics
    are a simulation and differ).
    """
    import pandas as pd

    from pagelab.frames import requests

    plt = _pyplot()
    if isinstance(lhr_or_frame, pd.DataFrame):
        missing = {"url", "start_ms", "end_ms"} - set(lhr_or_frame.columns)
        if missing:
            raise InvalidInputError(
                f"waterfall: the frame lacks {', '.join(sorted(missing))} "
                "(pass pagelab.frames.requests(lhr) or the LHR itself)"
            )
        frame = lhr_or_frame
    else:
        frame = requests(lhr_or_frame)
    frame = frame.dropna(subset=["start_ms", "end_ms"]).reset_index(drop=True)
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 1.2 + 0.32 * max(len(frame), 1)))
    assert ax is not None
    count = len(frame)
    types = frame["resource_type"] if "resource_type" in frame else pd.Series(["Other"] * count)
    colours = [RESOURCE_COLOURS.get(str(t), RESOURCE_COLOURS["Other"]) for t in types]
    starts = frame["start_ms"].to_numpy(dtype=float)
    ends = frame["end_ms"].to_numpy(dtype=float)
    rows = list(range(count))
    if "queued_ms" in frame:
        queued = frame["queued_ms"].to_numpy(dtype=float)
        ax.barh(rows, starts - queued, left=queued, height=0.35, color=colours, alpha=0.3,
                linewidth=0)
    # A minimum width keeps a fast request visible next to a 700 ms one.
    span = float(max(ends.max(), 1.0)) if count else 1.0
    widths = [max(end - start, span / 400) for start, end in zip(starts, ends, strict=True)]
    ax.barh(rows, widths, left=starts, height=0.6, color=colours)
    sizes = frame["transfer_size"] if "transfer_size" in frame else [None] * count
    for row, end, size in zip(rows, ends, sizes, strict=True):
        text = _size(size)
        if text:
            ax.text(end + span * 0.01, row, text, va="center", fontsize=8, color="#3c4043")
    ax.set_yticks(rows, [_short_label(str(u)) for u in frame["url"]], fontsize=8)
    ax.set_ylim(count - 0.5, -1.25)  # first request on top, two lines of marks above it
    observed: Mapping[str, float] = frame.attrs.get("observed_ms") or {}
    found = sorted((observed[label], label) for label in marks if label in observed)
    right = max([span, *(at for at, _ in found)])
    # Marks at (nearly) the same time share a line and a label ("FCP, LCP 107 ms"); labels
    # of marks close together alternate between two heights so they do not overlap.
    groups: list[tuple[float, list[str]]] = []
    for at, label in found:
        if groups and at - groups[-1][0] <= right * 0.01:
            groups[-1][1].append(label)
        else:
            groups.append((at, [label]))
    previous = -math.inf
    level = 0
    for at, labels in groups:
        level = 1 - level if at - previous < right * 0.18 else 0
        previous = at
        colour = _MARKS.get(labels[-1], "#5f6368")
        ax.axvline(at, color=colour, linestyle="--", linewidth=1)
        ax.text(at, -0.65 - 0.4 * level, f" {', '.join(labels)} {at:,.0f} ms", color=colour,
                fontsize=8, va="bottom")
    ax.set_xlim(0, right * 1.15)  # room for the size labels
    ax.set_xlabel("time since navigation start (ms)")
    ax.grid(axis="x", color="#e8eaed", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    kinds = {str(t) if str(t) in RESOURCE_COLOURS else "Other" for t in types}
    present = [t for t in RESOURCE_COLOURS if t in kinds]
    if present:
        from matplotlib.patches import Patch

        ax.legend(handles=[Patch(color=RESOURCE_COLOURS[t], label=t) for t in present],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    page = next((str(u) for u, t in zip(frame["url"], types, strict=True)
                 if str(t) == "Document"), None)
    ax.set_title(f"Requests of {page}" if page else "Requests", fontsize=10, loc="left")
    return ax


@shows_its_figure
def filmstrip(
    frames: Sequence[tuple[float, bytes]] | Mapping[str, Any] | str,
    ax: Axes | None = None,
    *,
    max_frames: int = 12,
) -> Axes:
    """The page's thumbnails side by side, each with its time (ms since navigation start).

    ``frames`` is what ``runner.filmstrip(report)`` returns, an LHR, or the ``filmstrip``
    resource's text. At most ``max_frames`` are drawn, evenly picked, the last always kept.
    """
    plt = _pyplot()
    from matplotlib import image as mpimg

    strip = timed_images(frames)
    if not strip:
        raise InvalidInputError("filmstrip: this run has no thumbnails")
    if max_frames < 1:
        raise InvalidInputError("filmstrip: max_frames must be at least 1")
    if len(strip) > max_frames:
        step = (len(strip) - 1) / (max_frames - 1) if max_frames > 1 else 0
        strip = [strip[round(i * step)] for i in range(max_frames - 1)] + [strip[-1]]
    images = [mpimg.imread(io.BytesIO(data), format="jpeg") for _, data in strip]
    height = max(img.shape[0] for img in images)
    width = max(img.shape[1] for img in images)
    gap = width * 0.08
    if ax is None:
        # Thumbnails about 2.2 in high, the strip at most 16 in wide.
        thumb_height = 2.2
        strip_width = thumb_height * (width + gap) / height * len(images)
        if strip_width > 16:
            thumb_height *= 16 / strip_width
            strip_width = 16
        _, ax = plt.subplots(figsize=(strip_width + 0.3, thumb_height * 1.2 + 0.45))
    assert ax is not None
    for i, ((ms, _), img) in enumerate(zip(strip, images, strict=True)):
        left = i * (width + gap)
        h, w = img.shape[0], img.shape[1]
        ax.imshow(img, extent=(left, left + w, h, 0), interpolation="antialiased")
        ax.add_patch(_frame_border(left, w, h))
        ax.text(left + w / 2, h + height * 0.04, f"{ms:,.0f} ms", ha="center", va="top",
                fontsize=9)
    ax.set_xlim(-gap / 2, len(images) * (width + gap) - gap / 2)
    ax.set_ylim(height * 1.16, -height * 0.02)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("Filmstrip (ms since navigation start)", fontsize=10, loc="left")
    return ax


def _frame_border(left: float, width: float, height: float) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((left, 0), width, height, fill=False, edgecolor="#dadce0", linewidth=0.8)


class Video:
    """A page-load video that shows itself in a notebook as an HTML5 ``<video>``.

    The video is inlined as a ``data:`` URI, so the notebook stays self-contained.
    """

    def __init__(self, data: bytes, media_type: str = "video/webm", *,
                 width: int | None = None) -> None:
        self.data = data
        self.media_type = media_type
        self.width = width

    @property
    def data_uri(self) -> str:
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode('ascii')}"

    def _repr_html_(self) -> str:
        width = f' width="{int(self.width)}"' if self.width else ""
        return (
            f'<video controls muted playsinline{width} style="max-width:100%">'
            f'<source src="{self.data_uri}" type="{self.media_type}">'
            "Your browser cannot play this WebM video.</video>"
        )

    def save(self, path: str) -> None:
        """Write the video file (``.webm``)."""
        with open(path, "wb") as handle:
            handle.write(self.data)

    def __repr__(self) -> str:
        return f"Video({self.media_type}, {len(self.data):,} bytes)"


def video(data: bytes | str | None, *, width: int | None = None) -> Video:
    """A notebook display of ``runner.video(report)`` (WebM bytes) or the ``video``
    resource's data URI. ``width`` in CSS pixels (default: the video's own)."""
    if data is None:
        raise InvalidInputError(
            "video: this test has no video (run it with config={'video': True})"
        )
    if isinstance(data, str):
        head, sep, payload = data.partition(",")
        if not (sep and head.startswith("data:") and head.endswith(";base64")):
            raise InvalidInputError("video: expected WebM bytes or a base64 data URI")
        return Video(base64.b64decode(payload), head[5:].split(";", 1)[0], width=width)
    if not isinstance(data, bytes | bytearray):
        raise InvalidInputError(f"video: expected bytes, got {type(data).__name__}")
    return Video(bytes(data), width=width)
