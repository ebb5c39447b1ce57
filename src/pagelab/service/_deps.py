"""Dependencies shared by the routers, with their ``Annotated`` aliases."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Annotated, Any, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from fastapi import Depends, Request, Response, Security
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, ValidationError

from pagelab.models import TestReport, validation_message
from pagelab.store import (
    Account,
    Connection,
    CreditKind,
    can_pay,
    find_account_by_key,
    get_test,
)

from ._errors import ApiProblem
from ._ratelimit import RateDecision, SharedRateLimiter
from ._server import MAX_BODY_BYTES
from ._state import ReportKind, Services

__all__ = [
    "API_KEY_HEADER",
    "AccountDep",
    "AddressLimitDep",
    "ConnectionDep",
    "LinkBuilder",
    "LinksDep",
    "OptionalAccountDep",
    "ServicesDep",
    "authenticate",
    "check_targets",
    "json_body",
    "links_for",
    "mask_credentials",
    "read_json_body",
    "require_account",
    "require_account_test",
    "require_credits",
    "split_credentials",
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


def get_connection(request: Request, services: ServicesDep) -> Iterator[Connection]:
    # Kept on the request so the key lookup reuses it: a request never holds two pooled
    # connections, which could deadlock a bounded pool.
    with services.pool.connection() as conn:
        request.state.db = conn
        try:
            yield conn
        finally:
            request.state.db = None


ConnectionDep = Annotated[Connection, Depends(get_connection)]


def _rate_limit(services: Services, caller: str) -> dict[str, str]:
    """The rate-limit headers of an allowed request; 429 past the caller's budget."""
    decision = services.limiter.check(caller)
    _admit(decision)
    return decision.headers()


async def authenticate(
    request: Request,
    services: Services,
    api_key: str | None,
    conn: Connection | None = None,
) -> tuple[Account | None, dict[str, str]]:
    """The caller's account (None when no key was sent; a key that is sent must be valid)
    and the rate-limit headers for the response. Rate-limits per key, or per client
    address without one. 401 and 429 are raised as :class:`ApiProblem`.

    SQLite: the key is read on ``conn`` when the request holds one, else in the event loop
    on the loop's own connection (one indexed read; WAL readers never wait for writers):
    no hop, and never a second pooled connection, nor one held for a slow route (a TTFB
    test). PostgreSQL: the key and its shared bucket in one round trip (``check_key``)."""
    if not api_key:
        return None, _rate_limit(services, f"address:{_client(request)}")
    account, headers, _ = await _check_key(request, services, api_key, conn)
    return account, headers


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


async def _check_key(
    request: Request,
    services: Services,
    api_key: str,
    conn: Connection | None = None,
    *,
    test_id: str | None = None,
    report_url: Callable[[str], str] | None = None,
) -> tuple[Account, dict[str, str], TestReport | None]:
    """:func:`authenticate` for a sent key, reading the account's test ``test_id`` too:
    on PostgreSQL in the same round trip as the key and the bucket."""
    limiter = services.limiter
    test: TestReport | None = None
    decision: RateDecision | None = None
    if isinstance(limiter, SharedRateLimiter):
        check, decision = await limiter.check_key(api_key, test_id=test_id,
                                                  report_url=report_url)
        account, test = check.account, check.test
    else:
        account = find_account_by_key(
            conn if conn is not None else services.pool.thread_connection(), api_key
        )
    if account is None:
        # Guessing keys costs a client its address's budget of wrong keys.
        failed = services.failed_keys.check(f"address:{_client(request)}")
        if not failed.allowed:
            raise ApiProblem(
                429,
                f"too many unknown keys from this address; retry in {failed.retry_after} s",
                headers=failed.headers(),
            )
        raise ApiProblem(401, "unknown or revoked API key")
    if decision is None:
        decision = limiter.check(account.id)
    _admit(decision)
    if test_id is not None and not isinstance(limiter, SharedRateLimiter):
        test = get_test(services.pool.thread_connection(), test_id, account_id=account.id,
                        report_url=report_url)
    return account, decision.headers(), test


def _admit(decision: RateDecision) -> None:
    if not decision.allowed:
        raise ApiProblem(
            429,
            f"more than {decision.limit} requests per minute; retry in "
            f"{decision.retry_after} s",
            headers=decision.headers(),
        )


async def require_account(request: Request) -> tuple[Services, Account, dict[str, str]]:
    """For a route that takes no dependencies (the hot ``POST /v1/lighthouse-tests``):
    the services, the caller's account and the rate-limit headers, checked exactly as
    :data:`AccountDep` does (401, then 429), without FastAPI's dependency solving."""
    services: Services = request.app.state.services
    account, headers = await authenticate(
        request, services, request.headers.get(API_KEY_HEADER.model.name) or None
    )
    if account is None:
        raise ApiProblem(401, "missing X-API-KEY header: send your API key")
    return services, account, headers


