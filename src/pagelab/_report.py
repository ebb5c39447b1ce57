"""The HTML report of runs (:func:`html_report`) and the page of a bare frame
(:func:`table_page`): documents from the autoescaping templates ``report.html.j2`` and
``table.html.j2``, their tables from :mod:`pagelab._readable` (the notebook's own), their
plots as embedded PNG. Nothing is loaded from anywhere: the report links are the page's only
``http(s)://`` references.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from pagelab._change_points import ALPHA, has_commits
from pagelab._exceptions import InvalidInputError, PagelabError
from pagelab._explain import Explanation, explanation_html
from pagelab._extras import require
from pagelab._html import Markup, render
from pagelab._readable import (
    NOISY_TITLE,
    ExtraColumn,
    changes_table,
    comparison_table,
    failed_runs_table,
    frame_table,
    rank_worst_first,
    run_links,
    summary_table,
)
from pagelab.field import VERSUS_NOTE, FieldError, key_configured, versus_field, versus_table
from pagelab.frames import CELL
from pagelab.models import (
    HEADLINE_METRICS,
    METRIC_NAMES,
    metric,
    unfit_runs_note,
    unknown_metric,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["default_comparison", "frame_of", "html_report", "table_page"]

#: Plot width (inches) and resolution in the HTML report: two plots side by side on a
#: 1280-pixel screen.
_WIDTH, _DPI = 6.6, 85


@dataclass(frozen=True, slots=True)
class _Plot:
    alt: str
    src: str


@dataclass(frozen=True, slots=True)
class _Explained:
    """The report's "why" section: the explanation and its pictures, or why there is none."""

    html: Markup | None = None
    plots: tuple[_Plot, ...] = ()
    runs: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class _Visual:
    """The comparison's pictures of how each side paints: the filmstrips on one time axis
    and the visual-progress curves, with a note (which runs, or why a picture is missing)."""

    plots: tuple[_Plot, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class _History:
    """The report's history section: the change points over the builds the runs measured
    and the trend of the metrics that changed."""

    note: str
    table: Markup | None = None
    plots: tuple[_Plot, ...] = ()


@dataclass(frozen=True, slots=True)
class _Field:
    """The report's field section: lab beside the Chrome UX Report, or why there is none."""

    html: Markup | None = None
    note: str = ""


#: The most trend plots the history section draws (the metrics that changed, in order).
_HISTORY_PLOTS = 4


def _history_section(frame: pd.DataFrame, names: list[str]) -> _History | None:
    """With runs of more than one build (their ``commit``), where each metric's level
    changed (:func:`pagelab.stats.change_points`) and the trend over the builds of each
    metric that changed (of the first metric shown when none did); else None."""
    from pagelab import plots
    from pagelab.stats import change_points

    commits = frame["commit"].dropna().nunique() if has_commits(frame) else 0
    if commits < 2 or not names:
        return None
    found = change_points(frame, names)
    changed = list(dict.fromkeys(str(n) for n in found["metric"]))
    drawn = changed[:_HISTORY_PLOTS] or names[:1]
    images = tuple(_png(partial(plots.trend, frame, name, changes=found), (_WIDTH, 3.6))
                   for name in drawn)
    what = (f"{len(found)} change point{'s' if len(found) != 1 else ''} of "
            f"{len(changed)} metric{'s' if len(changed) != 1 else ''}" if len(found)
            else "No change point")
    note = (f"{what} over {commits} builds, in build order (each build's first run), per "
            f"cell, at alpha {ALPHA}: the commit is the first build of the new level, before "
            f"and after the medians of the runs of the levels either side, p corrected for "
            f"the builds tried (stats.change_points; docs/history.md).")
    return _History(note, changes_table(found) if len(found) else None, images)


def _field_section(frame: pd.DataFrame, field: bool | None) -> _Field | None:
    """``field=None``: the section when a key is configured, an error a note in it;
    ``True``: the section, an error raised; ``False``: none."""
    if field is False or (field is None and not key_configured()):
        return None
    try:
        table = versus_field(frame)
    except (FieldError, InvalidInputError) as exc:
        if field:
            raise
        return _Field(note=f"No field data: {exc}")
    if table.empty:
        return _Field(note="The Chrome UX Report has no data for these pages or their origins.")
    return _Field(versus_table(table), VERSUS_NOTE + ".")


def _templates_table(frame: pd.DataFrame, names: list[str]) -> Markup | None:
    """A scan's templates, worst first (:func:`rank_worst_first`, as its summary ranks them):
    each one's median and CV of the report's metrics over every run of its pages, its worst
    page (its pages ranked the same way) and a link to each of its runs' reports. None when
    the runs have no template (not a scan) or no metric."""
    from pagelab.stats import summarize

    if "template" not in frame.columns or not names or not frame["template"].notna().any():
        return None
    runs = frame[frame["template"].notna()]
    ranked = rank_worst_first(summarize(runs, by="template", metrics=names))
    pages = rank_worst_first(summarize(runs, by=["template", "url"], metrics=names))
    worst = pages.drop_duplicates("template").set_index("template")["url"]
    templates = [str(t) for t in ranked["template"]]
    return summary_table(ranked, css_class="pagelab-templates", row_keys=templates, extra=(
        ExtraColumn("worst page", "the template's page ranked worst, by the same rule",
                    [str(worst[t]) for t in templates], wrap=True),
        ExtraColumn("run reports", "each run's Lighthouse report (hover for the run and its page)",
                    [run_links(runs[runs["template"] == t]) for t in templates]),
    ))


def frame_of(data: object) -> pd.DataFrame:
    """The wide frame of ``Results``, or ``data`` itself when it is a DataFrame."""
    if isinstance(data, pd.DataFrame):
        return data
    frame = getattr(data, "frame", None)
    if isinstance(frame, pd.DataFrame):
        return frame
    raise InvalidInputError(
        f"data: expected Results or a DataFrame, got {type(data).__name__}"
    )


def _timestamp(value: pd.Timestamp) -> str:
    if value.tzinfo is None:
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return value.tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S UTC")


def table_page(frame: pd.DataFrame, *, title: str | None = None) -> str:
    """A self-contained page holding ``frame`` as a table."""
    return render("table.html.j2", title=title or "pagelab table", rows=len(frame),
                  columns=len(frame.columns), table=frame_table(frame))


def _metric_names(frame: pd.DataFrame, metrics: Iterable[str] | None) -> list[str]:
    """The metrics to show: those asked for, else every one with a value (the headline ones
    first, in the registry's reading order)."""
    if metrics is not None:
        names = []
        for name in ([metrics] if isinstance(metrics, str) else list(metrics)):
            try:
                names.append(metric(name).name)
            except KeyError:
                raise InvalidInputError(f"metrics: {unknown_metric(name)}") from None
        return [n for n in names if n in frame.columns]
    ordered = [*HEADLINE_METRICS, *(n for n in METRIC_NAMES if n not in HEADLINE_METRICS)]
    return [n for n in ordered if n in frame.columns and frame[n].notna().any()]


def default_comparison(frame: pd.DataFrame) -> tuple[str, object, object] | None:
    """The comparison a report shows unless told: the first two values (in the column's
    order) of the first cell column (URL, device, location, connection) with two or more."""
    from pagelab.plots import successful

    ok = frame[successful(frame)]
    for column in CELL:
        if column not in ok.columns:
            continue
        values = ok[column].dropna()
        if isinstance(values.dtype, pd.CategoricalDtype):
            present = [v for v in values.cat.categories if (values == v).any()]
        else:
            present = list(dict.fromkeys(values))
        if len(present) >= 2:
            return column, present[0], present[1]
    return None


def _side(value: object) -> str:
    if isinstance(value, list | tuple):
        return " \u00b7 ".join(map(str, value))
    return str(value)


def _figure(draw: Callable[[Any], object], size: tuple[float, float], rows: int = 1) -> Figure:
    """A fresh figure (not pyplot's: no global state, no backend switch) with ``draw`` done
    on its axes (one Axes, or ``rows`` of them stacked); constrained layout keeps legends
    beside the axes and titles inside."""
    figure = _bare_figure()
    figure.set_size_inches(size)
    axes = figure.subplots(rows, 1)
    draw(axes if rows == 1 else list(axes))
    return figure


def _png(draw: Callable[[Any], object], size: tuple[float, float], rows: int = 1) -> _Plot:
    """:func:`_figure` as a base64 PNG ``data:`` address with its (first axes') title as
    the alternative text."""
    return _embedded(_figure(draw, size, rows))


def _bare_figure() -> Figure:
    """A fresh figure (not pyplot's: no global state, no backend switch)."""
    figure_module = require("matplotlib.figure", "notebook")
    figure: Figure = figure_module.Figure(dpi=_DPI, layout="constrained")
    return figure


def _embedded(figure: Figure) -> _Plot:
    """``figure`` as a base64 PNG ``data:`` address with its first axes' title as the
    alternative text."""
    ax = figure.axes[0]
    buffer = io.BytesIO()
    # No Software tag: it would put matplotlib's web address into the file.
    figure.savefig(buffer, format="png", metadata={"Software": None})
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return _Plot(ax.get_title(loc="left") or ax.get_title(), f"data:image/png;base64,{data}")


def _plots(frame: pd.DataFrame, names: list[str], compared: pd.DataFrame | None,
           sides: tuple[object, object] | None) -> list[_Plot]:
    from pagelab import plots
    from pagelab.plots import group_columns

    keys = group_columns(frame, None)
    groups = frame.groupby(keys, observed=True, dropna=False).ngroups if keys else 1
    images = []
    if compared is not None and sides is not None and len(compared):
        images.append(_png(
            lambda ax: plots.comparison(compared, ax=ax, a=sides[0], b=sides[1]),
            (_WIDTH, 1.2 + 0.62 * len(compared)),
        ))
    for name in (n for n in HEADLINE_METRICS if n in names):
        images.append(_png(partial(_by_group, frame, name), (_WIDTH, 1.4 + 0.75 * groups)))
    if len(keys) >= 2 and "largest_contentful_paint" in names:
        rows, columns = keys[0], keys[1]
        width = frame[columns].nunique()
        height = frame[rows].nunique()
        images.append(_png(
            lambda ax: plots.heatmap(frame, "largest_contentful_paint", rows=rows,
                                     columns=columns, ax=ax),
            (2.2 + 1.9 * width, 1.4 + 0.75 * height),
        ))
    return images


def _visual(results: object, chosen: tuple[object, object, object]) -> _Visual:
    """Side a's and side b's filmstrips on one time axis (each cell's representative runs)
    and the visual-progress curves by ``by``, from the runs' screenshots (read through the
    runner of ``Results``); a picture that cannot be drawn says why in the note."""
    from pagelab import plots

    by, a, b = chosen
    keys = by if isinstance(by, str) else [str(k) for k in cast("Sequence[str]", by)]

    images: list[_Plot] = []
    notes: list[str] = []
    draws: list[tuple[str, Callable[[], _Plot]]] = [
        ("filmstrips", lambda: _embedded(plots.filmstrip_compare(results, keys, a, b,
                                                                 figure=_bare_figure()))),
        ("visual progress", lambda: _png(
            lambda ax: plots.visual_progress(results, by=keys, ax=ax), (_WIDTH, 3.4)))]
    for name, draw in draws:
        try:
            images.append(draw())
        except PagelabError as exc:
            notes.append(f"No {name}: {exc}")
    if images:
        notes.insert(0, "How each side paints, from its runs' screenshots: the filmstrips of "
                        "each side's representative run on one time axis (FCP and LCP marked, "
                        "the first visually complete frame outlined) and every run's visual "
                        "progress (bold: the representative run).")
    return _Visual(tuple(images), " ".join(notes))


def _by_group(frame: pd.DataFrame, name: str, ax: Axes) -> object:
    from pagelab import plots

    return plots.metric_by_group(frame, name, ax=ax)


def _explained(results: object, frame: pd.DataFrame,
               chosen: tuple[object, object, object]) -> _Explained:
    """Why b differs from a, from each run's LHR (read through the runner of ``Results``),
    with the contributions plot and the waterfalls of each side's representative run in the
    cell of the largest contribution (their filmstrips are the comparison's)."""
    from pagelab.stats import explain, representative_id

    by, a, b = chosen
    try:
        explanation = explain(results, by, a, b)  # type: ignore[arg-type]
    except PagelabError as exc:
        return _Explained(note=f"No explanation: {exc}")
    if explanation.frame.empty:
        return _Explained(explanation_html(explanation, heading=False))
    images = [_png(lambda ax: _contributions(explanation, ax),
                   (2 * _WIDTH, 1.2 + 0.4 * min(len(explanation.frame), 12)))]
    cell = explanation.cell_of(0)
    runs = ""
    if cell in explanation.run_ids:
        ids = [representative_id(frame, side) for side in explanation.run_ids[cell]]
        images.append(_waterfalls(results, explanation, ids[0], ids[1]))
        where = f" in {cell}" if cell else ""
        runs = (f"Waterfalls{where}: the representative run of each side, "
                f"{ids[0]} ({explanation.a_label}) and {ids[1]} ({explanation.b_label}).")
    return _Explained(explanation_html(explanation, heading=False), tuple(images), runs)


def _contributions(explanation: Explanation, ax: Axes) -> object:
    from pagelab import plots

    return plots.contributions(explanation, ax=ax)


def _waterfalls(results: object, explanation: Explanation, a_id: str, b_id: str) -> _Plot:
    """The two runs' waterfalls on one time axis."""
    from pagelab import plots
    from pagelab.frames import requests

    lhr_a, lhr_b = results.lhr(a_id), results.lhr(b_id)  # type: ignore[attr-defined]
    labels = (explanation.a_label, explanation.b_label)
    rows = max(len(requests(lhr_a)), len(requests(lhr_b)), 1)
    return _png(lambda axes: plots.compare_waterfalls(lhr_a, lhr_b, axes, labels=labels),
                (2 * _WIDTH, 2.0 + 0.36 * rows), rows=2)


def html_report(
    results: object,
    *,
    by: str | Sequence[str] | None = None,
    a: object = None,
    b: object = None,
    title: str | None = None,
    metrics: Iterable[str] | None = None,
    explain: bool = True,
    field: bool | None = None,
) -> str:
    """One self-contained HTML page about ``results`` (``Results`` or the wide frame).

    It holds: how many runs, cells and failures, over which time; the summary per cell
    (units in the headers, rating colours, CV, a link to each representative run's report);
    with a scan's runs (a ``template`` column), the templates worst first (each one's
    median, CV, worst page and its runs' reports); the comparison of ``b`` against ``a``
    by ``by`` (:func:`pagelab.stats.compare`; default
    the first two values of the first cell column with two or more, none when every run is
    one cell); plots as embedded PNG (the comparison, each headline metric per cell, a heat
    map of LCP when two cell columns vary); with ``explain`` and ``Results`` (whose runner
    reads each run's LHR), why b differs from a (:func:`pagelab.stats.explain`: the summary
    in words, the ranked contributions and their plot, the waterfalls of each side's
    representative run); with ``Results``, how each side paints beside the comparison
    (:func:`pagelab.plots.filmstrip_compare` and :func:`pagelab.plots.visual_progress`, from
    the runs' screenshots); with runs of more than one build (a ``commit`` column), the
    history: where each metric's level changed (:func:`pagelab.stats.change_points`) and
    the trend over the builds with the changes marked (:func:`pagelab.plots.trend`); the
    lab medians beside the Chrome UX Report's field p75
    (:meth:`pagelab.Results.versus_field`) when ``field`` is True, or when it is None and
    ``PAGELAB_CRUX_API_KEY`` is set (then an error of the API is a note in the section, not a
    failure); the failed runs. Every text is escaped (the template autoescapes); nothing is
    loaded from anywhere.
    """
    from pagelab.stats import compare, summarize

    frame = frame_of(results)
    if not {"status", "url"} <= set(frame.columns):
        raise InvalidInputError("results: expected Results or the wide frame of runs")
    names = _metric_names(frame, metrics)
    if (by is None) != (a is None) or (by is None) != (b is None):
        raise InvalidInputError("by, a, b: give all three to choose the comparison, or none")
    chosen = (by, a, b) if by is not None else default_comparison(frame)
    compared = None
    if chosen is not None and names:
        try:
            compared = compare(frame, chosen[0], chosen[1], chosen[2], metrics=names)
        except InvalidInputError:
            if by is not None:
                raise
            compared = None  # the default pair shares no cell: nothing to compare within
    explained = (_explained(results, frame, chosen)
                 if explain and compared is not None and chosen is not None
                 and not isinstance(results, pd.DataFrame) else None)
    visual = (_visual(results, chosen)
              if compared is not None and chosen is not None
              and not isinstance(results, pd.DataFrame) else None)
    status = frame["status"].astype("string")
    n_ok = int((status == "success").sum())
    n_failed = int((status == "failed").sum())
    times = pd.to_datetime(frame["created_at"], utc=True).dropna() if (
        "created_at" in frame.columns) else pd.Series([], dtype="datetime64[ns, UTC]")
    when = (f"{_timestamp(pd.Timestamp(times.min()))} to "
            f"{_timestamp(pd.Timestamp(times.max()))}" if len(times) else "no times")
    versions = sorted({str(v) for v in frame.get("lighthouse_version", pd.Series()).dropna()})
    meta = (f"{len(frame):,} runs ({n_ok:,} successful, {n_failed:,} failed) from {when}"
            + (f"; Lighthouse {', '.join(versions)}" if versions else "")
            + f". Written {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} by pagelab.")
    noisy = (int(frame["noisy"].astype("boolean").fillna(False).sum())
             if "noisy" in frame.columns else 0)
    return render(
        "report.html.j2",
        title=title or "pagelab report",
        meta=meta,
        unfit=unfit_runs_note(noisy, len(frame)) if noisy else "",
        noisy_title=NOISY_TITLE,
        interrupted=getattr(results, "interrupted", False) is True,
        summary=summary_table(summarize(frame, metrics=names)) if names else None,
        templates=_templates_table(frame, names),
        history=_history_section(frame, names),
        comparison=(comparison_table(compared, a=chosen[1], b=chosen[2])
                    if compared is not None and chosen is not None else None),
        by=_side(chosen[0]) if chosen else "",
        within=" \u00d7 ".join(compared.attrs.get("within", [])) if compared is not None else "",
        a=_side(chosen[1]) if chosen else "",
        b=_side(chosen[2]) if chosen else "",
        plots=_plots(frame, names, compared,
                     (chosen[1], chosen[2]) if chosen is not None else None),
        explained=explained,
        visual=visual,
        field=_field_section(frame, field),
        failed=failed_runs_table(frame),
        n_failed=n_failed,
    )
