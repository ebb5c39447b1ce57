"""Visual progress: how complete each screenshot of a page load looks, as Speed Index
measures it.

The method is speedline's (``speed-index.js``, which Lighthouse runs for the observed Speed
Index): each screenshot becomes three 256-bin histograms, one per colour channel (R, G, B),
counting its pixels except the white ones (all three channels >= 249, the empty page's
colour). A frame's progress is how far its histograms have moved from the first frame's
towards the last frame's::

    progress = floor(100 * sum(min(|cur - first|, |last - first|)) / sum(|last - first|))

summed over every channel and bin (100 when the first and last frames do not differ). The
Speed Index is the area above the curve: ``sum((1 - progress / 100) * dt)`` from navigation
start (nothing painted) to the last frame, each frame's progress held until the next one.

Pillow (``pagelab[notebook]``, with matplotlib) decodes the JPEG screenshots.
"""

from __future__ import annotations

import base64
import io
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from pagelab._exceptions import InvalidInputError
from pagelab._extras import require

__all__ = [
    "VISUAL_PROGRESS_COLUMNS",
    "frame_progress",
    "observed_ms",
    "run_screenshots",
    "speed_index_ms",
    "timed_images",
    "visual_progress",
    "visual_progress_curve",
    "visually_complete_ms",
]

#: The columns of :meth:`pagelab.Results.visual_progress` after the run columns.
VISUAL_PROGRESS_COLUMNS: dict[str, Any] = {"time_ms": "float64", "progress": "float64"}

# speedline's isWhitePixel: every channel at least this is the blank page, not content.
_WHITE = 249


def _histograms(image: bytes) -> np.ndarray:
    """The (3, 256) per-channel histogram of a screenshot's non-white pixels."""
    pil = require("PIL.Image", "notebook")
    try:
        with pil.open(io.BytesIO(image)) as opened:
            pixels = np.asarray(opened.convert("RGB"), dtype=np.uint8).reshape(-1, 3)
    except (OSError, ValueError) as exc:  # PIL.UnidentifiedImageError is an OSError
        raise InvalidInputError(f"visual progress: a screenshot is not an image ({exc})") from exc
    content = pixels[~(pixels >= _WHITE).all(axis=1)]
    return np.stack([np.bincount(content[:, c], minlength=256) for c in range(3)])


def frame_progress(images: Sequence[bytes]) -> list[float]:
    """speedline's visual progress (percent, 0-100, whole numbers) of each image against the
    first (0) and the last (100); see the module's docstring."""
    if not images:
        return []
    histograms = [_histograms(image) for image in images]
    first, last = histograms[0], histograms[-1]
    target = np.abs(last - first)
    total = int(target.sum())
    progress = []
    for current in histograms:
        match = int(np.minimum(np.abs(current - first), target).sum())
        progress.append(100.0 if total == 0 else float(math.floor(match / total * 100)))
    return progress


def visual_progress_curve(frames: Sequence[tuple[float, bytes]]) -> pd.DataFrame:
    """``time_ms`` and ``progress`` (percent) of timed screenshots ``(ms since navigation
    start, image bytes)``, in time order: speedline's progress of each, made non-decreasing
    (a running maximum: content that appears and goes again, a spinner, does not take
    progress back), ending at 100 with the last frame."""
    ordered = sorted(frames, key=lambda frame: frame[0])
    raw = frame_progress([image for _, image in ordered])
    curve = pd.DataFrame({
        "time_ms": pd.array([float(ms) for ms, _ in ordered], dtype="float64"),
        "progress": pd.array(np.maximum.accumulate(raw) if raw else [], dtype="float64"),
    })
    return curve


def speed_index_ms(time_ms: Sequence[float], progress: Sequence[float]) -> float:
    """The Speed Index (ms) of a visual-progress curve: the area above it from navigation
    start, when nothing is painted, each point's progress held until the next."""
    times = np.asarray(time_ms, dtype=float)
    done = np.asarray(progress, dtype=float) / 100
    if times.size == 0:
        return math.nan
    steps = np.diff(np.concatenate([[0.0], times]))
    held = np.concatenate([[0.0], done[:-1]])
    return float(np.sum(steps * (1 - held)))


