"""Device and connection profiles (sources: ``docs/devices.md``)."""

from __future__ import annotations

from dataclasses import dataclass

from pagelab.models import Connection, Device

__all__ = [
    "CONNECTIONS",
    "DESKTOP_DEFAULT_CONNECTION",
    "DEVICES",
    "MOBILE_DEFAULT_CONNECTION",
    "ConnectionProfile",
    "DeviceProfile",
]


@dataclass(frozen=True, slots=True)
class ConnectionProfile:
    """Round-trip time and throughput of a network link."""

    name: str
    rtt_ms: float
    down_kbps: float
    up_kbps: float


@dataclass(frozen=True, slots=True)
class DeviceProfile:
    """How a device is emulated.

    ``user_agent`` may hold ``{chrome_major}``, filled with the running Chromium's major
    version; ``None`` keeps Lighthouse's own user agent for the form factor.
    """

    id: Device
    label: str
    width: int
    height: int
    device_scale_factor: float
    mobile: bool
    cpu_slowdown: float
    user_agent: str | None

    @property
    def form_factor(self) -> str:
        # Lighthouse refuses a config whose screenEmulation.mobile disagrees with formFactor.
        return "mobile" if self.mobile else "desktop"

    @property
    def field_form_factor(self) -> str:
        """The Chrome UX Report's form factor whose users this device stands for: ``PHONE``,
        ``TABLET`` or ``DESKTOP`` (laptops and Lighthouse's desktop)."""
        if not self.mobile:
            return "DESKTOP"
        return "TABLET" if self.id in _TABLETS else "PHONE"

    @property
    def default_connection(self) -> ConnectionProfile:
        return MOBILE_DEFAULT_CONNECTION if self.mobile else DESKTOP_DEFAULT_CONNECTION


#: The devices that are tablets (mobile screens, the field's TABLET form factor).
_TABLETS = frozenset({Device.TABLET_102, Device.TABLET_TAB_S7})

#: Lighthouse's defaults (core/config/constants.js): mobile "slow 4G", desktop "dense 4G".
MOBILE_DEFAULT_CONNECTION = ConnectionProfile("lighthouse-mobile", 150, 1638.4, 750)
DESKTOP_DEFAULT_CONNECTION = ConnectionProfile("lighthouse-desktop", 40, 10240, 10240)

_ANDROID_PHONE = (
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/{chrome_major}.0.0.0 Mobile Safari/537.36"
)
_ANDROID_TABLET = (
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/{chrome_major}.0.0.0 Safari/537.36"
)
_MAC = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/{chrome_major}.0.0.0 Safari/537.36"
)
_WINDOWS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/{chrome_major}.0.0.0 Safari/537.36"
)


def _iphone(ios: str) -> str:
    return (
        f"Mozilla/5.0 (iPhone; CPU iPhone OS {ios} like Mac OS X) AppleWebKit/605.1.15 "
        f"(KHTML, like Gecko) Version/{ios.split('_')[0]}.0 Mobile/15E148 Safari/604.1"
    )


_IPAD = (
    "Mozilla/5.0 (iPad; CPU OS 15_0 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/15.0 Mobile/15E148 Safari/604.1"
)


def _profile(
    device: Device, label: str, size: tuple[int, int], dpr: float, mobile: bool, cpu: float,
    user_agent: str | None,
) -> DeviceProfile:
    return DeviceProfile(device, label, size[0], size[1], dpr, mobile, cpu, user_agent)


DEVICES: dict[Device, DeviceProfile] = {
    p.id: p
    for p in (
        _profile(Device.MOBILE, "Lighthouse mobile (Moto G Power)", (412, 823), 1.75, True, 4,
                 None),
        _profile(Device.DESKTOP, "Lighthouse desktop", (1350, 940), 1, False, 1, None),
        _profile(Device.LAPTOP_AIR_M1, "MacBook Air M1", (1440, 900), 2, False, 1, _MAC),
        _profile(Device.HIGH_END_LAPTOP, "High-end laptop", (1920, 1080), 1, False, 1,
                 _WINDOWS),
        _profile(Device.TABLET_102, 'iPad 10.2" (7th gen)', (810, 1080), 2, True, 1, _IPAD),
        _profile(Device.TABLET_TAB_S7, "Galaxy Tab S7", (800, 1280), 2, True, 2,
                 _ANDROID_TABLET),
        _profile(Device.PHONE_13_PRO_MAX, "iPhone 13 Pro Max", (428, 926), 3, True, 1,
                 _iphone("15_0")),
        _profile(Device.PHONE_11, "iPhone 11", (414, 896), 2, True, 1, _iphone("14_0")),
        _profile(Device.PHONE_S10_PLUS, "Galaxy S10+", (412, 869), 3.5, True, 2, _ANDROID_PHONE),
        _profile(Device.PHONE_NOTE_8_PRO, "Redmi Note 8 Pro", (393, 851), 2.75, True, 4,
                 _ANDROID_PHONE),
        _profile(Device.PHONE_7, "iPhone 7", (375, 667), 2, True, 2, _iphone("13_0")),
        _profile(Device.PHONE_A50, "Galaxy A50", (412, 892), 2.625, True, 4, _ANDROID_PHONE),
        _profile(Device.PHONE_J8, "Galaxy J8", (360, 740), 2, True, 6, _ANDROID_PHONE),
        _profile(Device.PHONE_G5, "Moto G5", (360, 640), 3, True, 6, _ANDROID_PHONE),
        _profile(Device.PHONE_5A, "Xiaomi Redmi 5A", (360, 640), 2, True, 6, _ANDROID_PHONE),
    )
}

CONNECTIONS: dict[Connection, ConnectionProfile] = {
    c: ConnectionProfile(c.value, rtt, down * 1000, up * 1000)
    for c, rtt, down, up in (
        (Connection.FIBER, 4, 20, 5),
        (Connection.CABLE, 28, 5, 1),
        (Connection.DSL, 50, 1.5, 0.384),
        (Connection.G5, 20, 50, 25),
        (Connection.WIFI_FAST, 2, 30, 15),
        (Connection.WIFI, 40, 10, 10),
        (Connection.G4_FAST, 70, 12, 12),
        (Connection.G4, 170, 9, 9),
        (Connection.G3_FAST, 150, 1.6, 0.768),
        (Connection.G3, 300, 1.6, 0.768),
        (Connection.G3_SLOW, 400, 0.4, 0.4),
        (Connection.G2_EDGE, 840, 0.24, 0.2),
        (Connection.G2, 1300, 0.035, 0.032),
    )
}
