"""What travels between the server and its workers, and how it is protected.

Every message is a JSON *envelope* ``{"body": {...}, "sig": "..."}`` whose signature
covers the body's canonical JSON (sorted keys, no spaces, UTF-8): the server's Ed25519
signature on what it sends, the sending worker's own key on what workers send (the keys:
``_keys.py``). A task's config (passwords, cookies) travels sealed with Fernet
(AES-128-CBC + HMAC) for its location, so nothing secret rests in Redis in clear. Pure
functions, no Celery: the server, the worker and the tests share them.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from pagelab._exceptions import InvalidInputError, PagelabError

__all__ = [
    "BROKER_ENV",
    "DELIVERY_KEY_PREFIX",
    "DONE_KEY_PREFIX",
    "FLEET_SECRET_ENV",
    "MAX_TASK_BYTES",
    "MIN_SECRET_LENGTH",
    "RESULTS_QUEUE",
    "RUN_LIGHTHOUSE_TASK",
    "TTFB_REPLY_PREFIX",
    "WORKER_KEY_ENV",
    "ForgedMessageError",
    "canonical_json",
    "location_queue",
    "resolve_secret",
    "ttfb_queue",
]

#: Environment variables read by ``pagelab serve`` and ``pagelab worker``.
BROKER_ENV = "PAGELAB_BROKER_URL"
FLEET_SECRET_ENV = "PAGELAB_FLEET_SECRET"
#: The Celery task a worker runs for one Lighthouse test.
RUN_LIGHTHOUSE_TASK = "pagelab.fleet.run_lighthouse"
#: The queue the server consumes: workers' "taken", "started" and result messages.
RESULTS_QUEUE = "pagelab.results"
#: Redis keys ``pagelab:done:<test id>``: set by the server once a test's outcome is in its
#: store, so a worker skips a later delivery of it (a task whose ack was lost with the
#: broker connection comes back after the visibility timeout).
DONE_KEY_PREFIX = "pagelab:done:"
#: Seconds a done mark is kept (longer than any visibility timeout).
DONE_KEY_TTL = 2 * 86400
#: Redis keys ``pagelab:delivery:<delivery id>``: the name of the worker holding a task's
#: delivery (kept alive by its heartbeat), then ``ran`` until the task expires, so a
#: delivery runs once (issue 34, point 8).
DELIVERY_KEY_PREFIX = "pagelab:delivery:"
#: Redis lists ``pagelab:ttfb-reply:<request id>``: the answers to one TTFB test.
TTFB_REPLY_PREFIX = "pagelab:ttfb-reply:"
#: Environment variable holding a worker's issued key (``pagelab worker``).
WORKER_KEY_ENV = "PAGELAB_WORKER_KEY"
#: A task or probe request larger than this is refused by a worker before it is decoded
#: (issue 34): the largest config the API takes (1 MiB), sealed and wrapped, is far smaller.
MAX_TASK_BYTES = 8 << 20
#: A shorter secret is refused: every key of the fleet derives from it.
MIN_SECRET_LENGTH = 16

_LOCATION_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


class ForgedMessageError(PagelabError):
    """A fleet message without a valid signature by a current key, stale, replayed, or of a
    form pagelab never sends (compressed, too large): refused."""


def location_queue(location: str) -> str:
    """``pagelab.loc.<id>``: the Celery queue of the tests measured from ``location``."""
    if not _LOCATION_ID.match(location):
        raise InvalidInputError(f"location {location!r}: expected an id such as 'de' or 'us'")
    return f"pagelab.loc.{location}"


def ttfb_queue(location: str) -> str:
    """``pagelab.ttfb.<id>``: the queue of the TTFB probes measured from ``location``
    (apart from the Lighthouse queue: a run holds a worker's Celery pool up to 150 s,
    longer than a TTFB test may wait)."""
    return "pagelab.ttfb." + location_queue(location).removeprefix("pagelab.loc.")


def canonical_json(body: Any) -> bytes:
    """The bytes a signature covers: sorted keys, no whitespace, UTF-8."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def resolve_secret(value: str | None = None, *, file: Path | None = None) -> str:
    """The fleet secret: from ``file`` (its first line), else ``$PAGELAB_FLEET_SECRET``,
    else ``value`` (the deprecated ``--fleet-secret``, visible to every local user in
    ``ps``); a clear error if none is set or it is too short."""
    if file is not None:
        try:
            secret = file.read_text().strip()
        except OSError as exc:
            raise InvalidInputError(f"--fleet-secret-file: {exc.strerror}: {file}") from None
    else:
        secret = os.environ.get(FLEET_SECRET_ENV, "") or value or ""
    if not secret:
        raise InvalidInputError(
            f"a fleet needs a secret: --fleet-secret-file PATH or ${FLEET_SECRET_ENV} "
            "(on the server only: workers get their own keys, `pagelab worker-key issue`)"
        )
    if len(secret) < MIN_SECRET_LENGTH:
        raise InvalidInputError(
            f"the fleet secret must be at least {MIN_SECRET_LENGTH} characters"
        )
    return secret


def now_ms() -> int:
    return int(time.time() * 1000)
