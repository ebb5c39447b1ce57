"""pagelab.plots on real recorded runs, tested by what they draw; each saved as a PNG under
``tests/artifacts/`` for a person to look at."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

import pagelab
from pagelab import plots
from pagelab._exceptions import InvalidInputError
from pagelab.engine._ttfb import run_ttfb
from pagelab.frames import TTFB_COLUMNS, ttfb_frame
from pagelab.models import METRICS, RATING_FILL, Metric, TTFBResult
from pagelab.plots._ttfb import TTFB_PHASES
from pagelab.stats import change_points, compare
from recorded_runs import artifact, build_history, commit_of, load_runs, matrix_frame

FAST, HEAVY = "http://demo.test/fast", "http://demo.test/heavy"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return matrix_frame()


@pytest.fixture(scope="module")
def ttfb_result(demo_url: str) -> TTFBResult:
    """A real TTFB test of the demo site's slow page (loopback: every location from here)."""
    return run_ttfb(f"{demo_url}/slow?ms=120", "europe")


@pytest.fixture(autouse=True)
def close_figures() -> Iterator[None]:
    """pyplot keeps every figure a plot made without ``ax``: let them go after each test."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture
def axes() -> Axes:
    figure = Figure(figsize=(8, 5), layout="constrained")
    return figure.subplots()


def save(ax: Axes, name: str) -> Path:
    path = artifact(name)
    ax.figure.savefig(path, dpi=100)
    assert path.stat().st_size > 5_000
    return path


def points(ax: Axes) -> int:
    return sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))


def texts(ax: Axes) -> str:
    return " ".join(t.get_text() for t in ax.texts)


def tick_labels(ax: Axes, axis: str = "y") -> list[str]:
    ticks = ax.get_yticklabels() if axis == "y" else ax.get_xticklabels()
    return [t.get_text() for t in ticks]


def threshold_values(ax: Axes, axis: str = "x") -> set[float]:
    """Values of the dashed threshold lines (axvline / axhline)."""
    found = set()
    for line in ax.get_lines():
        if line.get_linestyle() != "--":
            continue
        data = line.get_xdata() if axis == "x" else line.get_ydata()
        found.add(float(np.asarray(data, dtype=float)[0]))
    return found


# -- metric_by_group -------------------------------------------------------------------------


def test_metric_by_group_one_point_per_successful_run(frame: pd.DataFrame) -> None:
    ax = plots.metric_by_group(frame, "LCP")
    ok = (frame["status"] == "success") & frame["largest_contentful_paint"].notna()
    assert points(ax) == int(ok.sum()) == 17
    # Failed runs are counted, never drawn: no point at 0.
    offsets = np.concatenate([c.get_offsets()[:, 0] for c in ax.collections])
    assert offsets.min() > 0
    assert ax.get_xlabel() == "LCP (ms)" == METRICS["largest_contentful_paint"].header
    assert "Largest Contentful Paint" in ax.get_title(loc="left")
    labels = tick_labels(ax)
    assert any(lab.startswith("/fast \u00b7 mobile\n10 runs, median") for lab in labels)
    assert any("1 failed, no successful run" in lab for lab in labels)
    assert threshold_values(ax) == {2500.0, 4000.0}
    medians = [line for line in ax.get_lines() if line.get_label() == "median"]
    assert len(medians) == 1  # labelled once; one median bar per group with runs
    assert sum(1 for line in ax.get_lines() if line.get_linewidth() == 2.5) == 4
    save(ax, "plot-metric-by-group.png")


def test_metric_by_group_on_results_and_given_axes(frame: pd.DataFrame, axes: Axes) -> None:
    results = pagelab.Results.from_frame(frame)
    ax = plots.metric_by_group(results, "cumulative_layout_shift", by="device", ax=axes)
    assert ax is axes
    assert ax.get_xlabel() == "CLS (unitless)"
    assert sorted(lab.split("\n")[0] for lab in tick_labels(ax)) == ["desktop", "mobile"]
    assert points(ax) == 17


def test_no_backend_switch_and_bad_input(frame: pd.DataFrame) -> None:
    backend = matplotlib.get_backend()
    plots.metric_by_group(frame, "TBT")
    assert matplotlib.get_backend() == backend
    with pytest.raises(InvalidInputError, match="unknown metric 'XYZ'"):
        plots.metric_by_group(frame, "XYZ")
    with pytest.raises(InvalidInputError, match="expected a wide frame"):
        plots.metric_by_group([1, 2], "LCP")
    with pytest.raises(InvalidInputError, match="no column 'browser'"):
        plots.distribution(frame, "LCP", by="browser")
    with pytest.raises(InvalidInputError, match="rows: the frame has no column"):
        plots.heatmap(frame, "LCP", rows="page")


# -- distribution ----------------------------------------------------------------------------


def test_distribution_steps_and_markers(frame: pd.DataFrame) -> None:
    ax = plots.distribution(frame, "largest_contentful_paint", by="url")
    markers = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert sorted(len(line.get_xdata()) for line in markers) == [1, 6, 10]
    assert ax.get_xlabel() == "LCP (ms)"
    assert ax.get_ylabel() == "runs at or below the value (%)"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "/fast (n=10)" in legend
    assert "/ (n=0, 1 failed): no successful run" in legend
    assert threshold_values(ax) == {2500.0, 4000.0}
    save(ax, "plot-distribution.png")


# -- comparison ------------------------------------------------------------------------------


def test_comparison_of_real_compare_output() -> None:
    compared = compare(load_runs(), "url", FAST, HEAVY)
    ax = plots.comparison(compared, a="/fast", b="/heavy")
    labels = tick_labels(ax)
    assert labels[0].startswith("CLS\n")  # first metric first (on top)
    lcp = compared.set_index("metric").loc["largest_contentful_paint"]
    dots = {line.get_label(): line for line in ax.get_lines() if line.get_marker() == "o"}
    assert "b worse" in dots
    # The LCP point sits at its relative difference, red (worse), with its interval.
    worse_x = [
        float(line.get_xdata()[0]) for line in ax.get_lines()
        if line.get_marker() == "o" and to_hex(line.get_color()) == RATING_FILL["poor"]
    ]
    assert any(abs(x - lcp["rel_diff"]) < 1e-9 for x in worse_x)
    assert "no relative difference" in texts(ax)  # CLS: a's median is 0
    assert ax.get_title(loc="left") == "Difference of medians: /heavy vs /fast"
    assert "%" in ax.get_xlabel()
    save(ax, "plot-comparison.png")


def test_comparison_needs_the_compare_columns() -> None:
    with pytest.raises(InvalidInputError, match="missing column"):
        plots.comparison(pd.DataFrame({"metric": ["largest_contentful_paint"]}))


def test_comparison_without_difference_is_grey() -> None:
    runs = load_runs()
    fast = runs[runs["url"] == FAST]
    compared = compare(fast, "run", 0, 1)  # single runs: too few, nothing significant
    ax = plots.comparison(compared)
    colours = {to_hex(line.get_color()) for line in ax.get_lines() if line.get_marker() == "o"}
    assert colours <= {"#80868b"}


# -- ttfb ------------------------------------------------------------------------------------


def test_ttfb_frame_dtypes_and_values(ttfb_result: TTFBResult) -> None:
    table = ttfb_frame(ttfb_result)
    assert list(table.columns) == list(TTFB_COLUMNS)
    assert {str(c): str(t) for c, t in table.dtypes.items()} == {
        str(c): str(t) for c, t in TTFB_COLUMNS.items()}
    assert len(table) == len(ttfb_result.result)
    assert (table["status"] == "success").all()
    assert (table["server_processing_ms"] >= 100).all()  # /slow?ms=120
    two = ttfb_frame([ttfb_result, ttfb_result])
    assert two["probe"].tolist() == [0] * len(table) + [1] * len(table)
    with pytest.raises(InvalidInputError, match="TTFBResult"):
        ttfb_frame(["x"])  # type: ignore[list-item]


def test_ttfb_stacks_the_phases(ttfb_result: TTFBResult) -> None:
    ax = plots.ttfb(ttfb_result)
    n = len(ttfb_result.result)
    bars = [p for p in ax.patches if (p.get_gid() or "").startswith("ttfb:")]
    assert len(bars) == n * len(TTFB_PHASES)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [label for label, _ in TTFB_PHASES.values()]
    assert "Frankfurt (de-central)" in tick_labels(ax)
    # Server processing (the 120 ms the page waits) is the widest segment of each bar.
    server = [b for b in bars if to_hex(b.get_facecolor()) == "#e8710a"]
    assert min(b.get_width() for b in server) >= 100
    assert "(ms)" in ax.get_xlabel()
    save(ax, "plot-ttfb.png")


def test_ttfb_failed_location_has_no_bar() -> None:
    # A real probe of a closed loopback port: every location fails.
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run_ttfb(f"http://127.0.0.1:{port}/", "oceania", timeout=5)
    ax = plots.ttfb(ttfb_frame(result))
    assert not [p for p in ax.patches if (p.get_gid() or "").startswith("ttfb:")]
    assert "failed: CONNECTION_REFUSED" in texts(ax)


# -- trend -----------------------------------------------------------------------------------


def test_trend_points_thresholds_and_failures(frame: pd.DataFrame) -> None:
    ax = plots.trend(frame, "LCP")
    series = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert sum(len(line.get_xdata()) for line in series) == 17
    failed = [line for line in ax.get_lines() if line.get_marker() == "x"]
    assert len(failed) == 1
    assert len(failed[0].get_xdata()) == 1
    assert failed[0].get_label() == "failed run (1)"
    assert threshold_values(ax, "y") == {2500.0, 4000.0}
    assert ax.get_ylabel() == "LCP (ms)"
    assert ax.get_xlabel() == "time (UTC)"
    save(ax, "plot-trend.png")


def test_trend_of_the_score_reads_higher_is_better() -> None:
    ax = plots.trend(load_runs(), "performance_score")
    assert ax.get_ylabel() == "Score (0\u2013100)"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "good \u2265 90" in legend
    assert "poor < 50" in legend


def change_lines(ax: Axes) -> dict[str, tuple[float, str]]:
    """The change marks: commit -> (x, colour); a time as matplotlib's date number."""
    from matplotlib.dates import date2num

    marks = {}
    for line in ax.get_lines():
        if str(line.get_gid()).startswith("change:"):
            x = np.asarray(line.get_xdata())[0]
            marks[str(line.get_gid()).removeprefix("change:")] = (
                float(x) if isinstance(x, int | float | np.number) else float(date2num(x)),
                to_hex(line.get_color()))
    return marks


