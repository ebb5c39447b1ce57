"""Property-based test of the API against its own OpenAPI document (schemathesis; issue 10,
item 8): for bodies and parameters the schema allows, no 5xx, every response conforms to the
schema, and no body the schema calls valid is refused as invalid (400).

The key has zero credits, so creations and discoveries end in 402 before anything is
queued, probed or fetched (no test runs, no TTFB or discovery request leaves); private
targets are allowed on this server so that a generated host name is never resolved (no DNS
query leaves the machine). The number of examples per operation is bounded (``EXAMPLES``):
a few seconds each.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from live_server import LiveServer, create_key
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from pagelab.service import Settings, create_app

EXAMPLES = 20

# The document the server serves, built without serving (the operations to parametrize).
_DOCUMENT: dict[str, Any] = create_app(Settings(data_dir=Path(tempfile.gettempdir()))).openapi()
_SCHEMA = schemathesis.openapi.from_dict(_DOCUMENT)
_OPERATIONS = {op.ok().label: op.ok() for op in _SCHEMA.get_all_operations()}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str]]:
    data_dir = tmp_path_factory.mktemp("schemathesis")
    key = create_key(data_dir, lighthouse=0, ttfb=0)
    server_settings = Settings(data_dir=data_dir, worker=False, allow_private_targets=True,
                               rate_limit_per_minute=100_000)
    with LiveServer(server_settings) as server:
        yield server, key


@pytest.mark.parametrize("label", sorted(_OPERATIONS))
def test_api_keeps_its_schema(label: str, live: tuple[LiveServer, str]) -> None:
    server, key = live
    operation = _OPERATIONS[label]

    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def check(case: schemathesis.Case) -> None:
        response = case.call(base_url=server.base_url, headers={"X-API-KEY": key},
                             timeout=30)
        case.validate_response(response,
                               checks=[not_a_server_error, response_schema_conformance])
        # Positive cases only: valid by the schema, so never refused as invalid.
        assert response.status_code != 400, (case.body, case.query, response.text)

    check()
