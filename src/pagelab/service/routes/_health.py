"""``/healthz``: for operators and load balancers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from pagelab.fleet import REFUSED_DEGRADES_FOR_S
from pagelab.store import SCHEMA_VERSION, test_owner

from .._deps import OptionalAccountDep, ServicesDep
from .._worker import Worker, sandbox_warning

__all__ = ["Health", "router"]

router = APIRouter(tags=["operations"])


class WorkerHealth(BaseModel):
    enabled: bool
    alive: bool
    current_test: str | None
    engine_error: str | None
    idle: int
    active: int


class BrowserHealth(BaseModel):
    """How this server's Chromium runs (docs/security.md, "Browser sandbox")."""

    #: Chromium's own sandbox is on (no ``--no-sandbox``).
    sandboxed: bool
    #: The user Chromium runs as (an unprivileged one when the server runs as root).
    user: str
    #: True once a Chromium has started this way; false: how the first will be started.
    verified: bool
    #: Why the sandbox is off.
    reason: str | None


class FleetWorkerSeen(BaseModel):
    """A worker whose signed heartbeat is live (renewed every 5 s, kept 20 s)."""

    name: str
    locations: list[str]
    current_test: str | None
    #: Epoch milliseconds of its last heartbeat.
    last_seen: int | None


class FleetHealth(BaseModel):
    """Present only on a server started with ``--broker`` (docs/scale-out.md)."""

    #: The broker URL, password masked.
    broker: str
    broker_reachable: bool
    broker_error: str | None
    #: The dispatch and results threads are running.
    alive: bool
    workers: list[FleetWorkerSeen]
    #: Since the server started: tasks sent, results written, messages refused.
    dispatched: int
    ingested: int
    refused: int


class Health(BaseModel):
    status: str
    version: str
    schema_version: int
    worker: WorkerHealth
    #: Operator-facing warnings (e.g. the engine cannot run, the browser runs unsandboxed).
    warnings: list[str] = Field(default_factory=list)
    #: pagelab extension, fleet servers only (absent without ``--broker``).
    fleet: FleetHealth | None = None
    #: The local browser; absent when this server runs no tests (``--no-worker``, fleet).
    browser: BrowserHealth | None = None


def _masked(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def _fleet_health(
    dispatcher: Any, warnings: list[str], visible: Callable[[str | None], str | None]
) -> FleetHealth:
    error = dispatcher.broker_status()
    workers: list[FleetWorkerSeen] = []
    if error is None:
        try:
            workers = [
                FleetWorkerSeen(**{**seen, "current_test": visible(seen.get("current_test"))})
                for seen in dispatcher.workers()
            ]
        except Exception as exc:  # the broker went away between the two reads
            error = f"{type(exc).__name__}: {exc}"[:300]
    if error is not None:
        warnings.append(f"the broker is unreachable: {error}")
    elif not workers:
        warnings.append("no live fleet worker: queued tests wait (see `pagelab workers`)")
    if not dispatcher.alive:
        warnings.append("the fleet dispatcher has died: restart the server")
    if dispatcher.recently_refused:
        warnings.append(
            f"the fleet refused {dispatcher.refused} message(s) since the start, the last "
            f"within {REFUSED_DEGRADES_FOR_S // 60} min ({dispatcher.last_refusal}): "
            "someone without a valid key writes to the results queue, or a worker is broken"
        )
    return FleetHealth(
        broker=_masked(dispatcher.broker_url), broker_reachable=error is None,
        broker_error=error, alive=dispatcher.alive, workers=workers,
        dispatched=dispatcher.dispatched, ingested=dispatcher.ingested,
        refused=dispatcher.refused,
    )


@router.get(
    "/healthz",
    response_model=Health,
    summary="Service health",
    description=(
        "No key needed (the running tests' ids are shown only to their owner's key). "
        "`status` is `ok` when the background worker is alive (it runs "
        "tests, or only tidies the store when started with `--no-worker`) and the engine "
        "could run the last test; else `degraded`, with `warnings` saying why. A server "
        "started with `--broker` adds `fleet` (the broker, reachable or not, and the live "
        "workers from their heartbeats); it is `degraded` when the broker is unreachable "
        "or its dispatcher died, and for 10 minutes after a fleet message was "
        "refused. A server that runs tests adds `browser`: whether Chromium "
        "runs with its sandbox and as which user (without it: a warning, still `ok`)."
    ),
    # `fleet` is left out unless set, so a server without a broker answers as before.
    response_model_exclude_unset=True,
)
def healthz(request: Request, services: ServicesDep, account: OptionalAccountDep) -> Health:
    worker: Worker = request.app.state.worker

    def visible(test_id: str | None) -> str | None:
        # A running test's id only to its owner's key (issue 22, finding 12).
        if test_id is None or account is None:
            return None
        owner = test_owner(services.pool.thread_connection(), test_id)
        return test_id if owner == account.id else None

    counts = worker.queue_counts()
    warnings = list(worker.warnings)
    if not worker.alive:
        warnings.append("the worker thread has died: restart the server")
    if worker.engine_error:
        warnings.append(f"the engine cannot run tests: {worker.engine_error}")
    degraded = not worker.alive or bool(worker.engine_error)
    extra: dict[str, Any] = {}
    browser = worker.browser_sandbox()
    if browser is not None:
        if not browser.sandboxed:
            warnings.append(sandbox_warning(browser))
        extra["browser"] = BrowserHealth(
            sandboxed=browser.sandboxed, user=browser.user, verified=browser.verified,
            reason=browser.reason,
        )
    dispatcher = getattr(request.app.state, "dispatcher", None)
    if dispatcher is not None:
        fleet = _fleet_health(dispatcher, warnings, visible)
        degraded = (degraded or not fleet.broker_reachable or not fleet.alive
                    or dispatcher.recently_refused)
        extra["fleet"] = fleet
    return Health(
        status="degraded" if degraded else "ok",
        warnings=warnings,
        version=request.app.version,
        schema_version=SCHEMA_VERSION,
        worker=WorkerHealth(
            enabled=worker.run_tests,
            alive=worker.alive,
            current_test=visible(worker.current_test),
            engine_error=worker.engine_error,
            idle=counts["idle"],
            active=counts["active"],
        ),
        **extra,
    )