def test_trend_over_builds_marks_the_change_at_its_build() -> None:
    frame = build_history([1.0] * 12 + [1.25] * 12)
    ax = plots.trend(frame, "LCP")
    assert tick_labels(ax, "x") == [commit_of(b)[:7] for b in range(24)]
    assert ax.get_xlabel() == "build, oldest first (24 builds, by commit)"
    assert points(ax) == 24 * 5
    medians = [line for line in ax.get_lines() if line.get_label() == "median of each build"]
    assert len(medians) == 1
    assert list(medians[0].get_xdata()) == list(range(24))
    assert change_lines(ax) == {commit_of(12): (12.0, RATING_FILL["poor"])}
    change = change_points(frame, "LCP").iloc[0]
    assert Metric.format_rel_diff(change["rel_change"]) in texts(ax)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "regression" in legend
    assert "runs (n=120)" in legend
    save(ax, "plot-trend-builds.png")


def test_trend_over_builds_per_cell_names_each_change() -> None:
    frame = build_history([1.0] * 10 + [0.8] * 10 + [1.0] * 10, runs=4,
                          urls=("/fast", "/other"))
    ax = plots.trend(frame, "LCP")
    marks = change_lines(ax)
    assert marks == {commit_of(10): (10.0, RATING_FILL["good"]),
                     commit_of(20): (20.0, RATING_FILL["poor"])}
    # One label per cell and change, each naming its page.
    labels = [t.get_text() for t in ax.texts]
    assert len(labels) == 4
    assert sum(t.startswith("/fast ") for t in labels) == 2
    assert sum(t.startswith("/other ") for t in labels) == 2
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"/fast", "/other", "improvement", "regression"} <= set(legend)


