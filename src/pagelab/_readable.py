"""Readable tables of runs, summaries and comparisons, and the frames that display as them.

:meth:`pagelab.Results.summary` and :meth:`pagelab.Results.compare` return a
:class:`pagelab.Summary` / :class:`pagelab.Comparison`: a plain :class:`pandas.DataFrame` in
every way (same columns, dtypes, indexing; any operation on it returns a plain ``DataFrame``),
whose notebook
display is the readable table the widget and the HTML report show: short headers with units,
values rounded per metric and coloured by rating, the CV under each median, failed runs
counted in red, columns without any value left out. ``.frame`` is the same data as a plain
``DataFrame``, which displays as pandas does. The export report and the widgets render the
same tables through :func:`summary_table` and :func:`comparison_table`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from pagelab._cells import cell_label
from pagelab._change_points import DIRECTION_RATING, short_commit
from pagelab._html import MISSING, Markup, breakable, for_notebook, link, pill, safe_url, table
from pagelab._public import publish
from pagelab.models import (
    HEADLINE_METRICS,
    METRICS,
    RATING_COLOURS,
    Direction,
    Metric,
    metric,
    metric_value,
    status_pill,
)

__all__ = ["READABLE_BOX", "Comparison", "ExtraColumn", "ReadableFrame", "Summary",
           "changes_table", "comparison_table", "failed_runs_table", "frame_table",
           "rank_worst_first", "run_links", "runs_html", "summary_table"]

_NOTE = Markup('<span style="display:block;color:#5f6368;font-size:11px">{}</span>')
#: A verdict's note wraps beneath it, as wide as a short verdict at most.
_HINT = Markup('<div style="color:#5f6368;font-size:12px">{}</div>')
_VERDICT_NOTE = Markup('<span style="display:block;color:#5f6368;font-size:11px;'
                       'white-space:normal;max-width:16em">{}</span>')
_CV = Markup('<span style="display:block;color:#5f6368;font-size:11px">CV {}</span>')
_FAILED_ROW = "background:{}".format(RATING_COLOURS["poor"][0])
_SUMMARY_COUNTS = ("runs", "failed", "engine_failures", "noisy")
_SUMMARY_LINKS = ("representative_id", "representative_report_url")
#: What a noisy run is, in the tables' words (the summary's header tip, the report's line).
NOISY_TITLE = ("runs measured on a machine unfit to measure (the fitness rule: benchmark "
               "index, load, CPU pressure, CPU share); their figures are to doubt")


def _missing(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float | np.floating) and math.isnan(value)


def _number(value: object) -> float | None:
    if _missing(value) or isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value)
    return None


def _text(value: object, column: str = "") -> str:
    """A cell of a column this module knows nothing about, readable."""
    if _missing(value):
        return "default" if column == "connection" else MISSING
    if isinstance(value, pd.Timestamp):
        if value.tzinfo is None:
            return value.strftime("%Y-%m-%d %H:%M:%S")
        return value.tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, float | np.floating):
        return f"{value:,.4g}"
    return str(value)


def _filled(frame: pd.DataFrame, column: object) -> bool:
    """Whether ``column`` holds any value (an all-empty column is not shown)."""
    return bool(frame[column].notna().any())


def _metrics_in(frame: pd.DataFrame) -> list[Metric]:
    """The metric columns holding a value: the headline ones in reading order, then any
    other (FMP) when it has values."""
    names = [*HEADLINE_METRICS, *(n for n in METRICS if n not in HEADLINE_METRICS)]
    return [METRICS[n] for n in names if n in frame.columns and _filled(frame, n)]


def frame_table(frame: pd.DataFrame, *, css_class: str = "pagelab-frame") -> Markup:
    """Any frame as a table, every column kept: metric columns under ``LABEL (unit)`` with
    the registry's rounding, numbers right-aligned, times in UTC, a meaningful index as
    columns."""
    if not (isinstance(frame.index, pd.RangeIndex) and frame.index.name is None):
        frame = frame.reset_index()
    numeric = [pd.api.types.is_numeric_dtype(frame[c].dtype)
               and not pd.api.types.is_bool_dtype(frame[c].dtype) for c in frame.columns]
    headers = [METRICS[str(c)].header if str(c) in METRICS else str(c) for c in frame.columns]
    rows = []
    for record in frame.itertuples(index=False, name=None):
        cells: list[object] = []
        for column, value in zip(frame.columns, record, strict=True):
            m = METRICS.get(str(column))
            number = _number(value)
            cells.append(m.format(number, unit=False) if m is not None and number is not None
                         else _text(value))
        rows.append(cells)
    return table(headers, rows, align=["right" if n else "left" for n in numeric],
                 css_class=css_class,
                 wrap=[str(c) in ("url", "report_url") for c in frame.columns])


# -- summaries ---------------------------------------------------------------------------


def rank_worst_first(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary's rows, worst first: by the headline metrics in order (the performance
    score first), each its bad way (lowest score, highest times); a row without a value
    (every run failed) comes first. How a scan ranks its templates (its summary, the
    report's templates section)."""
    keys = [name for name in HEADLINE_METRICS if name in summary.columns]
    if not keys:
        return summary
    ascending = [metric(name).direction is Direction.HIGHER for name in keys]
    return summary.sort_values(keys, ascending=ascending, na_position="first",
                               kind="stable").reset_index(drop=True)


