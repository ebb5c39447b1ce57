"""The Redis transport of the fleet: kombu's, refusing a message before it is decoded when
it is compressed or larger than the consumer's bound (issue 34, point 1).

kombu turns a message it reads into a ``Message`` and, in that constructor, decodes the
body (base64) and decompresses it when the message has a ``compression`` header: a 1 MB
gzip bomb became gigabytes before any of pagelab's code saw it. pagelab never compresses,
so here a compressed or oversized message is marked with an error instead: the body is
dropped undecoded, and the consumer's ``on_decode_error`` (the server's poison path, Celery's
on a worker) acknowledges, logs and counts it like any other undecodable message.
"""

from __future__ import annotations

import json
from typing import Any

from kombu.transport import redis as kombu_redis
from kombu.transport import virtual

from ._protocol import MAX_TASK_BYTES, ForgedMessageError

__all__ = ["MAX_MESSAGE_BYTES_OPTION", "GuardedRedisTransport"]

#: The transport option (``broker_transport_options``) bounding a received message's size.
MAX_MESSAGE_BYTES_OPTION = "max_message_bytes"


def _stored_size(payload: dict[str, Any]) -> int:
    """About the bytes the message took in Redis: its (still encoded) body and the rest."""
    body = payload.get("body") or ""
    rest = {key: value for key, value in payload.items() if key != "body"}
    return len(body) + len(json.dumps(rest, default=str))


def _refusal(payload: Any, max_bytes: int) -> str | None:
    """Why the raw message is refused before any decoding, or None."""
    if not isinstance(payload, dict) or not isinstance(payload.get("properties"), dict):
        return None  # kombu's own checks fail it
    headers = payload.get("headers")
    compression = headers.get("compression") if isinstance(headers, dict) else None
    if compression:
        return (f"compressed ({str(compression)[:60]}): pagelab never compresses, "
                "so it is not decompressed")
    size = _stored_size(payload)
    if size > max_bytes:
        return f"{size} bytes, over the bound of {max_bytes}: not decoded"
    return None


def _decode_error(reason: str) -> Any:
    """A refusal in kombu's form of a decoding error (``sys.exc_info()``'s)."""
    return (ForgedMessageError, ForgedMessageError(reason), None)


class _GuardedMessage(virtual.Message):
    """kombu's message, checked before its body is decoded and after."""

    def __init__(self, payload: Any, channel: Any = None, **kwargs: Any) -> None:
        max_bytes: int = channel.max_message_bytes
        reason = _refusal(payload, max_bytes)
        if reason is not None:
            # With ``errors`` set, kombu neither decodes nor decompresses; the consumer
            # calls its on_decode_error (acknowledged, logged, counted).
            self.errors = [_decode_error(reason)]
            payload = {**payload, "body": ""}  # dropped: never decoded
        super().__init__(payload, channel=channel, **kwargs)  # type: ignore[no-untyped-call]
        if not self.errors and len(self.body or b"") > max_bytes:
            self.errors.append(_decode_error(
                f"{len(self.body)} bytes once decoded, over the bound of {max_bytes}"
            ))
            self.body = b""


class _GuardedChannel(kombu_redis.Channel):
    Message = _GuardedMessage
    from_transport_options = (  # type: ignore[assignment]  # kombu types it by its length
        *kombu_redis.Channel.from_transport_options, MAX_MESSAGE_BYTES_OPTION,
    )
    #: Set from the transport options (``fleet_app``).
    max_message_bytes = MAX_TASK_BYTES


class GuardedRedisTransport(kombu_redis.Transport):
    """kombu's Redis transport (``redis://`` and ``rediss://``) with the guarded messages."""

    Channel = _GuardedChannel
