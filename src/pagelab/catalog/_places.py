"""Lighthouse locations and TTFB regions (a proposed catalog: see ``docs/api.md``)."""

from __future__ import annotations

from pagelab.models import Location, LocationInfo, TTFBLocation, TTFBRegion

__all__ = ["LOCATIONS", "TTFB_REGIONS", "ttfb_region"]

LOCATIONS: dict[Location, LocationInfo] = {
    Location(id_): LocationInfo(id=id_, name=name, full_name=full_name, region=region)
    for id_, name, full_name, region in (
        ("us", "United States", "Iowa, United States", "north-america"),
        ("ca", "Canada", "Montréal, Canada", "north-america"),
        ("br", "Brazil", "São Paulo, Brazil", "south-america"),
        ("de", "Germany", "Frankfurt, Germany", "europe"),
        ("uk", "United Kingdom", "London, United Kingdom", "europe"),
        ("nl", "Netherlands", "Eemshaven, Netherlands", "europe"),
        ("pl", "Poland", "Warsaw, Poland", "europe"),
        ("ch", "Switzerland", "Zurich, Switzerland", "europe"),
        ("jp", "Japan", "Tokyo, Japan", "asia"),
        ("in", "India", "Mumbai, India", "asia"),
        ("sg", "Singapore", "Singapore", "asia"),
        ("au", "Australia", "Sydney, Australia", "oceania"),
        ("id", "Indonesia", "Jakarta, Indonesia", "asia"),
        ("kr", "South Korea", "Seoul, South Korea", "asia"),
        ("tw", "Taiwan", "Changhua, Taiwan", "asia"),
    )
}

_REGIONS: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("north-america", "North America", (
        ("us-east", "Ashburn, Virginia"),
        ("us-southeast", "Moncks Corner, South Carolina"),
        ("us-central", "Council Bluffs, Iowa"),
        ("us-south", "Dallas, Texas"),
        ("us-west", "The Dalles, Oregon"),
        ("us-southwest", "Los Angeles, California"),
        ("ca-east", "Montréal"),
        ("ca-central", "Toronto"),
        ("mx-central", "Querétaro"),
    )),
    ("south-america", "South America", (
        ("br-southeast", "São Paulo"),
        ("cl-central", "Santiago"),
    )),
    ("europe", "Europe", (
        ("uk-south", "London"),
        ("de-central", "Frankfurt"),
        ("nl-north", "Eemshaven"),
        ("fr-north", "Paris"),
        ("pl-central", "Warsaw"),
        ("ch-north", "Zurich"),
        ("it-north", "Milan"),
        ("es-central", "Madrid"),
        ("se-east", "Stockholm"),
        ("fi-south", "Hamina"),
        ("be-central", "St. Ghislain"),
    )),
    ("asia", "Asia", (
        ("jp-east", "Tokyo"),
        ("jp-west", "Osaka"),
        ("kr-central", "Seoul"),
        ("tw-central", "Changhua"),
        ("hk", "Hong Kong"),
        ("sg", "Singapore"),
        ("in-west", "Mumbai"),
        ("in-north", "Delhi"),
        ("id-west", "Jakarta"),
    )),
    ("oceania", "Oceania", (
        ("au-east", "Sydney"),
        ("au-south", "Melbourne"),
    )),
    ("middle-east", "Middle East", (
        ("il-central", "Tel Aviv"),
        ("qa-central", "Doha"),
    )),
    ("africa", "Africa", (
        ("za-north", "Johannesburg"),
    )),
)

TTFB_REGIONS: dict[str, TTFBRegion] = {
    region_id: TTFBRegion(
        id=region_id,
        name=name,
        locations=[TTFBLocation(id=loc_id, name=loc_name) for loc_id, loc_name in locations],
    )
    for region_id, name, locations in _REGIONS
}


def ttfb_region(region_id: str) -> TTFBRegion:
    """The TTFB region with that id; :class:`~pagelab.InvalidInputError` names the choices."""
    from pagelab._exceptions import InvalidInputError

    try:
        return TTFB_REGIONS[region_id]
    except KeyError:
        choices = ", ".join(TTFB_REGIONS)
        raise InvalidInputError(f"region: unknown TTFB region {region_id!r} ({choices})") from None
