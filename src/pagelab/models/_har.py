"""A test's HAR and LHR reached from its report: where the HAR is (beside the report
``report_url`` opens) and the parsed document, for ``report.har()`` and
``runner.har(report)`` alike; the LHR the report embeds, for replayed runs.

A report carries ``report_url``, never its runner: the HAR's address follows from it. On
the service the report's signed link opens the test's HAR at ``<link path>/har`` with the
same token; a LocalRunner's ``file://`` report has the HAR in the same directory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from pagelab._exceptions import InvalidInputError, NotFoundError, TransportError

__all__ = ["HAR_FILE", "HOSTED_HAR", "REPORT_FILE", "har_url", "parse_har", "read_har",
           "read_report_lhr"]

#: The stored file names of a test's HTML report and HAR (``pagelab.store``'s artifacts).
REPORT_FILE = "report.html"
HAR_FILE = "run.har"
#: The hosted report page's path ends in ``/reports/lighthouse-tests/<id>``; its HAR is here.
HOSTED_HAR = "har"
_HOSTED_PREFIX = "/reports/lighthouse-tests/"
_TIMEOUT_S = 60.0
#: Lighthouse's HTML report assigns the LHR here (its JSON with ``<`` escaped).
_EMBEDDED_LHR = "window.__LIGHTHOUSE_JSON__ = "


def har_url(report_url: str | None) -> str | None:
    """The address of the HAR of the test whose report is at ``report_url``; None when
    that address does not say (no report, or not one pagelab wrote)."""
    if not report_url:
        return None
    parts = urlsplit(report_url)
    if parts.scheme == "file" and parts.path.endswith(f"/{REPORT_FILE}"):
        return urlunsplit(parts._replace(path=parts.path.removesuffix(REPORT_FILE) + HAR_FILE))
    if (parts.scheme in ("http", "https") and parts.path.startswith(_HOSTED_PREFIX)
            and "/" not in parts.path.removeprefix(_HOSTED_PREFIX)):
        return urlunsplit(parts._replace(path=f"{parts.path}/{HOSTED_HAR}"))
    return None


def parse_har(text: str, what: str) -> dict[str, Any]:
    """The HAR document in ``text`` (``what`` names it in errors: ``the har of lt_…``)."""
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} is not JSON") from exc
    if not isinstance(parsed, dict) or "log" not in parsed:
        raise ValueError(f"{what} is not a HAR document")
    return parsed


def _read_linked(url: str, what: str, missing: str) -> str:
    """The text at a report's ``file://`` or ``http(s)://`` address (``missing``: why a
    file may be absent), foreign errors translated."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        try:
            return Path(unquote(parts.path)).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise NotFoundError(f"{what}: {missing}") from None
        except OSError as exc:
            raise InvalidInputError(f"{what}: cannot read {url}: {exc.strerror}") from exc
    import httpx

    try:
        response = httpx.get(url, timeout=_TIMEOUT_S)
    except httpx.HTTPError as exc:
        raise TransportError(f"{what}: could not reach {parts.netloc}: {exc}") from exc
    if response.status_code == 404:
        raise NotFoundError(f"{what}: the server has none (or the report's link expired)")
    if response.status_code != 200:
        raise TransportError(f"{what}: the server answered {response.status_code}")
    return response.text


def read_har(report_url: str | None, test_id: str | None) -> dict[str, Any]:
    """The HAR beside the report at ``report_url`` (see :func:`har_url`), parsed."""
    what = f"the har of {test_id or 'this report'}"
    url = har_url(report_url)
    if url is None:
        raise InvalidInputError(
            f"{what}: the report has no report_url to find it by (a run that failed, or one "
            "whose artifacts are kept in the database): use runner.har(report)")
    return parse_har(_read_linked(url, what, "none beside the report (only runs of a pagelab "
                                  "engine that records HARs have one)"), what)


def read_report_lhr(report_url: str | None, test_id: str | None) -> dict[str, Any]:
    """The LHR the Lighthouse HTML report at ``report_url`` embeds (a LocalRunner's
    ``file://`` report or the service's hosted one), parsed; how replayed runs, which keep
    their ``report_url`` but not their LHR, are read again."""
    what = f"the Lighthouse result of {test_id or 'this run'}"
    if not report_url or urlsplit(report_url).scheme not in ("file", "http", "https"):
        raise InvalidInputError(f"{what}: the run has no report_url to read it from")
    html = _read_linked(report_url, what, f"its report is gone ({report_url})")
    start = html.find(_EMBEDDED_LHR)
    try:
        if start < 0:
            raise ValueError("no embedded result")
        parsed, _ = json.JSONDecoder().raw_decode(html, start + len(_EMBEDDED_LHR))
    except ValueError as exc:
        raise InvalidInputError(f"{what}: {report_url} is not a Lighthouse HTML report "
                                f"({exc})") from exc
    if not isinstance(parsed, dict) or "audits" not in parsed:
        raise InvalidInputError(f"{what}: {report_url} embeds no Lighthouse result")
    return parsed
