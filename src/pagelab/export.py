"""Write runs (``Results``) or any DataFrame to a file chosen by its suffix.

========  ===================================================================================
suffix    what is written
========  ===================================================================================
.csv      the table; UTC times as ISO 8601 text (``2026-11-23T11:08:16.648000Z``)
.parquet  the table with its dtypes (categories, nullable integers, UTC times), via pyarrow
.xlsx     sheet ``runs`` (or ``data`` for a bare frame), plus ``summary`` for ``Results``;
          times as UTC without a zone (Excel cannot hold one), via openpyxl
.json     an array of records; times as ISO 8601 UTC text (``...T11:08:16.648Z``), missing
          values as ``null``
.html     one self-contained page: for ``Results`` the summary per cell (units in the
          headers, rating colours), the comparison of two groups, plots as embedded PNG, the
          failed runs and a link to each cell's representative Lighthouse report; for a bare
          frame its table. No script, style sheet, font or image is loaded from anywhere: the
          report links are the file's only ``http(s)://`` references.
========  ===================================================================================

For ``Results`` the table formats hold the wide frame (one row per run); write
``results.summary()`` with :func:`export` for the aggregates. Parquet and Excel need the
``notebook`` extra (``pip install 'pagelab[notebook]'``), as do the HTML report's plots.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pagelab._exceptions import InvalidInputError
from pagelab._extras import require
from pagelab.frames import CELL
from pagelab.models import METRIC_NAMES, METRICS, RATING_COLOURS, Metric

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["SUFFIXES", "export", "html_report"]

#: The suffixes :func:`export` writes.
SUFFIXES: tuple[str, ...] = (".csv", ".parquet", ".xlsx", ".json", ".html")
#: Metrics plotted in the HTML report (those with values), in this order.
REPORT_PLOTS: tuple[str, ...] = (
    "largest_contentful_paint", "first_contentful_paint", "total_blocking_time",
    "cumulative_layout_shift", "speed_index", "performance_score",
)
_LINK_SCHEMES = ("http://", "https://", "file://")
_ISO_UTC = "%Y-%m-%dT%H:%M:%S.%fZ"
#: Plot width (inches) and resolution in the HTML report: two plots side by side on a
#: 1280-pixel screen.
_WIDTH, _DPI = 6.6, 85


# -- input ---------------------------------------------------------------------------------


def _frame_of(data: object) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    frame = getattr(data, "frame", None)
    if isinstance(frame, pd.DataFrame):
        return frame
    raise InvalidInputError(
        f"data: expected Results or a DataFrame, got {type(data).__name__}"
    )


def _table(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame to write: a meaningful index (not 0..n-1) becomes columns."""
    if isinstance(frame.index, pd.RangeIndex) and frame.index.name is None:
        return frame
    return frame.reset_index()


def _tz_columns(frame: pd.DataFrame) -> list[Any]:
    return [c for c in frame.columns if isinstance(frame[c].dtype, pd.DatetimeTZDtype)]


def _utc_text(frame: pd.DataFrame, fmt: Callable[[pd.Series], pd.Series]) -> pd.DataFrame:
    """Zone-aware time columns as ISO 8601 UTC text (missing stays missing)."""
    columns = _tz_columns(frame)
    if not columns:
        return frame
    out = frame.copy()
    for column in columns:
        utc = out[column].dt.tz_convert("UTC")
        out[column] = fmt(utc).where(utc.notna()).astype("string")
    return out


def _utc_naive(frame: pd.DataFrame) -> pd.DataFrame:
    """Zone-aware time columns as UTC without a zone (what Excel can hold)."""
    columns = _tz_columns(frame)
    if not columns:
        return frame
    out = frame.copy()
    for column in columns:
        out[column] = out[column].dt.tz_convert("UTC").dt.tz_localize(None)
    return out


# -- the formats ---------------------------------------------------------------------------


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    _utc_text(_table(frame), lambda s: s.dt.strftime(_ISO_UTC)).to_csv(path, index=False)