class ExtraColumn(NamedTuple):
    """A column :func:`summary_table` adds after its own: a header, its tooltip, one cell
    per summary row (text or :class:`Markup`), and whether it wraps (a URL)."""

    header: str
    title: str
    cells: Sequence[object]
    wrap: bool = False


def run_links(runs: pd.DataFrame) -> Markup:
    """A link to each run's Lighthouse report (numbered in the frame's order; the run's id
    and page in the tooltip), or a dash when no run has one."""
    links = [Markup('<span title="run {} of {}">{}</span>').format(run_id, page, link(url, f"{n}"))
             for n, (run_id, page, url) in enumerate(
                 zip(runs["id"], runs["url"], runs["report_url"], strict=True), start=1)
             if safe_url(url) is not None]
    return Markup(" ").join(links) if links else Markup(MISSING)


def summary_table(summary: pd.DataFrame, *, css_class: str = "pagelab-summary",
                  row_keys: Sequence[str] | None = None,
                  extra: Sequence[ExtraColumn] = ()) -> Markup:
    """A summary (:func:`pagelab.stats.summarize`'s columns) as a readable table: the cell
    columns, runs, failed runs (red when any; engine failures in brackets), each metric's
    value under ``LABEL (unit)`` coloured by rating with its CV beneath, the representative
    run's report, then the ``extra`` columns. Columns it does not know are shown as text
    after the cell; empty ones are left out."""
    metrics = _metrics_in(summary)
    known = {*_SUMMARY_COUNTS, *_SUMMARY_LINKS, *(m.name for m in METRICS.values()),
             *(f"{m.name}_cv" for m in METRICS.values())}
    # Connection is kept even when empty: empty there means "the device's default", which
    # the table says.
    others = [c for c in summary.columns
              if c not in known and (_filled(summary, c) or c == "connection")]
    headers: list[str] = [str(c) for c in others]
    titles: list[str] = [""] * len(others)
    align = ["left"] * len(others)
    if "runs" in summary.columns:
        headers += ["runs"]
        titles += ["every run of the cell"]
        align += ["right"]
    if "failed" in summary.columns:
        headers += ["failed"]
        titles += ["runs whose page failed to load or whose engine failed (in brackets)"]
        align += ["right"]
    noisy = "noisy" in summary.columns and bool((summary["noisy"].fillna(0) > 0).any())
    if noisy:
        headers += ["noisy"]
        titles += [NOISY_TITLE]
        align += ["right"]
    headers += [m.header for m in metrics]
    titles += [f"{m.title}: median of the successful runs; CV beneath" for m in metrics]
    align += ["right"] * len(metrics)
    has_report = "representative_id" in summary.columns and _filled(summary,
                                                                     "representative_id")
    if has_report:
        headers.append("report")
        titles.append("the representative run (closest to the median FCP and TTI)")
        align.append("left")
    for column in extra:
        headers.append(column.header)
        titles.append(column.title)
        align.append("left")
    rows: list[list[object]] = []
    styles: list[str] = []
    for position, (_, row) in enumerate(summary.iterrows()):
        cells: list[object] = [_text(row[c], str(c)) for c in others]
        runs = _number(row.get("runs"))
        failed = _number(row.get("failed")) or 0
        if "runs" in summary.columns:
            cells.append(f"{int(runs or 0):,}")
        if "failed" in summary.columns:
            engine = _number(row.get("engine_failures")) or 0
            text = f"{int(failed)}" + (f" ({int(engine)} engine)" if engine else "")
            cells.append(pill(text, RATING_COLOURS["poor"]) if failed else text)
        if noisy:
            count = int(_number(row.get("noisy")) or 0)
            cells.append(pill(f"{count}", RATING_COLOURS["needs-improvement"]) if count
                         else f"{count}")
        for m in metrics:
            value = _number(row[m.name])
            cv = _number(row.get(f"{m.name}_cv"))
            cell = metric_value(m, value, unit=False)
            cells.append(cell + _CV.format(f"{cv:.0f} %") if cv is not None else cell)
        if has_report:
            rep = row.get("representative_id")
            url = row.get("representative_report_url")
            cells.append(MISSING if _missing(rep) else Markup('<span title="run {}">{}</span>')
                         .format(rep, link(url, "report") or MISSING))
        cells.extend(column.cells[position] for column in extra)
        rows.append(cells)
        styles.append(_FAILED_ROW if runs and failed >= runs else "")
    return table(headers, rows, align=align, titles=titles, css_class=css_class,
                 row_keys=row_keys, row_styles=styles,
                 wrap=[c == "url" for c in others]
                 + [False] * (len(headers) - len(others) - len(extra))
                 + [column.wrap for column in extra])


