"""Plots of runs: every function returns the matplotlib ``Axes`` and never switches the
backend (``pip install 'pagelab[notebook]'``)."""

from ._common import RATING_FILL
from ._matrix import comparison, distribution, heatmap, metric_by_group, trend
from ._run import RESOURCE_COLOURS, Video, filmstrip, video, waterfall
from ._ttfb import TTFB_PHASES, ttfb

__all__ = [
    "RATING_FILL",
    "RESOURCE_COLOURS",
    "TTFB_PHASES",
    "Video",
    "comparison",
    "distribution",
    "filmstrip",
    "heatmap",
    "metric_by_group",
    "trend",
    "ttfb",
    "video",
    "waterfall",
]
