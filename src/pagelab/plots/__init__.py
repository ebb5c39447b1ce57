"""Plots of runs: every function returns the matplotlib ``Axes`` (``filmstrip_compare``, a
grid of rows, its ``Figure``) and never switches the backend
(``pip install 'pagelab[notebook]'``)."""

from pagelab._public import publish

from ._explain import compare_waterfalls, contributions
from ._field import field_history, versus_field
from ._matrix import comparison, distribution, heatmap, metric_by_group, trend
from ._run import Video, filmstrip, video, waterfall
from ._ttfb import ttfb
from ._visual import filmstrip_compare, visual_progress

# isort: split
# For the HTML report (pagelab.export) only (not public API, not in __all__).
from ._common import group_columns as group_columns
from ._common import successful as successful

__all__ = [
    "Video",
    "compare_waterfalls",
    "comparison",
    "contributions",
    "distribution",
    "field_history",
    "filmstrip",
    "filmstrip_compare",
    "heatmap",
    "metric_by_group",
    "trend",
    "ttfb",
    "versus_field",
    "video",
    "visual_progress",
    "waterfall",
]

publish(__name__, globals(), __all__)