# -- comparisons -------------------------------------------------------------------------


def _side(value: object) -> str:
    if isinstance(value, list | tuple):
        return " \u00b7 ".join(map(str, value))
    return str(value)


#: The comparison's columns as shown, first what a reader came for (the verdict, the two
#: medians, their difference), then the evidence folded into one column:
#: (header, tooltip, the frame's column it needs).
_COMPARISON_PLAN: tuple[tuple[str, str, str], ...] = (
    ("metric", "", "metric"),
    ("verdict", "significant when p < 0.05 and the interval excludes 0; beneath, what the "
     "verdict rests on", "verdict"),
    ("{a}", "median of a's successful runs", "a_median"),
    ("{b}", "median of b's successful runs", "b_median"),
    ("b \u2212 a", "difference of the medians; beneath, in percent of a's median", "diff"),
    ("95 % interval of b\u00a0\u2212\u00a0a", "seeded percentile bootstrap of the difference "
     "of medians; beneath, the two-sided Mann-Whitney U p, Cliff's \u03b4 (effect size of "
     "b against a, -1 to 1) and the successful runs per side", "n_a"),
)


def _comparison_columns(compared: pd.DataFrame) -> tuple[list[str], list[tuple[str, str, str]]]:
    """What a comparison table shows: the columns it does not know that hold a value (the
    cell a row compares within), and the entries of :data:`_COMPARISON_PLAN` whose column
    holds one."""
    from pagelab.stats import COMPARISON_COLUMNS

    others = [str(c) for c in compared.columns if c not in COMPARISON_COLUMNS
              and _filled(compared, c)]
    plan = [p for p in _COMPARISON_PLAN if p[2] in compared.columns and _filled(compared, p[2])]
    return others, plan


def comparison_table(compared: pd.DataFrame, *, a: object = None, b: object = None,
                     css_class: str = "pagelab-comparison") -> Markup:
    """A comparison (:func:`pagelab.stats.compare`'s columns) as a readable table: per
    metric the verdict first (coloured when significant: green better, red worse; its note
    beneath), the two medians, the difference with its percent beneath, then the bootstrap
    interval with p, Cliff's delta and the runs per side beneath: narrow enough for a
    notebook's output. Any other column (the cell a row compares within) comes first, as
    text. ``a`` / ``b`` name the sides in the headers. What every row shares is said once:
    a cell column with one value (above the table) and a note (too few runs for the
    interval, what was pooled; under it)."""
    others, plan = _comparison_columns(compared)
    same = [c for c in others if len(compared) > 1 and compared[c].nunique(dropna=False) == 1]
    others = [c for c in others if c not in same]
    notes = set(compared["note"].fillna("").astype(str)) if "note" in compared.columns \
        else set()
    shared = notes.pop() if len(compared) > 1 and len(notes) == 1 else ""
    names = {"{a}": f"{_side(a)} (a)" if a is not None else "a",
             "{b}": f"{_side(b)} (b)" if b is not None else "b"}
    # A side named by its URL breaks between the URL's parts, not across the table.
    headers: list[object] = [*others, *(breakable(names[h]) if h in names else h
                                        for h, _, _ in plan)]
    titles = [""] * len(others) + [p[1] for p in plan]
    align = ["left"] * len(others) + ["left" if c in ("metric", "verdict") else "right"
                                      for _, _, c in plan]
    rows: list[list[object]] = []
    for _, row in compared.iterrows():
        m = METRICS.get(str(row.get("metric")))
        cells: list[object] = [_text(row[c], c) for c in others]
        for _, _, column in plan:
            cells.append(_verdict(m, row, noted=not shared) if column == "verdict"
                         else _comparison_cell(m, row, column))
        rows.append(cells)
    shown = table(headers, rows, align=align, titles=titles, css_class=css_class,
                  wrap=[c == "url" for c in others] + [False] * len(plan))
    within = _HINT.format(Markup("Within {}").format(Markup(" \u00b7 ").join(
        Markup("{} <b>{}</b>").format(c, breakable(_text(compared[c].iloc[0], c)))
        for c in same))) if same else Markup("")
    note = _HINT.format(f"Every row: {shared}.") if shared else Markup("")
    return Markup("{}{}{}").format(within, shown, note)


