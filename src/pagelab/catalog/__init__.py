"""Reference data: device and connection profiles, locations, TTFB regions."""

from pagelab._public import publish

from ._devices import CONNECTIONS, DEVICES, ConnectionProfile, DeviceProfile
from ._places import LOCATIONS, TTFB_REGIONS, ttfb_region

__all__ = [
    "CONNECTIONS",
    "DEVICES",
    "LOCATIONS",
    "TTFB_REGIONS",
    "ConnectionProfile",
    "DeviceProfile",
    "ttfb_region",
]

publish(__name__, globals(), __all__)
