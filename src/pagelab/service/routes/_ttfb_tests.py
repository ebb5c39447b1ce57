"""``/v1/ttfb-tests``: measure time to first byte from the locations of a region."""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, Depends

from pagelab._exceptions import InvalidInputError
from pagelab.catalog import ttfb_region
from pagelab.engine._ttfb import run_ttfb
from pagelab.models import TTFBResult, TTFBTestRequest
from pagelab.store import charge_credits, refund_credits, transaction

from .._deps import AccountDep, ConnectionDep, ServicesDep, json_body, request_body_schema
from .._errors import ApiProblem, error_responses

__all__ = ["router"]

logger = logging.getLogger("pagelab.service")

router = APIRouter(prefix="/v1/ttfb-tests", tags=["ttfb tests"])


@router.post(
    "",
    response_model=TTFBResult,
    summary="Run a TTFB test",
    description=(
        "Probes the URL once per location of the region (fresh connection and DNS lookup "
        "each) and answers when all are done. Timings are in milliseconds. Takes one ttfb "
        "credit. Every location is measured from this server (`vantage`)."
    ),
    responses=error_responses(400, 401, 402, 429),
    openapi_extra=request_body_schema(TTFBTestRequest),
)
def create_ttfb_test(
    services: ServicesDep,
    conn: ConnectionDep,
    account: AccountDep,
    body: Annotated[TTFBTestRequest, Depends(json_body(TTFBTestRequest))],
) -> TTFBResult:
    # A sync route: FastAPI runs it in a worker thread, so the probes (blocking libcurl
    # calls) never stall the event loop.
    try:
        ttfb_region(body.region)
    except InvalidInputError as exc:
        raise ApiProblem(400, str(exc)) from exc
    with transaction(conn, immediate=True):
        paid = charge_credits(conn, account.id, "ttfb", 1)
        if paid is None:
            raise ApiProblem(402, "no ttfb credits left (see GET /v1/account/credits)")
    try:
        return run_ttfb(body.url, body.region, timeout=services.settings.ttfb_timeout)
    except BaseException as exc:
        # Not the caller's fault: give the credit back before answering.
        with transaction(conn, immediate=True):
            refund_credits(conn, account.id, "ttfb", paid)
        if isinstance(exc, InvalidInputError):
            raise ApiProblem(400, str(exc)) from exc
        raise