def _comparison_cell(m: Metric | None, row: pd.Series, column: str) -> object:
    value = _number(row.get(column))
    if column == "metric":
        return Markup('<span title="{}">{}</span>').format(m.title, m.header) if m else _text(
            row.get("metric"))
    if column == "n_a":
        return _evidence(m, row)
    if value is None:
        return MISSING
    if column == "diff":
        shown = m.format_diff(value, unit=False) if m is not None else _text(value)
        relative = _number(row.get("rel_diff"))
        return Markup("{}{}").format(shown, _NOTE.format(
            Metric.format_rel_diff(relative))) if relative is not None else shown
    if m is None:
        return _text(value)
    return metric_value(m, value, unit=False)  # a medians, rated


def _evidence(m: Metric | None, row: pd.Series) -> Markup:
    """The interval of the difference, and beneath it p, Cliff's delta and the runs."""
    low, high = _number(row.get("ci_low")), _number(row.get("ci_high"))
    if low is None or high is None:
        interval = MISSING
    elif m is not None:
        interval = f"{m.format_diff(low, unit=False)} to {m.format_diff(high, unit=False)}"
    else:
        interval = f"{_text(low)} to {_text(high)}"
    p = _number(row.get("p_value"))
    effect = _number(row.get("effect_size"))
    beneath = [
        _p_text(p) if p is not None else None,
        f"\u03b4 {effect:+.2f}" if effect is not None else None,
        f"runs {_text(row.get('n_a'))} / {_text(row.get('n_b'))}",
    ]
    return Markup("{}{}").format(interval, _NOTE.format(
        " \u00b7 ".join(part for part in beneath if part)))


def _p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p {p:.3f}"


def _verdict(m: Metric | None, row: pd.Series, *, noted: bool = True) -> object:
    shown = _verdict_text(m, row)
    note = row.get("note")
    # The note says what the verdict rests on: pooled cells, too few runs for the interval.
    if noted and isinstance(note, str) and note:
        return Markup("{}{}").format(shown, _VERDICT_NOTE.format(note))
    return shown


def _verdict_text(m: Metric | None, row: pd.Series) -> object:
    verdict = _text(row.get("verdict"))
    a, b = _number(row.get("a_median")), _number(row.get("b_median"))
    # Significant verdicts name b ("b is slower", "b scores higher"); the others do not.
    if m is None or a is None or b is None or not verdict.startswith("b "):
        return verdict
    better = m.is_better(b, a)
    return pill(verdict, RATING_COLOURS["good" if better else "poor"],
                "b is better" if better else "b is worse")


# -- changes over builds ------------------------------------------------------------------


def changes_table(changes: pd.DataFrame, *, css_class: str = "pagelab-changes") -> Markup:
    """The change points of a history (:func:`pagelab.stats.change_points`' frame) as a
    readable table, one row per change: its cell, the metric, the commit that starts the
    new level and the one before it (short; the full name on hover), the medians before
    and after, the change in percent, p and the direction (red a regression, green an
    improvement)."""
    headers = ["cell", "metric", "commit", "previous", "before \u2192 after", "change", "p",
               "direction"]
    titles = ["", "", "the first build of the new level", "the build before it",
              "the medians of the runs of the levels either side", "after relative to before",
              "the change's p-value, corrected for the builds tried", ""]
    rows: list[list[object]] = []
    keys = []
    for record in changes.to_dict("records"):
        m = METRICS[str(record["metric"])]
        direction = str(record["direction"])
        rating = DIRECTION_RATING[direction]
        p = _number(record["p_value"])
        rows.append([
            cell_label(record),
            Markup('<span title="{}">{}</span>').format(m.title, m.header),
            _commit(record["commit"]),
            _commit(record["previous_commit"]),
            f"{m.format(_number(record['before']))} \u2192 {m.format(_number(record['after']))}",
            Metric.format_rel_diff(_number(record["rel_change"])),
            _p_text(p) if p is not None else MISSING,
            pill(direction, RATING_COLOURS[rating]),
        ])
        keys.append(f"{m.name}:{record['commit']}")
    return table(headers, rows, align=["left", "left", "left", "left", "right", "right",
                                       "right", "left"],
                 titles=titles, css_class=css_class, row_keys=keys,
                 wrap=[True, *[False] * (len(headers) - 1)])


