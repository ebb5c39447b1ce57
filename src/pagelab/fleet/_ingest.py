"""Result ingestion: a worker's signed message written to the server's store, once.

A message may arrive twice (a worker lost after sending, Redis redelivering an unacked
message): the first final outcome of a test wins and later ones change nothing, so a
result is written once and a credit is refunded at most once (refunds are marked per
charge in the store).
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Any, Literal

from pagelab.models import EngineEnvironment, LighthouseError, Metrics, TestStatus
from pagelab.store import (
    ARTIFACT_NAMES,
    Store,
    finish_test,
    refund_engine_failures,
    start_dispatched_test,
    status_of_test,
    transaction,
    truncate_wal,
)

from ._protocol import FleetKeys, ForgedMessageError

__all__ = ["IngestOutcome", "ingest_message"]

logger = logging.getLogger("pagelab.fleet.ingest")

IngestOutcome = Literal["started", "written", "duplicate", "unknown", "refused"]


def _decode_artifacts(raw: Any) -> dict[str, bytes]:
    if not isinstance(raw, dict):
        raise ForgedMessageError("artifacts: not an object")
    artifacts: dict[str, bytes] = {}
    for name, text in raw.items():
        if name not in ARTIFACT_NAMES or not isinstance(text, str):
            raise ForgedMessageError(f"artifacts: unknown resource {str(name)[:40]!r}")
        try:
            artifacts[name] = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise ForgedMessageError(f"artifacts: {name} is not base64") from None
    return artifacts


def ingest_message(
    store: Store, keys: FleetKeys, envelope: Any
) -> tuple[IngestOutcome, str | None]:
    """Verify and apply one message of the results queue: the outcome, and for a refused
    message why (the caller counts it).

    ``refused`` (logged as a warning) for an unsigned, tampered or malformed message;
    ``unknown`` for a test the store no longer has; ``duplicate`` for a result of a test
    that is already final.
    """
    try:
        body = keys.open(envelope)
        kind = body.get("kind")
        test_id = str(body["test_id"])
        worker = str(body["worker"])[:100]
    except (ForgedMessageError, KeyError, AttributeError) as exc:
        logger.warning("refused a fleet message: %s", exc)
        return "refused", str(exc)
    with store.connection() as conn:
        if status_of_test(conn, test_id) is None:
            logger.info("a %s message for unknown test %s (expired?) dropped", kind, test_id)
            return "unknown", None
        if kind == "started":
            started_at = body.get("started_at")
            if not isinstance(started_at, int):
                logger.warning("refused a started message for %s: no started_at", test_id)
                return "refused", "started: no started_at"
            with transaction(conn, immediate=True):
                start_dispatched_test(conn, test_id, started_at=started_at)
            logger.info("test %s started on %s (attempt %s)", test_id, worker,
                        body.get("attempt"))
            return "started", None
        if kind != "result":
            logger.warning("refused a fleet message of unknown kind %r", kind)
            return "refused", f"unknown kind {str(kind)[:40]!r}"
        try:
            artifacts = _decode_artifacts(body.get("artifacts", {}))
            metrics = Metrics.model_validate(body["metrics"]) if body.get("metrics") else None
            error = LighthouseError.model_validate(body["error"]) if body.get("error") else None
            environment = (
                EngineEnvironment.model_validate(body["environment"])
                if body.get("environment") else None
            )
            status = TestStatus(body["status"])
        except (ForgedMessageError, ValueError, KeyError) as exc:
            logger.warning("refused a result for %s from %s: %s", test_id, worker, exc)
            return "refused", str(exc)
        with transaction(conn, immediate=True):
            # Checked again under the write lock: two deliveries may race.
            current = status_of_test(conn, test_id)
            if current is None or current.is_final:
                logger.info("duplicate result for %s from %s ignored", test_id, worker)
                return "duplicate", None
            for name, data in artifacts.items():
                store.artifacts.write(conn, test_id, name, data)
            finish_test(
                conn, test_id, status=status,
                lighthouse_version=body.get("lighthouse_version"), metrics=metrics,
                error=error, vantage=worker, environment=environment,
                engine_failure=bool(body.get("engine_failure")),
                started_at=body.get("started_at"), finished_at=body.get("finished_at"),
            )
            refund_engine_failures(conn)
        truncate_wal(conn)  # no clear secret left in the log
    logger.info("test %s %s on %s", test_id, status.value, worker)
    return "written", None
