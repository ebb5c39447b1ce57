"""Running one stored test on the engine: the code the LocalRunner and the service share."""

from __future__ import annotations

from collections.abc import Callable

from pagelab._exceptions import PagelabError
from pagelab.engine import Engine, RunResult
from pagelab.models import to_epoch_ms
from pagelab.store import (
    Store,
    finish_test,
    run_config,
    start_test,
    test_target,
    transaction,
    truncate_wal,
)

__all__ = ["execute_test"]


class _FinalBeforeStart(PagelabError):
    """The test became final while it waited for the engine (its key was revoked): the
    run is called off before the browser starts (never escapes :func:`execute_test`)."""


def execute_test(
    store: Store,
    engine: Engine,
    test_id: str,
    *,
    vantage: str = "local",
    on_start: Callable[[], None] | None = None,
) -> RunResult | None:
    """Run a stored ``idle`` test: ``active`` once the engine lock is held, then its
    artifacts and outcome are written in one transaction (and the unmasked config is
    forgotten). None, and nothing run, when the test was final by then (a revoked key's
    test, failed and refunded: it stays so)."""
    with store.connection() as conn:
        url, device = test_target(conn, test_id)
        config = run_config(conn, test_id)

        def started() -> None:
            with transaction(conn):
                if not start_test(conn, test_id):
                    raise _FinalBeforeStart(test_id)
            if on_start is not None:
                on_start()

        try:
            result = engine.run(url, device, config, on_start=started)
        except _FinalBeforeStart:
            return None
        with transaction(conn):
            for name, data in result.artifacts.items():
                store.artifacts.write(conn, test_id, name, data)
            finish_test(
                conn,
                test_id,
                status=result.status,
                lighthouse_version=result.lighthouse_version,
                metrics=result.metrics,
                error=result.error,
                vantage=vantage,
                environment=result.environment,
                engine_failure=result.engine_failure,
                started_at=to_epoch_ms(result.started_at),
                finished_at=to_epoch_ms(result.finished_at),
            )
        truncate_wal(conn)  # no clear secret left in the log
    return result
