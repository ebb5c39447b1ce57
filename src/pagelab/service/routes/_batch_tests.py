"""``/v1/lighthouse-batch-tests``: create and retrieve batches."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from pagelab._exceptions import InvalidInputError
from pagelab.models import BatchReport, BatchTestRequest
from pagelab.runners import plan_batch
from pagelab.store import (
    charge_credits,
    create_batch,
    get_batch,
    record_test_charges,
)

from .._deps import (
    AccountDep,
    ConnectionDep,
    LinksDep,
    ServicesDep,
    check_targets,
    json_body,
    request_body_schema,
    require_credits,
    split_credentials,
)
from .._errors import ApiProblem, error_responses
from ._common import MAX_ID_LENGTH, not_found

__all__ = ["router"]

router = APIRouter(prefix="/v1/lighthouse-batch-tests", tags=["lighthouse batch tests"])


@router.post(
    "",
    status_code=201,
    response_model=BatchReport,
    summary="Run a lighthouse batch test",
    description=(
        "Queues one test per item and takes one lighthouse credit per item. `multiple-urls` "
        "tests every valid URL with the first valid device and location; "
        "`multiple-devices` / `multiple-locations` test the listed devices / locations "
        "(an empty list means all 15) with the first valid URL. Invalid entries are "
        "dropped. A pool that cannot pay for every item refuses the batch (402) and "
        "nothing is created."
    ),
    responses=error_responses(400, 401, 402, 429),
    openapi_extra=request_body_schema(BatchTestRequest),
)
async def create_lighthouse_batch_test(
    request: Request,
    services: ServicesDep,
    account: AccountDep,
    links: LinksDep,
    body: Annotated[BatchTestRequest, Depends(json_body(BatchTestRequest))],
) -> BatchReport:
    try:
        plan = plan_batch(body.urls, body.devices, body.locations, body.batch_type)
    except InvalidInputError as exc:
        raise ApiProblem(400, str(exc)) from exc
    if any(split_credentials(url)[1] is not None for url in plan.urls):
        # One config serves every item: credentials belong there, not in a URL.
        raise ApiProblem(400, "urls: no user:password@ in a URL; send credentials in "
                         "config.auth_username / auth_password")
    no_credits = (f"the batch needs {len(plan.items)} lighthouse credits; the pool has "
                  "fewer (see GET /v1/account/credits)")
    if services.settings.target_policy.restricts:
        # No database connection is held while the guard resolves (its own threads,
        # bounded per key and address), and a key that cannot pay costs no look-up.
        require_credits(services, account, "lighthouse", len(plan.items), no_credits)
        await check_targets(request, services, account, plan.urls, field="urls")

    def write() -> BatchReport:
        with services.pool.connection() as conn:
            # Queued behind the process's other writers (no busy sleeps).
            with services.pool.write(conn):
                paid = charge_credits(conn, account.id, "lighthouse", len(plan.items))
                if paid is None:
                    raise ApiProblem(402, no_credits)
                batch_id, test_ids = create_batch(
                    conn,
                    urls=plan.urls,
                    devices=plan.devices,
                    locations=plan.locations,
                    batch_type=body.batch_type,
                    config=body.config,
                    items=plan.items,
                    retention=services.settings.retention,
                    account_id=account.id,
                    build=body.build,
                )
                record_test_charges(conn, account.id, test_ids, paid)
            report = get_batch(
                conn, batch_id, account_id=account.id, report_url=links.test,
                batch_report_url=links.batch(batch_id),
            )
        assert report is not None
        return report

    report = await run_in_threadpool(write)
    services.work_available.set()
    return report


@router.get(
    "/{id}",
    response_model=BatchReport,
    summary="Retrieve a lighthouse batch test",
    description=(
        "Batch status: `idle` until an item starts, `active` while any item is idle or "
        "active after one started, `completed` when every item is `success` or `failed`."
    ),
    responses=error_responses(401, 404, 429),
)
def get_lighthouse_batch_test(
    id: str, conn: ConnectionDep, account: AccountDep, links: LinksDep
) -> BatchReport:
    report = (
        get_batch(conn, id, account_id=account.id, report_url=links.test,
                  batch_report_url=links.batch(id))
        if len(id) <= MAX_ID_LENGTH
        else None
    )
    if report is None:
        raise not_found("lighthouse batch test", id)
    return report
