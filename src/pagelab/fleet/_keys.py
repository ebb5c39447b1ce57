"""The fleet's keys: the server's, and one per worker, issued by the server and revocable.

The fleet secret never leaves the server. From it the server derives:

* an **Ed25519 key pair** that signs what the server sends (tasks, TTFB probe requests):
  workers hold the public key, so they can check a task but never forge one;
* one **worker key** per worker and key generation, ``HMAC(secret, worker/NAME/GEN)``:
  the worker signs its messages (started, result, heartbeat, TTFB answer) with it, so a
  message names the one worker that can have sent it; issuing a new key for a name (a new
  generation) or revoking it kills the old key at once, the store says which is current;
* one **sealing key per location** (Fernet): a task's config (passwords, cookies) is
  sealed for its location, and a worker holds the keys of its own locations only.

A worker gets all it needs in one *credential* (``pagelab worker-key issue``): its name,
key generation, locations, worker key, the server's public key and its locations' sealing
keys. Every message a worker signs carries ``sent_at``; the server refuses one outside its
freshness window (issue 22, finding 9).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Callable, Sequence
from typing import Any

from pagelab.store import FleetWorkerKey

from ._protocol import ForgedMessageError, canonical_json, now_ms

__all__ = ["CREDENTIAL_PREFIX", "FleetKeys", "WorkerKeys", "WorkerLookup"]

#: A credential is this prefix and URL-safe base64 of its JSON.
CREDENTIAL_PREFIX = "plw1."
#: A worker's clock may run ahead of the server's by this much.
_CLOCK_SKEW_MS = 60_000


def _derive(secret: str, purpose: str) -> bytes:
    # HKDF-like expansion (one block): independent keys for each purpose.
    return hmac.new(secret.encode("utf-8"), b"pagelab-fleet/" + purpose.encode(),
                    hashlib.sha256).digest()


def _fernet(key: bytes) -> Any:
    from cryptography.fernet import Fernet

    return Fernet(base64.urlsafe_b64encode(key))


def _unseal(fernet: Any, token: str) -> str:
    from cryptography.fernet import InvalidToken

    try:
        return str(fernet.decrypt(token.encode("ascii")).decode("utf-8"))
    except (InvalidToken, UnicodeError, ValueError):
        raise ForgedMessageError("a sealed field does not open with this key") from None


def _hmac(key: bytes, body: dict[str, Any]) -> str:
    try:
        return hmac.new(key, canonical_json(body), hashlib.sha256).hexdigest()
    except (TypeError, ValueError):
        raise ForgedMessageError("the body is not canonical JSON") from None


def _parts(envelope: Any) -> tuple[dict[str, Any], str]:
    if not isinstance(envelope, dict) or not isinstance(envelope.get("body"), dict):
        raise ForgedMessageError("not a fleet envelope")
    sig = envelope.get("sig")
    if not isinstance(sig, str):
        raise ForgedMessageError("unsigned message")
    return envelope["body"], sig


#: ``name -> `` the worker's current (unrevoked) key, or None.
WorkerLookup = Callable[[str], FleetWorkerKey | None]


class FleetKeys:
    """The server's keys, all derived from the fleet secret."""

    def __init__(self, secret: str) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        self._secret = secret
        self._signer = Ed25519PrivateKey.from_private_bytes(_derive(secret, "server-sign"))
        self.public_key = base64.b64encode(
            self._signer.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        ).decode("ascii")

    # -- what the server sends ---------------------------------------------------------

    def sign(self, body: dict[str, Any]) -> dict[str, Any]:
        """The envelope of a task or probe request (Ed25519 over the canonical JSON)."""
        signature = self._signer.sign(canonical_json(body))
        return {"body": body, "sig": base64.b64encode(signature).decode("ascii")}

    def seal(self, text: str, location: str) -> str:
        """``text`` encrypted and authenticated for the workers of ``location``."""
        return str(_fernet(self._seal_key(location)).encrypt(text.encode("utf-8"))
                   .decode("ascii"))

    def _seal_key(self, location: str) -> bytes:
        return _derive(self._secret, f"seal/{location}")

    # -- workers -----------------------------------------------------------------------

    def worker_key(self, name: str, generation: int) -> bytes:
        return _derive(self._secret, f"worker/{name}/{generation}")

    def credential(self, record: FleetWorkerKey) -> str:
        """What ``pagelab worker-key issue`` prints: everything the worker needs."""
        payload = {
            "name": record.name, "generation": record.generation,
            "locations": list(record.locations),
            "key": self.worker_key(record.name, record.generation).hex(),
            "server_public_key": self.public_key,
            "seal_keys": {
                loc: base64.b64encode(self._seal_key(loc)).decode("ascii")
                for loc in record.locations
            },
        }
        return CREDENTIAL_PREFIX + base64.urlsafe_b64encode(
            json.dumps(payload, separators=(",", ":")).encode()
        ).decode("ascii")

    def open_from_worker(
        self, envelope: Any, lookup: WorkerLookup, *, max_age_s: float,
        now: int | None = None,
    ) -> tuple[dict[str, Any], FleetWorkerKey]:
        """The body of a message signed by a worker's current key and sent within the last
        ``max_age_s`` seconds, and that worker; :class:`ForgedMessageError` otherwise."""
        body, sig = _parts(envelope)
        name, generation = body.get("worker"), body.get("key_generation")
        if not isinstance(name, str) or not isinstance(generation, int):
            raise ForgedMessageError("no worker key named (worker, key_generation)")
        record = lookup(name)
        if record is None:
            raise ForgedMessageError(f"no key was issued to worker {name[:64]!r}, or it "
                                     "was revoked")
        if record.generation != generation:
            raise ForgedMessageError(f"worker {name[:64]!r} signed with a replaced key")
        expected = _hmac(self.worker_key(name, generation), body)
        if not hmac.compare_digest(expected.encode(), sig.encode("utf-8", "replace")):
            raise ForgedMessageError("bad signature (tampered, or another worker's key)")
        sent_at = body.get("sent_at")
        current = now if now is not None else now_ms()
        if not isinstance(sent_at, int) or not (
            current - max_age_s * 1000 <= sent_at <= current + _CLOCK_SKEW_MS
        ):
            raise ForgedMessageError(f"stale message (sent_at outside the last {max_age_s:g} s)")
        return body, record


