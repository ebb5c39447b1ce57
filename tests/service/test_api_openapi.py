"""``/openapi.json``: version 0.1.0, every endpoint of the spec, and every response really
returned by the server validates against the schema it documents for that status."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from live_server import LiveServer

from fixtures_http import FixtureServer

jsonschema = pytest.importorskip("jsonschema")

SPEC_OPERATIONS = {
    ("post", "/v1/lighthouse-tests"),
    ("post", "/v1/lighthouse-batch-tests"),
    ("post", "/v1/ttfb-tests"),
    ("get", "/v1/lighthouse-tests"),
    ("get", "/v1/lighthouse-tests/{id}"),
    ("get", "/v1/lighthouse-batch-tests/{id}"),
    ("get", "/v1/lighthouse-tests/{id}/resources/{resource_name}"),
    ("get", "/v1/account/credits"),
    ("get", "/v1/locations"),
    ("get", "/v1/ttfb-regions"),
}
#: pagelab's extensions of the spec (docs/api.md).
EXTENSION_OPERATIONS = {
    ("post", "/v1/discoveries"),
}


def _exchanges(server: LiveServer, site: FixtureServer) -> list[tuple[str, str, httpx.Response]]:
    """(method, path template, response) for every endpoint, successes and errors."""
    key = server.key(lighthouse=3, ttfb=1)
    poor = server.key(lighthouse=0, ttfb=0)
    exchanges: list[tuple[str, str, httpx.Response]] = []
    with server.client(key) as client, server.client(poor) as broke, server.client() as anon:

        def record(method: str, template: str, response: httpx.Response) -> httpx.Response:
            exchanges.append((method, template, response))
            return response

        test = record("post", "/v1/lighthouse-tests", client.post(
            "/v1/lighthouse-tests",
            json={"url": "https://a.test/", "config": {"auth_password": "p", "cookies": ["a=b"]}},
        )).json()
        record("post", "/v1/lighthouse-tests", client.post("/v1/lighthouse-tests", json={}))
        record("post", "/v1/lighthouse-tests", anon.post("/v1/lighthouse-tests", json={}))
        record("post", "/v1/lighthouse-tests",
               broke.post("/v1/lighthouse-tests", json={"url": "https://a.test/"}))
        batch = record("post", "/v1/lighthouse-batch-tests", client.post(
            "/v1/lighthouse-batch-tests",
            json={"urls": ["https://a.test/"], "devices": ["mobile", "desktop"],
                  "locations": ["us"], "batch_type": "multiple-devices"},
        )).json()
        record("post", "/v1/lighthouse-batch-tests", client.post(
            "/v1/lighthouse-batch-tests", json={"urls": [], "batch_type": "multiple-urls"}))
        record("post", "/v1/lighthouse-batch-tests", broke.post(
            "/v1/lighthouse-batch-tests",
            json={"urls": ["https://a.test/"], "devices": [], "locations": ["us"],
                  "batch_type": "multiple-devices"}))
        record("post", "/v1/ttfb-tests", client.post(
            "/v1/ttfb-tests", json={"url": site.url("/"), "region": "africa"}))
        record("post", "/v1/ttfb-tests", client.post(
            "/v1/ttfb-tests", json={"url": site.url("/"), "region": "nowhere"}))
        record("post", "/v1/ttfb-tests", broke.post(
            "/v1/ttfb-tests", json={"url": site.url("/"), "region": "africa"}))
        # (A key of its own: the tests above spent the first key's credits.)
        with server.client(server.key(lighthouse=1, ttfb=0)) as finder:
            record("post", "/v1/discoveries", finder.post(
                "/v1/discoveries", json={"url": site.url("/"), "max_pages": 5}))
            record("post", "/v1/discoveries", finder.post(
                "/v1/discoveries", json={"url": site.url("/status/404")}))
            record("post", "/v1/discoveries", finder.post("/v1/discoveries", json={}))
        record("post", "/v1/discoveries",
               broke.post("/v1/discoveries", json={"url": site.url("/")}))
        record("get", "/v1/lighthouse-tests", client.get("/v1/lighthouse-tests"))
        record("get", "/v1/lighthouse-tests", anon.get("/v1/lighthouse-tests"))
        record("get", "/v1/lighthouse-tests/{id}", client.get(f"/v1/lighthouse-tests/{test['id']}"))
        record("get", "/v1/lighthouse-tests/{id}", client.get("/v1/lighthouse-tests/lt_x"))
        record("get", "/v1/lighthouse-batch-tests/{id}",
               client.get(f"/v1/lighthouse-batch-tests/{batch['id']}"))
        record("get", "/v1/lighthouse-batch-tests/{id}",
               broke.get(f"/v1/lighthouse-batch-tests/{batch['id']}"))
        record("get", "/v1/lighthouse-tests/{id}/resources/{resource_name}",
               client.get(f"/v1/lighthouse-tests/{test['id']}/resources/html-report"))
        record("get", "/v1/account/credits", client.get("/v1/account/credits"))
        record("get", "/v1/locations", anon.get("/v1/locations"))
        record("get", "/v1/ttfb-regions", anon.get("/v1/ttfb-regions"))
        record("get", "/healthz", anon.get("/healthz"))
    return exchanges


def test_openapi_document(server: LiveServer) -> None:
    document = httpx.get(f"{server.base_url}/openapi.json").json()
    assert document["info"]["version"] == "0.1.0"
    operations = {
        (method, path) for path, item in document["paths"].items() for method in item
    }
    assert operations >= SPEC_OPERATIONS | EXTENSION_OPERATIONS
    scheme = document["components"]["securitySchemes"]["ApiKey"]
    assert scheme == {**scheme, "type": "apiKey", "in": "header", "name": "X-API-KEY"}
    assert document["security"] == [{"ApiKey": []}]
    assert document["paths"]["/v1/locations"]["get"]["security"] == [{}, {"ApiKey": []}]
    assert document["paths"]["/v1/lighthouse-batch-tests"]["post"]["responses"].keys() >= {
        "201", "400", "402"}
    body = document["paths"]["/v1/lighthouse-tests"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"]["$ref"].endswith(
        "/LighthouseTestRequest")
    assert "422" not in str(document["paths"])


def test_every_response_matches_the_document(server: LiveServer) -> None:
    document = httpx.get(f"{server.base_url}/openapi.json").json()
    components = document["components"]
    with FixtureServer() as site:
        exchanges = _exchanges(server, site)
    seen_statuses = set()
    for method, template, response in exchanges:
        operation = document["paths"][template][method]
        status = str(response.status_code)
        assert status in operation["responses"], (method, template, status, response.text)
        schema: dict[str, Any] = operation["responses"][status]["content"]["application/json"][
            "schema"]
        validator = jsonschema.Draft202012Validator({**schema, "components": components})
        errors = list(validator.iter_errors(response.json()))
        assert not errors, (method, template, status, [e.message for e in errors])
        seen_statuses.add(response.status_code)
    assert seen_statuses >= {200, 201, 400, 401, 402, 404, 502}
