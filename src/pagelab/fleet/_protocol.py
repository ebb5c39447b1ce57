"""What travels between the server and its workers, and how it is protected.

Every message is a JSON *envelope* ``{"body": {...}, "sig": "<hex>"}``: ``sig`` is
HMAC-SHA256 over the body's canonical JSON (sorted keys, no spaces, UTF-8) under a key
derived from the fleet secret. A task's config (passwords, cookies) travels sealed with
Fernet (AES-128-CBC + HMAC) under another key derived from the same secret, so nothing
secret rests in Redis in clear. Pure functions, no Celery: the server, the worker and the
tests share them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import time
from typing import Any

from pagelab._exceptions import InvalidInputError, PagelabError

__all__ = [
    "BROKER_ENV",
    "DONE_KEY_PREFIX",
    "FLEET_SECRET_ENV",
    "MIN_SECRET_LENGTH",
    "RESULTS_QUEUE",
    "RUN_LIGHTHOUSE_TASK",
    "TTFB_REPLY_PREFIX",
    "FleetKeys",
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
#: The queue the server consumes: workers' "started" and "finished" messages.
RESULTS_QUEUE = "pagelab.results"
#: Redis keys ``pagelab:done:<test id>``: set by the server once a test's outcome is in its
#: store, so a worker skips a later delivery of it (a task whose ack was lost with the
#: broker connection comes back after the visibility timeout).
DONE_KEY_PREFIX = "pagelab:done:"
#: Seconds a done mark is kept (longer than any visibility timeout).
DONE_KEY_TTL = 2 * 86400
#: Redis lists ``pagelab:ttfb-reply:<request id>``: the answers to one TTFB test.
TTFB_REPLY_PREFIX = "pagelab:ttfb-reply:"
#: A shorter secret is refused: it signs results and seals passwords.
MIN_SECRET_LENGTH = 16

_LOCATION_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


class ForgedMessageError(PagelabError):
    """A fleet message without a valid signature under the fleet secret (refused)."""


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


def resolve_secret(value: str | None) -> str:
    """The fleet secret from the option, else ``$PAGELAB_FLEET_SECRET``; a clear error if
    neither is set or it is too short."""
    secret = value or os.environ.get(FLEET_SECRET_ENV, "")
    if not secret:
        raise InvalidInputError(
            f"a fleet needs a shared secret: --fleet-secret or ${FLEET_SECRET_ENV} "
            "(the same on the server and every worker)"
        )
    if len(secret) < MIN_SECRET_LENGTH:
        raise InvalidInputError(
            f"the fleet secret must be at least {MIN_SECRET_LENGTH} characters"
        )
    return secret


def _derive(secret: str, purpose: bytes) -> bytes:
    # HKDF-like expansion (one block): independent keys for signing and sealing.
    return hmac.new(secret.encode("utf-8"), b"pagelab-fleet/" + purpose, hashlib.sha256).digest()


class FleetKeys:
    """The signing and sealing keys derived from one fleet secret."""

    def __init__(self, secret: str) -> None:
        from cryptography.fernet import Fernet

        self._sign_key = _derive(secret, b"sign")
        self._fernet = Fernet(base64.urlsafe_b64encode(_derive(secret, b"seal")))

    # -- signatures --------------------------------------------------------------------

    def signature(self, body: dict[str, Any]) -> str:
        return hmac.new(self._sign_key, canonical_json(body), hashlib.sha256).hexdigest()

    def sign(self, body: dict[str, Any]) -> dict[str, Any]:
        """The envelope of ``body``."""
        return {"body": body, "sig": self.signature(body)}

    def open(self, envelope: Any) -> dict[str, Any]:
        """The body of a well-signed envelope; :class:`ForgedMessageError` otherwise."""
        if not isinstance(envelope, dict) or not isinstance(envelope.get("body"), dict):
            raise ForgedMessageError("not a fleet envelope")
        sig = envelope.get("sig")
        if not isinstance(sig, str):
            raise ForgedMessageError("unsigned message")
        try:
            expected = self.signature(envelope["body"])
        except (TypeError, ValueError):
            raise ForgedMessageError("the body is not canonical JSON") from None
        if not hmac.compare_digest(expected.encode(), sig.encode("utf-8", "replace")):
            raise ForgedMessageError("bad signature (tampered, or another fleet secret)")
        body: dict[str, Any] = envelope["body"]
        return body

    # -- sealing -----------------------------------------------------------------------

    def seal(self, text: str) -> str:
        """Encrypt and authenticate ``text`` (a Fernet token, URL-safe base64)."""
        return self._fernet.encrypt(text.encode("utf-8")).decode("ascii")

    def unseal(self, token: str, *, max_age: float | None = None) -> str:
        """The text of a sealed token; :class:`ForgedMessageError` if it was not sealed
        with this secret (or is older than ``max_age`` seconds)."""
        from cryptography.fernet import InvalidToken

        try:
            if max_age is None:
                return self._fernet.decrypt(token.encode("ascii")).decode("utf-8")
            return self._fernet.decrypt(token.encode("ascii"), ttl=int(max_age)).decode("utf-8")
        except (InvalidToken, UnicodeError, ValueError):
            raise ForgedMessageError("a sealed field does not open with the fleet secret") from None


def now_ms() -> int:
    return int(time.time() * 1000)
