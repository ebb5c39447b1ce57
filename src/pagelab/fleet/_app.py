"""The Celery application the server and the workers share (same broker, same settings)."""

from __future__ import annotations

import logging
import os
import ssl
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pagelab._exceptions import InvalidInputError
from pagelab._url_secrets import redact_url

from ._protocol import BROKER_ENV, MAX_TASK_BYTES

if TYPE_CHECKING:
    from celery import Celery

__all__ = [
    "DEFAULT_VISIBILITY_TIMEOUT",
    "broker_options",
    "check_broker_url",
    "consume",
    "fleet_app",
    "required_broker",
    "resolve_broker",
    "results_queue",
]

#: Seconds a task taken by a worker stays invisible before Redis hands it out again (the
#: worker was lost: killed, or its machine gone). Longer than a run (150 s hard limit) plus
#: a wait for the machine's engine lock.
DEFAULT_VISIBILITY_TIMEOUT = 600.0


def check_broker_url(url: str) -> str:
    """``redis://`` or ``rediss://`` (TLS); anything else is a clear error."""
    scheme = urlsplit(url).scheme
    if scheme not in ("redis", "rediss"):
        raise InvalidInputError(
            f"--broker: {redact_url(url)!r} is not a redis:// or rediss:// URL (the fleet "
            "uses Redis)"
        )
    return url


def resolve_broker(value: str | None) -> str | None:
    """The fleet's broker, resolved once for every command: ``value`` (``--broker``), else
    ``$PAGELAB_BROKER_URL``, checked (:func:`check_broker_url`); None when neither is set."""
    broker = value or os.environ.get(BROKER_ENV) or None
    return None if broker is None else check_broker_url(broker)


def required_broker(value: str | None) -> str:
    """:func:`resolve_broker`, for a command that needs a broker."""
    broker = resolve_broker(value)
    if broker is None:
        raise InvalidInputError(f"--broker: required (or ${BROKER_ENV})")
    return broker


def broker_options(url: str, visibility_timeout: float) -> dict[str, Any]:
    """Transport options: the visibility timeout, and TLS for ``rediss://`` (the system's
    CAs verify the server unless the URL says otherwise, e.g. ``?ssl_ca_certs=/path``)."""
    return {"visibility_timeout": visibility_timeout}


def _ssl_options(url: str) -> dict[str, Any] | None:
    parts = urlsplit(url)
    if parts.scheme != "rediss" or "ssl_cert_reqs" in parts.query:
        return None
    return {"ssl_cert_reqs": ssl.CERT_REQUIRED}


def fleet_app(broker_url: str, *, visibility_timeout: float = DEFAULT_VISIBILITY_TIMEOUT,
              name: str = "pagelab", max_message_bytes: int = MAX_TASK_BYTES) -> Celery:
    """A Celery app on the Redis ``broker_url``: JSON only, no result backend (results
    come back signed on :data:`~pagelab.fleet.RESULTS_QUEUE`), one task at a time per
    worker, acknowledged only once finished, requeued when the worker is lost. A message
    it receives compressed or over ``max_message_bytes`` is refused undecoded."""
    from pagelab._extras import require

    require("celery", "fleet")
    from celery import Celery

    from ._transport import MAX_MESSAGE_BYTES_OPTION, GuardedRedisTransport

    check_broker_url(broker_url)
    app = Celery(name, broker=broker_url, set_as_current=False)
    app.conf.update(
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,
        worker_concurrency=1,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        # No remote control (ping, inspect, add_consumer, shutdown...): its broadcasts
        # carry no signature, so anyone reaching Redis could steer the workers; the server
        # needs none of it (heartbeats are signed Redis keys). Issue 22, finding 8.
        worker_enable_remote_control=False,
        broker_connection_retry_on_startup=True,
        broker_transport=GuardedRedisTransport,
        broker_transport_options={**broker_options(broker_url, visibility_timeout),
                                  MAX_MESSAGE_BYTES_OPTION: max_message_bytes},
        task_default_queue="pagelab.default",
        task_create_missing_queues=True,
    )
    ssl_options = _ssl_options(broker_url)
    if ssl_options is not None:
        app.conf.broker_use_ssl = ssl_options
    return app


def results_queue() -> Any:
    """The durable kombu queue of the workers' messages to the server."""
    from kombu.entity import Exchange, Queue

    from ._protocol import RESULTS_QUEUE

    exchange = Exchange(RESULTS_QUEUE, type="direct")  # type: ignore[no-untyped-call]
    return Queue(  # type: ignore[no-untyped-call]
        RESULTS_QUEUE, exchange, routing_key=RESULTS_QUEUE, durable=True
    )


def consume(
    app: Celery,
    queues: Sequence[Any],
    *,
    on_message: Callable[[Any, Any], None],
    on_decode_error: Callable[[Any, Exception], None],
    prefetch_count: int,
    stop: threading.Event,
    logger: logging.Logger,
    what: str,
    on_broker_error: Callable[[Exception], None] | None = None,
) -> None:
    """Consume ``queues`` (JSON only) until ``stop`` is set, reconnecting a second after the
    broker fails (logged as ``what``, and handed to ``on_broker_error``): the server's
    results queue and a worker's TTFB queues are read this one way."""
    from kombu.messaging import Consumer

    while not stop.is_set():
        try:
            with app.connection_for_read() as conn:
                conn.ensure_connection(max_retries=3)
                with Consumer(  # type: ignore[no-untyped-call]
                    conn, queues=list(queues), callbacks=[on_message], accept=["json"],
                    prefetch_count=prefetch_count, on_decode_error=on_decode_error,
                ):
                    while not stop.is_set():
                        try:
                            conn.drain_events(timeout=1.0)
                        except TimeoutError:
                            continue
        except Exception as exc:
            if on_broker_error is not None:
                on_broker_error(exc)
            logger.warning("%s: %s; reconnecting", what, exc)
            stop.wait(1.0)
