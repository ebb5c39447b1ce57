"""String enumerations of the API's fixed value sets."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, cast

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

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


def _expected(values: list[str]) -> str:
    # pydantic's wording of an enum's members: "'a', 'b' or 'c'".
    quoted = [repr(value) for value in values]
    return f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else quoted[0]


class _DeviceOrAlias:
    """A :class:`Device`, else one of :data:`DEVICE_ALIASES`, checked by pydantic itself.

    The union's first choice is the enum's own schema, so an id is read without a Python
    call (every report of a list page has one); Python runs only to map an alias. A value
    that is neither fails as the enum alone does (type ``enum``, the same message and
    context), and the JSON schema is the enum's.
    """

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        device = handler(source)
        alias = core_schema.no_info_after_validator_function(
            DEVICE_ALIASES.__getitem__, core_schema.literal_schema(list(DEVICE_ALIASES))
        )

        def json_schema(
            schema: core_schema.CoreSchema, json_handler: GetJsonSchemaHandler
        ) -> JsonSchemaValue:
            # The enum's own schema: the union's first choice (its $ref to ``Device``).
            union = json_handler(schema)
            return cast(JsonSchemaValue, union["anyOf"][0])

        return core_schema.union_schema(
            [device, alias],
            mode="left_to_right",
            custom_error_type="enum",
            custom_error_context={"expected": _expected([d.value for d in Device])},
            metadata={"pydantic_js_annotation_functions": [json_schema]},
        )


#: A device id field: accepts the spec's ids and the hosted service's aliases.
DeviceId = Annotated[Device, _DeviceOrAlias()]


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
