"""``/v1/lighthouse-tests``: create, list, retrieve, and read a test's resources."""

from __future__ import annotations

import base64
import math
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from pydantic import TypeAdapter
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route

from pagelab._exceptions import InvalidInputError
from pagelab.models import (
    MAX_BRANCH_LENGTH,
    MAX_COMMIT_LENGTH,
    LighthouseConfig,
    LighthouseTestRequest,
    TestReport,
    build_filters,
    from_epoch,
    to_epoch_ms,
)
from pagelab.store import (
    ARTIFACT_NAMES,
    Account,
    Connection,
    TestQuery,
    charge_credits,
    create_test_report,
    get_test,
    list_tests,
    record_test_charges,
)

from .._deps import (
    AccountDep,
    ConnectionDep,
    LinksDep,
    ServicesDep,
    check_targets,
    read_json_body,
    request_body_schema,
    require_account,
    require_account_test,
    require_credits,
    split_credentials,
)
from .._errors import ApiProblem, error_responses
from .._state import Services
from ._common import MAX_ID_LENGTH, ListResponse, not_found

__all__ = ["hot_routes", "router"]

router = APIRouter(prefix="/v1/lighthouse-tests", tags=["lighthouse tests"])

MAX_PER_PAGE = 100
DEFAULT_PER_PAGE = 10
# Beyond this a page is empty anyway; the bound keeps the SQL offset within 64 bits.
MAX_PAGE = 1_000_000_000


#: The report of a creation, serialized as FastAPI would (``response_model``, by alias).
_REPORT_JSON: TypeAdapter[TestReport] = TypeAdapter(TestReport)


@router.post(
    "",
    status_code=201,
    response_model=TestReport,
    summary="Run a lighthouse test",
    description="Queues a test (status `idle`) and takes one lighthouse credit.",
    responses=error_responses(400, 401, 402, 429),
    # No dependencies (see below), so the key's security requirement is stated here.
    openapi_extra={**request_body_schema(LighthouseTestRequest), "security": [{"ApiKey": []}]},
)
async def create_lighthouse_test(request: Request) -> Response:
    # The hottest write: no FastAPI dependencies (solving them cost more than the rest of
    # the request), the same checks in the same order: 401, 429, then 400, then 402.
    services, account, headers = await require_account(request)
    body = await read_json_body(request, LighthouseTestRequest)
    report: TestReport | None = None
    url, config = _target(body)
    if services.settings.target_policy.restricts:
        # The SSRF guard resolves the host (its own threads, bounded; no connection held),
        # only for a key that can pay: a key without credits costs no look-up at all.
        require_credits(services, account, "lighthouse", 1, _NO_CREDITS)
        await check_targets(request, services, account, [body.url], field="url")
    # When no writer holds the lock, the write (a credit and one insert, well under a
    # millisecond) runs here, cheaper than the thread hop around it.
    with services.pool.try_write() as conn:
        if conn is not None:
            report = _insert(services, account, conn, body, url, config)
    if report is None:
        report = await run_in_threadpool(_create_test, services, account, body, url, config)
    services.work_available.set()
    return Response(
        _REPORT_JSON.dump_json(report, by_alias=True), status_code=201,
        media_type="application/json", headers=headers,
    )


def _target(body: LighthouseTestRequest) -> tuple[str, LighthouseConfig]:
    """The URL to test and the config: credentials in the URL are moved to the config,
    which masks them in every echo and forgets them once the test has run (the browser
    sends them the same way: Basic)."""
    url, username, password = split_credentials(body.url)
    config = body.config
    if url != body.url:
        if config.auth_username is not None or config.auth_password is not None:
            raise ApiProblem(400, "url: credentials in the URL and in config.auth_*: "
                             "send them once, in config.auth_username / auth_password")
        config = config.model_copy(update={"auth_username": username or None,
                                           "auth_password": password or None})
    return url, config


def _create_test(
    services: Services, account: Account, body: LighthouseTestRequest, url: str,
    config: LighthouseConfig,
) -> TestReport:
    # Queued behind the process's other writers without busy sleeps.
    with services.pool.connection() as conn, services.pool.write(conn):
        return _insert(services, account, conn, body, url, config)


