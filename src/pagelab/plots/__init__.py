"""Plots of runs: every function returns the matplotlib ``Axes`` and never switches the
backend (``pip install 'pagelab[notebook]'``)."""

from ._run import RESOURCE_COLOURS, Video, filmstrip, video, waterfall

__all__ = ["RESOURCE_COLOURS", "Video", "filmstrip", "video", "waterfall"]
