"""From a device and a config to Lighthouse settings: a pure function, tested without a browser."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import Any

from pagelab._exceptions import InvalidInputError
from pagelab.catalog import CONNECTIONS, DEVICES
from pagelab.models import (
    MAX_MATCHED_URL_LENGTH,
    Device,
    LighthouseConfig,
    ThrottlingMethod,
    nonnegative_setting,
)

__all__ = ["MIN_SECRET_LENGTH", "QUIET_WINDOW_SETTINGS", "QUIET_WINDOW_VARIABLE",
           "LighthouseRunSpec", "build_run_spec", "quiet_window_ms"]

#: Cookie values and passwords shorter than this are not scrubbed from the stored LHR and
#: HTML report: ``consent=1`` would turn every "1" of every URL, timestamp and label into
#: ``***`` (docs/security.md). A value this short is no secret worth the name (it is
#: guessed in a few thousand tries); the Basic token carrying a password always is scrubbed.
MIN_SECRET_LENGTH = 6

# Lighthouse's convention for DevTools ("applied") throttling: request latency is the RTT
# times 3.75 and throughput is 90 % of the link's (core/config/constants.js).
_DEVTOOLS_LATENCY_FACTOR = 3.75
_DEVTOOLS_THROUGHPUT_FACTOR = 0.9

# Work no metric or resource needs: the full-page screenshot (~1 s a run) and the
# bf-cache audit (a second navigation).
_SKIPPED_AUDITS = ("bf-cache",)


@dataclass(frozen=True, slots=True)
class LighthouseRunSpec:
    """What the Node driver needs for one run."""

    config: dict[str, Any]
    #: Strings to scrub from every stored output (passwords, cookie values).
    secrets: list[str] = field(default_factory=list)
    #: Chromium command-line switches this run needs (a browser restart when they change).
    browser_flags: tuple[str, ...] = ()
    #: Per-request network control for the driver (None: the run needs none, and requests
    #: are not paused at all): ``origin_headers`` added only to requests for the tested
    #: page's origin, ``block`` / ``allow`` URL patterns, ``adblock``.
    network: dict[str, Any] | None = None
    #: Whether to keep the trace's screenshots for a page-load video.
    video: bool = False
    #: A custom user agent, sent exactly as given (None: the device's, via Lighthouse).
    user_agent: str | None = None


def _throttling(device: Device, config: LighthouseConfig) -> dict[str, float]:
    profile = DEVICES[device]
    link = CONNECTIONS[config.connection] if config.connection else profile.default_connection
    return {
        "rttMs": link.rtt_ms,
        "throughputKbps": link.down_kbps,
        "requestLatencyMs": link.rtt_ms * _DEVTOOLS_LATENCY_FACTOR,
        "downloadThroughputKbps": link.down_kbps * _DEVTOOLS_THROUGHPUT_FACTOR,
        "uploadThroughputKbps": link.up_kbps * _DEVTOOLS_THROUGHPUT_FACTOR,
        "cpuSlowdownMultiplier": profile.cpu_slowdown,
    }


def _origin_headers(config: LighthouseConfig) -> tuple[dict[str, str], list[str]]:
    """Cookie and Authorization headers for the tested origin, and the strings to scrub."""
    headers: dict[str, str] = {}
    secrets: list[str] = []
    if config.cookies:
        headers["Cookie"] = "; ".join(c.strip() for c in config.cookies)
        secrets += [c.partition("=")[2] for c in config.cookies]
    if config.auth_username is not None or config.auth_password is not None:
        credentials = f"{config.auth_username or ''}:{config.auth_password or ''}"
        token = base64.b64encode(credentials.encode()).decode()
        headers["Authorization"] = f"Basic {token}"
        secrets += [token] + ([config.auth_password] if config.auth_password else [])
    return headers, [s for s in secrets if len(s) >= MIN_SECRET_LENGTH]


#: Milliseconds of URL-pattern matching one run may spend (``$PAGELAB_PATTERN_BUDGET_MS``).
#: Past it the run fails ``URL_PATTERNS_TOO_SLOW``: the request's own patterns caused it,
#: so it is charged, not refunded (issue 22, finding 5).
DEFAULT_PATTERN_BUDGET_MS = 5000.0


def _pattern_budget_ms() -> float:
    try:
        return max(0.0, float(os.environ.get("PAGELAB_PATTERN_BUDGET_MS", "")))
    except ValueError:
        return DEFAULT_PATTERN_BUDGET_MS


#: Lighthouse's waits that end a navigation, each 1000 ms by default: after the first
#: paint, after the load event, and for a quiet network and a quiet main thread. One
#: ``$PAGELAB_QUIET_WINDOW_MS`` sets them all (docs/engine.md, "The quiet window").
QUIET_WINDOW_SETTINGS = ("pauseAfterFcpMs", "pauseAfterLoadMs", "networkQuietThresholdMs",
                         "cpuQuietThresholdMs")
QUIET_WINDOW_VARIABLE = "PAGELAB_QUIET_WINDOW_MS"
_MAX_QUIET_WINDOW_MS = 10_000


def quiet_window_ms() -> int | None:
    """``$PAGELAB_QUIET_WINDOW_MS`` in whole ms (None when unset: Lighthouse's own, 1000).
    Raises :class:`~pagelab.InvalidInputError` naming the variable for anything but a
    number from 0 to 10 000."""
    value = nonnegative_setting(QUIET_WINDOW_VARIABLE)
    if value is not None and value > _MAX_QUIET_WINDOW_MS:
        raise InvalidInputError(
            f"{QUIET_WINDOW_VARIABLE}: expected milliseconds from 0 to "
            f"{_MAX_QUIET_WINDOW_MS:,}, got {value:g}")
    return None if value is None else round(value)


def build_run_spec(
    device: Device, config: LighthouseConfig, *, chrome_major: int | None = None
) -> LighthouseRunSpec:
    """The Lighthouse config for ``device`` and ``config``: the performance category, plus
    the categories ``config.categories`` adds."""
    profile = DEVICES[device]
    # Lighthouse rewrites the Chrome version inside any emulated user agent to the running
    # browser's: right for the device profiles, wrong for a custom one, which the driver
    # sets verbatim instead (Lighthouse's emulatedUserAgent: false leaves it alone).
    user_agent: str | bool | None = False if config.user_agent is not None else None
    if config.user_agent is None and profile.user_agent is not None:
        user_agent = profile.user_agent.format(chrome_major=chrome_major or 120)
    headers, secrets = _origin_headers(config)
    applied = config.throttling_method == ThrottlingMethod.APPLIED
    settings: dict[str, Any] = {
        "onlyCategories": ["performance",
                           *(c for c in config.categories or [] if c != "performance")],
        "formFactor": profile.form_factor,
        "screenEmulation": {
            "mobile": profile.mobile,
            "width": profile.width,
            "height": profile.height,
            "deviceScaleFactor": profile.device_scale_factor,
            "disabled": False,
        },
        # None: the driver fills in Lighthouse's own user agent for the form factor.
        "emulatedUserAgent": user_agent,
        "throttlingMethod": "devtools" if applied else "simulate",
        "throttling": _throttling(device, config),
        "disableFullPageScreenshot": True,
        # bf-cache belongs to best practices: skipped only when no other category runs.
        "skipAudits": [] if config.categories else list(_SKIPPED_AUDITS),
    }
    window = quiet_window_ms()
    if window is not None:
        settings.update(dict.fromkeys(QUIET_WINDOW_SETTINGS, window))
    # Not Lighthouse's extraHeaders (sent to every origin the page contacts: credentials
    # would leak to third parties) nor its blockedUrlPatterns (no whitelist exceptions): the
    # driver decides per request.
    network: dict[str, Any] | None = None
    if headers or config.blacklist or config.whitelist or config.adblock:
        network = {
            "origin_headers": headers,
            "block": list(config.blacklist or []),
            "allow": list(config.whitelist or []),
            "adblock": config.adblock,
            "max_url_length": MAX_MATCHED_URL_LENGTH,
            "pattern_budget_ms": _pattern_budget_ms(),
        }
    flags: tuple[str, ...] = ("--disable-http2",) if config.http_version == "1.1" else ()
    return LighthouseRunSpec(
        config={"extends": "lighthouse:default", "settings": settings},
        secrets=secrets,
        browser_flags=flags,
        network=network,
        video=config.video,
        user_agent=config.user_agent,
    )
