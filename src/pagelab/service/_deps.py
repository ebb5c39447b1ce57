"""Dependencies shared by the routers, with their ``Annotated`` aliases."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request, Response, Security
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, ValidationError

from pagelab._exceptions import InvalidInputError
from pagelab.store import Account, find_account_by_key

from ._errors import ApiProblem, validation_message
from ._server import MAX_BODY_BYTES
from ._state import ReportKind, Services

__all__ = [
    "API_KEY_HEADER",
    "AccountDep",
    "ConnectionDep",
    "LinkBuilder",
    "LinksDep",
    "OptionalAccountDep",
    "ServicesDep",
    "check_targets",
    "json_body",
]

ModelT = TypeVar("ModelT", bound=BaseModel)


API_KEY_HEADER = APIKeyHeader(
    name="X-API-KEY",
    scheme_name="ApiKey",
    description="Your API key (`pagelab keys create`).",
    auto_error=False,
)


# Dependencies are coroutines: FastAPI runs a plain function dependency on the thread
# pool, one hop each. Their work (a key lookup, a token bucket) is short and never waits.


async def get_services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


def get_connection(services: ServicesDep) -> Iterator[sqlite3.Connection]:
    with services.pool.connection() as conn:
        yield conn


ConnectionDep = Annotated[sqlite3.Connection, Depends(get_connection)]


def _rate_limit(services: Services, caller: str, response: Response) -> None:
    decision = services.limiter.check(caller)
    if not decision.allowed:
        raise ApiProblem(
            429,
            f"more than {decision.limit} requests per minute; retry in "
            f"{decision.retry_after} s",
            headers=decision.headers(),
        )
    response.headers.update(decision.headers())


async def get_optional_account(
    request: Request,
    response: Response,
    services: ServicesDep,
    api_key: Annotated[str | None, Security(API_KEY_HEADER)],
) -> Account | None:
    """The caller's account, or None when no key was sent. A key that is sent must be
    valid. Rate-limits per key, or per client address without one."""
    if not api_key:
        client = request.client.host if request.client else "unknown"
        _rate_limit(services, f"address:{client}", response)
        return None
    # In the event loop, on its own connection (one indexed read; WAL readers never
    # wait for writers): no hop, and never a second pooled connection.
    account = find_account_by_key(services.pool.thread_connection(), api_key)
    if account is None:
        raise ApiProblem(401, "unknown or revoked API key")
    _rate_limit(services, account.id, response)
    return account


OptionalAccountDep = Annotated[Account | None, Depends(get_optional_account)]


async def get_account(account: OptionalAccountDep) -> Account:
    if account is None:
        raise ApiProblem(401, "missing X-API-KEY header: send your API key")
    return account


AccountDep = Annotated[Account, Depends(get_account)]


def json_body(model: type[ModelT]) -> Callable[..., Awaitable[ModelT]]:
    """A dependency reading the JSON body as ``model``, after authentication.

    FastAPI parses declared bodies before running any dependency, so an unauthenticated
    caller would learn about body errors first; reading the body here keeps the order
    401, 429, then 400. The route documents the body with ``openapi_extra``.
    """

    async def read_body(request: Request, account: AccountDep) -> ModelT:
        # BufferedBodyMiddleware has read the body already (bounded in size and time).
        if request.scope.get("state", {}).get("body_too_large"):
            raise ApiProblem(400, f"body: larger than {MAX_BODY_BYTES} bytes")
        raw = await request.body()
        if not raw.strip():
            raise ApiProblem(400, "body: missing; send a JSON object")
        try:
            return model.model_validate_json(bytes(raw))
        except ValidationError as exc:
            raise ApiProblem(400, validation_message(exc.errors())) from exc

    return read_body


def request_body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` documenting a body read by :func:`json_body`."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}
            },
        }
    }


class LinkBuilder:
    """Builds absolute ``report_url`` links for one request."""

    def __init__(self, services: Services, base_url: str) -> None:
        self._links = services.links
        self._base_url = base_url

    def report(self, kind: ReportKind, report_id: str) -> str:
        return self._links.url(self._base_url, kind, report_id)

    def test(self, test_id: str) -> str:
        return self.report("lighthouse-tests", test_id)

    def batch(self, batch_id: str) -> str:
        return self.report("lighthouse-batch-tests", batch_id)


async def get_links(request: Request, services: ServicesDep) -> LinkBuilder:
    return LinkBuilder(services, services.settings.public_url or str(request.base_url))


LinksDep = Annotated[LinkBuilder, Depends(get_links)]


def check_targets(services: Services, urls: list[str], *, field: str) -> None:
    """400 unless every URL's host resolves to addresses the server's policy allows (the
    SSRF guard, before anything is charged). Blocking (DNS): call from a sync route."""
    policy = services.settings.target_policy
    if not policy.restricts:
        return
    try:
        policy.check_urls(urls, field=field)
    except InvalidInputError as exc:
        raise ApiProblem(400, str(exc)) from exc
