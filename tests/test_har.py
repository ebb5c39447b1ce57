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

from pagelab import LocalRunner, NotFoundError
from pagelab.demo import DemoServer
from pagelab.frames import requests

pytestmark = pytest.mark.engine
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


def test_har_of_a_run_is_valid_complete_and_keeps_no_secret(engine: Any,
                                                            tmp_path: Path) -> None:
    with DemoServer() as site, LocalRunner(tmp_path / "store", engine=engine) as runner:
        report = runner.lighthouse(site.page_url("bloated"), "desktop", config={
            "auth_username": "tester", "auth_password": PASSWORD,
            "cookies": [f"session={COOKIE}"],
        })
        assert report.status == "success", report.error
        har = runner.har(report)
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
