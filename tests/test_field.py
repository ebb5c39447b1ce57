"""Field data (issue 38): the Chrome UX Report API client, its frames, lab beside field, the
CLI and the plots, against a real loopback server replaying the recorded answers in
``tests/data/crux/`` (the API's documented shapes: a string CLS, a missing weekly period, a
404, a 400 bad key, a 429 with Retry-After, a passing 503)."""

from __future__ import annotations

import logging
import math
import os
import pickle
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

import pagelab
from fixtures_http import closed_port
from pagelab import field, plots
from pagelab._exceptions import InvalidInputError, NotFoundError, TransportError
from pagelab.catalog import DEVICES
from pagelab.cli import main
from pagelab.demo import CruxStandIn
from pagelab.field import (
    CruxClient,
    FieldError,
    FieldKeyError,
    FieldNotFoundError,
    FieldQuotaError,
    FieldTransportError,
)
from pagelab.field._cache import AnswerCache
from pagelab.field._versus import field_form_factor
from pagelab.models import FIELD_METRICS, METRICS, Device
from recorded_runs import matrix_2x2

matplotlib.use("Agg")

ANSWERS = Path(__file__).resolve().parent / "data" / "crux"
KEY = "demo-crux-key"  # the one key the stand-in accepts (answers.json)
FAST, HEAVY, ORIGIN = "http://demo.test/fast", "http://demo.test/heavy", "http://demo.test"
FIELD_NAMES = ["cumulative_layout_shift", "first_contentful_paint", "largest_contentful_paint",
               "server_response_time", "interaction_to_next_paint"]


