"""String enumerations of the API's fixed value sets."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import BeforeValidator

__all__ = [
    "DEVICE_ALIASES",
    "BatchStatus",
    "BatchType",
    "Connection",
    "Device",
    "DeviceId",
    "HttpVersion",
    "Location",
    "TTFBStatus",
    "TestStatus",
    "ThrottlingMethod",
]


class Device(StrEnum):
    """The spec's 15 device ids (profiles: :mod:`pagelab.catalog`)."""

    MOBILE = "mobile"
    DESKTOP = "desktop"
    LAPTOP_AIR_M1 = "laptopAirM1"
    HIGH_END_LAPTOP = "highEndLaptop"
    TABLET_102 = "tablet102"
    TABLET_TAB_S7 = "tabletTabS7"
    PHONE_13_PRO_MAX = "phone13ProMax"
    PHONE_11 = "phone11"
    PHONE_S10_PLUS = "phoneS10Plus"
    PHONE_NOTE_8_PRO = "phoneNote8Pro"
    PHONE_7 = "phone7"
    PHONE_A50 = "phoneA50"
    PHONE_J8 = "phoneJ8"
    PHONE_G5 = "phoneG5"
    PHONE_5A = "phone5A"


#: Spellings used by the hosted service the spec describes, accepted on input.
DEVICE_ALIASES: dict[str, Device] = {
    "macbookAirM1": Device.LAPTOP_AIR_M1,
    "ipad102": Device.TABLET_102,
    "galaxyTabS7": Device.TABLET_TAB_S7,
    "iphone13ProMax": Device.PHONE_13_PRO_MAX,
    "iphone11": Device.PHONE_11,
    "galaxyS10Plus": Device.PHONE_S10_PLUS,
    "redmiNote8Pro": Device.PHONE_NOTE_8_PRO,
    "iphone7": Device.PHONE_7,
    "galaxyA50": Device.PHONE_A50,
    "galaxyJ8": Device.PHONE_J8,
    "motoG5": Device.PHONE_G5,
    "redmi5A": Device.PHONE_5A,
}


def _resolve_device_alias(value: Any) -> Any:
    if isinstance(value, str) and not isinstance(value, Device):
        return DEVICE_ALIASES.get(value, value)
    return value


#: A device id field: accepts the spec's ids and the hosted service's aliases.
DeviceId = Annotated[Device, BeforeValidator(_resolve_device_alias)]


class Location(StrEnum):
    """The spec's 15 Lighthouse location ids (names: :mod:`pagelab.catalog`)."""

    US = "us"
    CA = "ca"
    BR = "br"
    DE = "de"
    UK = "uk"
    NL = "nl"
    PL = "pl"
    CH = "ch"
    JP = "jp"
    IN = "in"
    SG = "sg"
    AU = "au"
    ID = "id"
    KR = "kr"
    TW = "tw"


class Connection(StrEnum):
    """The spec's 13 connection ids (profiles: :mod:`pagelab.catalog`)."""

    FIBER = "fiber"
    CABLE = "cable"
    DSL = "dsl"
    G5 = "5g"
    WIFI_FAST = "wifi_fast"
    WIFI = "wifi"
    G4_FAST = "4g_fast"
    G4 = "4g"
    G3_FAST = "3g_fast"
    G3 = "3g"
    G3_SLOW = "3g_slow"
    G2_EDGE = "2g_edge"
    G2 = "2g"


class ThrottlingMethod(StrEnum):
    """``simulated``: Lighthouse's Lantern simulation; ``applied``: throttled in the browser."""

    SIMULATED = "simulated"
    APPLIED = "applied"


class HttpVersion(StrEnum):
    """``"2"`` lets Chromium negotiate HTTP/2 (default); ``"1.1"`` forces HTTP/1.1."""

    HTTP_2 = "2"
    HTTP_1_1 = "1.1"


class TestStatus(StrEnum):
    """Status of a Lighthouse test or batch item."""

    __test__ = False  # not a pytest test class, despite the name

    IDLE = "idle"
    ACTIVE = "active"
    SUCCESS = "success"
    FAILED = "failed"

    @property
    def is_final(self) -> bool:
        return self in (TestStatus.SUCCESS, TestStatus.FAILED)


class BatchStatus(StrEnum):
    """Status of a batch as a whole."""

    IDLE = "idle"
    ACTIVE = "active"
    COMPLETED = "completed"


class BatchType(StrEnum):
    """Which dimension a batch varies over."""

    MULTIPLE_URLS = "multiple-urls"
    MULTIPLE_DEVICES = "multiple-devices"
    MULTIPLE_LOCATIONS = "multiple-locations"


class TTFBStatus(StrEnum):
    """Status of one location's TTFB probe."""

    SUCCESS = "success"
    FAILED = "failed"
