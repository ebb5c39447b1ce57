"""``/v1/lighthouse-batch-tests``: the spec's batch rules, status rule and comparison page."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import LiveServer

from pagelab.models import LighthouseError, Metrics, TestStatus
from pagelab.store import Store, finish_test, start_test, transaction

ALL_DEVICES = [
    "mobile", "desktop", "laptopAirM1", "highEndLaptop", "tablet102", "tabletTabS7",
    "phone13ProMax", "phone11", "phoneS10Plus", "phoneNote8Pro", "phone7", "phoneA50",
    "phoneJ8", "phoneG5", "phone5A",
]
ALL_LOCATIONS = ["us", "ca", "br", "de", "uk", "nl", "pl", "ch", "jp", "in", "sg", "au", "id",
                 "kr", "tw"]


def _batch(client: httpx.Client, **body: Any) -> httpx.Response:
    return client.post("/v1/lighthouse-batch-tests", json=body)


def _items(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(item["url"], item["device"], item["location"]) for item in report["reports"]]


def test_multiple_urls_uses_every_valid_url_and_the_first_device_and_location(
    server: LiveServer,
) -> None:
    with server.client(server.key()) as client:
        response = _batch(
            client,
            urls=["https://a.test/", "not a url", 42, "https://b.test/" + "x" * 5000,
                  "https://c.test/"],
            devices=["pager", "desktop", "mobile"],
            locations=["mars", "de", "us"],
            batch_type="multiple-urls",
        )
    assert response.status_code == 201, response.text
    report = response.json()
    assert report["id"].startswith("lbt_")
    assert report["status"] == "idle"
    assert report["urls"] == ["https://a.test/", "https://c.test/"]
    assert report["devices"] == ["desktop"]
    assert report["locations"] == ["de"]
    assert _items(report) == [("https://a.test/", "desktop", "de"),
                              ("https://c.test/", "desktop", "de")]
    assert report["report_url"].startswith(f"{server.base_url}/reports/lighthouse-batch-tests/")
    assert len(str(report["created_at"])) == 13


def test_multiple_devices_uses_the_first_valid_url(server: LiveServer) -> None:
    with server.client(server.key()) as client:
        report = _batch(
            client, urls=["nope", "https://a.test/", "https://b.test/"],
            devices=["phone7", "unknown", "desktop", "phone7"], locations=["uk"],
            batch_type="multiple-devices",
        ).json()
    assert _items(report) == [("https://a.test/", "phone7", "uk"),
                              ("https://a.test/", "desktop", "uk")]


@pytest.mark.parametrize(
    ("batch_type", "field", "expected"),
    [("multiple-devices", "devices", ALL_DEVICES), ("multiple-locations", "locations",
                                                    ALL_LOCATIONS)],
)
def test_an_empty_list_of_the_varied_dimension_means_all_presets(
    server: LiveServer, batch_type: str, field: str, expected: list[str]
) -> None:
    body = {"urls": ["https://a.test/"], "devices": ["mobile"], "locations": ["us"],
            "batch_type": batch_type, field: []}
    with server.client(server.key()) as client:
        response = _batch(client, **body)
        credits = client.get("/v1/account/credits").json()["lighthouse"]
    assert response.status_code == 201
    report = response.json()
    assert report[field] == expected
    assert len(report["reports"]) == 15
    assert credits["available_credits"] == 100 - 15


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"urls": [], "devices": [], "locations": ["us"], "batch_type": "multiple-devices"},
         "urls:"),
        ({"urls": ["bad", 7], "devices": [], "locations": ["us"],
          "batch_type": "multiple-devices"}, "urls:"),
        ({"urls": ["https://a.test/"], "devices": [], "locations": ["us"],
          "batch_type": "multiple-urls"}, "devices:"),
        ({"urls": ["https://a.test/"], "devices": ["mobile"], "locations": [],
          "batch_type": "multiple-devices"}, "locations:"),
        ({"urls": ["https://a.test/"], "devices": ["pager"], "locations": ["us"],
          "batch_type": "multiple-devices"}, "devices:"),
        ({"urls": ["https://a.test/"], "devices": ["mobile"], "locations": ["mars"],
          "batch_type": "multiple-locations"}, "locations:"),
        ({"urls": ["https://a.test/"], "devices": ["mobile"], "locations": ["us"],
          "batch_type": "multiple-pages"}, "batch_type:"),
        ({"urls": ["https://a.test/"], "devices": ["mobile"], "locations": ["us"]},
         "batch_type:"),
        ({"devices": ["mobile"], "locations": ["us"], "batch_type": "multiple-urls"}, "urls:"),
        ({"urls": "https://a.test/", "devices": ["mobile"], "locations": ["us"],
          "batch_type": "multiple-urls"}, "urls:"),
        ({"urls": [f"https://a.test/{i}" for i in range(101)], "devices": ["mobile"],
          "locations": ["us"], "batch_type": "multiple-urls"}, "at most 100"),
        ({"urls": ["https://a.test/"], "devices": ["mobile"], "locations": ["us"],
          "batch_type": "multiple-urls", "config": {"whitelist": ["a"] * 6}},
         "config.whitelist:"),
    ],
)
def test_nothing_valid_left_is_400(server: LiveServer, body: dict[str, Any], message: str) -> None:
    with server.client(server.key(lighthouse=1000)) as client:
        response = _batch(client, **body)
        listed = client.get("/v1/lighthouse-tests").json()["data"]
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "invalid_request"
    assert message in response.json()["message"]
    assert listed == []


def test_a_pool_too_small_refuses_the_whole_batch(server: LiveServer) -> None:
    with server.client(server.key(lighthouse=3)) as client:
        response = _batch(client, urls=["https://a.test/"], devices=[], locations=["us"],
                          batch_type="multiple-devices")
        credits = client.get("/v1/account/credits").json()["lighthouse"]
        listed = client.get("/v1/lighthouse-tests").json()["data"]
        fits = _batch(client, urls=["https://a.test/"], devices=["mobile", "desktop", "phone7"],
                      locations=["us"], batch_type="multiple-devices")
        after = client.get("/v1/account/credits").json()["lighthouse"]
    assert response.status_code == 402
    assert response.json()["code"] == "insufficient_credits"
    assert "15" in response.json()["message"]
    assert credits["available_credits"] == 3
    assert listed == []
    assert fits.status_code == 201
    assert after["available_credits"] == 0


def test_items_are_ordinary_tests(server: LiveServer) -> None:
    with server.client(server.key()) as client:
        report = _batch(client, urls=["https://a.test/", "https://b.test/"], devices=["mobile"],
                        locations=["us"], batch_type="multiple-urls",
                        config={"auth_password": "batch-canary", "video": True}).json()
        listed = client.get("/v1/lighthouse-tests").json()["data"]
        item = client.get(f"/v1/lighthouse-tests/{report['reports'][1]['id']}").json()
    assert {test["id"] for test in listed} == {item["id"] for item in report["reports"]}
    assert item["url"] == "https://b.test/"
    assert item["config"]["video"] is True
    assert item["config"]["auth_password"] == "***"
    assert report["config"]["auth_password"] == "***"


def _set_status(store: Store, test_id: str, status: TestStatus) -> None:
    """Move one test along as the worker does (start, then finish)."""
    with store.connection() as conn, transaction(conn):
        if status == TestStatus.ACTIVE:
            start_test(conn, test_id)
            return
        error = (LighthouseError(code="NO_FCP", message="no paint")
                 if status == TestStatus.FAILED else None)
        metrics = (Metrics(performance_score=90, largest_contentful_paint=1200)
                   if status == TestStatus.SUCCESS else None)
        finish_test(conn, test_id, status=status, lighthouse_version="13.5.0", metrics=metrics,
                    error=error, vantage="local", environment=None)


def test_batch_status_rule_and_item_rules(server: LiveServer) -> None:
    store = server.store
    with server.client(server.key()) as client:
        batch = _batch(client, urls=["https://a.test/", "https://b.test/"], devices=["mobile"],
                       locations=["us"], batch_type="multiple-urls").json()
        first, second = (item["id"] for item in batch["reports"])

        def fetch() -> dict[str, Any]:
            report: dict[str, Any] = client.get(f"/v1/lighthouse-batch-tests/{batch['id']}").json()
            for item in report["reports"]:
                # Rules 1-3 in every state.
                assert (item["report_url"] is not None) == (item["status"] == "success")
                assert (item["error"] is not None) == (item["status"] == "failed")
            return report

        assert fetch()["status"] == "idle"
        _set_status(store, first, TestStatus.ACTIVE)
        assert fetch()["status"] == "active"
        _set_status(store, first, TestStatus.SUCCESS)
        # One final, one still idle: active.
        assert fetch()["status"] == "active"
        _set_status(store, second, TestStatus.FAILED)
        final = fetch()
    assert final["status"] == "completed"
    assert final["lighthouse_version"] == "13.5.0"
    assert final["reports"][0]["metrics"]["performance_score"] == 90
    assert final["reports"][1]["error"] == {"code": "NO_FCP", "message": "no paint"}


def test_comparison_page_renders_in_chromium(server: LiveServer, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    assert Path(chromium).exists(), "Chromium is missing: run `pagelab setup`"
    store = server.store
    with server.client(server.key()) as client:
        batch = _batch(client, urls=["https://a.test/<script>", "https://b.test/"],
                       devices=["mobile"], locations=["us"], batch_type="multiple-urls").json()
        _set_status(store, batch["reports"][0]["id"], TestStatus.SUCCESS)
        _set_status(store, batch["reports"][1]["id"], TestStatus.FAILED)
        report = client.get(f"/v1/lighthouse-batch-tests/{batch['id']}").json()
    page = httpx.get(report["report_url"])
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    dom = subprocess.run(
        [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
         report["report_url"]],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout
    assert '<table id="comparison">' in dom
    assert dom.count("<tr>") == 3  # header and one row per item
    assert "https://a.test/&lt;script&gt;" in dom  # escaped, not executed
    assert report["reports"][0]["report_url"].replace("&", "&amp;") in dom
    assert "NO_FCP" in dom
    forged = httpx.get(report["report_url"].split("?")[0] + "?token=x")
    assert forged.status_code == 404
