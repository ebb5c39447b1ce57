"""Reports to DataFrames: columns, dtypes, UTC times, NaN for nulls, batches as rows."""

from __future__ import annotations

import gc
import json
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pandas as pd
import pytest

from pagelab.export import export
from pagelab.frames import (
    COLUMNS,
    UNITS,
    from_records,
    read_runs,
    to_frame,
    to_long,
    to_records,
    to_reports,
)
from pagelab.models import (
    METRIC_NAMES,
    BatchReport,
    EngineEnvironment,
    LighthouseConfig,
    Metrics,
    TestReport,
)
from recorded_runs import LHRS, lhr_report, load_runs, matrix_frame

SUCCESS = TestReport(
    id="lt_1", url="https://a.test/", device="desktop", location="de", status="success",
    lighthouse_version="13.5.0", created_at=1_700_000_000_000, vantage="local",
    metrics=Metrics(performance_score=98, largest_contentful_paint=812.5,
                    cumulative_layout_shift=0.02, first_meaningful_paint=None),
    environment=EngineEnvironment(chrome_version="156.0.8078.79", benchmark_index=1500),
)
FAILED = TestReport(
    id="lt_2", url="https://b.test/", device="iphone7", location="us", status="failed",
    created_at=1_700_000_001_000, error={"code": "NO_FCP", "message": "no paint"},
)


def test_wide_frame_columns_and_dtypes() -> None:
    frame = to_frame([SUCCESS, FAILED])
    assert list(frame.columns) == list(COLUMNS)
    assert frame.dtypes.to_dict() == {
        name: pd.api.types.pandas_dtype(dtype) for name, dtype in COLUMNS.items()
    }
    assert len(frame) == 2
    assert str(frame["created_at"].dt.tz) == "UTC"
    assert frame.loc[0, "created_at"] == pd.Timestamp("2023-11-14 22:13:20", tz="UTC")
    assert frame.loc[0, "largest_contentful_paint"] == 812.5
    assert frame.loc[0, "benchmark_index"] == 1500
    assert pd.isna(frame.loc[0, "first_meaningful_paint"])
    assert frame.loc[1, "device"] == "phone7"
    assert frame.loc[1, "error_code"] == "NO_FCP"
    assert frame["performance_score"].isna().tolist() == [False, True]
    assert set(frame["device"].cat.categories) >= {"mobile", "desktop", "phone7"}


def test_report_to_frame_and_empty_frame() -> None:
    assert len(to_frame(SUCCESS)) == 1
    empty = to_frame([])
    assert list(empty.columns) == list(COLUMNS)
    assert len(empty) == 0


def test_batch_contributes_one_row_per_item() -> None:
    batch = BatchReport.model_validate({
        "id": "lbt_1", "urls": ["https://a.test/"], "devices": ["mobile", "desktop"],
        "locations": ["us"], "batch_type": "multiple-devices", "status": "completed",
        "lighthouse_version": "13.5.0", "created_at": 1_700_000_000_000,
        "reports": [
            {"id": "lt_a", "url": "https://a.test/", "device": "mobile", "location": "us",
             "status": "success", "metrics": {"performance_score": 80}},
            {"id": "lt_b", "url": "https://a.test/", "device": "desktop", "location": "us",
             "status": "success", "metrics": {"performance_score": 99}},
        ],
    })
    frame = to_frame(batch)
    assert frame["id"].tolist() == ["lt_a", "lt_b"]
    assert frame["lighthouse_version"].tolist() == ["13.5.0", "13.5.0"]
    assert frame["created_at"].notna().all()
    assert frame["performance_score"].tolist() == [80.0, 99.0]
    assert frame["batch_id"].tolist() == ["lbt_1", "lbt_1"]


def test_units_and_long_frame() -> None:
    assert set(UNITS) == set(METRIC_NAMES)
    assert UNITS["cumulative_layout_shift"] == "unitless"
    assert UNITS["performance_score"] == "score"
    assert UNITS["largest_contentful_paint"] == "ms"
    long = to_long(to_frame([SUCCESS]))
    assert len(long) == len(METRIC_NAMES)  # ten: INP (null outside flows) joined the nine
    row = long[long["metric"] == "largest_contentful_paint"].iloc[0]
    assert (row["value"], row["unit"]) == (812.5, "ms")