class WorkerKeys:
    """A worker's side: signs its messages, checks the server's, opens its locations'
    sealed configs. Built from the credential ``pagelab worker-key issue`` printed."""

    def __init__(self, credential: str) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        text = credential.strip()
        if not text.startswith(CREDENTIAL_PREFIX):
            raise ForgedMessageError(
                f"not a worker key (it starts with {CREDENTIAL_PREFIX!r}: "
                "`pagelab worker-key issue NAME --locations ...` on the server)"
            )
        try:
            payload = json.loads(base64.urlsafe_b64decode(text[len(CREDENTIAL_PREFIX):]))
            self.name = str(payload["name"])
            self.generation = int(payload["generation"])
            self.locations = tuple(str(loc) for loc in payload["locations"])
            self._key = bytes.fromhex(payload["key"])
            self._server = Ed25519PublicKey.from_public_bytes(
                base64.b64decode(payload["server_public_key"])
            )
            self._seal = {
                loc: _fernet(base64.b64decode(key)) for loc, key in payload["seal_keys"].items()
            }
        except (ValueError, KeyError, TypeError, binascii.Error) as exc:
            raise ForgedMessageError(f"a damaged worker key: {exc}") from None

    def sign(self, body: dict[str, Any]) -> dict[str, Any]:
        """The envelope of ``body``, which gets this worker's name, key generation and the
        time it is sent (inside the signature)."""
        signed = {**body, "worker": self.name, "key_generation": self.generation,
                  "sent_at": now_ms()}
        return {"body": signed, "sig": _hmac(self._key, signed)}

    def open(self, envelope: Any) -> dict[str, Any]:
        """The body of a message the server signed; :class:`ForgedMessageError` otherwise."""
        from cryptography.exceptions import InvalidSignature

        body, sig = _parts(envelope)
        try:
            self._server.verify(base64.b64decode(sig, validate=True), canonical_json(body))
        except (InvalidSignature, binascii.Error, ValueError, TypeError):
            raise ForgedMessageError("not signed by the server") from None
        return body

    def unseal(self, token: str, location: str) -> str:
        fernet = self._seal.get(location)
        if fernet is None:
            raise ForgedMessageError(f"this worker holds no key for location {location!r}")
        return _unseal(fernet, token)

    def serves(self, locations: Sequence[str]) -> bool:
        return all(loc in self.locations for loc in locations)
