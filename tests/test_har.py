"""The run's HAR on the real engine: HAR 1.2 by its JSON Schema (npm har-schema, vendored in
tests/data/har-schema), every request of ``frames.requests`` in it, no secret of the run,
served the same by the API."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from pagelab import InvalidInputError, LocalRunner, NotFoundError, TestReport
from pagelab.demo import DemoServer
from pagelab.frames import requests

SCHEMAS = Path(__file__).parent / "data" / "har-schema"
PASSWORD = "s3cret-pw-4711"
COOKIE = "session-token-0815"


def har_validator() -> Draft7Validator:
    """har-schema's files (draft-06, read as draft-07: the same keywords it uses), linked
    by their ``$id``s."""
    resources = []
    for path in SCHEMAS.glob("*.json"):
        schema = json.loads(path.read_text())
        schema.pop("$schema", None)
        resources.append((path.name, Resource.from_contents(schema, default_specification=DRAFT7)))
    registry: Registry[Any] = Registry().with_resources(resources)
    root = json.loads((SCHEMAS / "har.json").read_text())
    root.pop("$schema", None)
    # Formats checked: the schema tells an IPv4 from an IPv6 address by them (oneOf).
    return Draft7Validator(root, registry=registry,
                           format_checker=Draft7Validator.FORMAT_CHECKER)


def test_the_schema_refuses_what_is_not_a_har() -> None:
    validator = har_validator()
    assert not validator.is_valid({"log": {"version": "1.2", "entries": []}})  # no creator
    assert not validator.is_valid({"log": {"version": "1.2", "creator": {"name": "x"},
                                           "entries": [{"request": {}}]}})


@pytest.mark.engine
@pytest.mark.usefixtures("quick_navigation_in_test")  # what is sent, not measured
def test_har_of_a_run_is_valid_complete_and_keeps_no_secret(engine: Any,
                                                            tmp_path: Path) -> None:
    with DemoServer() as site, LocalRunner(tmp_path / "store", engine=engine) as runner:
        report = runner.lighthouse(site.page_url("bloated"), "desktop", config={
            "auth_username": "tester", "auth_password": PASSWORD,
            "cookies": [f"session={COOKIE}"],
        })
        assert report.status == "success", report.error
        har = runner.har(report)
        assert report.har() == har  # beside the report's file, no runner needed
        lhr = runner.lhr(report)
        text = runner.resource(report, "har")
        sent = [r for r in site.requests if r.path == "/bloated"]
    # The page really got the credentials: what the HAR must not show.
    assert "authorization" in sent[0].headers
    errors = sorted(har_validator().iter_errors(har), key=str)
    assert not errors, [e.message for e in errors[:5]]
    assert har["log"]["version"] == "1.2"
    urls = {entry["request"]["url"] for entry in har["log"]["entries"]}
    assert set(requests(lhr)["url"]) <= urls
    token = base64.b64encode(f"tester:{PASSWORD}".encode()).decode()
    for secret in (PASSWORD, COOKIE, token):
        assert secret not in text
    headers = [h for e in har["log"]["entries"] for h in e["request"]["headers"]]
    assert {h["value"] for h in headers if h["name"].lower() in ("authorization", "cookie")} \
        <= {"***"}


def test_a_run_without_a_har_says_so(tmp_path: Path) -> None:
    with LocalRunner(tmp_path / "store") as runner, pytest.raises(NotFoundError):
        runner.har("lt_unknown")
    report = TestReport(id="lt_x", url="https://example.test/", device="mobile",
                        location="us", status="success",
                        report_url=(tmp_path / "lt_x" / "report.html").as_uri())
    assert report.har_url == (tmp_path / "lt_x" / "run.har").as_uri()
    with pytest.raises(NotFoundError, match="none beside the report"):
        report.har()
    (tmp_path / "lt_x").mkdir()
    (tmp_path / "lt_x" / "run.har").write_text('{"log": {"version": "1.2"}}')
    assert report.har() == {"log": {"version": "1.2"}}
    (tmp_path / "lt_x" / "run.har").write_text("[]")
    with pytest.raises(ValueError, match="the har of lt_x is not a HAR document"):
        report.har()
    with pytest.raises(InvalidInputError, match=r"use runner\.har\(report\)"):
        report.model_copy(update={"report_url": None}).har()


def test_the_har_address_follows_the_report_link() -> None:
    from pagelab.models import BatchItem

    hosted = "https://perf.example.test/reports/lighthouse-tests/lt_abc?token=123-x"
    item = BatchItem(id="lt_abc", url="https://example.test/", device="mobile",
                     location="us", status="success", report_url=hosted)
    assert item.har_url == "https://perf.example.test/reports/lighthouse-tests/lt_abc/har?token=123-x"
    for other in ("https://perf.example.test/somewhere/else", "file:///tmp/x/page.html",
                  "javascript:alert(1)"):
        assert item.model_copy(update={"report_url": other}).har_url is None
