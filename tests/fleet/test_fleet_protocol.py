"""The fleet's message protection, without a broker: signatures over canonical JSON,
sealed configs, queue names, settings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pagelab import InvalidInputError
from pagelab.fleet import (
    FleetKeys,
    FleetSettings,
    ForgedMessageError,
    WorkerKeys,
    canonical_json,
    location_queue,
    resolve_secret,
    ttfb_queue,
)
from pagelab.store import FleetWorkerKey

SECRET = "protocol-test-secret-0123"


def test_canonical_json_is_order_free_and_compact() -> None:
    assert canonical_json({"b": 1, "a": "é"}) == canonical_json({"a": "é", "b": 1})
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()


def _record(name: str = "fra-1", generation: int = 1,
            locations: tuple[str, ...] = ("de",)) -> FleetWorkerKey:
    return FleetWorkerKey(name=name, generation=generation, locations=locations, issued_at=0)


def test_a_task_opens_on_a_worker_and_any_change_is_refused() -> None:
    server = FleetKeys(SECRET)
    worker = WorkerKeys(server.credential(_record()))
    envelope = server.sign({"kind": "lighthouse", "test_id": "lt_1", "location": "de"})
    assert worker.open(envelope)["test_id"] == "lt_1"
    tampered = {**envelope, "body": {**envelope["body"], "test_id": "lt_2"}}
    # A worker's own key cannot sign a task: only the server's private key can.
    for bad in (tampered, {"body": envelope["body"]}, {"sig": envelope["sig"]}, "x",
                FleetKeys("another-secret-0123456").sign(envelope["body"]),
                worker.sign(envelope["body"])):
        with pytest.raises(ForgedMessageError):
            worker.open(bad)


def test_a_worker_message_opens_only_with_its_current_key_and_while_fresh() -> None:
    server = FleetKeys(SECRET)
    issued = {"fra-1": _record(), "iad-1": _record("iad-1", locations=("us",))}
    fra = WorkerKeys(server.credential(issued["fra-1"]))
    envelope = fra.sign({"kind": "result", "test_id": "lt_1"})
    body, worker = server.open_from_worker(envelope, issued.get, max_age_s=60)
    assert (body["worker"], worker.locations) == ("fra-1", ("de",))
    # Another worker's key cannot speak for fra-1; a replaced or revoked key is dead.
    iad = WorkerKeys(server.credential(issued["iad-1"]))
    posing = {"body": {**iad.sign({"kind": "result"})["body"], "worker": "fra-1"},
              "sig": iad.sign({"kind": "result"})["sig"]}
    replaced: dict[str, FleetWorkerKey] = {"fra-1": _record(generation=2)}
    revoked: dict[str, FleetWorkerKey] = {}
    for bad, lookup in (
        (posing, issued.get),
        ({**envelope, "body": {**envelope["body"], "test_id": "lt_2"}}, issued.get),
        (envelope, replaced.get),
        (envelope, revoked.get),
    ):
        with pytest.raises(ForgedMessageError):
            server.open_from_worker(bad, lookup, max_age_s=60)
    # Outside the freshness window (sent_at is inside the signature).
    later = envelope["body"]["sent_at"] + 61_000
    with pytest.raises(ForgedMessageError, match="stale"):
        server.open_from_worker(envelope, issued.get, max_age_s=60, now=later)


def test_sealed_configs_open_only_for_their_location() -> None:
    server = FleetKeys(SECRET)
    worker = WorkerKeys(server.credential(_record(locations=("de", "uk"))))
    token = server.seal('{"auth_password": "hunter2"}', "de")
    assert "hunter2" not in token
    assert worker.unseal(token, "de") == '{"auth_password": "hunter2"}'
    with pytest.raises(ForgedMessageError):
        worker.unseal(server.seal("x", "us"), "us")  # no key for us
    with pytest.raises(ForgedMessageError):
        worker.unseal(token, "uk")  # sealed for de
    other = WorkerKeys(FleetKeys("another-secret-0123456").credential(_record()))
    with pytest.raises(ForgedMessageError):
        other.unseal(token, "de")
    with pytest.raises(ForgedMessageError, match="not a worker key"):
        WorkerKeys(SECRET)


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