_NO_CREDITS = "no lighthouse credits left (see GET /v1/account/credits)"


def _insert(
    services: Services,
    account: Account,
    conn: Connection,
    body: LighthouseTestRequest,
    url: str,
    config: LighthouseConfig,
) -> TestReport:
    """Charge one credit and insert the test (call inside a write transaction: the check,
    the charge and the insert are atomic); the report is built from what was inserted."""
    paid = charge_credits(conn, account.id, "lighthouse", 1)
    if paid is None:
        raise ApiProblem(402, _NO_CREDITS)
    report = create_test_report(
        conn,
        url=url,
        device=body.device,
        location=body.location,
        config=config,
        retention=services.settings.retention,
        account_id=account.id,
        build=body.build,
    )
    assert report.id is not None
    record_test_charges(conn, account.id, [report.id], paid)
    return report


def _bounded_int(text: str | None, default: int, low: int, high: int) -> int:
    """The integer in ``text`` clamped to ``[low, high]``; ``default`` when unparsable."""
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        return default
    if math.isnan(value):
        return default
    return int(min(max(value, low), high))


def _epoch_ms(text: str | None) -> int | None:
    """A created_at bound in epoch ms; seconds and ISO 8601 are read too; else ignored."""
    if text is None or not text.strip():
        return None
    try:
        number = float(text)
    except ValueError:
        try:
            return to_epoch_ms(datetime.fromisoformat(text.strip().replace("Z", "+00:00")))
        except ValueError:
            return None
    try:
        return to_epoch_ms(from_epoch(number))
    except (ValueError, OverflowError, OSError):
        # Out of datetime's range: beyond every stored test on that side.
        return None if math.isnan(number) else (2**62 if number > 0 else -(2**62))


_TIME_HELP = (
    "Epoch milliseconds (a number below 1e11 is read as seconds; ISO 8601 is accepted). "
    "An unparsable value is ignored."
)


@router.get(
    "",
    response_model=ListResponse[TestReport],
    summary="List lighthouse tests",
    description=(
        "The caller's tests, newest first. The paging and time parameters never cause an "
        "error: an out-of-range or unparsable value falls back to the default or the "
        "nearest bound. `branch` and `commit` (pagelab's extension) keep only the tests of "
        "that branch or build; an empty one, or one longer than a stored one can be (255 / "
        "100 characters), is refused (400)."
    ),
    responses=error_responses(400, 401, 429),
)
async def list_lighthouse_tests(
    services: ServicesDep,
    account: AccountDep,
    links: LinksDep,
    page: Annotated[str | None, Query(description="Page number, from 1 (default 1).")] = None,
    per_page: Annotated[
        str | None, Query(description="Page size, 1 to 100 (default 10).")
    ] = None,
    created_at_gt: Annotated[
        str | None, Query(description=f"created_at greater than. {_TIME_HELP}")
    ] = None,
    created_at_gte: Annotated[
        str | None, Query(description=f"created_at greater than or equal. {_TIME_HELP}")
    ] = None,
    created_at_lt: Annotated[
        str | None, Query(description=f"created_at less than. {_TIME_HELP}")
    ] = None,
    created_at_lte: Annotated[
        str | None, Query(description=f"created_at less than or equal. {_TIME_HELP}")
    ] = None,
    branch: Annotated[
        str | None, Query(description="Only the tests of this branch (their `build.branch`).",
                          min_length=1, max_length=MAX_BRANCH_LENGTH)
    ] = None,
    commit: Annotated[
        str | None, Query(description="Only the tests of this commit (their `build.commit`).",
                          min_length=1, max_length=MAX_COMMIT_LENGTH)
    ] = None,
) -> ListResponse[TestReport]:
    try:
        branch, commit = build_filters(branch, commit)
    except InvalidInputError as exc:
        raise ApiProblem(400, str(exc)) from exc
    query = TestQuery(
        page=_bounded_int(page, 1, 1, MAX_PAGE),
        per_page=_bounded_int(per_page, DEFAULT_PER_PAGE, 1, MAX_PER_PAGE),
        created_at_gt=_epoch_ms(created_at_gt),
        created_at_gte=_epoch_ms(created_at_gte),
        created_at_lt=_epoch_ms(created_at_lt),
        created_at_lte=_epoch_ms(created_at_lte),
        branch=branch,
        commit=commit,
    )

    def read_page() -> ListResponse[TestReport]:
        # A deep page steps over index entries for a few ms: off the event loop.
        with services.pool.connection() as conn:
            tests = list_tests(conn, query, account_id=account.id, report_url=links.test)
        return ListResponse(data=tests)

    return await run_in_threadpool(read_page)