def test_trend_marks_what_it_is_given_or_nothing() -> None:
    frame = build_history([1.0] * 12 + [1.25] * 12)
    assert change_lines(plots.trend(frame, "LCP", changes=False)) == {}
    assert change_lines(plots.trend(build_history([1.0] * 24), "LCP")) == {}
    # Results.changes' frame: only its rows for the metric drawn.
    found = pagelab.Results.from_frame(frame).changes()
    assert set(found["metric"]) > {"largest_contentful_paint"}
    assert change_lines(plots.trend(frame, "LCP", changes=found)) == {
        commit_of(12): (12.0, RATING_FILL["poor"])}
    assert change_lines(plots.trend(frame, "CLS", changes=found)) == {}
    with pytest.raises(InvalidInputError, match="changes: missing column"):
        plots.trend(frame, "LCP", changes=found.drop(columns="direction"))
    with pytest.raises(InvalidInputError, match="changes: expected"):
        plots.trend(frame, "LCP", changes="yes")  # type: ignore[arg-type]


def test_trend_over_time_marks_a_change_at_its_builds_first_run() -> None:
    from matplotlib.dates import date2num

    frame = build_history([1.0] * 12 + [1.25] * 12)
    ax = plots.trend(frame, "LCP", x="time")
    assert ax.get_xlabel() == "time (UTC)"
    first = frame.loc[frame["commit"] == commit_of(12), "created_at"].min()
    x, colour = change_lines(ax)[commit_of(12)]
    assert x == pytest.approx(date2num(first.tz_localize(None)))
    assert colour == RATING_FILL["poor"]


