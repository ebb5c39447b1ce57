"""A test's stored resources (LHR, HTML report, screenshot, filmstrip, screenshots, video,
HAR), the same on every runner: each runner only says how it reads one resource's string."""

from __future__ import annotations

import base64
import binascii
import builtins
import json
from typing import Any

from pagelab._exceptions import InvalidInputError, NotFoundError
from pagelab.models import MAX_STRING_LENGTH, BatchItem, TestReport, parse_har
from pagelab.store import ARTIFACT_NAMES

__all__ = ["RESOURCE_NAMES", "ReportRef", "ResourceReader", "decode_data_uri", "report_test_id"]

#: The resource names of ``GET /v1/lighthouse-tests/{id}/resources/{name}``.
RESOURCE_NAMES: tuple[str, ...] = tuple(ARTIFACT_NAMES)

#: What names a test for the resource methods: a report, a batch item or its ``lt_…`` id.
ReportRef = TestReport | BatchItem | str

_WHEN_MISSING = {
    "video": "only tests run with config video=True have one",
    "lighthouse-json": "only successful runs have one",
    "html-report": "only successful runs have one",
    "har": "only runs of a pagelab engine that records HARs have one",
    "screenshots": "only runs of a pagelab engine that keeps the trace's screenshots have them",
}


def report_test_id(report: ReportRef) -> str:
    """The test id of a report, a batch item or an id string."""
    if isinstance(report, TestReport | BatchItem):
        if report.id is None:
            raise InvalidInputError(f"this {type(report).__name__} has no id (not stored yet)")
        return report.id
    if isinstance(report, str):
        if not report.startswith("lt_") or len(report) > MAX_STRING_LENGTH:
            raise NotFoundError(f"no test with id {report[:100]!r} (test ids start lt_)")
        return report
    raise InvalidInputError(
        f"expected a TestReport, a BatchItem or a test id, got {type(report).__name__}"
    )


def decode_data_uri(text: str, what: str) -> bytes:
    """The bytes of a base64 ``data:`` URI (as the screenshot, thumbnails and video are)."""
    head, sep, payload = text.partition(",")
    if not (sep and head.startswith("data:") and head.endswith(";base64")):
        raise ValueError(f"the {what} is not a base64 data URI")
    try:
        return base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"the {what} is not valid base64: {exc}") from exc


class ResourceReader:
    """``resource`` and its typed helpers over one primitive, :meth:`_read_resource`.

    Mixed into both runners, so their signatures and parsing are one and the same.
    """

    def _read_resource(self, test_id: str, name: str) -> str | None:
        """The resource's string; None when the test exists but lacks it; raises
        :class:`NotFoundError` when there is no such test."""
        raise NotImplementedError

    def _optional(self, report: ReportRef, name: str) -> str | None:
        if not isinstance(name, str) or name not in ARTIFACT_NAMES:
            raise InvalidInputError(
                f"unknown resource {str(name)[:100]!r} (one of {', '.join(RESOURCE_NAMES)})"
            )
        return self._read_resource(report_test_id(report), name)

    def resource(self, report: ReportRef, name: str) -> str:
        """One resource of a test as the API's string: ``lighthouse-json`` (LHR JSON text),
        ``html-report`` (HTML), ``screenshot`` (a data URI), ``filmstrip`` (JSON text of
        ``[{timing, timestamp, data}]``), ``screenshots`` (JSON text of ``[{timing, data}]``,
        every screenshot of the trace), ``video`` (a ``data:video/webm`` URI) or ``har``
        (JSON text of the run's HAR 1.2 document).

        ``report`` is a :class:`TestReport`, a :class:`BatchItem` or a test id. A resource the
        test does not have raises :class:`~pagelab.NotFoundError` naming it.
        """
        text = self._optional(report, name)
        if text is None:
            test_id = report_test_id(report)
            reason = _WHEN_MISSING.get(name, "Lighthouse did not record one")
            raise NotFoundError(f"test {test_id} has no {name} ({reason})")
        return text

    def lhr(self, report: ReportRef) -> dict[str, Any]:
        """The full Lighthouse result (LHR) of a successful test, parsed."""
        text = self.resource(report, "lighthouse-json")
        what = f"the lighthouse-json of {report_test_id(report)}"
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{what} is not JSON") from exc
        if not isinstance(parsed, dict):
            raise ValueError(f"{what} is not an object")
        return parsed

    def har(self, report: ReportRef) -> dict[str, Any]:
        """The run's HTTP Archive (HAR 1.2), parsed: every request and response of the page
        load, converted from the DevTools log the engine recorded (by chrome-har), with
        credentials (``Authorization``, cookies, the test's secrets) masked as ``***``.
        ``json.dump`` it to a ``.har`` file to open it in Chromium's DevTools. A report
        with a ``report_url`` reads it without the runner too: ``report.har()``."""
        return parse_har(self.resource(report, "har"), f"the har of {report_test_id(report)}")

    def screenshot(self, report: ReportRef) -> bytes:
        """The final screenshot's image bytes (JPEG, as Lighthouse captures it)."""
        return decode_data_uri(self.resource(report, "screenshot"), "screenshot")

    def filmstrip(self, report: ReportRef) -> builtins.list[tuple[float, bytes]]:
        """The timed thumbnails as ``(ms since navigation start, JPEG bytes)``, in order."""
        return self._timed_images(report, "filmstrip")

    def screenshots(self, report: ReportRef) -> builtins.list[tuple[float, bytes]]:
        """Every screenshot of the run's trace (one per paint, what Speed Index is computed
        from) as ``(ms since navigation start, JPEG bytes)``, in order."""
        return self._timed_images(report, "screenshots")

    def _timed_images(self, report: ReportRef, name: str) -> builtins.list[tuple[float, bytes]]:
        items = json.loads(self.resource(report, name))
        if not isinstance(items, builtins.list):
            raise ValueError(f"the {name} resource is not a JSON array")
        return [(float(item["timing"]), decode_data_uri(str(item["data"]), f"{name} image"))
                for item in items]

    def video(self, report: ReportRef) -> bytes | None:
        """The page-load video (WebM bytes), or None when the test was run without
        ``config.video`` (an unknown test still raises :class:`~pagelab.NotFoundError`)."""
        text = self._optional(report, "video")
        return None if text is None else decode_data_uri(text, "video")
