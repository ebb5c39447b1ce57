"""``/v1/discoveries`` (a pagelab extension): discover a site's pages inside the service,
under its egress rules, grouped by template and sampled (docs/api.md, docs/scan.md)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Request

from pagelab._discovery import discover, group_templates, sample_templates, to_wire
from pagelab._exceptions import DiscoveryError, InvalidInputError
from pagelab.engine import TargetRefusedError
from pagelab.models import DiscoveryRequest, SiteDiscovery

from .._deps import (
    AccountDep,
    ServicesDep,
    check_targets,
    json_body,
    request_body_schema,
    require_credits,
)
from .._errors import ApiProblem, error_responses
from .._state import Services
from ._common import gate_refusal

__all__ = ["router"]

router = APIRouter(prefix="/v1/discoveries", tags=["discoveries"])

#: A discovery sends no request after this many seconds (each request is bounded by
#: discovery's own timeout as well).
TIME_BUDGET_S = 120.0
# What a client is told to wait when a discovery is in progress: a small site's discovery.
_RETRY_AFTER_S = 10

_NO_CREDITS = ("discovery needs one lighthouse credit left, to measure what it finds "
               "(none is charged; see GET /v1/account/credits)")


def _discover(services: Services, body: DiscoveryRequest) -> SiteDiscovery:
    """On the service's discovery threads: every request under the server's policy."""
    found = discover(body.url, max_pages=body.max_pages, include=body.include,
                     exclude=body.exclude, depth=body.depth,
                     target_policy=services.settings.target_policy,
                     resolver=services.guard.resolver, time_budget=TIME_BUDGET_S)
    templates = group_templates(found.pages)
    return to_wire(found, templates, sample_templates(templates, body.per_template, body.seed))


@router.post(
    "",
    response_model=SiteDiscovery,
    summary="Discover a site's pages (pagelab extension)",
    description=(
        "Finds the pages of the site at `url` within its scope (origin and path prefix): "
        "its sitemaps (`robots.txt`'s `Sitemap:` lines, else `/sitemap.xml`; indexes and "
        "gzipped sitemaps followed), else a breadth-first crawl of its links `depth` deep; "
        "at most `max_pages` pages, `include`/`exclude` path globs. Answers the pages in "
        "discovery order with their templates, `per_template` pages of each template "
        "chosen with `seed`, the sitemaps read and the URLs dropped by reason. Every "
        "request discovery makes (redirects included) obeys the server's target policy, "
        "as tests do: a refused address is a 400. A site whose pages cannot be found is a "
        "502 `discovery_failed`. Needs one lighthouse credit left, charges none; one "
        "discovery per key at a time (429), a few on the server (503), both with "
        f"`Retry-After`; no request is sent after {TIME_BUDGET_S:g} s."
    ),
    responses=error_responses(400, 401, 402, 429, 502, 503),
    openapi_extra=request_body_schema(DiscoveryRequest),
)
async def create_discovery(
    services: ServicesDep,
    account: AccountDep,
    body: Annotated[DiscoveryRequest, Depends(json_body(DiscoveryRequest))],
    request: Request,
) -> SiteDiscovery:
    # Before anything is resolved or fetched: a key that cannot pay for a test costs
    # nothing (and the API's fuzzing, with such a key, sends no request anywhere).
    require_credits(services, account, "lighthouse", 1, _NO_CREDITS)
    bound = services.discovery_gate.enter(account.id)
    if bound != "ok":
        raise gate_refusal(services.discovery_gate, bound, ("discovery", "discoveries"),
                           _RETRY_AFTER_S)
    try:
        if services.settings.target_policy.restricts:
            await check_targets(request, services, account, [body.url], field="url")
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(services.discovery_executor,
                                              _discover, services, body)
        except DiscoveryError as exc:
            # A refused address: the answer tests get for a refused target.
            refused = isinstance(exc.__cause__, TargetRefusedError)
            raise ApiProblem(400 if refused else 502, str(exc)) from exc
        except InvalidInputError as exc:
            raise ApiProblem(400, str(exc)) from exc
    finally:
        services.discovery_gate.leave(account.id)
