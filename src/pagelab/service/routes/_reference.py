"""``/v1/locations`` and ``/v1/ttfb-regions``: public reference lists."""

from __future__ import annotations

from fastapi import APIRouter, Request

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


class FleetLocationInfo(LocationInfo):
    """A location, with the fleet's live workers when the server has a broker."""

    #: pagelab extension, fleet servers only (absent without ``--broker``): the names of
    #: the workers serving this location whose heartbeat is live. Empty: its tests wait,
    #: then fail ``NO_WORKER`` after the queue timeout.
    live_workers: list[str] | None = None


@router.get(
    "/locations",
    response_model=ListResponse[FleetLocationInfo],
    summary="List the lighthouse test locations",
    description=_PUBLIC + " A server started with `--broker` adds `live_workers` to each "
    "location: the fleet workers that serve it now (docs/scale-out.md).",
    responses=error_responses(401, 429),
    # `live_workers` is left out unless set, so a server without a broker answers as before.
    response_model_exclude_unset=True,
)
def list_locations(account: OptionalAccountDep,
                   request: Request) -> ListResponse[FleetLocationInfo]:
    dispatcher = getattr(request.app.state, "dispatcher", None)
    if dispatcher is None:
        return ListResponse(data=[
            FleetLocationInfo(**location.model_dump()) for location in LOCATIONS.values()
        ])
    live = dispatcher.live_workers_by_location()
    return ListResponse(data=[
        FleetLocationInfo(**location.model_dump(), live_workers=sorted(live.get(location.id, [])))
        for location in LOCATIONS.values()
    ])


@router.get(
    "/ttfb-regions",
    response_model=ListResponse[TTFBRegion],
    summary="List the TTFB regions and their locations",
    description=_PUBLIC,
    responses=error_responses(401, 429),
)
def list_ttfb_regions(account: OptionalAccountDep) -> ListResponse[TTFBRegion]:
    return ListResponse(data=list(TTFB_REGIONS.values()))
