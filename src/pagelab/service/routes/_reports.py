"""Hosted report pages (the targets of ``report_url``): opened by a signed link, no key."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, Response

from pagelab.models import HOSTED_HAR, TestStatus
from pagelab.store import batch_owner, get_batch, get_test, test_owner

from .._deps import AddressLimitDep, ConnectionDep, LinksDep, ServicesDep
from .._pages import batch_comparison_page, message_page

__all__ = ["router"]

router = APIRouter(prefix="/reports", include_in_schema=False)

# The report embeds content of the tested page: the sandbox gives it an opaque origin, so
# nothing it runs can reach this server as same-origin. no-referrer keeps the link's token
# out of the Referer of links followed from the page.
_PAGE_HEADERS = {
    "Content-Security-Policy": "sandbox allow-scripts allow-popups "
    "allow-popups-to-escape-sandbox allow-downloads allow-modals",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "private, no-store",
}

TokenQuery = Annotated[str, Query()]


def _not_found() -> HTMLResponse:
    return HTMLResponse(
        message_page("Report not found", "The link is wrong, or the report has expired."),
        status_code=404,
        headers=_PAGE_HEADERS,
    )


@router.get("/lighthouse-tests/{id}", response_class=HTMLResponse,
            dependencies=[AddressLimitDep])
def lighthouse_test_report(
    id: str, services: ServicesDep, conn: ConnectionDep, token: TokenQuery = ""
) -> HTMLResponse:
    owner = test_owner(conn, id) if services.links.verify("lighthouse-tests", id, token) else None
    report = get_test(conn, id, account_id=owner) if owner is not None else None
    if report is None:
        return _not_found()
    html = services.store.artifacts.read(conn, id, "html-report")
    if report.status != TestStatus.SUCCESS or html is None:
        return HTMLResponse(
            message_page(
                f"Test {id}", f"The test is {report.status.value}; its report appears when "
                "it has run successfully."
            ),
            status_code=404,
            headers=_PAGE_HEADERS,
        )
    return HTMLResponse(html, headers=_PAGE_HEADERS)


@router.get(f"/lighthouse-tests/{{id}}/{HOSTED_HAR}", dependencies=[AddressLimitDep])
def lighthouse_test_har(
    id: str, services: ServicesDep, conn: ConnectionDep, token: TokenQuery = ""
) -> Response:
    """The test's HAR, opened by its report's signed link (``report.har()``): credentials
    were masked when it was stored; a download named after the test."""
    owner = test_owner(conn, id) if services.links.verify("lighthouse-tests", id, token) else None
    data = services.store.artifacts.read(conn, id, "har") if owner is not None else None
    if data is None:
        return _not_found()
    return Response(data, media_type="application/json", headers={
        **_PAGE_HEADERS, "Content-Disposition": f'attachment; filename="{id}.har"'})


@router.get("/lighthouse-batch-tests/{id}", response_class=HTMLResponse,
            dependencies=[AddressLimitDep])
def lighthouse_batch_report(
    id: str, services: ServicesDep, conn: ConnectionDep, links: LinksDep, token: TokenQuery = ""
) -> HTMLResponse:
    verified = services.links.verify("lighthouse-batch-tests", id, token)
    owner = batch_owner(conn, id) if verified else None
    batch = (
        get_batch(conn, id, account_id=owner, report_url=links.test,
                  batch_report_url=links.batch(id))
        if owner is not None
        else None
    )
    if batch is None:
        return _not_found()
    return HTMLResponse(batch_comparison_page(batch), headers=_PAGE_HEADERS)