async def require_account_test(
    request: Request, test_id: str
) -> tuple[Account, dict[str, str], TestReport | None]:
    """:func:`require_account` for the hot ``GET /v1/lighthouse-tests/{id}``, with the
    account's test (None: unknown, expired or another account's), read in the event loop:
    on the loop's own connection (SQLite), or in the key's round trip (PostgreSQL)."""
    services: Services = request.app.state.services
    api_key = request.headers.get(API_KEY_HEADER.model.name) or None
    if not api_key:
        await authenticate(request, services, None)  # the address's budget first (429)
        raise ApiProblem(401, "missing X-API-KEY header: send your API key")
    return await _check_key(request, services, api_key, test_id=test_id,
                      report_url=links_for(request, services).test)


async def get_optional_account(
    request: Request,
    response: Response,
    services: ServicesDep,
    api_key: Annotated[str | None, Security(API_KEY_HEADER)],
) -> Account | None:
    """The caller's account, or None when no key was sent (see :func:`authenticate`)."""
    account, headers = await authenticate(
        request, services, api_key, getattr(request.state, "db", None)
    )
    response.headers.update(headers)
    return account


OptionalAccountDep = Annotated[Account | None, Depends(get_optional_account)]


async def get_account(account: OptionalAccountDep) -> Account:
    if account is None:
        raise ApiProblem(401, "missing X-API-KEY header: send your API key")
    return account


AccountDep = Annotated[Account, Depends(get_account)]


async def limit_by_address(request: Request, response: Response, services: ServicesDep) -> None:
    """The per-address rate limit, for keyless endpoints (report pages, /healthz)."""
    response.headers.update(_rate_limit(services, f"address:{_client(request)}"))


AddressLimitDep = Depends(limit_by_address)


async def read_json_body(request: Request, model: type[ModelT]) -> ModelT:
    """The JSON body as ``model``, validated from the raw bytes in one pydantic call; 400
    with the error body naming the fields otherwise. Call after authentication."""
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


def json_body(model: type[ModelT]) -> Callable[..., Awaitable[ModelT]]:
    """A dependency reading the JSON body as ``model``, after authentication.

    FastAPI parses declared bodies before running any dependency, so an unauthenticated
    caller would learn about body errors first; reading the body here keeps the order
    401, 429, then 400. The route documents the body with ``openapi_extra``.
    """

    async def read_body(request: Request, account: AccountDep) -> ModelT:
        return await read_json_body(request, model)

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


def _link_base(request: Request, settings: Any) -> str:
    """Base of ``report_url``: ``--public-url``; else the request's own address when its
    ``Host`` is a trusted host (or, with none configured, the address the server listens
    on), never a ``Host`` header chosen by the client (links would point elsewhere)."""
    if settings.public_url:
        return str(settings.public_url)
    scheme = request.scope.get("scheme", "http")  # not request.url: parsing it costs more
    host = (request.headers.get("host") or "").strip()
    if settings.trusted_hosts:
        hostname = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if host in settings.trusted_hosts or hostname in settings.trusted_hosts:
            return f"{scheme}://{host}/"
        return f"{scheme}://{settings.trusted_hosts[0]}/"
    server = request.scope.get("server")
    if server:
        address, port = server[0], server[1]
        literal = f"[{address}]" if ":" in str(address) else address
        return f"{scheme}://{literal}:{port}/"
    return str(request.base_url)


def links_for(request: Request, services: Services) -> LinkBuilder:
    """The request's :class:`LinkBuilder` (what :data:`LinksDep` gives a route)."""
    return LinkBuilder(services, _link_base(request, services.settings))


async def get_links(request: Request, services: ServicesDep) -> LinkBuilder:
    return links_for(request, services)


LinksDep = Annotated[LinkBuilder, Depends(get_links)]


async def check_targets(
    request: Request, services: Services, account: Account, urls: list[str], *, field: str
) -> None:
    """400 unless every URL's host resolves to addresses the server's policy allows (the
    SSRF guard, before anything is charged). The look-ups run on the guard's own threads,
    bounded in time and per key and client address: call holding no database connection."""
    await services.guard.check(urls, field=field, key=account.id, address=_client(request))


def require_credits(
    services: Services, account: Account, kind: CreditKind, amount: int, message: str
) -> None:
    """402 with ``message`` when the account cannot pay ``amount`` credits now: checked
    before the guard resolves anything, so a key without credits costs no look-up. One
    indexed read on the event loop's own connection; the charge itself decides later."""
    if not can_pay(services.pool.thread_connection(), account.id, kind, amount):
        raise ApiProblem(402, message)


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``(url without user:password@, username, password)``, names and passwords
    percent-decoded; the URL is returned unchanged when it carries none."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None, None
    netloc = parts.netloc.rsplit("@", 1)[1]
    clean = urlunsplit(parts._replace(netloc=netloc))
    username = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    return clean, username, password


def mask_credentials(url: str) -> str:
    """The URL with the password of a ``user:password@`` part replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
