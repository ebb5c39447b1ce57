"""The spec's batch rules (shared by the LocalRunner and the service)."""

from __future__ import annotations

import pytest

from pagelab import InvalidInputError
from pagelab.models import Device, Location
from pagelab.runners import MAX_BATCH_ITEMS, plan_batch

A, B = "https://a.test/", "https://b.test/"


def test_multiple_urls_uses_first_valid_device_and_location() -> None:
    plan = plan_batch([A, "not a url", B, 42], ["nokia", "desktop", "mobile"], ["xx", "de", "us"],
                      "multiple-urls")
    assert plan.urls == [A, B]
    assert plan.items == [(A, Device.DESKTOP, Location.DE), (B, Device.DESKTOP, Location.DE)]


def test_multiple_devices_uses_first_valid_url() -> None:
    plan = plan_batch(["bad", A, B], ["iphone7", "unknown", "desktop"], ["uk"],
                      "multiple-devices")
    assert plan.urls == [A]
    assert [item[1] for item in plan.items] == [Device.PHONE_7, Device.DESKTOP]


def test_empty_list_of_the_varied_dimension_means_all_presets() -> None:
    assert len(plan_batch([A], [], ["us"], "multiple-devices").items) == 15
    assert [i[2] for i in plan_batch([A], ["mobile"], [], "multiple-locations").items] == list(
        Location
    )


def test_over_long_entries_are_dropped() -> None:
    plan = plan_batch([A + "x" * 5000, B], ["mobile"], ["us"], "multiple-urls")
    assert plan.urls == [B]


@pytest.mark.parametrize(
    ("urls", "devices", "locations", "batch_type", "field"),
    [
        ([A], [], ["us"], "multiple-urls", "devices"),
        ([A], ["mobile"], [], "multiple-devices", "locations"),
        ([], ["mobile"], ["us"], "multiple-devices", "urls"),
        (["nope"], ["mobile"], ["us"], "multiple-urls", "urls"),
        ([A], ["nokia"], ["us"], "multiple-devices", "devices"),
        ([A], ["mobile"], ["mars"], "multiple-locations", "locations"),
        ([A], ["mobile"], ["us"], "multiple-everything", "batch_type"),
    ],
)
def test_nothing_valid_is_an_error_naming_the_field(
    urls: list[str], devices: list[str], locations: list[str], batch_type: str, field: str
) -> None:
    with pytest.raises(InvalidInputError, match=f"^{field}:"):
        plan_batch(urls, devices, locations, batch_type)


def test_batch_size_is_bounded() -> None:
    urls = [f"https://a.test/{i}" for i in range(MAX_BATCH_ITEMS + 1)]
    with pytest.raises(InvalidInputError, match="at most"):
        plan_batch(urls, ["mobile"], ["us"], "multiple-urls")
