"""From a Lighthouse result (LHR) to pagelab's report fields: pure, tested on recorded LHRs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pagelab.models import METRICS, EngineEnvironment, LighthouseError, Metrics, TestStatus

__all__ = ["LHR_AUDITS", "LhrSummary", "filmstrip", "final_screenshot", "summarize_lhr"]

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


def summarize_lhr(lhr: dict[str, Any], *, chrome_version: str | None = None) -> LhrSummary:
    """Status, metrics or error, version and environment of one LHR.

    A ``runtimeError`` (the page could not be tested: NO_FCP, FAILED_DOCUMENT_REQUEST...)
    makes the run ``failed`` with Lighthouse's own code and message, and no metrics.
    """
    version = lhr.get("lighthouseVersion")
    environment = _environment(lhr, chrome_version)
    runtime_error = lhr.get("runtimeError")
    if isinstance(runtime_error, dict) and runtime_error.get("code"):
        error = LighthouseError(
            code=str(runtime_error["code"]), message=str(runtime_error.get("message", ""))
        )
        return LhrSummary(TestStatus.FAILED, version, None, error, environment)
    audits = lhr.get("audits") or {}
    values = {field: _numeric(audits, audit_id) for field, audit_id in LHR_AUDITS.items()}
    score = ((lhr.get("categories") or {}).get("performance") or {}).get("score")
    metrics = Metrics(
        **values,
        performance_score=round(score * 100, 2) if isinstance(score, int | float) else None,
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
