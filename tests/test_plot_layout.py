"""Plots as a reader sees them: no legend covers a data point, no title is cut off, no
broken image before the first plot (issue 20 item 4). Drawn from recorded real runs
(``tests/recorded_runs.py``: /fast and /heavy on mobile and desktop)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from pagelab import Results, _report, plots
from pagelab.stats import compare
from recorded_runs import matrix_2x2

matplotlib.use("Agg")

FAST = "http://demo.test/fast"
HEAVY = "http://demo.test/heavy"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return matrix_2x2()


@pytest.fixture(autouse=True)
def close_figures() -> Iterator[None]:
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def data_points(ax: Axes) -> np.ndarray:
    """Every plotted data point of ``ax`` in display coordinates: scatter points, line
    vertices (runs, medians, steps, threshold lines' ends), error bar ends, heat-map cells."""
    found: list[np.ndarray] = []
    for collection in ax.collections:
        if isinstance(collection, PathCollection):
            offsets = np.asarray(collection.get_offsets(), dtype=float)
            if offsets.size:
                found.append(collection.get_offset_transform().transform(offsets))
        elif isinstance(collection, LineCollection):
            for segment in collection.get_segments():
                found.append(collection.get_transform().transform(np.asarray(segment)))
    for line in ax.lines:
        xy = np.asarray(line.get_xydata(), dtype=float)
        if xy.size:
            found.append(line.get_transform().transform(xy))
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and str(patch.get_gid() or "").startswith("cell:"):
            x, y = patch.get_xy()
            centre = np.array([[x + patch.get_width() / 2, y + patch.get_height() / 2]])
            found.append(patch.get_transform().transform(centre))
    points = np.concatenate(found) if found else np.empty((0, 2))
    return points[np.isfinite(points).all(axis=1)]


def check_layout(figure: Figure) -> None:
    """After drawing: each legend holds no data point and lies inside the figure; each
    title lies inside the figure."""
    # A bare Figure has a base canvas that cannot draw: give it Agg's, as savefig does.
    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else (
        FigureCanvasAgg(figure))
    canvas.draw()
    renderer = canvas.get_renderer()
    page = figure.bbox
    for ax in figure.axes:
        points = data_points(ax)
        assert len(points), "nothing plotted"
        legend = ax.get_legend()
        if legend is not None:
            box = legend.get_window_extent(renderer)
            covered = [tuple(p) for p in points if box.contains(*p)]
            assert not covered, f"the legend covers {len(covered)} data points"
            assert page.x0 <= box.x0, "legend cut off"
            assert box.x1 <= page.x1 + 0.5, "legend cut off"
            assert page.y0 <= box.y0, "legend cut off"
            assert box.y1 <= page.y1 + 0.5, "legend cut off"
        for title in (ax.title, ax._left_title, ax._right_title):  # type: ignore[attr-defined]
            if not title.get_text():
                continue
            box = title.get_window_extent(renderer)
            assert page.x0 - 0.5 <= box.x0, f"title cut off: {title.get_text()!r}"
            assert box.x1 <= page.x1 + 0.5, (
                f"title cut off: {title.get_text()!r} spans {box.x0:.0f}-{box.x1:.0f} of "
                f"{page.x1:.0f} px")
            assert box.y1 <= page.y1 + 0.5, f"title cut off at the top: {title.get_text()!r}"


def figure_of(draw: Callable[[Axes], object], size: tuple[float, float] = (8.0, 4.5)) -> Figure:
    figure = Figure(figsize=size, dpi=100, layout="constrained")
    draw(figure.subplots())
    return figure


def test_results_plot_legend_covers_no_run(frame: pd.DataFrame) -> None:
    # The score of the fast page is 100: the old lower-right legend sat on those points.
    for metric in ("performance_score", "largest_contentful_paint"):
        ax = Results.from_frame(frame).plot(metric)
        check_layout(ax.figure)  # type: ignore[arg-type]


@pytest.mark.parametrize("draw", [
    lambda f, ax: plots.distribution(f, "performance_score", ax=ax),
    lambda f, ax: plots.distribution(f, "largest_contentful_paint", ax=ax),
    lambda f, ax: plots.trend(f, "performance_score", ax=ax),
    lambda f, ax: plots.trend(f, "largest_contentful_paint", ax=ax),
    lambda f, ax: plots.heatmap(f, "largest_contentful_paint", ax=ax),
    lambda f, ax: plots.metric_by_group(f, "total_blocking_time", ax=ax),
], ids=["distribution-score", "distribution-lcp", "trend-score", "trend-lcp", "heatmap",
        "by-group-tbt"])
def test_matrix_plots_legends_cover_no_data(
    frame: pd.DataFrame, draw: Callable[[pd.DataFrame, Axes], object]
) -> None:
    check_layout(figure_of(partial(draw, frame)))


def test_comparison_plot_per_cell_with_its_legend_aside(frame: pd.DataFrame) -> None:
    compared = compare(frame, "url", FAST, HEAVY)
    figure = figure_of(lambda ax: plots.comparison(compared, ax=ax, a=FAST, b=HEAVY),
                       (8.0, 1.2 + 0.62 * len(compared)))
    check_layout(figure)
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert any("LCP \u00b7 mobile" in text for text in labels)
    assert any("LCP \u00b7 desktop" in text for text in labels)


def test_report_plots_fit_their_figures(frame: pd.DataFrame) -> None:
    # The report's own figure (6.6 in wide) with long URLs: the comparison's title used to
    # run off the right edge; its score plot's legend sat on the scores of 100.
    long_a = "http://demo.test/" + "a-rather-long-path/" * 3 + "fast"
    long_b = "http://demo.test/" + "a-rather-long-path/" * 3 + "heavy"
    renamed = frame.assign(url=frame["url"].map({FAST: long_a, HEAVY: long_b}))
    compared = compare(renamed, "url", long_a, long_b, metrics=["LCP", "performance_score"])
    check_layout(_report._figure(
        lambda ax: plots.comparison(compared, ax=ax, a=long_a, b=long_b),
        (_report._WIDTH, 1.2 + 0.62 * len(compared))))
    check_layout(_report._figure(partial(_report._by_group, frame, "performance_score"),
                                (_report._WIDTH, 1.4 + 0.75 * 4)))


def test_widget_plot_legend_and_no_broken_image_before_a_result(frame: pd.DataFrame) -> None:
    from pagelab.widgets import BatchComparison
    from pagelab.widgets._common import PLOT_PLACEHOLDER, draw_figure

    widget = BatchComparison(urls=[FAST, HEAVY], devices=["mobile", "desktop"])
    # Before any result: a placeholder text, no (empty, hence broken) image.
    assert widget.plot not in widget.plot_area.children
    assert PLOT_PLACEHOLDER in widget.plot_area.children[0].value
    widget.metric.value = "performance_score"
    widget._show(Results.from_frame(frame))
    assert widget.plot_area.children == (widget.plot,)
    assert bytes(widget.plot.value).startswith(b"\x89PNG")
    check_layout(draw_figure(widget._draw_plot, widget._plot_size()))
