"""Reference data: device and connection profiles, locations, TTFB regions."""

from ._devices import (
    CONNECTIONS,
    DESKTOP_DEFAULT_CONNECTION,
    DEVICES,
    MOBILE_DEFAULT_CONNECTION,
    ConnectionProfile,
    DeviceProfile,
)
from ._places import LOCATIONS, TTFB_REGIONS, ttfb_region

__all__ = [
    "CONNECTIONS",
    "DESKTOP_DEFAULT_CONNECTION",
    "DEVICES",
    "LOCATIONS",
    "MOBILE_DEFAULT_CONNECTION",
    "TTFB_REGIONS",
    "ConnectionProfile",
    "DeviceProfile",
    "ttfb_region",
]