def test_trend_over_builds_needs_commits(frame: pd.DataFrame) -> None:
    with pytest.raises(InvalidInputError, match="no run has a commit"):
        plots.trend(frame, "LCP", x="build")
    with pytest.raises(InvalidInputError, match="x: "):
        plots.trend(frame, "LCP", x="commits")
    # Without commits the default stays the time axis, with nothing to mark.
    ax = plots.trend(frame, "LCP")
    assert ax.get_xlabel() == "time (UTC)"
    assert change_lines(ax) == {}


# -- heatmap ---------------------------------------------------------------------------------


def test_heatmap_cells_coloured_by_rating(frame: pd.DataFrame) -> None:
    ax = plots.heatmap(frame, "LCP")
    cells = {p.get_gid(): to_hex(p.get_facecolor()) for p in ax.patches
             if isinstance(p, Rectangle) and (p.get_gid() or "").startswith("cell:")}
    assert len(cells) == 4 * 2  # four URLs x two devices
    assert cells["cell:/fast|mobile"] == RATING_FILL["good"]  # 670 ms
    assert cells["cell:/heavy|mobile"] == RATING_FILL["poor"]  # 7,741 ms
    assert cells["cell:/heavy|desktop"] == RATING_FILL["good"]  # 1,637 ms
    assert cells["cell:/fast|desktop"] == "#f1f3f4"  # no runs: grey, not a zero
    assert cells["cell:/|mobile"] == "#f1f3f4"
    shown = texts(ax)
    assert "7,741 ms\n5 runs" in shown
    assert "no successful run, 1 failed" in shown
    assert tick_labels(ax, "x") == ["mobile", "desktop"]
    assert ax.get_ylabel() == "url (http://demo.test)"
    save(ax, "plot-heatmap.png")


