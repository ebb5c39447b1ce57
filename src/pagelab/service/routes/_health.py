"""``/healthz``: for operators and load balancers."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from pagelab.store import SCHEMA_VERSION

from .._deps import AddressLimitDep
from .._worker import Worker

__all__ = ["Health", "router"]

router = APIRouter(tags=["operations"])


class WorkerHealth(BaseModel):
    enabled: bool
    alive: bool
    current_test: str | None
    engine_error: str | None
    idle: int
    active: int


class Health(BaseModel):
    status: str
    version: str
    schema_version: int
    worker: WorkerHealth
    #: Operator-facing warnings (e.g. the engine cannot run, the browser runs unsandboxed).
    warnings: list[str] = Field(default_factory=list)


@router.get(
    "/healthz",
    response_model=Health,
    summary="Service health",
    description=(
        "No key needed. `status` is `ok` when the background worker is alive (it runs "
        "tests, or only tidies the store when started with `--no-worker`) and the engine "
        "could run the last test; else `degraded`, with `warnings` saying why."
    ),
    dependencies=[AddressLimitDep],
)
def healthz(request: Request) -> Health:
    worker: Worker = request.app.state.worker
    counts = worker.queue_counts()
    warnings = list(worker.warnings)
    if not worker.alive:
        warnings.append("the worker thread has died: restart the server")
    if worker.engine_error:
        warnings.append(f"the engine cannot run tests: {worker.engine_error}")
    return Health(
        status="degraded" if not worker.alive or worker.engine_error else "ok",
        warnings=warnings,
        version=request.app.version,
        schema_version=SCHEMA_VERSION,
        worker=WorkerHealth(
            enabled=worker.run_tests,
            alive=worker.alive,
            current_test=worker.current_test,
            engine_error=worker.engine_error,
            idle=counts["idle"],
            active=counts["active"],
        ),
    )
