"""Workers' heartbeats: each worker writes its own, signed, as a Redis key; the server
(``/healthz``, TTFB routing) and ``pagelab workers`` read them the one way here, with one
maximum age."""

from __future__ import annotations

import json
from typing import Any

from ._keys import FleetKeys, WorkerLookup
from ._protocol import ForgedMessageError

__all__ = [
    "HEARTBEAT_INTERVAL",
    "HEARTBEAT_MAX_AGE_S",
    "HEARTBEAT_TTL",
    "WORKER_KEY_PREFIX",
    "live_workers",
]

#: Redis keys ``pagelab:worker:<name>``: a worker's heartbeat (JSON, short TTL).
WORKER_KEY_PREFIX = "pagelab:worker:"
#: Seconds between heartbeats, and how long one stays visible.
HEARTBEAT_INTERVAL = 5.0
HEARTBEAT_TTL = 20
#: A heartbeat signed longer ago than this is not a live worker (a copy replayed later).
#: Above HEARTBEAT_TTL, after which Redis drops a heartbeat anyway, by a margin for a
#: reader whose clock is behind the worker's: a heartbeat Redis still holds is never
#: refused for its age. The server and `pagelab workers` read with this one value.
HEARTBEAT_MAX_AGE_S = 30.0


def live_workers(client: Any, keys: FleetKeys, lookup: WorkerLookup) -> list[dict[str, Any]]:
    """The workers whose heartbeat on the Redis ``client`` is live (signed by a current key,
    ``lookup`` giving each worker's, at most :data:`HEARTBEAT_MAX_AGE_S` old):
    ``name, locations, current_test, last_seen`` (epoch ms), by name. A bad, stale or
    revoked heartbeat is left out."""
    names = sorted(client.scan_iter(match=f"{WORKER_KEY_PREFIX}*", count=100))
    seen: list[dict[str, Any]] = []
    for raw in client.mget(names) if names else []:
        if raw is None:  # expired between the scan and the read
            continue
        try:
            body, _ = keys.open_from_worker(json.loads(raw), lookup,
                                            max_age_s=HEARTBEAT_MAX_AGE_S)
        except (ValueError, ForgedMessageError):
            continue
        seen.append({
            "name": body.get("worker"), "locations": body.get("locations", []),
            "current_test": body.get("current_test"), "last_seen": body.get("sent_at"),
        })
    return seen
