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

This module writes files; the HTML documents are rendered by ``pagelab._report`` from
templates (:func:`html_report` is re-exported here).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from pagelab._exceptions import EngineError, InvalidInputError, MissingDependencyError
from pagelab._extras import require
from pagelab._public import publish
from pagelab._report import frame_of, html_report, table_page

__all__ = ["SUFFIXES", "compare_video", "export", "html_report"]

#: The suffixes :func:`export` writes.
SUFFIXES: tuple[str, ...] = (".csv", ".parquet", ".xlsx", ".json", ".html")
_ISO_UTC = "%Y-%m-%dT%H:%M:%S.%fZ"


# -- input ---------------------------------------------------------------------------------


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
    explain: bool = True,
    field: bool | None = None,
) -> Path:
    """Write ``data`` (``Results`` or a DataFrame) to ``path`` in the format of its suffix
    (see :data:`SUFFIXES` and the module's table); returns the path.

    ``by``, ``a``, ``b``, ``title``, ``explain`` and ``field`` shape the HTML report
    (:func:`html_report`). An
    unknown suffix or a missing directory is :class:`~pagelab.InvalidInputError`.
    """
    frame = frame_of(data)
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
        page = (table_page(frame, title=title) if data is frame
                else html_report(data, by=by, a=a, b=b, title=title, explain=explain,
                                 field=field))
        target.write_text(page, encoding="utf-8")
    return target


# -- videos ----------------------------------------------------------------------------------


def _video_bytes(report: object, runner: Any, side: str) -> tuple[bytes, str]:
    """The WebM bytes of one side and its default label."""
    from pagelab.models import BatchItem, TestReport
    from pagelab.plots import Video

    if isinstance(report, Video):
        return report.data, side
    if isinstance(report, bytes | bytearray):
        return bytes(report), side
    if not isinstance(report, TestReport | BatchItem | str):
        raise InvalidInputError(
            f"report_{side}: expected a TestReport, a test id or video bytes, "
            f"got {type(report).__name__}"
        )
    if runner is None:
        raise InvalidInputError(
            f"report_{side}: pass runner= (the runner that ran it) to read its video"
        )
    data = runner.video(report)
    test_id = report if isinstance(report, str) else report.id
    if data is None:
        raise InvalidInputError(
            f"report_{side}: test {test_id} has no video (run it with config={{'video': True}})"
        )
    label = report.url if isinstance(report, TestReport) else str(test_id)
    return data, label


def compare_video(
    report_a: object,
    report_b: object,
    path: str | os.PathLike[str],
    *,
    runner: Any = None,
    labels: tuple[str, str] | None = None,
) -> Path:
    """Write one MP4 of two page-load videos side by side, a left of b, in sync from
    navigation start, each labelled (default: its URL), with a running timer (ms since
    navigation start); the shorter holds its last frame until the longer ends.

    ``report_a`` and ``report_b`` are reports or test ids of runs made with
    ``config={"video": True}`` (with ``runner=``, the runner that ran them), or their videos
    (``runner.video(report)`` bytes, :class:`pagelab.plots.Video`). A run without a video
    or a path not ending ``.mp4`` is :class:`~pagelab.InvalidInputError`; FFmpeg missing is
    :class:`~pagelab.MissingDependencyError`, FFmpeg failing :class:`~pagelab.EngineError`.
    Returns the path.
    """
    import shutil
    import tempfile

    from pagelab.engine import VideoError, find_ffmpeg, side_by_side

    if not isinstance(path, str | os.PathLike):
        raise InvalidInputError(f"path: expected a file path, got {type(path).__name__}")
    target = Path(path)
    if target.suffix.lower() != ".mp4":
        raise InvalidInputError(f"path: expected a .mp4 file, got {str(target)!r}")
    if not target.parent.is_dir():
        raise InvalidInputError(f"path: no directory {str(target.parent)!r}")
    (video_a, label_a), (video_b, label_b) = (
        _video_bytes(report_a, runner, "a"), _video_bytes(report_b, runner, "b"))
    if labels is not None and not (
        isinstance(labels, tuple | list) and len(labels) == 2
        and all(isinstance(label, str) for label in labels)
    ):
        raise InvalidInputError(f"labels: expected two strings, got {labels!r}")
    names = (labels[0], labels[1]) if labels is not None else (label_a, label_b)
    if find_ffmpeg() is None:
        raise MissingDependencyError("ffmpeg is missing (videos need it): run `pagelab setup`")
    with tempfile.TemporaryDirectory(prefix="pagelab-compare-") as tmp:
        first, second = Path(tmp) / "a.webm", Path(tmp) / "b.webm"
        first.write_bytes(video_a)
        second.write_bytes(video_b)
        try:
            side_by_side(first, second, Path(tmp) / "out.mp4", names)
        except VideoError as exc:
            raise EngineError(f"compare_video: {exc}") from exc
        shutil.move(Path(tmp) / "out.mp4", target)
    return target


publish(__name__, globals(), __all__)