@router.get(
    "/{id}",
    response_model=TestReport,
    summary="Retrieve a lighthouse test",
    responses=error_responses(401, 404, 429),
    # No dependencies (see below), so the key's security requirement is stated here.
    openapi_extra={"security": [{"ApiKey": []}]},
)
async def get_lighthouse_test(id: str, request: Request) -> Response:
    # The hottest read (clients poll it): no FastAPI dependencies, the same checks in the
    # same order (401, 429, then 404). In the event loop, no thread hop: on SQLite one
    # indexed read on the loop's own connection; on PostgreSQL the key, its bucket and
    # the test in one round trip, awaited.
    if len(id) > MAX_ID_LENGTH:
        await require_account(request)
        raise not_found("lighthouse test", id)
    _, headers, report = await require_account_test(request, id)
    if report is None:
        raise not_found("lighthouse test", id)
    return Response(
        _REPORT_JSON.dump_json(report, by_alias=True), media_type="application/json",
        headers=headers,
    )


async def _serve_lighthouse_test(request: Request) -> Response:
    return await get_lighthouse_test(request.path_params["id"], request)


#: The two hottest requests, polling a test and creating one, served by plain Starlette
#: routes that the app puts before every other: matched first, and without FastAPI's
#: parameter solving (together about a third of a poll's CPU). The APIRoutes above stay,
#: never reached for these methods, so ``/openapi.json`` documents them as before.
hot_routes = (
    Route(f"{router.prefix}/{{id}}", _serve_lighthouse_test, methods=["GET"],
          include_in_schema=False),
    Route(router.prefix, create_lighthouse_test, methods=["POST"], include_in_schema=False),
)


def _as_json_string(data: bytes, media_type: str) -> str:
    if media_type.startswith("text/") or media_type == "application/json":
        return data.decode("utf-8", errors="replace")
    # Binary (the video): a data URI, so the body stays one JSON string.
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


@router.get(
    "/{id}/resources/{resource_name}",
    response_model=str,
    summary="Retrieve a resource of a lighthouse test",
    description=(
        "The body is one JSON string. `lighthouse-json`: the Lighthouse result (LHR) as "
        "JSON text; `html-report`: Lighthouse's HTML report; `screenshot`: the final "
        "screenshot as a data URI; `filmstrip`: JSON text of the timed thumbnails; "
        "`video`: the page-load video as a data URI (tests run with `config.video`)."
    ),
    responses=error_responses(401, 404, 429),
)
def get_lighthouse_test_resource(
    id: str,
    resource_name: str,
    services: ServicesDep,
    conn: ConnectionDep,
    account: AccountDep,
) -> str:
    report = get_test(conn, id, account_id=account.id) if len(id) <= MAX_ID_LENGTH else None
    if report is None:
        raise not_found("lighthouse test", id)
    if resource_name not in ARTIFACT_NAMES:
        names = ", ".join(ARTIFACT_NAMES)
        raise ApiProblem(404, f"unknown resource {resource_name[:100]!r} (one of {names})")
    data = services.store.artifacts.read(conn, id, resource_name)
    if data is None:
        raise ApiProblem(
            404, f"test {id} has no {resource_name} (status {report.status.value})"
        )
    return _as_json_string(data, ARTIFACT_NAMES[resource_name][1])
