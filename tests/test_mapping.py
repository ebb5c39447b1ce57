"""LHR -> report fields, on Lighthouse results recorded from real runs (tests/data/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pagelab.engine._mapping import LHR_AUDITS, filmstrip, final_screenshot, summarize_lhr

DATA = Path(__file__).parent / "data"


def _lhr(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"lhr-{name}.json").read_text())


@pytest.mark.parametrize("name", ["success-shift-mobile", "success-heavy-desktop"])
def test_success_maps_every_engine_metric(name: str) -> None:
    lhr = _lhr(name)
    summary = summarize_lhr(lhr, chrome_version="156.0.8078.79")
    assert summary.status == "success"
    assert summary.error is None
    assert summary.lighthouse_version == lhr["lighthouseVersion"] == "13.5.0"
    metrics = summary.metrics
    assert metrics is not None
    for field, audit_id in LHR_AUDITS.items():
        audit = lhr["audits"].get(audit_id)
        expected = audit.get("numericValue") if audit else None
        assert getattr(metrics, field) == expected, field
    assert metrics.performance_score == round(lhr["categories"]["performance"]["score"] * 100, 2)
    # Lighthouse 13 has no FMP audit: the metric is null, not invented.
    assert "first-meaningful-paint" not in lhr["audits"]
    assert metrics.first_meaningful_paint is None


def test_units_are_milliseconds_and_unitless_cls() -> None:
    metrics = summarize_lhr(_lhr("success-shift-mobile")).metrics
    assert metrics is not None
    assert metrics.cumulative_layout_shift is not None
    assert 0.1 < metrics.cumulative_layout_shift < 1  # the late banner, unitless
    assert metrics.first_contentful_paint is not None
    assert 100 < metrics.first_contentful_paint < 60_000  # ms, not seconds


def test_environment_records_what_was_applied() -> None:
    env = summarize_lhr(_lhr("success-heavy-desktop"), chrome_version="156.0.8078.79").environment
    assert env.chrome_version == "156.0.8078.79"
    assert env.benchmark_index is not None
    assert env.benchmark_index > 0
    assert env.form_factor == "desktop"
    assert env.screen_emulation is not None
    assert env.screen_emulation["width"] == 1350
    assert env.throttling_method == "simulate"
    assert env.throttling is not None
    assert env.throttling["rttMs"] == 40


def test_runtime_error_becomes_a_failed_report() -> None:
    lhr = _lhr("failed-connection-refused")
    summary = summarize_lhr(lhr)
    assert summary.status == "failed"
    assert summary.metrics is None
    assert summary.error is not None
    assert summary.error.code == lhr["runtimeError"]["code"] == "CHROME_INTERSTITIAL_ERROR"
    assert summary.error.message == lhr["runtimeError"]["message"]
    assert summary.lighthouse_version == "13.5.0"


def test_a_failed_load_names_the_network_error_beside_lighthouses_code() -> None:
    # The LHR of a refused connection says only CHROME_INTERSTITIAL_ERROR; the driver reads
    # the network error from the DevTools log and it leads the message.
    lhr = _lhr("failed-connection-refused")
    summary = summarize_lhr(lhr, network_error="net::ERR_CONNECTION_REFUSED")
    assert summary.error is not None
    assert summary.error.code == "CHROME_INTERSTITIAL_ERROR"
    assert summary.error.message == ("net::ERR_CONNECTION_REFUSED: connection refused. "
                                     + lhr["runtimeError"]["message"])
    unknown = summarize_lhr(lhr, network_error="net::ERR_QUIC_PROTOCOL_ERROR")
    assert unknown.error is not None
    assert unknown.error.message.startswith("net::ERR_QUIC_PROTOCOL_ERROR: quic protocol error. ")


def test_errored_audit_gives_null_metric_not_a_crash() -> None:
    lhr = _lhr("success-shift-mobile")
    lhr["audits"]["largest-contentful-paint"] = {"score": None, "errorMessage": "NO_LCP"}
    lhr["categories"]["performance"]["score"] = None
    metrics = summarize_lhr(lhr).metrics
    assert metrics is not None
    assert metrics.largest_contentful_paint is None
    assert metrics.performance_score is None
    assert metrics.first_contentful_paint is not None


def test_screenshot_and_filmstrip() -> None:
    lhr = _lhr("success-shift-mobile")
    shot = final_screenshot(lhr)
    assert shot is not None
    assert shot.startswith("data:image/")
    frames = json.loads(filmstrip(lhr) or "[]")
    assert len(frames) > 1
    assert {"timing", "timestamp", "data"} <= set(frames[0])
    assert final_screenshot(_lhr("failed-connection-refused")) is None
