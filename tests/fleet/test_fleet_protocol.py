"""The fleet's message protection, without a broker: signatures over canonical JSON,
sealed configs, queue names, settings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pagelab import InvalidInputError
from pagelab.fleet import FleetKeys, FleetSettings, ForgedMessageError, resolve_secret
from pagelab.fleet._protocol import canonical_json, location_queue, ttfb_queue

SECRET = "protocol-test-secret-0123"


def test_canonical_json_is_order_free_and_compact() -> None:
    assert canonical_json({"b": 1, "a": "é"}) == canonical_json({"a": "é", "b": 1})
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()


def test_a_signed_body_opens_and_any_change_is_refused() -> None:
    keys = FleetKeys(SECRET)
    envelope = keys.sign({"kind": "result", "test_id": "lt_1", "metrics": {"fcp": 1.5}})
    assert keys.open(envelope)["test_id"] == "lt_1"
    tampered = {**envelope, "body": {**envelope["body"], "test_id": "lt_2"}}
    for bad in (tampered, {"body": envelope["body"]}, {"sig": envelope["sig"]}, "x",
                FleetKeys("another-secret-0123456").sign(envelope["body"])):
        with pytest.raises(ForgedMessageError):
            keys.open(bad)


def test_sealed_text_opens_only_with_the_secret() -> None:
    keys = FleetKeys(SECRET)
    token = keys.seal('{"auth_password": "hunter2"}')
    assert "hunter2" not in token
    assert keys.unseal(token) == '{"auth_password": "hunter2"}'
    with pytest.raises(ForgedMessageError):
        FleetKeys("another-secret-0123456").unseal(token)


def test_queue_names_and_bad_input() -> None:
    assert location_queue("de") == "pagelab.loc.de"
    assert ttfb_queue("de-central") == "pagelab.ttfb.de-central"
    for bad in ("de;rm -rf", "De", ""):
        with pytest.raises(InvalidInputError):
            location_queue(bad)
        with pytest.raises(InvalidInputError):
            ttfb_queue(bad)
    with pytest.raises(InvalidInputError, match="at least 16"):
        resolve_secret("short")
    with pytest.raises(ValidationError):
        FleetSettings(broker_url="amqp://host", secret=SECRET)
    assert FleetSettings(broker_url="rediss://h:6380/0", secret=SECRET).max_attempts == 2
    assert SECRET not in repr(FleetSettings(broker_url="redis://h/0", secret=SECRET))
