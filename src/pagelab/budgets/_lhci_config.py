"""Reading a lighthouserc: ``ci.assert`` kept for :mod:`._lhci`, ``ci.collect`` mapped onto
pagelab's pages, device, connection and runs.

``settings.preset`` / ``formFactor`` / ``screenEmulation`` pick the device (the nearest
catalog profile of that form factor), ``throttlingMethod`` / ``throttling`` the connection
(Lighthouse's default for the form factor, else the nearest catalog connection, said in a
note), ``numberOfRuns`` the runs. Whatever cannot be mapped is refused, named.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pagelab._exceptions import InvalidInputError
from pagelab.catalog import CONNECTIONS, DEVICES
from pagelab.models import Device, read_data_file, unknown_value

from ._lhci import budget_json_to_assertions, run_categories, validate_options

__all__ = ["collect_settings", "lhci_assert_options"]

#: ``ci.collect`` keys that change nothing pagelab measures (it drives its own Chromium).
_COLLECT_HARMLESS = {"method", "headful", "chromePath"}
_COLLECT_KEYS = {"url", "numberOfRuns", "settings"} | _COLLECT_HARMLESS
_SETTINGS_KEYS = {"preset", "formFactor", "screenEmulation", "throttlingMethod", "throttling",
                  "onlyCategories", "emulatedUserAgent"}
_THROTTLING_METHODS = {"simulate": "simulated", "devtools": "applied"}


def lhci_assert_options(assert_part: Mapping[str, Any], source: str) -> dict[str, Any]:
    """``ci.assert`` validated, with ``budgetsFile`` read (relative to the config's folder)
    and turned into ``assertMatrix`` as Lighthouse CI does."""
    # includePassedAssertions stays: --format=lhci writes passed results too then.
    options = {k: v for k, v in assert_part.items() if k != "lhr"}
    budgets_file = options.pop("budgetsFile", None)
    if budgets_file is not None:
        clash = sorted({"assertions", "assertMatrix", "preset"} & set(options))
        if clash:
            raise InvalidInputError(
                f"{source}: ci.assert.budgetsFile cannot be used with {', '.join(clash)}")
        path = Path(str(budgets_file))
        if not path.is_absolute() and Path(source).exists():
            path = Path(source).resolve().parent / path
        try:
            budgets = read_data_file(path, "budgets file")
        except InvalidInputError as exc:
            raise InvalidInputError(f"{source}: ci.assert.budgetsFile: {exc}") from exc
        options.update(budget_json_to_assertions(budgets, f"{source}: {path.name}"))
    validate_options(options, f"{source}: ci.assert")
    if not any(k in options for k in ("assertions", "assertMatrix", "preset")):
        raise InvalidInputError(f"{source}: ci.assert: no assertions, preset or budgetsFile")
    return options


#: Lighthouse's ``settings.preset`` and ``formFactor`` values.
_LHCI_PRESETS = ("desktop", "perf", "experimental")
_FORM_FACTORS = ("mobile", "desktop")


def _nearest_device(settings: Mapping[str, Any], where: str, notes: list[str]) -> Device:
    emulation = settings.get("screenEmulation") or {}
    if not isinstance(emulation, Mapping):
        raise InvalidInputError(f"{where}.screenEmulation: expected a mapping")
    if emulation.get("disabled"):
        raise InvalidInputError(f"{where}.screenEmulation.disabled: pagelab always emulates "
                                "a device")
    form = settings.get("formFactor")
    if settings.get("preset") not in (None, *_LHCI_PRESETS):
        raise InvalidInputError(
            f"{where}.preset: {unknown_value(settings.get('preset'), _LHCI_PRESETS)}")
    desktop = settings.get("preset") == "desktop" or form == "desktop" or (
        emulation.get("mobile") is False)
    if form not in (None, *_FORM_FACTORS):
        raise InvalidInputError(f"{where}.formFactor: {unknown_value(form, _FORM_FACTORS)}")
    default = Device.DESKTOP if desktop else Device.MOBILE
    size = [emulation.get(k) for k in ("width", "height", "deviceScaleFactor")]
    if not any(v is not None for v in size):
        return default
    reference = DEVICES[default]
    wanted = [float(v) if isinstance(v, int | float) else float(r) for v, r in zip(
        size, (reference.width, reference.height, reference.device_scale_factor), strict=True)]
    candidates = [p for p in DEVICES.values() if p.mobile is not desktop]
    best = min(candidates, key=lambda p: (
        abs(math.log(p.width / wanted[0])) + abs(math.log(p.height / wanted[1]))
        + abs(math.log(p.device_scale_factor / wanted[2])), p.id != default))
    if [best.width, best.height, best.device_scale_factor] != wanted:
        notes.append(f"screenEmulation {wanted[0]:g}x{wanted[1]:g}@{wanted[2]:g}: measured "
                     f"as {best.id.value} ({best.width}x{best.height}@"
                     f"{best.device_scale_factor:g}), the nearest profile")
    return best.id


def _connection(settings: Mapping[str, Any], device: Device, where: str,
                notes: list[str]) -> str | None:
    throttling = settings.get("throttling")
    if throttling is None:
        return None
    if not isinstance(throttling, Mapping):
        raise InvalidInputError(f"{where}.throttling: expected a mapping")
    profile = DEVICES[device]
    default = profile.default_connection
    rtt = throttling.get("rttMs", default.rtt_ms)
    down = throttling.get("throughputKbps", default.down_kbps)
    cpu = throttling.get("cpuSlowdownMultiplier", profile.cpu_slowdown)
    for name, value in (("rttMs", rtt), ("throughputKbps", down),
                        ("cpuSlowdownMultiplier", cpu)):
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise InvalidInputError(f"{where}.throttling.{name}: must be a positive number")
    if cpu != profile.cpu_slowdown:
        raise InvalidInputError(
            f"{where}.throttling.cpuSlowdownMultiplier {cpu:g}: the {device.value} profile "
            f"slows the CPU {profile.cpu_slowdown:g}x; pick a device with that slowdown")
    if (rtt, down) == (default.rtt_ms, default.down_kbps):
        return None
    best = min(CONNECTIONS.values(), key=lambda c: abs(math.log(c.rtt_ms / rtt))
               + abs(math.log(c.down_kbps / down)))
    notes.append(f"throttling rtt {rtt:g} ms, {down:g} Kbps: measured as connection "
                 f"{best.name} (rtt {best.rtt_ms:g} ms, {best.down_kbps:g} Kbps), the nearest "
                 "profile")
    return best.name


def collect_settings(collect: Mapping[str, Any], assert_options: Mapping[str, Any],
                     source: str) -> dict[str, Any]:
    """``ci.collect`` as BudgetFile fields: ``devices``, ``runs``, ``config``, ``notes``
    and the page URLs (``urls``)."""
    where = f"{source}: ci.collect"
    unknown = sorted(set(collect) - _COLLECT_KEYS)
    if unknown:
        raise InvalidInputError(
            f"{where}: {', '.join(unknown)} cannot be mapped (pagelab measures the listed "
            "url(s) itself: serve the site and list its URLs)")
    settings = collect.get("settings") or {}
    if not isinstance(settings, Mapping):
        raise InvalidInputError(f"{where}.settings: expected a mapping")
    unknown = sorted(set(settings) - _SETTINGS_KEYS)
    if unknown:
        raise InvalidInputError(f"{where}.settings: {', '.join(unknown)} cannot be mapped")
    notes: list[str] = []
    device = _nearest_device(settings, f"{where}.settings", notes)
    config: dict[str, Any] = {}
    method = settings.get("throttlingMethod")
    if method is not None:
        if method not in _THROTTLING_METHODS:
            raise InvalidInputError(
                f"{where}.settings.throttlingMethod {method!r} cannot be mapped (simulate, "
                "devtools)")
        config["throttling_method"] = _THROTTLING_METHODS[method]
    connection = _connection(settings, device, f"{where}.settings", notes)
    if connection is not None:
        config["connection"] = connection
    agent = settings.get("emulatedUserAgent")
    if isinstance(agent, str):
        config["user_agent"] = agent
    elif agent not in (None, True):
        raise InvalidInputError(f"{where}.settings.emulatedUserAgent: expected a string")
    categories = set(run_categories(assert_options) or [])
    only = settings.get("onlyCategories")
    if only is not None:
        if not isinstance(only, list):
            raise InvalidInputError(f"{where}.settings.onlyCategories: expected a list")
        categories.update(str(c) for c in only)
    if categories:
        config["categories"] = sorted(categories)
    urls = collect.get("url", [])
    urls = [urls] if isinstance(urls, str) else urls
    if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
        raise InvalidInputError(f"{where}.url: expected a URL or a list of URLs")
    return {"urls": urls, "devices": [device], "runs": collect.get("numberOfRuns"),
            "config": config or None, "notes": notes}
