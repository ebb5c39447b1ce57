"""Result ingestion: a worker's signed message written to the server's store, once.

A message counts only when signed by the current key of a worker that serves the test's
location, sent within the freshness window, and, for a test a worker said it took, from
that worker (issue 22, finding 9); a result counts only from the worker that said it took
the test (its ``taken`` or ``started``), never for a test no worker took (issue 34). A
message may arrive twice (a worker lost after sending, Redis redelivering an unacked
message): the first final outcome of a test wins
and later ones change nothing, so a result is written once and a credit is refunded at
most once (refunds are marked per charge in the store).
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
    claim_dispatched_test,
    dispatch_of,
    finish_test,
    fleet_worker_key,
    refund_engine_failures,
    start_dispatched_test,
    status_of_test,
    transaction,
    truncate_wal,
)

from ._keys import FleetKeys
from ._protocol import ForgedMessageError

__all__ = ["IngestOutcome", "ingest_message"]

logger = logging.getLogger("pagelab.fleet.ingest")

IngestOutcome = Literal["taken", "started", "written", "duplicate", "unknown", "refused"]


def _refuse(reason: str) -> tuple[IngestOutcome, str]:
    logger.warning("refused a fleet message: %s", reason)
    return "refused", reason


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
    store: Store, keys: FleetKeys, envelope: Any, *, max_age_s: float
) -> tuple[IngestOutcome, str | None]:
    """Verify and apply one message of the results queue: the outcome, and for a refused
    message why (the caller counts it).

    ``refused`` (logged as a warning) for a message not signed by a worker's current key,
    older than ``max_age_s``, malformed, about a test of a location the worker does not
    serve, or a result about a test another worker took or none took; ``unknown`` for a
    test the store no longer has; ``duplicate`` for a result of a test that is already
    final.
    """
    with store.connection() as conn:
        try:
            body, worker = keys.open_from_worker(
                envelope, lambda name: fleet_worker_key(conn, name), max_age_s=max_age_s
            )
            kind = body.get("kind")
            test_id = str(body["test_id"])
        except (ForgedMessageError, KeyError) as exc:
            logger.warning("refused a fleet message: %s", exc)
            return "refused", str(exc)
        dispatch = dispatch_of(conn, test_id)
        if dispatch is None:
            if status_of_test(conn, test_id) is None:
                logger.info("a %s message for unknown test %s (expired?) dropped", kind,
                            test_id)
                return "unknown", None
            return _refuse(f"{worker.name} sent a {kind} message for {test_id}, which was "
                           "never dispatched")
        if dispatch.location not in worker.locations:
            return _refuse(f"{worker.name} does not serve {dispatch.location} "
                           f"(test {test_id})")
        attempt = body.get("attempt", 0)
        if not isinstance(attempt, int):
            return _refuse(f"{kind} for {test_id}: attempt is not a number")
        if kind in ("taken", "started"):
            started_at = body.get("started_at")
            if kind == "started" and not isinstance(started_at, int):
                return _refuse(f"started for {test_id}: no started_at")
            with transaction(conn, immediate=True):
                if not claim_dispatched_test(conn, test_id, worker.name, attempt):
                    return _refuse(f"{worker.name} says it {kind} {test_id}, which "
                                   f"{dispatch.worker} took")
                if isinstance(started_at, int):
                    start_dispatched_test(conn, test_id, started_at=started_at)
            logger.info("test %s %s by %s (attempt %s)", test_id, kind, worker.name, attempt)
            return ("started" if kind == "started" else "taken"), None
        if kind != "result":
            return _refuse(f"unknown kind {str(kind)[:40]!r}")
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
            return _refuse(f"a result for {test_id} from {worker.name}: {exc}")
        with transaction(conn, immediate=True):
            # Checked again under the write lock: two deliveries may race.
            current = dispatch_of(conn, test_id)
            if current is None or current.status.is_final:
                logger.info("duplicate result for %s from %s ignored", test_id, worker.name)
                return "duplicate", None
            # Only from the worker holding the test: the last to say it took it (a later
            # delivery reaches another worker when the previous one was lost).
            if current.worker is None:
                return _refuse(f"a result for {test_id} from {worker.name}, which no worker "
                               "took")
            if current.worker != worker.name:
                return _refuse(f"a result for {test_id} from {worker.name}, but "
                               f"{current.worker} took it")
            for name, data in artifacts.items():
                store.artifacts.write(conn, test_id, name, data)
            finish_test(
                conn, test_id, status=status,
                lighthouse_version=body.get("lighthouse_version"), metrics=metrics,
                error=error, vantage=worker.name, environment=environment,
                engine_failure=bool(body.get("engine_failure")),
                started_at=body.get("started_at"), finished_at=body.get("finished_at"),
            )
            refund_engine_failures(conn)
        truncate_wal(conn)  # no clear secret left in the log
    logger.info("test %s %s on %s", test_id, status.value, worker.name)
    return "written", None
