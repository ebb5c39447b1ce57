"""Catalog data and the pure mapping from (device, config) to Lighthouse settings."""

from __future__ import annotations

import base64

import pytest

from pagelab.catalog import CONNECTIONS, DEVICES, LOCATIONS, TTFB_REGIONS, ttfb_region
from pagelab.engine._settings import build_run_spec
from pagelab.models import Connection, Device, LighthouseConfig, Location
from pagelab.runners import LocalRunner


def test_catalog_covers_every_id() -> None:
    assert set(DEVICES) == set(Device)
    assert set(CONNECTIONS) == set(Connection)
    assert set(LOCATIONS) == set(Location)
    assert sum(len(region.locations) for region in TTFB_REGIONS.values()) == 36
    assert LOCATIONS[Location.DE].full_name == "Frankfurt, Germany"
    ids = [loc.id for region in TTFB_REGIONS.values() for loc in region.locations]
    assert len(ids) == len(set(ids))


def test_unknown_ttfb_region_lists_choices() -> None:
    with pytest.raises(ValueError, match="europe"):
        ttfb_region("atlantis")


def test_reference_lists_from_the_local_runner(data_dir: object) -> None:
    runner = LocalRunner()
    assert [loc.id for loc in runner.locations()] == [loc.value for loc in Location]
    assert runner.ttfb_regions()[0].id == "north-america"


@pytest.mark.parametrize("device", list(Device))
def test_every_device_emulates_its_own_screen(device: Device) -> None:
    profile = DEVICES[device]
    settings = build_run_spec(device, LighthouseConfig(), chrome_major=156).config["settings"]
    assert settings["screenEmulation"]["width"] == profile.width
    assert settings["screenEmulation"]["deviceScaleFactor"] == profile.device_scale_factor
    # Lighthouse rejects a mobile flag that disagrees with the form factor.
    assert settings["screenEmulation"]["mobile"] == (settings["formFactor"] == "mobile")
    assert settings["throttling"]["cpuSlowdownMultiplier"] == profile.cpu_slowdown
    if profile.user_agent is not None:
        assert "{" not in settings["emulatedUserAgent"]


def test_default_connection_is_the_device_class_default() -> None:
    mobile = build_run_spec(Device.MOBILE, LighthouseConfig()).config["settings"]["throttling"]
    desktop = build_run_spec(Device.DESKTOP, LighthouseConfig()).config["settings"]["throttling"]
    assert (mobile["rttMs"], mobile["throughputKbps"]) == (150, 1638.4)
    assert (desktop["rttMs"], desktop["throughputKbps"]) == (40, 10240)


def test_connection_and_throttling_method() -> None:
    spec = build_run_spec(
        Device.MOBILE, LighthouseConfig(connection="3g_slow", throttling_method="applied")
    )
    settings = spec.config["settings"]
    assert settings["throttlingMethod"] == "devtools"
    assert settings["throttling"]["rttMs"] == 400
    assert settings["throttling"]["requestLatencyMs"] == 400 * 3.75
    assert settings["throttling"]["downloadThroughputKbps"] == pytest.approx(400 * 0.9)


def test_http_version_is_a_browser_switch() -> None:
    assert build_run_spec(Device.MOBILE, LighthouseConfig()).browser_flags == ()
    assert build_run_spec(
        Device.MOBILE, LighthouseConfig(http_version="1.1")
    ).browser_flags == ("--disable-http2",)


def test_secrets_go_to_the_tested_origin_only_and_the_scrub_list() -> None:
    spec = build_run_spec(
        Device.MOBILE,
        LighthouseConfig(auth_username="ann", auth_password="pw-123", cookies=["sid=c00kie"],
                         user_agent="probe/1"),
    )
    settings = spec.config["settings"]
    token = base64.b64encode(b"ann:pw-123").decode()
    # Not Lighthouse's extraHeaders, which every origin the page contacts would receive.
    assert "extraHeaders" not in settings
    assert spec.network is not None
    assert spec.network["origin_headers"] == {
        "Cookie": "sid=c00kie", "Authorization": f"Basic {token}"
    }
    # A custom user agent is set by the driver, verbatim (Lighthouse would rewrite it).
    assert settings["emulatedUserAgent"] is False
    assert spec.user_agent == "probe/1"
    assert {"pw-123", "c00kie", token} <= set(spec.secrets)


def test_requests_are_only_paused_when_an_option_needs_it() -> None:
    assert build_run_spec(Device.MOBILE, LighthouseConfig()).network is None
    spec = build_run_spec(
        Device.MOBILE,
        LighthouseConfig(blacklist=["*.js"], whitelist=["*/app.js"], adblock=True, video=True),
    )
    assert spec.network == {
        "origin_headers": {}, "block": ["*.js"], "allow": ["*/app.js"], "adblock": True,
        # Matching is bounded per URL and per run (issue 22, finding 5).
        "max_url_length": 4096, "pattern_budget_ms": 5000.0,
    }
    assert spec.video


def test_unneeded_work_is_skipped() -> None:
    settings = build_run_spec(Device.MOBILE, LighthouseConfig()).config["settings"]
    assert settings["onlyCategories"] == ["performance"]
    assert settings["disableFullPageScreenshot"] is True
    assert "bf-cache" in settings["skipAudits"]


def test_categories_are_run_only_when_asked() -> None:
    default = build_run_spec(Device.MOBILE, LighthouseConfig()).config["settings"]
    assert default["onlyCategories"] == ["performance"]
    assert default["skipAudits"] == ["bf-cache"]
    config = LighthouseConfig.model_validate({"categories": ["seo", "accessibility", "seo"]})
    assert config.categories == ["accessibility", "seo"]
    asked = build_run_spec(Device.MOBILE, config).config["settings"]
    assert asked["onlyCategories"] == ["performance", "accessibility", "seo"]
    assert asked["skipAudits"] == []
    whole = build_run_spec(Device.MOBILE, LighthouseConfig(categories=["performance"]))
    assert whole.config["settings"]["onlyCategories"] == ["performance"]
    assert whole.config["settings"]["skipAudits"] == []


def test_the_quiet_window_sets_lighthouse_s_four_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    waits = ("pauseAfterFcpMs", "pauseAfterLoadMs", "networkQuietThresholdMs",
             "cpuQuietThresholdMs")
    monkeypatch.delenv("PAGELAB_QUIET_WINDOW_MS", raising=False)
    default = build_run_spec(Device.MOBILE, LighthouseConfig()).config["settings"]
    assert not set(waits) & set(default)  # Lighthouse's own (1000 ms each)
    monkeypatch.setenv("PAGELAB_QUIET_WINDOW_MS", "250")
    short = build_run_spec(Device.DESKTOP, LighthouseConfig()).config["settings"]
    assert {name: short[name] for name in waits} == dict.fromkeys(waits, 250)


@pytest.mark.parametrize("text", ["soon", "-1", "10001", "nan"])
def test_a_bad_quiet_window_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, text: str,
) -> None:
    import pagelab

    monkeypatch.setenv("PAGELAB_QUIET_WINDOW_MS", text)
    with pytest.raises(pagelab.InvalidInputError, match=r"^PAGELAB_QUIET_WINDOW_MS: expected"):
        build_run_spec(Device.MOBILE, LighthouseConfig())