def _write_json(frame: pd.DataFrame, path: Path) -> None:
    text = _utc_text(
        _table(frame),
        lambda s: s.dt.strftime("%Y-%m-%dT%H:%M:%S.") + (s.dt.microsecond // 1000).astype(
            "string").str.zfill(3) + "Z",
    ).to_json(orient="records", date_format="iso", date_unit="ms", force_ascii=False)
    # Re-encoded: pandas writes "http:\/\/..." (escaped slashes), valid but unreadable.
    path.write_text(json.dumps(json.loads(text), ensure_ascii=False), encoding="utf-8")


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    require("pyarrow", "notebook")
    _table(frame).to_parquet(path, engine="pyarrow", index=False)


def _write_xlsx(data: object, frame: pd.DataFrame, path: Path) -> None:
    require("openpyxl", "notebook")
    sheets = {"runs" if data is not frame else "data": frame}
    if data is not frame:
        from pagelab.stats import summarize

        sheets["summary"] = summarize(frame)
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        for name, table in sheets.items():
            _utc_naive(_table(table)).to_excel(writer, sheet_name=name, index=False)
            writer.sheets[name].freeze_panes = "A2"


def export(
    data: object,
    path: str | os.PathLike[str],
    *,
    by: str | Sequence[str] | None = None,
    a: object = None,
    b: object = None,
    title: str | None = None,
) -> Path:
    """Write ``data`` (``Results`` or a DataFrame) to ``path`` in the format of its suffix
    (see :data:`SUFFIXES` and the module's table); returns the path.

    ``by``, ``a``, ``b`` and ``title`` shape the HTML report (:func:`html_report`). An
    unknown suffix or a missing directory is :class:`~pagelab.InvalidInputError`.
    """
    frame = _frame_of(data)
    if not isinstance(path, str | os.PathLike):
        raise InvalidInputError(f"path: expected a file path, got {type(path).__name__}")
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in SUFFIXES:
        raise InvalidInputError(
            f"path: unknown suffix {suffix or '(none)'!r} of {str(target)!r}; "
            f"supported: {', '.join(SUFFIXES)}"
        )
    if not target.parent.is_dir():
        raise InvalidInputError(f"path: no directory {str(target.parent)!r}")
    if suffix == ".csv":
        _write_csv(frame, target)
    elif suffix == ".json":
        _write_json(frame, target)
    elif suffix == ".parquet":
        _write_parquet(frame, target)
    elif suffix == ".xlsx":
        _write_xlsx(data, frame, target)
    else:
        page = (html_table_page(frame, title=title) if data is frame
                else html_report(data, by=by, a=a, b=b, title=title))
        target.write_text(page, encoding="utf-8")
    return target


# -- HTML ----------------------------------------------------------------------------------