def test_run_context_columns() -> None:
    crashed = TestReport(
        id="lt_3", url="https://c.test/", device="mobile", location="us", status="failed",
        batch_id="lbt_9", config=LighthouseConfig(connection="4g", throttling_method="applied"),
        error={"code": "ENGINE_CRASHED", "message": "Chromium died"},
    )
    frame = to_frame([SUCCESS, FAILED, crashed])
    assert frame["engine_failure"].tolist() == [False, False, True]
    assert frame["batch_id"].tolist()[2] == "lbt_9"
    assert pd.isna(frame.loc[0, "batch_id"])
    assert frame["connection"].tolist()[2] == "4g"
    assert pd.isna(frame.loc[0, "connection"])
    assert frame["throttling_method"].tolist() == ["simulated", "simulated", "applied"]
    assert frame["run"].isna().all()
    assert frame["report_url"].isna().all()


def test_frame_leaves_the_collector_as_it_found_it() -> None:
    # to_frame pauses the collector while it builds (benchmarks/frames.py): it must restore
    # it, on errors too, and never switch it on for a caller that switched it off.
    assert gc.isenabled()
    to_frame([SUCCESS, FAILED])
    assert gc.isenabled()
    with pytest.raises(TypeError):
        to_frame([SUCCESS, "not a report"])  # type: ignore[list-item]
    assert gc.isenabled()
    gc.disable()
    try:
        to_frame([SUCCESS])
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("storage", ["pyarrow", "python"])
def test_string_columns_as_pandas_builds_them(storage: str) -> None:
    # Built by pyarrow directly when that is the storage; the same values and dtype as
    # pd.array(..., dtype="string") either way, a value that is not a string included.
    odd = TestReport.model_construct(**{**dict(FAILED), "id": "lt_odd", "vantage": 5})
    reports = [SUCCESS, FAILED, odd]
    with pd.option_context("mode.string_storage", storage):
        frame = to_frame(reports)
        for column in ("id", "batch_id", "url", "lighthouse_version", "vantage",
                       "chrome_version", "report_url", "error_code"):
            assert frame[column].dtype == pd.StringDtype()
        expected = pd.array(cast(Any, ["local", None, 5]), dtype="string")
        pd.testing.assert_extension_array_equal(frame["vantage"].array, expected)
        assert frame["vantage"].tolist()[2] == "5"
        assert frame["chrome_version"].tolist()[0] == "156.0.8078.79"


def test_created_at_rounds_as_datetime_timestamp() -> None:
    # Read through pandas' exact microseconds, then datetime.timestamp()'s float arithmetic:
    # the same milliseconds as round(t.timestamp() * 1000), half-millisecond ties included.
    start = datetime(2025, 3, 1, tzinfo=UTC)
    times = [start + timedelta(seconds=k * 7919, microseconds=(k * 250) % 1_000_000)
             for k in range(4000)]
    reports = [SUCCESS.model_copy(update={"created_at": t}) for t in times]
    frame = to_frame(reports)
    expected = pd.to_datetime(
        [round(t.timestamp() * 1000) for t in times], unit="ms", utc=True
    ).astype("datetime64[ns, UTC]")
    assert frame["created_at"].tolist() == list(expected)
    assert any(t.microsecond % 1000 == 500 for t in times)


# -- the codec of runs: frame <-> records <-> reports ---------------------------------------


def test_reports_frame_reports_frame_is_exact_on_recorded_runs() -> None:
    # Real reports (the engine's mapping of recorded LHRs, one failed) and the recorded frame.
    for reports in ([lhr_report(name) for name in LHRS], to_reports(load_runs())):
        frame = to_frame(reports)
        again = to_frame(to_reports(frame))
        pd.testing.assert_frame_equal(again, frame, check_exact=True)
    # A frame's rows as reports hold every column but ``run`` (a report has no repetition).
    recorded = load_runs()
    pd.testing.assert_frame_equal(
        to_frame(to_reports(recorded)).drop(columns="run"), recorded.drop(columns="run"),
        check_exact=True,
    )


def test_records_and_saved_runs_round_trip_exactly(tmp_path: Any) -> None:
    frame = matrix_frame()
    records = to_records(frame)
    assert json.loads(json.dumps(records)) == records  # JSON-ready as they are
    pd.testing.assert_frame_equal(from_records(records), frame, check_exact=True)
    saved = tmp_path / "results.json"
    saved.write_text(json.dumps({"runs": records}))
    pd.testing.assert_frame_equal(read_runs(saved), frame, check_exact=True)
    assert from_records([]).columns.tolist() == list(COLUMNS)


def test_exported_files_read_back_through_the_codec(tmp_path: Any) -> None:
    frame = matrix_frame()
    # CSV keeps every digit; the JSON export writes times to the millisecond (as the store
    # keeps them) and numbers to 10 decimals (documented in docs/analysis.md).
    pd.testing.assert_frame_equal(read_runs(export(frame, tmp_path / "runs.csv")), frame,
                                  check_exact=True)
    pd.testing.assert_frame_equal(read_runs(export(frame, tmp_path / "runs.json")), frame,
                                  check_exact=False, rtol=1e-9)
