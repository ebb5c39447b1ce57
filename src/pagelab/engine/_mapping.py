"""From a Lighthouse result (LHR) to pagelab's report fields: pure, tested on recorded LHRs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pagelab.models import (
    METRICS,
    EngineEnvironment,
    LighthouseError,
    Metrics,
    TestStatus,
    user_timing_values,
)

__all__ = [
    "LHR_AUDITS",
    "NETWORK_ERRORS",
    "LhrSummary",
    "describe_network_error",
    "filmstrip",
    "final_screenshot",
    "summarize_lhr",
]

#: Metric field -> Lighthouse audit id (from the metric registry). Values are
#: ``numericValue`` (ms; CLS unitless); the score comes from the performance category.
LHR_AUDITS: dict[str, str] = {
    name: m.audit_id for name, m in METRICS.items() if m.audit_id is not None
}


@dataclass(frozen=True, slots=True)
class LhrSummary:
    status: TestStatus
    lighthouse_version: str | None
    metrics: Metrics | None
    error: LighthouseError | None
    environment: EngineEnvironment


def _numeric(audits: dict[str, Any], audit_id: str) -> float | None:
    audit = audits.get(audit_id)
    if not isinstance(audit, dict):
        return None
    value = audit.get("numericValue")
    # An audit that errored has no numericValue: the metric is null, never invented.
    return float(value) if isinstance(value, int | float) else None


def _environment(lhr: dict[str, Any], chrome_version: str | None) -> EngineEnvironment:
    env = lhr.get("environment") or {}
    settings = lhr.get("configSettings") or {}
    return EngineEnvironment(
        chrome_version=chrome_version,
        benchmark_index=env.get("benchmarkIndex"),
        host_user_agent=env.get("hostUserAgent"),
        network_user_agent=env.get("networkUserAgent"),
        form_factor=settings.get("formFactor"),
        screen_emulation=settings.get("screenEmulation"),
        throttling_method=settings.get("throttlingMethod"),
        throttling=settings.get("throttling"),
    )


#: Chromium's network errors (net/base/net_error_list.h) in a user's words; any other
#: ``net::ERR_SOME_THING`` reads "some thing".
NETWORK_ERRORS: dict[str, str] = {
    "net::ERR_ADDRESS_UNREACHABLE": "address unreachable",
    "net::ERR_BLOCKED_BY_CLIENT": "blocked by pagelab (blacklist, ad block or target policy)",
    "net::ERR_CERT_AUTHORITY_INVALID": "TLS certificate not trusted",
    "net::ERR_CERT_COMMON_NAME_INVALID": "TLS certificate is for another host",
    "net::ERR_CERT_DATE_INVALID": "TLS certificate expired or not yet valid",
    "net::ERR_CONNECTION_CLOSED": "connection closed",
    "net::ERR_CONNECTION_REFUSED": "connection refused",
    "net::ERR_CONNECTION_RESET": "connection reset",
    "net::ERR_CONNECTION_TIMED_OUT": "connection timed out",
    "net::ERR_EMPTY_RESPONSE": "the server closed the connection without a response",
    "net::ERR_NAME_NOT_RESOLVED": "host name not found (DNS)",
    "net::ERR_SSL_PROTOCOL_ERROR": "TLS handshake failed",
    "net::ERR_TIMED_OUT": "timed out",
    "net::ERR_TOO_MANY_REDIRECTS": "too many redirects",
}


def describe_network_error(error: str) -> str:
    """``net::ERR_CONNECTION_REFUSED: connection refused``: the code and what it means."""
    words = NETWORK_ERRORS.get(error)
    if words is None:
        words = error.removeprefix("net::").removeprefix("ERR_").replace("_", " ").lower()
    return f"{error}: {words}"


def summarize_lhr(
    lhr: dict[str, Any], *, chrome_version: str | None = None, network_error: str | None = None
) -> LhrSummary:
    """Status, metrics or error, version and environment of one LHR.

    A ``runtimeError`` (the page could not be tested: NO_FCP, FAILED_DOCUMENT_REQUEST...)
    makes the run ``failed`` with Lighthouse's own code and message, and no metrics.
    ``network_error`` is the main document's network error when the driver saw one (the LHR
    does not record it): the message starts with it, e.g. ``net::ERR_CONNECTION_REFUSED:
    connection refused. Chrome prevented page load with an interstitial...``.
    """
    version = lhr.get("lighthouseVersion")
    environment = _environment(lhr, chrome_version)
    runtime_error = lhr.get("runtimeError")
    if isinstance(runtime_error, dict) and runtime_error.get("code"):
        message = str(runtime_error.get("message", ""))
        if network_error:
            described = describe_network_error(network_error)
            message = f"{described}. {message}" if message else described
        error = LighthouseError(code=str(runtime_error["code"]), message=message)
        return LhrSummary(TestStatus.FAILED, version, None, error, environment)
    audits = lhr.get("audits") or {}
    values = {field: _numeric(audits, audit_id) for field, audit_id in LHR_AUDITS.items()}
    score = ((lhr.get("categories") or {}).get("performance") or {}).get("score")
    timings = user_timing_values(
        ((audits.get("user-timings") or {}).get("details") or {}).get("items"))
    metrics = Metrics(
        **values,
        performance_score=round(score * 100, 2) if isinstance(score, int | float) else None,
        user_timings=timings or None,
    )
    return LhrSummary(TestStatus.SUCCESS, version, metrics, None, environment)


def final_screenshot(lhr: dict[str, Any]) -> str | None:
    """The final screenshot as a data URI."""
    details = ((lhr.get("audits") or {}).get("final-screenshot") or {}).get("details") or {}
    data = details.get("data")
    return data if isinstance(data, str) else None


def filmstrip(lhr: dict[str, Any]) -> str | None:
    """JSON text of the timed thumbnails ``[{timing (ms), timestamp (µs), data}]``."""
    details = ((lhr.get("audits") or {}).get("screenshot-thumbnails") or {}).get("details") or {}
    items = details.get("items")
    return json.dumps(items) if isinstance(items, list) and items else None