_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:14px;
color:#202124;margin:24px auto;max-width:1240px;padding:0 16px;line-height:1.45}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid #dadce0;padding-bottom:4px}
.meta{color:#5f6368;margin:0 0 12px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{padding:4px 9px;border-bottom:1px solid #e8eaed;text-align:right;vertical-align:top;
white-space:nowrap}
th{font-weight:600;border-bottom:1px solid #bdc1c6;background:#f8f9fa;white-space:normal}
th.text,td.text{text-align:left}
td.url{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:12em;max-width:28em}
.cv{display:block;color:#5f6368;font-size:11px}
.note{color:#5f6368;font-size:12px}
.plots{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:0;border:1px solid #e8eaed;border-radius:4px;padding:6px;max-width:100%}
figure img{max-width:100%;height:auto;display:block}
.scroll{overflow-x:auto}
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def _cell_text(value: object) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return "\u2013"
    if isinstance(value, pd.Timestamp):
        return _timestamp(value)
    if isinstance(value, float):
        return f"{value:,.6g}"
    return str(value)


def _timestamp(value: pd.Timestamp) -> str:
    if value.tzinfo is None:
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return value.tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S UTC")


def _header(column: object) -> str:
    """A column's header: a metric's with its unit (``LCP (ms)``), else the name."""
    name = str(column)
    m = METRICS.get(name)
    return m.header if m is not None else name


def html_table(frame: pd.DataFrame) -> str:
    """Any frame as an escaped HTML table (metric columns headed with their units, times in
    UTC)."""
    table = _table(frame)
    numeric = {c for c in table.columns if pd.api.types.is_numeric_dtype(table[c].dtype)
               and not pd.api.types.is_bool_dtype(table[c].dtype)}
    head = "".join(
        f'<th class="{"num" if c in numeric else "text"}">{_e(_header(c))}</th>'
        for c in table.columns
    )
    rows = []
    for record in table.itertuples(index=False, name=None):
        cells = []
        for column, value in zip(table.columns, record, strict=True):
            m = METRICS.get(str(column))
            text = m.format(value, unit=False) if m is not None and _is_number(value) else (
                _cell_text(value))
            css = "num" if column in numeric else ("url" if column in ("url", "report_url")
                                                   else "text")
            cells.append(f'<td class="{css}">{_e(text)}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool)


def html_table_page(frame: pd.DataFrame, *, title: str | None = None) -> str:
    """A self-contained page holding ``frame`` as a table."""
    heading = title or "pagelab table"
    body = (f"<h1>{_e(heading)}</h1><p class=\"meta\">{len(frame):,} rows, "
            f"{len(frame.columns)} columns; times in UTC</p>{html_table(frame)}")
    return _page(heading, body)


def _link(url: object, text: str, test_id: str) -> str:
    """A link to a report when its address is http(s) or file, else the run's id alone."""
    if isinstance(url, str) and url.lower().startswith(_LINK_SCHEMES):
        return f'<a class="report" href="{_e(url)}">{_e(text)}</a>'
    return _e(test_id)


def _rating_style(m: Metric, value: float) -> str:
    rating = m.rating(value)
    if rating is None:
        return ""
    background, colour = RATING_COLOURS[rating]
    return f' style="background:{background};color:{colour}" title="{_e(rating)}"'


def _metric_names(frame: pd.DataFrame, metrics: Iterable[str] | None) -> list[str]:
    """The metrics to show: those asked for, else every one with a value."""
    if metrics is not None:
        names = []
        for name in ([metrics] if isinstance(metrics, str) else list(metrics)):
            try:
                names.append(METRICS[name].name if name in METRICS else _lookup(name).name)
            except KeyError:
                raise InvalidInputError(
                    f"metrics: unknown {name!r}; valid: {', '.join(METRICS)}") from None
        return [n for n in names if n in frame.columns]
    return [n for n in METRIC_NAMES if n in frame.columns and frame[n].notna().any()]


def _lookup(name: str) -> Metric:
    from pagelab.models import metric

    return metric(name)


def _summary_html(frame: pd.DataFrame, names: list[str]) -> str:
    from pagelab.stats import summarize

    summary = summarize(frame, metrics=names)
    keys = [c for c in CELL if c in summary.columns]
    head = "".join(f'<th class="text">{_e(k)}</th>' for k in keys)
    head += '<th>runs</th><th>failed</th>'
    head += "".join(f"<th>{_e(METRICS[n].header)}</th>" for n in names)
    head += '<th class="text">representative run</th>'
    rows = []
    for _, row in summary.iterrows():
        cells = [f'<td class="{"url" if k == "url" else "text"}">{_e(_cell_text(row[k]))}</td>'
                 for k in keys]
        cells.append(f"<td>{int(row['runs'])}</td>")
        failed = int(row["failed"])
        engine = int(row.get("engine_failures", 0))
        failed_text = f"{failed}" + (f" ({engine} engine)" if engine else "")
        cells.append(f"<td>{_e(failed_text)}</td>")
        for name in names:
            m = METRICS[name]
            value = float(row[name])
            cv = float(row.get(f"{name}_cv", np.nan))
            cv_text = f'<span class="cv">CV {cv:.0f} %</span>' if np.isfinite(cv) else ""
            style = _rating_style(m, value) if np.isfinite(value) else ""
            cells.append(f"<td{style}>{_e(m.format(value, unit=False))}{cv_text}</td>")
        rep = row["representative_id"]
        cells.append(f'<td class="text" title="{_e(rep)}">' + (
            _link(row["representative_report_url"], "report", str(rep))
            if not pd.isna(rep) else "\u2013"
        ) + "</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        "<h2>Summary per cell</h2><p class=\"note\">Median of the successful runs per cell "
        "(ms; CLS unitless; score 0\u2013100), coloured by the good / poor thresholds; CV: "
        "coefficient of variation. The representative run is the one closest to the median "
        "FCP and TTI (Lighthouse's <code>computeMedianRun</code>); its link opens its Lighthouse "
        "report (hover for the run's id).</p>"
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


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


def _comparison_html(compared: pd.DataFrame, by: object, a: object, b: object) -> str:
    within = [c for c in compared.attrs.get("within", []) if c in compared.columns]
    head = "".join(f'<th class="text">{_e(c)}</th>' for c in within)
    head += ("<th class=\"text\">metric</th><th>a median</th><th>b median</th><th>b \u2212 a</th>"
            "<th>b vs a</th><th>95 % interval of b \u2212 a</th><th>p (Mann-Whitney)</th>"
            "<th>Cliff's \u03b4</th><th>runs a / b</th><th class=\"text\">verdict</th>")
    rows = []
    for _, row in compared.iterrows():
        m = METRICS[str(row["metric"])]
        low, high = float(row["ci_low"]), float(row["ci_high"])
        interval = (f"{m.format_diff(low, unit=False)} to {m.format_diff(high, unit=False)}"
                    if np.isfinite(low) and np.isfinite(high) else "\u2013")
        rel = float(row["rel_diff"])
        p = float(row["p_value"])
        effect = float(row["effect_size"])
        note = row.get("note")
        verdict = f"{row['verdict']} ({note})" if isinstance(note, str) and note else (
            str(row["verdict"]))
        cells = [f'<td class="text">{_e(_cell_text(row[c]))}</td>' for c in within]
        cells += [
            f'<td class="text">{_e(m.header)}</td>',
            f"<td>{_e(m.format(float(row['a_median']), unit=False))}</td>",
            f"<td>{_e(m.format(float(row['b_median']), unit=False))}</td>",
            f"<td>{_e(m.format_diff(float(row['diff']), unit=False))}</td>",
            f"<td>{_e(m.format_rel_diff(rel))}</td>",
            f"<td>{_e(interval)}</td>",
            f"<td>{_e(f'{p:.3g}' if np.isfinite(p) else chr(0x2013))}</td>",
            f"<td>{_e(f'{effect:+.2f}' if np.isfinite(effect) else chr(0x2013))}</td>",
            f"<td>{int(row['n_a'])} / {int(row['n_b'])}</td>",
            f'<td class="text">{_e(verdict)}</td>',
        ]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    compared_in = " \u00d7 ".join(within) or "pool of every run"
    return (
        f"<h2>Comparison: {_e(_side(b))} (b) vs {_e(_side(a))} (a) by {_e(_side(by))}</h2>"
        "<p class=\"note\">Medians of the successful runs, compared within each "
        f"{_e(compared_in)}; the interval is a seeded percentile "
        "bootstrap of the difference of medians; a difference is significant when p &lt; 0.05 "
        "and the interval excludes 0.</p>"
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _side(value: object) -> str:
    if isinstance(value, list | tuple):
        return " \u00b7 ".join(map(str, value))
    return str(value)


def _figure(draw: Callable[[Axes], object], size: tuple[float, float]) -> Figure:
    """A fresh figure (not pyplot's: no global state, no backend switch) with ``draw`` done
    on its axes; constrained layout keeps legends beside the axes and titles inside."""
    figure_module = require("matplotlib.figure", "notebook")
    figure: Figure = figure_module.Figure(figsize=size, dpi=_DPI, layout="constrained")
    draw(figure.subplots())
    return figure


def _png(draw: Callable[[Axes], object], size: tuple[float, float]) -> str:
    """:func:`_figure` as an ``<img>`` holding a base64 PNG."""
    figure = _figure(draw, size)
    ax = figure.axes[0]
    buffer = io.BytesIO()
    # No Software tag: it would put matplotlib's web address into the file.
    figure.savefig(buffer, format="png", metadata={"Software": None})
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    alt = _e(ax.get_title(loc="left") or ax.get_title())
    return f'<figure><img alt="{alt}" src="data:image/png;base64,{data}"></figure>'


def _plots_html(frame: pd.DataFrame, names: list[str], compared: pd.DataFrame | None,
                sides: tuple[object, object] | None) -> str:
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
    for name in (n for n in REPORT_PLOTS if n in names):
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
    if not images:
        return ""
    return f"<h2>Plots</h2><div class=\"plots\">{''.join(images)}</div>"


def _by_group(frame: pd.DataFrame, name: str, ax: Axes) -> object:
    from pagelab import plots

    return plots.metric_by_group(frame, name, ax=ax)


def _failed_html(frame: pd.DataFrame) -> str:
    if "status" not in frame.columns:
        return ""
    failed = frame[(frame["status"].astype("string") == "failed").fillna(False)]
    if failed.empty:
        return ""
    columns = [c for c in ("id", *CELL, "run", "error_code", "engine_failure", "created_at")
               if c in failed.columns]
    return (f"<h2>Failed runs ({len(failed)})</h2><p class=\"note\">Failed runs have no "
            f"metrics and enter no statistic; they are counted per cell above.</p>"
            f"{html_table(failed[columns].reset_index(drop=True))}")


def html_report(
    results: object,
    *,
    by: str | Sequence[str] | None = None,
    a: object = None,
    b: object = None,
    title: str | None = None,
    metrics: Iterable[str] | None = None,
) -> str:
    """One self-contained HTML page about ``results`` (``Results`` or the wide frame).

    It holds: how many runs, cells and failures, over which time; the summary per cell
    (units in the headers, rating colours, CV, a link to each representative run's report);
    the comparison of ``b`` against ``a`` by ``by`` (:func:`pagelab.stats.compare`; default
    the first two values of the first cell column with two or more, none when every run is
    one cell); plots as embedded PNG (the comparison, each main metric per cell, a heat map
    of LCP when two cell columns vary); the failed runs. Every text is escaped; nothing is
    loaded from anywhere.
    """
    from pagelab.stats import compare

    frame = _frame_of(results)
    if not {"status", "url"} <= set(frame.columns):
        raise InvalidInputError("results: expected Results or the wide frame of runs")
    names = _metric_names(frame, metrics)
    heading = title or "pagelab report"
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
    interrupted = getattr(results, "interrupted", False) is True
    body = [f"<h1>{_e(heading)}</h1>", f'<p class="meta">{_e(meta)}</p>']
    if interrupted:
        body.append('<p class="meta"><b>Interrupted:</b> not every planned run was done.</p>')
    if names:
        body.append(_summary_html(frame, names))
    else:
        body.append("<p>No successful run: nothing to summarise.</p>")
    if compared is not None and chosen is not None:
        body.append(_comparison_html(compared, chosen[0], chosen[1], chosen[2]))
    body.append(_plots_html(frame, names, compared,
                            (chosen[1], chosen[2]) if chosen is not None else None))
    body.append(_failed_html(frame))
    return _page(heading, "".join(body))
