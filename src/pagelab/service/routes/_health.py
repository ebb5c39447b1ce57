"""``/healthz``: for operators and load balancers."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel

from pagelab.store import SCHEMA_VERSION

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


@router.get(
    "/healthz",
    response_model=Health,
    summary="Service health",
    description=(
        "No key needed. `status` is `ok` when the background worker is alive (it runs "
        "tests, or only tidies the store when started with `--no-worker`)."
    ),
)
def healthz(request: Request) -> Health:
    worker: Worker = request.app.state.worker
    counts = worker.queue_counts()
    return Health(
        status="ok" if worker.alive else "degraded",
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