@pytest.fixture
def crux(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[CruxStandIn]:
    """The stand-in on a free loopback port, the key and endpoint in the environment, a
    fresh data dir (the answers' cache)."""
    with CruxStandIn(ANSWERS) as server:
        monkeypatch.setenv("PAGELAB_CRUX_ENDPOINT", server.endpoint)
        monkeypatch.setenv("PAGELAB_CRUX_API_KEY", KEY)
        monkeypatch.setenv("PAGELAB_DATA_DIR", str(tmp_path / "data"))
        yield server


def stored_text(tmp_path: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in (tmp_path / "data").rglob("*")
                   if p.is_file())


# -- the registry and the catalog ---------------------------------------------------------

def test_the_registry_names_the_field_metrics_once() -> None:
    assert {m.name for m in FIELD_METRICS.values()} == set(FIELD_NAMES)
    assert FIELD_METRICS["experimental_time_to_first_byte"] is METRICS["server_response_time"]
    assert FIELD_METRICS["cumulative_layout_shift"].good == 0.1


def test_devices_map_to_the_apis_form_factors() -> None:
    forms = {device.value: profile.field_form_factor for device, profile in DEVICES.items()}
    assert forms["mobile"] == "PHONE"
    assert forms["desktop"] == "DESKTOP"
    assert {forms[d] for d in forms if d.startswith("phone")} == {"PHONE"}
    assert {forms[d] for d in forms if "aptop" in d.lower()} == {"DESKTOP"}
    assert {forms[d] for d in forms if d.startswith("tablet")} == {"TABLET"}
    assert field_form_factor(Device.PHONE_G5) == "PHONE"
    assert field_form_factor(None) is None
    with pytest.raises(InvalidInputError, match="device"):
        field_form_factor("toaster")


# -- record -------------------------------------------------------------------------------

def test_record_of_a_page_in_the_registrys_names(crux: CruxStandIn) -> None:
    frame = field.record(FAST, form_factor="phone")
    assert list(frame["metric"]) == FIELD_NAMES  # the registry's order, unknown ones left out
    assert set(frame["target"]) == {FAST}
    assert set(frame["level"]) == {"page"}
    assert set(frame["form_factor"]) == {"phone"}
    rows = frame.set_index("metric")
    assert rows.loc["cumulative_layout_shift", "p75"] == pytest.approx(0.02)  # sent as "0.02"
    assert frame["p75"].dtype == "float64"
    assert rows.loc["largest_contentful_paint", "p75"] == 1850
    assert rows.loc["largest_contentful_paint", "good"] == pytest.approx(0.8512)
    assert rows.loc["largest_contentful_paint", "poor"] == pytest.approx(0.0519)
    shares = frame[["good", "needs_improvement", "poor"]].sum(axis=1)
    assert shares.to_numpy() == pytest.approx([1.0] * 5, abs=1e-3)
    assert set(frame["rating"]) == {"good"}
    assert frame["first_date"].iloc[0] == pd.Timestamp("2026-10-29")
    assert frame["last_date"].iloc[0] == pd.Timestamp("2026-11-25")
    [request] = crux.requests
    assert request.method == "records:queryRecord"
    assert request.key_accepted
    assert request.query == {"url": FAST, "formFactor": "PHONE"}


def test_record_of_an_origin_and_of_every_form_factor(crux: CruxStandIn) -> None:
    origin = field.record(origin=f"{ORIGIN}/any/path?x=1", form_factor="PHONE")
    assert set(origin["level"]) == {"origin"}
    assert set(origin["target"]) == {ORIGIN}
    # An origin's needs-improvement p75 is rated so by the registry's thresholds.
    assert origin.set_index("metric").loc["largest_contentful_paint", "rating"] == (
        "needs-improvement")
    every = field.record(FAST)
    assert set(every["form_factor"]) == {"all"}
    assert crux.requests[-1].query == {"url": FAST}


def test_record_shows_the_url_the_api_normalised_it_to(crux: CruxStandIn) -> None:
    frame = field.record(f"{FAST}?utm_source=mail", form_factor="phone")
    assert set(frame["target"]) == {FAST}


def test_bad_arguments_are_refused_before_asking(crux: CruxStandIn) -> None:
    with pytest.raises(InvalidInputError, match="form_factor"):
        field.record(FAST, form_factor="watch")
    with pytest.raises(InvalidInputError, match="either"):
        field.record(FAST, origin=ORIGIN)
    with pytest.raises(InvalidInputError, match="url"):
        field.record("demo.test/fast")
    assert crux.requests == []


# -- history ------------------------------------------------------------------------------

def test_history_has_a_row_per_period_and_metric_with_the_missing_period_nan(
        crux: CruxStandIn) -> None:
    frame = field.history(origin=ORIGIN, form_factor="phone")
    assert len(frame) == 25 * 5
    assert list(dict.fromkeys(frame["metric"])) == FIELD_NAMES
    lcp = frame[frame["metric"] == "largest_contentful_paint"].reset_index(drop=True)
    assert lcp["last_date"].is_monotonic_increasing
    assert set(lcp["last_date"].diff().dropna()) == {timedelta(weeks=1)}
    assert lcp["last_date"].iloc[-1] == pd.Timestamp("2026-11-25")
    assert lcp["p75"].iloc[0] == 3900
    assert lcp["p75"].iloc[-1] == 3120
    missing = frame[frame["last_date"] == lcp["last_date"].iloc[10]]
    assert len(missing) == 5
    assert missing[["p75", "good", "needs_improvement", "poor"]].isna().all().all()
    assert missing["rating"].isna().all()
    cls = frame[frame["metric"] == "cumulative_layout_shift"]
    assert cls["p75"].iloc[0] == pytest.approx(0.21)  # "0.21" in the answer
    assert crux.requests[-1].method == "records:queryHistoryRecord"


# -- errors -------------------------------------------------------------------------------

def test_a_page_without_data_says_which_and_suggests_the_origin(crux: CruxStandIn) -> None:
    with pytest.raises(FieldNotFoundError) as caught:
        field.record(HEAVY, form_factor="phone")
    error = caught.value
    assert isinstance(error, NotFoundError)
    assert isinstance(error, pagelab.PagelabError)
    assert (error.level, error.target, error.form_factor) == ("page", HEAVY, "PHONE")
    assert "page http://demo.test/heavy" in str(error)
    assert "origin" in str(error)
    with pytest.raises(FieldNotFoundError, match=r"origin http://unknown\.test") as origin:
        field.record(origin="http://unknown.test", form_factor="tablet")
    assert origin.value.level == "origin"
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again), vars(again)) == (type(error), str(error), vars(error))