def _commit(commit: object) -> Markup:
    return Markup('<code title="{}">{}</code>').format(str(commit), short_commit(commit))


# -- runs --------------------------------------------------------------------------------


def failed_runs_table(frame: pd.DataFrame) -> Markup | None:
    """The failed runs of a wide frame (id, cell, run, error, engine failure, time), or
    None when none failed."""
    if "status" not in frame.columns:
        return None
    failed = frame[(frame["status"].astype("string") == "failed").fillna(False)]
    if failed.empty:
        return None
    columns = [c for c in ("id", "url", "device", "location", "connection", "run",
                           "error_code", "engine_failure", "created_at")
               if c in failed.columns and (_filled(failed, c) or c == "connection")]
    rows = []
    for _, row in failed.iterrows():
        cells: list[object] = []
        for c in columns:
            if c == "error_code":
                cells.append(status_pill("failed", None if _missing(row[c]) else str(row[c])))
            elif c == "engine_failure":
                cells.append("engine" if row[c] is True else "page")
            else:
                cells.append(_text(row[c], c))
        rows.append(cells)
    headers = ["error" if c == "error_code" else "cause" if c == "engine_failure"
               else "time" if c == "created_at" else c for c in columns]
    return table(headers, rows, align=["left"] * len(columns), css_class="pagelab-failed",
                 wrap=[c == "url" for c in columns])


# -- the frames that display readably ------------------------------------------------------

READABLE_BOX = Markup(
    '<div class="{}" style="font-family:system-ui,-apple-system,\'Segoe UI\',sans-serif;'
    'font-size:13px;line-height:1.4;color:#202124;max-width:100%;overflow-x:auto">{}{}</div>'
)


class ReadableFrame(pd.DataFrame):
    """A DataFrame that displays readably in a notebook; anything derived from it is a
    plain DataFrame again (a slice or a copy has no reason to keep the display). The base
    of :class:`Summary`, :class:`Comparison` and :mod:`pagelab.field`'s frames."""

    @property
    def _constructor(self) -> Any:
        return pd.DataFrame

    @property
    def frame(self) -> pd.DataFrame:
        """The same data as a plain :class:`pandas.DataFrame` (pandas' own display)."""
        return pd.DataFrame(self)

    def _hint(self, shown: Markup) -> Markup:
        """The footer under ``shown`` (this frame's table): how many rows, how many of the
        frame's columns the table has (others are folded into a cell's second line, the
        headers or a note, or left out when empty), and where the plain frame is."""
        # Counted in the table itself, so the footer cannot disagree with what shows.
        columns = str(shown).count("<th ")
        return _HINT.format(
            f"{len(self)} rows; {len(self.columns)} columns shown as {columns} "
            "(units in the headers, details beneath the values, empty columns left out); "
            ".frame shows them all as a plain DataFrame")


class Summary(ReadableFrame):
    """:meth:`pagelab.Results.summary`'s table: a DataFrame, displayed readably."""

    @for_notebook
    def _repr_html_(self) -> str:
        shown = summary_table(self)
        return str(READABLE_BOX.format("pagelab-summary-box", shown, self._hint(shown)))


class Comparison(ReadableFrame):
    """:meth:`pagelab.Results.compare`'s table: a DataFrame, displayed readably; the compared
    sides are in ``attrs["a"]`` and ``attrs["b"]``."""

    def _repr_html_(self) -> str:
        shown = comparison_table(self, a=self.attrs.get("a"), b=self.attrs.get("b"))
        return str(READABLE_BOX.format("pagelab-comparison-box", shown, self._hint(shown)))


@for_notebook
def runs_html(frame: pd.DataFrame, title: str, summary: pd.DataFrame) -> str:
    """What :class:`pagelab.Results` shows in a notebook: a title line, the summary per cell
    and the failed runs."""
    parts = [Markup("<div><strong>{}</strong></div>").format(title)]
    if len(summary):
        parts.append(summary_table(summary))
    failed = failed_runs_table(frame)
    if failed is not None:
        parts.append(Markup("<div><strong>Failed runs</strong></div>"))
        parts.append(failed)
    hint = _HINT.format(
        ".frame: one row per run; .summary(): this table as a DataFrame; .long: tidy rows")
    return str(READABLE_BOX.format("pagelab-results", Markup("").join(parts), hint))


# Public as pagelab.Summary and pagelab.Comparison (loaded on first use by the root).
publish("pagelab", globals(), ["Comparison", "Summary"])