def visually_complete_ms(time_ms: Sequence[float], progress: Sequence[float]) -> float:
    """When the curve first reaches 100 (ms); NaN if it never does."""
    for at, value in zip(time_ms, progress, strict=True):
        if value >= 100:
            return float(at)
    return math.nan


def observed_ms(lhr: Mapping[str, Any], audit_id: str) -> float | None:
    """The ``metrics`` audit's observed time of a metric (``first-contentful-paint`` ->
    ``observedFirstContentfulPaint``): this browser's clock, the screenshots' clock, where the
    reported value may be Lighthouse's simulation. None when the LHR has none."""
    audits = lhr.get("audits") if isinstance(lhr, Mapping) else None
    metrics = ((audits or {}).get("metrics") or {}).get("details") or {}
    items = metrics.get("items") if isinstance(metrics, Mapping) else None
    if not (isinstance(items, list) and items and isinstance(items[0], Mapping)):
        return None
    key = "observed" + "".join(part.title() for part in audit_id.split("-"))
    value = items[0].get(key)
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def timed_images(data: Any) -> list[tuple[float, bytes]]:
    """``(ms, image bytes)`` from ``runner.filmstrip()`` / ``runner.screenshots()``, an LHR
    (its thumbnails) or the text of the ``filmstrip`` or ``screenshots`` resource."""
    if isinstance(data, str | bytes):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"filmstrip: not JSON ({exc})") from exc
    if isinstance(data, Mapping):  # an LHR
        audit = (data.get("audits") or {}).get("screenshot-thumbnails") or {}
        data = (audit.get("details") or {}).get("items") or []
    frames: list[tuple[float, bytes]] = []
    if not isinstance(data, Sequence):
        raise InvalidInputError("filmstrip: expected runner.filmstrip(report) or an LHR")
    for entry in data:
        if isinstance(entry, Mapping):  # the resource's {timing, data} items
            uri = str(entry.get("data", ""))
            payload = uri.partition(",")[2] if uri.startswith("data:") else uri
            frames.append((float(entry["timing"]), base64.b64decode(payload)))
        elif isinstance(entry, Sequence) and len(entry) == 2 and isinstance(entry[1], bytes):
            frames.append((float(entry[0]), entry[1]))
        else:
            raise InvalidInputError(
                "filmstrip: expected (ms, image bytes) pairs as runner.filmstrip() returns"
            )
    return frames


def run_screenshots(results: Any, test_id: str) -> list[tuple[float, bytes]]:
    """A run's timed screenshots: every one of its trace (the ``screenshots`` resource),
    else, for a run stored without them, the LHR's thumbnails (``screenshot-thumbnails``,
    about ten, coarser)."""
    from pagelab._exceptions import NotFoundError

    runner = getattr(results, "runner", None)
    if runner is not None and callable(getattr(runner, "screenshots", None)):
        try:
            shots: list[tuple[float, bytes]] = runner.screenshots(test_id)
        except NotFoundError:
            pass
        else:
            if shots:
                return shots
    return timed_images(results.lhr(test_id))


def visual_progress(results: Any) -> pd.DataFrame:
    """Every successful run's visual-progress curve, each row led by the run columns
    (``id``, ``run`` and the cell columns); see :meth:`pagelab.Results.visual_progress`."""
    from ._breakdown import RUN_COLUMNS

    frame = results.frame
    ok = frame.index[(frame["status"].astype(str) == "success").to_numpy()]
    parts = []
    for row in ok:
        test_id = str(frame.at[row, "id"])
        curve = visual_progress_curve(run_screenshots(results, test_id))
        for column in reversed(RUN_COLUMNS):
            value = frame.at[row, column] if column in frame.columns else None
            curve.insert(0, column, pd.Series([value] * len(curve), dtype=object))
        parts.append(curve)
    columns = [*RUN_COLUMNS, *VISUAL_PROGRESS_COLUMNS]
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    for column in RUN_COLUMNS:
        out[column] = out[column].astype(frame[column].dtype if column in frame.columns
                                         else "string")
    return out.astype(VISUAL_PROGRESS_COLUMNS)
