"""``/v1/locations`` and ``/v1/ttfb-regions``: public reference lists."""

from __future__ import annotations

from fastapi import APIRouter

from pagelab.catalog import LOCATIONS, TTFB_REGIONS
from pagelab.models import LocationInfo, TTFBRegion

from .._deps import OptionalAccountDep
from .._errors import error_responses
from ._common import ListResponse

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["reference"])

_PUBLIC = (
    "Public: no key needed. A key may be sent; if it is, it must be valid. The embedded "
    "server measures every location from its own machine."
)


@router.get(
    "/locations",
    response_model=ListResponse[LocationInfo],
    summary="List the lighthouse test locations",
    description=_PUBLIC,
    responses=error_responses(401, 429),
)
def list_locations(account: OptionalAccountDep) -> ListResponse[LocationInfo]:
    return ListResponse(data=list(LOCATIONS.values()))


@router.get(
    "/ttfb-regions",
    response_model=ListResponse[TTFBRegion],
    summary="List the TTFB regions and their locations",
    description=_PUBLIC,
    responses=error_responses(401, 429),
)
def list_ttfb_regions(account: OptionalAccountDep) -> ListResponse[TTFBRegion]:
    return ListResponse(data=list(TTFB_REGIONS.values()))
