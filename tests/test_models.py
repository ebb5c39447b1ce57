"""Models: value sets, aliases, config rules, timestamps, unknown fields, error naming."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from pagelab.models import (
    DEVICE_ALIASES,
    BatchReport,
    Connection,
    Credits,
    Device,
    LighthouseConfig,
    LighthouseTestRequest,
    Location,
    Metrics,
    TestReport,
    TTFBResult,
    from_epoch,
    url_pattern_matches,
)


def test_value_sets_match_the_spec() -> None:
    assert len(Device) == 15
    assert len(Location) == 15
    assert len(Connection) == 13
    assert {c.value for c in Connection} >= {"5g", "wifi_fast", "2g_edge", "3g_slow"}


@pytest.mark.parametrize(("alias", "device"), sorted(DEVICE_ALIASES.items()))
def test_hosted_service_spellings_are_aliases(alias: str, device: Device) -> None:
    request = LighthouseTestRequest.model_validate({"url": "https://a.test/", "device": alias})
    assert request.device is device
    assert json.loads(request.model_dump_json())["device"] == device.value


def test_unknown_device_names_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        LighthouseTestRequest.model_validate({"url": "https://a.test/", "device": "nokia3310"})
    assert info.value.errors()[0]["loc"] == ("device",)


@pytest.mark.parametrize("url", ["ftp://a.test/", "/relative", "a.test", "http://", "http://a b/"])
def test_page_url_must_be_absolute_http(url: str) -> None:
    with pytest.raises(ValidationError) as info:
        LighthouseTestRequest.model_validate({"url": url})
    assert info.value.errors()[0]["loc"] == ("url",)


def test_strings_are_limited_to_5000_characters() -> None:
    LighthouseConfig(user_agent="x" * 5000)
    with pytest.raises(ValidationError) as info:
        LighthouseConfig(user_agent="x" * 5001)
    assert info.value.errors()[0]["loc"] == ("user_agent",)
    with pytest.raises(ValidationError):
        LighthouseTestRequest.model_validate({"url": "https://a.test/" + "x" * 5000})


def test_config_defaults_and_null_means_default() -> None:
    config = LighthouseConfig.model_validate(
        {"throttling_method": None, "http_version": None, "video": None, "adblock": None,
         "cookies": None, "whitelist": None}
    )
    assert config == LighthouseConfig()
    assert config.throttling_method == "simulated"
    assert config.http_version == "2"
    assert config.video is False


def test_config_value_sets() -> None:
    assert LighthouseConfig(throttling_method="applied").throttling_method == "applied"
    assert LighthouseConfig.model_validate({"http_version": 1.1}).http_version == "1.1"
    assert LighthouseConfig.model_validate({"http_version": 2}).http_version == "2"
    for field, value in [("throttling_method", "devtools"), ("http_version", "3"),
                         ("connection", "6g"), ("video", "maybe")]:
        with pytest.raises(ValidationError) as info:
            LighthouseConfig.model_validate({field: value})
        assert info.value.errors()[0]["loc"] == (field,)


def test_whitelist_and_blacklist_limits() -> None:
    LighthouseConfig(whitelist=["*.a.test/*"] * 5, blacklist=["*ads*"] * 10)
    with pytest.raises(ValidationError, match="whitelist"):
        LighthouseConfig(whitelist=["*.a.test/*"] * 6)
    with pytest.raises(ValidationError, match="blacklist"):
        LighthouseConfig(blacklist=["*ads*"] * 11)
    with pytest.raises(ValidationError, match="blacklist"):
        LighthouseConfig(blacklist=["has space"])


def test_cookies_are_name_value_pairs() -> None:
    LighthouseConfig(cookies=["session=abc", "theme=dark=yes"])
    for bad in ["novalue", "=x", "a b=c", "a=b; c=d"]:
        with pytest.raises(ValidationError, match="cookies"):
            LighthouseConfig(cookies=[bad])


def test_masked_config_hides_secrets() -> None:
    config = LighthouseConfig(auth_username="u", auth_password="hunter2", cookies=["sid=s3cr3t"])
    text = config.masked().model_dump_json()
    assert "hunter2" not in text
    assert "s3cr3t" not in text
    assert config.masked().cookies == ["sid=***"]
    assert config.masked().auth_username == "u"


def test_url_patterns() -> None:
    assert url_pattern_matches("*://ads.test/*", "https://ads.test/banner.js")
    assert not url_pattern_matches("*://ads.test/*", "https://a.test/ads.test/x")
    assert url_pattern_matches("tracker", "https://a.test/tracker.js")


def test_timestamps_read_seconds_or_milliseconds_and_write_milliseconds() -> None:
    base = {"url": "https://a.test/", "device": "mobile", "location": "us", "status": "idle"}
    in_ms = TestReport.model_validate(base | {"created_at": 1_700_000_000_000})
    in_s = TestReport.model_validate(base | {"created_at": 1_700_000_000})
    assert in_ms.created_at == in_s.created_at == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert json.loads(in_s.model_dump_json())["created_at"] == 1_700_000_000_000


@pytest.mark.parametrize("number", [
    0, -1, 1_700_000_000, 99_999_999_999, 100_000_000_000, -99_999_999_999,
    -100_000_000_000, 1_760_000_000_123, 253_402_300_799_999, 2**53 - 1, 2**53,
    1_700_000_000.5, 1.7e12,
])
def test_integer_epochs_read_as_from_epoch(number: float) -> None:
    # The validator reads integers inline (the list path's hot spot); it must say exactly
    # what from_epoch says on both sides of the 1e11 cutoff, in Python and in JSON.
    base: dict[str, object] = {
        "url": "https://a.test/", "device": "mobile", "location": "us", "status": "idle",
    }
    try:
        expected: datetime | type[Exception] = from_epoch(number)
    except (ValueError, OverflowError, OSError) as exc:
        expected = type(exc)
    data = base | {"created_at": number}

    def from_python() -> TestReport:
        return TestReport.model_validate(data)

    def from_json() -> TestReport:
        return TestReport.model_validate_json(json.dumps(data))

    for read in (from_python, from_json):
        if isinstance(expected, datetime):
            created = read().created_at
            assert created == expected
            assert created is not None
            assert created.tzinfo is UTC
        else:
            with pytest.raises((expected, ValidationError)):
                read()


def test_unknown_fields_are_ignored() -> None:
    report = TestReport.model_validate(
        {"url": "https://a.test/", "device": "desktop", "location": "de", "status": "success",
         "brand_new_field": {"x": 1}, "metrics": {"performance_score": 97, "future_metric": 3}}
    )
    assert report.metrics == Metrics(performance_score=97)
    assert not hasattr(report, "brand_new_field")


def test_metrics_ranges() -> None:
    with pytest.raises(ValidationError, match="performance_score"):
        Metrics(performance_score=101)
    with pytest.raises(ValidationError, match="largest_contentful_paint"):
        Metrics(largest_contentful_paint=-1)


def test_batch_report_is_final_only_when_every_item_is() -> None:
    batch = BatchReport.model_validate({
        "id": "lbt_1", "urls": ["https://a.test/"], "devices": ["mobile", "desktop"],
        "locations": ["us"], "batch_type": "multiple-devices", "status": "completed",
        "reports": [
            {"id": "lt_1", "url": "https://a.test/", "device": "mobile", "location": "us",
             "status": "success"},
            {"id": "lt_2", "url": "https://a.test/", "device": "desktop", "location": "us",
             "status": "active"},
        ],
    })
    assert not batch.is_final


def test_ttfb_and_credits_parse_spec_samples() -> None:
    result = TTFBResult.model_validate({
        "url": "https://a.test/", "region": "europe",
        "result": [{
            "location_id": "de-central", "location_name": "Frankfurt", "status": "success",
            "data": {"timings": {"dns_lookup": 1, "tcp_connection": 2, "tls_handshake": 3,
                                 "server_processing": 4, "ttfb": 10, "total": 12},
                     "http_version": 2, "http_status": 200,
                     "response_headers": {"content-length": 10, "server": "x"}},
            "error": None,
        }],
    })
    assert result.result[0].data is not None
    assert result.result[0].data.http_version == 2
    credits = Credits.model_validate({
        "lighthouse": {"available_credits": 5, "available_paid_credits": 0},
        "ttfb": {"available_credits": 2, "available_paid_credits": 1},
        "credits_refill_date": "2026-12-01",
    })
    assert credits.ttfb.available_paid_credits == 1


def test_one_validation_translator_for_every_face() -> None:
    from pagelab.fleet import FleetSettings
    from pagelab.models import LighthouseTestRequest, invalid_input, validation_message

    with pytest.raises(ValidationError) as caught:
        LighthouseTestRequest.model_validate(
            {"url": "ftp://x/", "device": "fridge", "config": {"whitelist": [1]}}
        )
    # The API's 400 body (at most three fields) and the Python exception say the same.
    api = validation_message(caught.value.errors())
    assert api == str(invalid_input(caught.value))
    assert api.startswith("url: ")
    assert "; device: " in api
    assert "; config.whitelist[0]: " in api
    assert "Value error, " not in api
    # The CLI names a field by the option it came from.
    with pytest.raises(ValidationError) as caught:
        FleetSettings(broker_url="redis://127.0.0.1:6379/0", secret="s" * 64, max_attempts=0)
    assert str(invalid_input(caught.value, as_option=True)) == (
        "--max-attempts: Input should be greater than or equal to 1"
    )
    with pytest.raises(ValidationError) as caught:
        FleetSettings(broker_url="redis://127.0.0.1:6379/0", secret="s" * 64, max_message_mb=0)
    assert str(invalid_input(caught.value, as_option=True)) == (
        "--max-message-mb: Input should be greater than or equal to 1"
    )


def test_refused_names_suggest_the_closest_valid_one() -> None:
    from pagelab.models import LighthouseTestRequest, did_you_mean, validation_message

    assert did_you_mean("Desktop", ["mobile", "desktop"]) == "desktop"  # case first
    assert did_you_mean("deskop", ["mobile", "desktop"]) == "desktop"
    assert did_you_mean("fridge", ["mobile", "desktop"]) is None
    assert did_you_mean("desktop" * 100, ["desktop"]) is None
    with pytest.raises(ValidationError) as caught:
        LighthouseTestRequest.model_validate(
            {"url": "https://a.test/", "location": "US", "device": "x" * 10_000,
             "config": {"connection": "4G", "throttling_method": "simulate"}})
    message = validation_message(caught.value, limit=None)
    assert message.startswith(f"device: unknown '{'x' * 100}' (valid: mobile, desktop, ")
    assert "; location: unknown 'US': did you mean 'us'? (valid: us, ca, " in message
    assert "; config.connection: unknown '4G': did you mean '4g'? (valid: fiber, " in message
    assert message.endswith("; config.throttling_method: unknown 'simulate': did you mean "
                            "'simulated'? (valid: simulated, applied)")
    assert len(message) < 1000  # the refused value is cut, not echoed whole


def test_differences_are_formatted_with_sign_and_the_digits_they_need() -> None:
    from pagelab.models import METRICS, Metric

    ttfb, cls = METRICS["server_response_time"], METRICS["cumulative_layout_shift"]
    assert ttfb.format_diff(-1.0) == "-1 ms"
    assert ttfb.format_diff(-0.4) == "-0.4 ms"  # was "-0 ms"
    assert ttfb.format_diff(-0.5) == "-0.5 ms"  # rounds half to even: was "-0 ms" too
    assert ttfb.format_diff(0.0) == "0 ms"
    assert ttfb.format_diff(1234.4) == "+1,234 ms"
    assert ttfb.format_diff(float("nan")) == "\u2013"
    assert cls.format_diff(0.0004) == "+0.0004"
    assert cls.format_diff(-0.05) == "-0.050"
    assert Metric.format_rel_diff(-100.0) == "-100.0 %"
    assert Metric.format_rel_diff(-0.004) == "-0.004 %"
    assert Metric.format_rel_diff(0.0) == "0 %"
    assert Metric.format_rel_diff(float("nan")) == "\u2013"
