"""Where the time to first byte goes, per location: stacked DNS / TCP / TLS / server
processing bars (and the content transfer after the first byte)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pagelab._exceptions import InvalidInputError
from pagelab.frames import ttfb_frame
from pagelab.models import METRICS, TTFBResult

from ._common import new_axes, plain, shows_its_figure, threshold_lines

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["TTFB_PHASES", "ttfb"]

#: The stacked phases: column of :func:`pagelab.frames.ttfb_frame` -> (legend label, colour).
TTFB_PHASES: dict[str, tuple[str, str]] = {
    "dns_ms": ("DNS", "#4285f4"),
    "tcp_ms": ("TCP", "#a142f4"),
    "tls_ms": ("TLS", "#f9ab00"),
    "server_processing_ms": ("server processing", "#e8710a"),
    "content_transfer_ms": ("content transfer", "#dadce0"),
}
#: The registry entry whose thresholds judge a time to first byte.
_TTFB_METRIC = METRICS["server_response_time"]


@shows_its_figure
def ttfb(result_or_frame: TTFBResult | list[TTFBResult] | pd.DataFrame,
         ax: Axes | None = None) -> Axes:
    """One horizontal bar per location: DNS, TCP, TLS and server processing stacked up to
    the first byte, then the content transfer, in ms (the median per location over the
    successful probes when there are repeats). A location whose probes all failed shows
    its error instead of a bar. TTFB's good / poor thresholds are drawn when in range.

    Takes a :class:`~pagelab.TTFBResult`, a list of them (repeats) or the frame of
    :func:`pagelab.frames.ttfb_frame`.
    """
    if isinstance(result_or_frame, pd.DataFrame):
        frame = result_or_frame
        missing = [c for c in ("location", "status", *TTFB_PHASES) if c not in frame.columns]
        if missing:
            raise InvalidInputError(
                f"result_or_frame: missing column(s) {', '.join(missing)}; expected "
                f"pagelab.frames.ttfb_frame(result)"
            )
    else:
        frame = ttfb_frame(result_or_frame)
    name_column = "location_name" if "location_name" in frame.columns else "location"
    locations = list(dict.fromkeys(frame["location"].astype(str)))
    ok = (frame["status"].astype("string") == "success").fillna(False).to_numpy(bool)
    ax = new_axes(ax, (8.5, 1.3 + 0.42 * max(len(locations), 1)))
    ticks = []
    drawn: set[str] = set()
    top = 0.0
    location_column = frame["location"].astype(str).to_numpy()
    for row, loc in enumerate(locations):
        y = len(locations) - 1 - row
        here = location_column == loc
        name = str(frame.loc[here, name_column].iloc[0])
        probes = int(here.sum())
        good = frame.loc[here & ok]
        label = plain(name if name == loc else f"{name} ({loc})")
        if len(good) < probes:
            label += f"\n{len(good)}/{probes} probes ok"
        ticks.append((y, label))
        if good.empty:
            codes = frame.loc[here, "error_code"].dropna().astype(str).unique() if (
                "error_code" in frame.columns) else []
            ax.text(0, y, f" failed: {plain(', '.join(codes) or 'no response')}",
                    va="center", fontsize="small", color="#d93025")
            continue
        left = 0.0
        for column, (phase, colour) in TTFB_PHASES.items():
            width = float(np.median(good[column].to_numpy(dtype="float64", na_value=np.nan)))
            if not np.isfinite(width):
                width = 0.0
            ax.barh(y, width, left=left, height=0.6, color=colour, edgecolor="white",
                    linewidth=0.5, label=phase if phase not in drawn else None, zorder=3,
                    gid=f"ttfb:{loc}:{column}")
            drawn.add(phase)
            left += width
        top = max(top, left)
    ax.set_yticks([y for y, _ in ticks], [t for _, t in ticks], fontsize="small")
    ax.set_ylim(-0.6, max(len(locations), 1) - 0.4)
    ax.set_xlim(0, top * 1.08 if top > 0 else 1.0)
    threshold_lines(ax, _TTFB_METRIC, "x")
    ax.set_xlabel("time (ms): DNS + TCP + TLS + server processing = time to first byte")
    urls: list[str] = (list(frame["url"].dropna().astype(str).unique())
                       if "url" in frame.columns else [])
    where = f": {plain(urls[0])}" if len(urls) == 1 else ""
    repeats = int(frame["probe"].nunique()) if "probe" in frame.columns else 1
    note = f" (median of {repeats} probes)" if repeats > 1 else ""
    ax.set_title(f"Time to first byte by location{where}{note}", loc="left",
                 fontsize="medium")
    ax.grid(axis="x", alpha=0.3)
    handles, texts = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, texts, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1),
                  frameon=False)
    return ax
