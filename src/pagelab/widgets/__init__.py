"""Notebook widgets over measure, stats, plots and export (the ``notebook`` extra).

Each widget displays itself; its work runs on a worker thread so the notebook stays live
and Stop is heard::

    from pagelab.widgets import BatchComparison
    comparison = BatchComparison(urls=["http://127.0.0.1:8000/fast"])
    comparison                    # pick devices and locations, press Run
    comparison.results.summary()  # in a cell below, after the run
"""

from pagelab._public import publish

from ._batch import BatchComparison
from ._trend import TrendExplorer
from ._ttfb import TTFBExplorer

__all__ = ["BatchComparison", "TTFBExplorer", "TrendExplorer"]

publish(__name__, globals(), __all__)