def test_a_missing_key_is_refused_before_any_request(crux: CruxStandIn,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAGELAB_CRUX_API_KEY")
    with pytest.raises(FieldKeyError, match="PAGELAB_CRUX_API_KEY"):
        field.record(FAST, form_factor="phone")
    assert crux.requests == []


def test_a_refused_key_is_a_key_error_that_never_echoes_it(crux: CruxStandIn,
                                                           tmp_path: Path) -> None:
    secret = "AIzaSy-not-the-right-key-0123456789"
    with pytest.raises(FieldKeyError) as caught:
        field.record(FAST, form_factor="phone", api_key=secret)
    assert "API_KEY_INVALID" in str(caught.value)
    assert secret not in str(caught.value)
    assert secret not in repr(caught.value)
    assert [r.key_accepted for r in crux.requests] == [False]
    assert secret not in stored_text(tmp_path)


def test_a_429_is_retried_after_retry_after(crux: CruxStandIn) -> None:
    frame = field.record("http://demo.test/busy", form_factor="phone")
    assert len(frame) == 5
    assert [r.status for r in crux.requests] == [429, 200]


class RecordingPolicy(pagelab.RetryPolicy):
    """The real policy, noting each wait it is asked for."""

    waits: list[tuple[int, float | None]] = []  # noqa: RUF012 (one test at a time)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        self.waits.append((attempt, retry_after))
        return super().delay(attempt, retry_after)


def test_the_wait_is_the_servers_retry_after(crux: CruxStandIn) -> None:
    RecordingPolicy.waits.clear()
    client = CruxClient(retry=RecordingPolicy())
    assert client.query("records:queryRecord", {"url": "http://demo.test/busy",
                                                "formFactor": "PHONE"}).status == 200
    assert RecordingPolicy.waits == [(0, 1.0)]  # Retry-After: 1, not the backoff's guess


def test_a_429_past_the_retries_is_a_quota_error(crux: CruxStandIn) -> None:
    client = CruxClient(retry=pagelab.RetryPolicy(max_retries=2))
    with pytest.raises(FieldQuotaError) as caught:
        client.query("records:queryRecord", {"url": "http://demo.test/throttled",
                                             "formFactor": "PHONE"})
    assert caught.value.retry_after == 0
    assert [r.status for r in crux.requests] == [429, 429, 429]


def test_a_spent_quota_is_not_waited_for(crux: CruxStandIn) -> None:
    # Retry-After: 86400 is past RetryPolicy.max_retry_after: raised at once, with the wait.
    with pytest.raises(FieldQuotaError, match="quota") as caught:
        field.record("http://demo.test/quota", form_factor="phone")
    assert caught.value.retry_after == 86400
    assert [r.status for r in crux.requests] == [429]
    assert isinstance(caught.value, FieldError)


def test_a_passing_server_error_is_retried(crux: CruxStandIn) -> None:
    field.record("http://demo.test/flaky", form_factor="phone")
    assert [r.status for r in crux.requests] == [503, 200]


def test_an_unreachable_api_is_a_transport_error(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    monkeypatch.setenv("PAGELAB_DATA_DIR", str(tmp_path / "data"))
    client = CruxClient(KEY, endpoint=f"http://127.0.0.1:{closed_port()}/v1",
                        retry=pagelab.RetryPolicy(max_retries=2, backoff_base=0.01))
    with pytest.raises(FieldTransportError, match="after 3 attempts") as caught:
        client.query("records:queryRecord", {"url": FAST})
    assert isinstance(caught.value, TransportError)
    assert KEY not in str(caught.value)


# -- the day's cache ----------------------------------------------------------------------

def test_a_days_answers_are_kept_and_refresh_asks_again(crux: CruxStandIn,
                                                        tmp_path: Path) -> None:
    first = field.record(FAST, form_factor="phone")
    again = field.record(FAST, form_factor="phone")
    pd.testing.assert_frame_equal(pd.DataFrame(first), pd.DataFrame(again))
    assert len(crux.requests) == 1
    field.record(FAST, form_factor="desktop")  # another form factor: another answer
    assert len(crux.requests) == 2
    field.record(FAST, form_factor="phone", refresh=True)
    assert len(crux.requests) == 3
    # "No data" is an answer too: asked once a day.
    for _ in range(2):
        with pytest.raises(FieldNotFoundError):
            field.record(HEAVY, form_factor="phone")
    assert len(crux.requests) == 4
    # Errors are not kept: a quota error is asked again.
    for _ in range(2):
        with pytest.raises(FieldQuotaError):
            field.record("http://demo.test/quota", form_factor="phone")
    assert len(crux.requests) == 6
    days = [p.name for p in (tmp_path / "data" / "field-cache").iterdir()]
    assert days == [AnswerCache.today().isoformat()]


def test_yesterdays_answers_are_asked_again_and_forgotten(crux: CruxStandIn,
                                                          tmp_path: Path) -> None:
    field.record(FAST, form_factor="phone")
    cache = tmp_path / "data" / "field-cache"
    today = AnswerCache.today()
    (cache / today.isoformat()).rename(cache / (today - timedelta(days=1)).isoformat())
    field.record(FAST, form_factor="phone")
    assert len(crux.requests) == 2
    assert [p.name for p in cache.iterdir()] == [today.isoformat()]


def test_the_key_is_in_no_repr_log_error_or_stored_file(
        crux: CruxStandIn, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    client = CruxClient()
    assert KEY not in repr(client)
    assert "key=set" in repr(client)
    assert KEY not in str(vars(client))
    with caplog.at_level(logging.DEBUG):
        field.record(FAST, form_factor="phone")
        field.history(origin=ORIGIN, form_factor="phone")
        errors: list[Exception] = []
        for url in (HEAVY, "http://demo.test/quota"):
            with pytest.raises(FieldError) as caught:
                field.record(url, form_factor="phone")
            errors.append(caught.value)
    assert caplog.records, "httpx logged nothing: the check would be empty"
    assert KEY not in caplog.text
    assert all(KEY not in str(e) and KEY not in repr(e) for e in errors)
    stored = stored_text(tmp_path)
    assert "demo.test/fast" in stored
    assert KEY not in stored


# -- lab beside field ---------------------------------------------------------------------

def test_versus_field_puts_lab_medians_beside_field_p75(crux: CruxStandIn) -> None:
    results = pagelab.Results.from_frame(matrix_2x2())
    table = results.versus_field()
    by = table.set_index(["url", "device", "metric"])
    fast = by.loc[(FAST, "mobile", "largest_contentful_paint")]
    lab = results.summary().frame.set_index(["url", "device"]).loc[
        (FAST, "mobile"), "largest_contentful_paint"]
    assert fast["lab_median"] == pytest.approx(lab)
    assert fast["field_p75"] == 1850
    assert fast["field_level"] == "page"
    assert fast["ratio"] == pytest.approx(lab / 1850)
    assert fast["form_factor"] == "phone"
    assert fast["lab_rating"] == "good"
    # /heavy has no record of its own: its origin's, marked so, per form factor.
    heavy = by.loc[(HEAVY, "mobile", "largest_contentful_paint")]
    assert heavy["field_level"] == "origin"
    assert heavy["field_target"] == ORIGIN
    assert heavy["field_p75"] == 3120
    assert heavy["field_rating"] == "needs-improvement"
    desk = by.loc[(HEAVY, "desktop", "largest_contentful_paint")]
    assert desk["form_factor"] == "desktop"
    assert desk["field_p75"] == 2050
    # CLS came as a string; INP has no lab value in a page run but a field one.
    assert by.loc[(FAST, "desktop", "cumulative_layout_shift"), "field_p75"] == 0.01
    inp = by.loc[(FAST, "mobile", "interaction_to_next_paint")]
    assert math.isnan(inp["lab_median"])
    assert inp["field_p75"] == 140
    # Each (page, form factor) and origin asked once.
    asked = [tuple(sorted(r.query.items())) for r in crux.requests]
    assert len(asked) == len(set(asked)) == 6


def test_versus_field_without_fallback_leaves_the_field_empty(crux: CruxStandIn) -> None:
    table = pagelab.Results.from_frame(matrix_2x2()).versus_field(fallback=None)
    heavy = table[table["url"] == HEAVY]
    assert heavy["field_p75"].isna().all()
    assert heavy["field_level"].isna().all()
    assert not any("origin" in r.query for r in crux.requests)
    with pytest.raises(InvalidInputError, match="fallback"):
        pagelab.Results.from_frame(matrix_2x2()).versus_field(fallback="site")


# -- display, CLI, plots ------------------------------------------------------------------

def test_the_frames_display_readably(crux: CruxStandIn) -> None:
    record = field.record(FAST, form_factor="phone")
    html = record._repr_html_()
    assert "Chrome UX Report, page http://demo.test/fast (phone)" in html
    assert "1,850 ms" in html
    assert "#e6f4ea" in html
    assert isinstance(record.frame, pd.DataFrame)
    history = field.history(origin=ORIGIN, form_factor="phone")._repr_html_()
    assert "period ending" in history
    assert "\u2013" in history
    versus = pagelab.Results.from_frame(matrix_2x2()).versus_field()._repr_html_()
    assert "Lab beside field" in versus
    assert "origin" in versus


def test_the_cli_prints_the_table(crux: CruxStandIn, capsys: pytest.CaptureFixture[str]
                                  ) -> None:
    assert main(["field", FAST, "--form-factor", "phone"]) == 0
    out = capsys.readouterr().out
    assert "page http://demo.test/fast (phone)" in out
    assert "LCP" in out
    assert "1,850 ms" in out
    assert "0.020" in out
    assert main(["field", f"{ORIGIN}/x", "--origin", "--form-factor", "phone",
                 "--history"]) == 0
    out = capsys.readouterr().out
    assert "origin http://demo.test (phone)" in out
    assert "2026-11-25" in out
    assert len(out.strip().splitlines()) == 1 + 1 + 25


def test_the_cli_errors_in_one_line(crux: CruxStandIn, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["field", HEAVY, "--form-factor", "phone"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--origin" in err
    monkeypatch.setenv("PAGELAB_CRUX_API_KEY", "wrong-key-abc")
    assert main(["field", FAST, "--refresh"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "refused the API key" in err
    assert "wrong-key-abc" not in err


def test_the_plots_draw_lab_and_field_with_thresholds(crux: CruxStandIn) -> None:
    from matplotlib.collections import PathCollection

    table = pagelab.Results.from_frame(matrix_2x2()).versus_field()
    ax = plots.versus_field(table, "LCP")
    marks = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(marks) == 8  # 4 cells x (lab dot + field diamond)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"lab median", "field p75", "field p75 (origin's)"} <= set(labels)
    assert any(text.startswith("good \u2264") for text in labels)
    ticks = {t.get_text() for t in ax.get_yticklabels()}
    assert ticks == {f"/{page} \u00b7 {device}" for page in ("fast", "heavy")
                     for device in ("mobile", "desktop")}
    history = field.history(origin=ORIGIN, form_factor="phone")
    ax = plots.field_history(history, "largest_contentful_paint")
    [line] = [line for line in ax.get_lines() if line.get_marker() == "o"]
    values = line.get_ydata()
    assert len(values) == 25
    assert math.isnan(float(values[10]))
    with pytest.raises(InvalidInputError):
        plots.versus_field(history)


def test_the_html_report_has_a_field_section_when_a_key_is_configured(
        crux: CruxStandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    from pagelab.export import html_report

    only_lcp = ["largest_contentful_paint"]  # fewer plots to draw: the section is the point

    results = pagelab.Results.from_frame(matrix_2x2())
    page = html_report(results, explain=False, metrics=only_lcp)
    assert 'id="field"' in page
    assert "1,850 ms" in page
    assert "origin" in page
    assert len(crux.requests) == 6
    assert 'id="field"' not in html_report(results, explain=False, metrics=only_lcp, field=False)
    # An answer the API refuses is a note in the section (never the key), or raised on
    # request; without a key there is no section and nothing is asked.
    monkeypatch.setenv("PAGELAB_CRUX_API_KEY", "wrong-key-abc")
    monkeypatch.setenv("PAGELAB_DATA_DIR", str(Path(os.environ["PAGELAB_DATA_DIR"]) / "b"))
    page = html_report(results, explain=False, metrics=only_lcp)
    assert "No field data: the Chrome UX Report API refused the API key" in page
    assert "wrong-key-abc" not in page
    with pytest.raises(FieldKeyError):
        html_report(results, explain=False, metrics=only_lcp, field=True)
    monkeypatch.delenv("PAGELAB_CRUX_API_KEY")
    asked = len(crux.requests)
    assert 'id="field"' not in html_report(results, explain=False, metrics=only_lcp)
    assert len(crux.requests) == asked