def test_heatmap_needs_improvement_and_no_thresholds(frame: pd.DataFrame) -> None:
    ax = plots.heatmap(frame, "speed_index", columns="device", aggregation="max")
    colours = {to_hex(p.get_facecolor()) for p in ax.patches if isinstance(p, Rectangle)}
    assert RATING_FILL["needs-improvement"] in colours  # heavy on mobile, max 4,0xx
    with pytest.raises(InvalidInputError, match="aggregation: unknown 'mode'"):
        plots.heatmap(frame, "LCP", aggregation="mode")
    with pytest.warns(DeprecationWarning, match="agg= is deprecated"):
        plots.heatmap(frame, "speed_index", columns="device", agg="max")


def test_a_plot_as_a_cells_last_line_shows_only_its_figure(frame: pd.DataFrame) -> None:
    """Issue 33: ``plots.metric_by_group(...)`` as a cell's last line printed ``<Axes: ...>``
    above the figure. IPython's own formatter (what a notebook's kernel runs on a cell's
    result) finds nothing to print for a plot's Axes, a pair of them included, while
    anything else prints as before; the Axes and the pair stay what they were."""
    import json

    import matplotlib.pyplot as plt
    from IPython.core.formatters import DisplayFormatter

    shown = DisplayFormatter().format
    try:
        ax = plots.metric_by_group(frame, "largest_contentful_paint", by="url")
        lhr = json.loads((Path(__file__).parent / "data" / "lhr-lean-desktop.json").read_text())
        pair = plots.compare_waterfalls(lhr, lhr)
        assert isinstance(ax, Axes)
        assert isinstance(pair, tuple)
        assert len(pair) == 2
        assert shown(ax) == ({}, {})
        assert shown(pair) == ({}, {})
        other = Figure().add_subplot()
        assert shown(other)[0]["text/plain"].startswith("<Axes")
    finally:
        plt.close("all")


def test_every_plot_shows_only_its_figure() -> None:
    """Every public plot returning Axes or a Figure goes through ``shows_its_figure`` (the
    field and visual plots of this round did not at first)."""
    import inspect

    drawn = {"Axes", "Figure", "tuple[Axes, Axes]"}
    plotting = [name for name in plots.__all__ if inspect.isfunction(getattr(plots, name))
                and inspect.signature(getattr(plots, name)).return_annotation in drawn]
    assert {"metric_by_group", "versus_field", "filmstrip_compare"} <= set(plotting)
    bare = [name for name in plotting if not hasattr(getattr(plots, name), "__wrapped__")]
    assert bare == []


def test_a_plots_figure_shows_once_and_not_never() -> None:
    """``filmstrip_compare`` returns a pyplot Figure; a notebook showed nothing of it (its
    display did nothing, the inline backend's too). Its first display shows it and closes
    it in pyplot, so the inline backend, which shows every open figure at a cell's end,
    does not show it a second time (checked in a kernel: once as a cell's last line, with
    ``;``, assigned, and shown again by name)."""
    import matplotlib.pyplot as plt
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from pagelab.plots._common import shows_its_figure

    @shows_its_figure
    def strips() -> object:
        figure, ax = plt.subplots()
        ax.plot([1, 2])
        return figure

    shell = InteractiveShell.instance()
    shell.user_ns["strips"] = strips
    try:
        with capture_output() as captured:
            shell.run_cell("strips()")
        assert [o.data["text/plain"] for o in captured.outputs] == [
            "<Figure size 640x480 with 1 Axes>"]
        assert plt.get_fignums() == []  # closed: the backend will not show it again
        figure = strips()
        assert plt.get_fignums() != []
        shell.user_ns["figure"] = figure
        with capture_output() as captured:
            shell.run_cell("figure")
        assert len(captured.outputs) == 1
        assert "_ipython_display_" not in vars(figure)
    finally:
        plt.close("all")
        InteractiveShell.clear_instance()
