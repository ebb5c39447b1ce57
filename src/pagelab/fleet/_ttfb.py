"""TTFB tests through the fleet: one probe per location of the region, each sent to a
worker of that location, answered within the request's deadline.

A TTFB test is a synchronous request (the client waits for its answer, 35 s at most), so
it is not a Celery task: a run would hold a worker's solo pool up to 150 s, and a probe
handed out again after its deadline would be useless. The server publishes one signed
request per location on ``pagelab.ttfb.<id>`` (kombu, Celery's messaging layer, on the
same broker); a thread of each worker consumes its locations' queues and runs the probes
beside its Lighthouse runs; the signed answers come back on a Redis list of the request
(``pagelab:ttfb-reply:<id>``, expiring), which the server pops until all answered or the
deadline. A location with no live worker (no heartbeat) fails at once with ``NO_WORKER``;
one whose worker does not answer in time fails with ``TIMEOUT``.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pagelab.models import TTFBData, TTFBError

from ._keys import FleetKeys, WorkerKeys, WorkerLookup
from ._protocol import (
    TTFB_REPLY_PREFIX,
    ForgedMessageError,
    now_ms,
    ttfb_queue,
)

__all__ = ["TTFBAnswer", "publish_ttfb_request", "reply_ttfb", "ttfb_request_queue",
           "wait_ttfb_answers"]

logger = logging.getLogger("pagelab.fleet.ttfb")

#: Seconds a reply list outlives its request (answers arriving late are dropped with it).
REPLY_TTL = 120


@dataclass(frozen=True, slots=True)
class TTFBAnswer:
    """One location's outcome: the probe's data or error, and who measured it."""

    data: TTFBData | None
    error: TTFBError | None
    worker: str | None


def ttfb_request_queue(location: str) -> Any:
    """The kombu queue of ``location``'s TTFB probes."""
    from kombu.entity import Exchange, Queue

    name = ttfb_queue(location)
    return Queue(  # type: ignore[no-untyped-call]
        name, Exchange(name, type="direct"), routing_key=name,  # type: ignore[no-untyped-call]
    )


def publish_ttfb_request(app: Any, keys: FleetKeys, *, url: str, locations: Sequence[str],
                         timeout: float, deadline_ms: int,
                         target_policy: dict[str, Any]) -> str:
    """Send one signed probe request per location; returns the reply list's key."""
    request_id = secrets.token_hex(12)
    reply_to = f"{TTFB_REPLY_PREFIX}{request_id}"
    with app.producer_or_acquire() as producer:
        for location in locations:
            queue = ttfb_request_queue(location)
            body = {"kind": "ttfb", "request_id": request_id, "reply_to": reply_to,
                    "url": url, "location": location, "timeout": timeout,
                    "deadline": deadline_ms, "target_policy": target_policy,
                    "sent_at": now_ms()}
            producer.publish(keys.sign(body), exchange=queue.exchange,
                             routing_key=queue.routing_key, declare=[queue],
                             serializer="json", retry=True,
                             retry_policy={"max_retries": 2, "interval_start": 0.2})
    return reply_to


def wait_ttfb_answers(client: Any, keys: FleetKeys, lookup: WorkerLookup, reply_to: str,
                      locations: Sequence[str], deadline: float) -> dict[str, TTFBAnswer]:
    """Pop the signed answers of ``reply_to`` until every location answered or the
    ``deadline`` (``time.monotonic()``) passed; an answer not signed by the current key of
    a worker of that location is refused."""
    pending = set(locations)
    answers: dict[str, TTFBAnswer] = {}
    request_id = reply_to.removeprefix(TTFB_REPLY_PREFIX)
    try:
        while pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            # Short pops: the client's socket timeout (5 s) must outlast each one.
            popped = client.blpop([reply_to], timeout=max(0.05, min(remaining, 2.0)))
            if popped is None:
                continue
            try:
                body, worker = keys.open_from_worker(json.loads(popped[1]), lookup,
                                                     max_age_s=REPLY_TTL)
                location = str(body["location"])
                if body.get("request_id") != request_id or location not in pending:
                    raise ForgedMessageError("an answer to another request")
                if location not in worker.locations:
                    raise ForgedMessageError(f"{worker.name} does not serve {location}")
                data = TTFBData.model_validate(body["data"]) if body.get("data") else None
                error = TTFBError.model_validate(body["error"]) if body.get("error") else None
                if (data is None) == (error is None):
                    raise ForgedMessageError("an answer needs data or an error")
            except (ForgedMessageError, ValueError, KeyError) as exc:
                logger.warning("refused a TTFB answer: %s", exc)
                continue
            pending.discard(location)
            answers[location] = TTFBAnswer(data, error, worker.name)
    finally:
        client.delete(reply_to)
    return answers


def reply_ttfb(client: Any, keys: WorkerKeys, body: dict[str, Any],
               data: TTFBData | None, error: TTFBError | None) -> None:
    """The worker's side: push the signed answer on the request's reply list."""
    reply_to = str(body["reply_to"])
    if not reply_to.startswith(TTFB_REPLY_PREFIX):
        raise ForgedMessageError("reply_to: not a TTFB reply list")
    answer = {"kind": "ttfb_result", "request_id": body["request_id"],
              "location": body["location"],
              "data": data.model_dump(mode="json") if data else None,
              "error": error.model_dump(mode="json") if error else None}
    pipe = client.pipeline()
    pipe.rpush(reply_to, json.dumps(keys.sign(answer)))
    pipe.expire(reply_to, REPLY_TTL)
    pipe.execute()
