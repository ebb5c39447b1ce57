"""``/v1/ttfb-tests``: measure time to first byte from the locations of a region."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from pagelab._exceptions import InvalidInputError
from pagelab.catalog import ttfb_region
from pagelab.engine import location_result, probe
from pagelab.models import TTFBError, TTFBResult, TTFBTestRequest
from pagelab.store import charge_credits, refund_credits

from .._deps import (
    AccountDep,
    ServicesDep,
    check_targets,
    json_body,
    mask_credentials,
    request_body_schema,
    require_credits,
)
from .._errors import ApiProblem, error_responses
from .._state import Services
from ._common import gate_refusal

__all__ = ["router"]

logger = logging.getLogger("pagelab.service")

router = APIRouter(prefix="/v1/ttfb-tests", tags=["ttfb tests"])

# What a client is told to wait when the TTFB bound is reached: about one probe's time.
_RETRY_AFTER_S = 5

_NO_CREDITS = "no ttfb credits left (see GET /v1/account/credits)"


# Under the pool's write lock, as every write of the process: writers queue on it instead
# of sleeping in SQLite's busy handler.


def _charge(services: Services, account_id: str) -> list[bool] | None:
    with services.pool.connection() as conn, services.pool.write(conn):
        return charge_credits(conn, account_id, "ttfb", 1)


def _refund(services: Services, account_id: str, paid: list[bool]) -> None:
    with services.pool.connection() as conn, services.pool.write(conn):
        refund_credits(conn, account_id, "ttfb", paid)


@router.post(
    "",
    response_model=TTFBResult,
    summary="Run a TTFB test",
    description=(
        "Probes the URL once per location of the region (fresh connection and DNS lookup "
        "each, all locations at once) and answers when all are done, or at the request's "
        "deadline (probes still running then are `TIMEOUT` results). Timings are in "
        "milliseconds. Takes one ttfb credit. Every location is measured from this server "
        "(`vantage`). A caller with too many TTFB tests in progress gets 429, a server at "
        "its bound 503, both with `Retry-After`. A server started with `--broker` sends "
        "each location's probe to a fleet worker of that location (`vantage` names the "
        "workers that answered); a location with no live worker is a `failed` result with "
        "`NO_WORKER` at once, one whose worker does not answer in time `TIMEOUT`; a test "
        "no worker measured at all is refunded."
    ),
    responses=error_responses(400, 401, 402, 429, 503),
    openapi_extra=request_body_schema(TTFBTestRequest),
)
async def create_ttfb_test(
    services: ServicesDep,
    account: AccountDep,
    body: Annotated[TTFBTestRequest, Depends(json_body(TTFBTestRequest))],
    request: Request,
) -> TTFBResult:
    # Async, and the probes run on the service's own bounded executor: waiting for a slow
    # target never occupies the request thread pool that /healthz and the reads need.
    settings = services.settings
    try:
        region = ttfb_region(body.region)
    except InvalidInputError as exc:
        raise ApiProblem(400, str(exc)) from exc
    bound = services.ttfb_gate.enter(account.id)
    if bound != "ok":
        raise gate_refusal(services.ttfb_gate, bound, ("TTFB test", "TTFB tests"), _RETRY_AFTER_S)
    try:
        if settings.target_policy.restricts:
            require_credits(services, account, "ttfb", 1, _NO_CREDITS)
            await check_targets(request, services, account, [body.url], field="url")
        paid = await run_in_threadpool(_charge, services, account.id)
        if paid is None:
            raise ApiProblem(402, _NO_CREDITS)
        dispatcher = getattr(request.app.state, "dispatcher", None)
        try:
            if dispatcher is None:
                return await _probe_region(services, body.url, region.id)
            result = await _probe_region_fleet(services, dispatcher, body.url, region.id)
            if all(r.error is not None and r.error.code == "NO_WORKER" for r in result.result):
                # Nothing was measured: the fleet's fault, not the caller's.
                await run_in_threadpool(_refund, services, account.id, paid)
            return result
        except BaseException:
            # Not the caller's fault: give the credit back before answering.
            await run_in_threadpool(_refund, services, account.id, paid)
            raise
    finally:
        services.ttfb_gate.leave(account.id)


async def _probe_region(services: Services, url: str, region_id: str) -> TTFBResult:
    settings = services.settings
    region = ttfb_region(region_id)
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + settings.ttfb_deadline
    timeout = min(settings.ttfb_timeout, settings.ttfb_deadline)
    policy = settings.target_policy
    futures = [
        loop.run_in_executor(
            services.ttfb_executor, lambda: probe(url, timeout=timeout, policy=policy)
        )
        for _ in region.locations
    ]
    # A little slack over libcurl's own timeout, which bounds each probe already.
    await asyncio.wait(futures, timeout=max(0.0, deadline - time.monotonic()) + 1.0)
    results = []
    for location, future in zip(region.locations, futures, strict=True):
        if future.done() and future.exception() is None:
            data, error = future.result()
        else:
            future.cancel()
            if future.done() and not future.cancelled() and future.exception() is not None:
                logger.error("TTFB probe crashed", exc_info=future.exception())
            data, error = None, TTFBError(
                code="TIMEOUT",
                message=f"no answer within the request's {settings.ttfb_deadline:.0f} s",
            )
        results.append(location_result(location.id, location.name, data, error))
    return TTFBResult(url=mask_credentials(url), region=region.id, result=results,
                      vantage="local")


async def _probe_region_fleet(services: Services, dispatcher: Any, url: str,
                              region_id: str) -> TTFBResult:
    """Each location's probe on a fleet worker of that location (docs/scale-out.md)."""
    settings = services.settings
    region = ttfb_region(region_id)
    timeout = min(settings.ttfb_timeout, settings.ttfb_deadline)
    ids = [location.id for location in region.locations]
    answers = await asyncio.get_running_loop().run_in_executor(
        services.ttfb_executor,
        lambda: dispatcher.run_ttfb(url, ids, timeout=timeout, wait=settings.ttfb_deadline),
    )
    results = [
        location_result(location.id, location.name, answers[location.id].data,
                        answers[location.id].error)
        for location in region.locations
    ]
    workers = list(dict.fromkeys(answers[i].worker for i in ids if answers[i].worker))
    return TTFBResult(url=mask_credentials(url), region=region.id, result=results,
                      vantage=",".join(workers) or None)
