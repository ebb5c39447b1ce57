"""Storing a user flow run: each measured step a test like a page test, with its LHR and
report, so flows are listed, read and compared as pages are (docs/flows.md)."""

from __future__ import annotations

from pagelab.models import (
    FlowReport,
    FlowStepRef,
    LighthouseError,
    Metrics,
    Navigate,
    TestStatus,
    to_epoch_ms,
)
from pagelab.store import Connection, Store, create_test, finish_test, transaction, truncate_wal

from ._base import FlowCell

__all__ = ["store_flow_run"]


def store_flow_run(store: Store, report: FlowReport, cell: FlowCell, *,
                   vantage: str) -> FlowReport:
    """Store each measured step of ``report`` (a run of ``cell``) as a final test
    (``TestReport.flow_step`` set, the step's resources its artifacts) and, for a failed
    run, a ``failed`` test of the step it stopped at, in one transaction; return the report
    with each step's ``id`` and ``report_url``."""
    first = cell.flow.steps[0]
    assert isinstance(first, Navigate)  # a checked flow starts with a navigation
    ids: list[str] = []
    with store.connection() as conn:
        with transaction(conn):
            for step in report.steps:
                test_id = _store_step(store, conn, report, cell, report.ref(step),
                                      step.url or first.url, TestStatus.SUCCESS,
                                      step.metrics, None, vantage)
                for name, data in step.resources.items():
                    store.artifacts.write(conn, test_id, name, data)
                ids.append(test_id)
            failed = report.failed_ref()
            if failed is not None:
                url = (report.steps[-1].url if report.steps else None) or first.url
                _store_step(store, conn, report, cell, failed, url, TestStatus.FAILED, None,
                            report.error, vantage)
        truncate_wal(conn)  # no clear secret of the config left in the log
    steps = [step.model_copy(update={"id": test_id,
                                     "report_url": store.report_file_url(test_id)})
             for step, test_id in zip(report.steps, ids, strict=True)]
    return report.model_copy(update={"steps": steps})


def _store_step(
    store: Store, conn: Connection, report: FlowReport, cell: FlowCell, ref: FlowStepRef,
    url: str, status: TestStatus, metrics: Metrics | None, error: LighthouseError | None,
    vantage: str,
) -> str:
    """One step's test, created when the run started and final at once."""
    started = to_epoch_ms(report.started_at) if report.started_at else None
    test_id = create_test(
        conn, url=url, device=cell.device, location=cell.location, config=cell.config,
        retention=store.retention, created_at=started, flow_step=ref, build=cell.build,
    )
    finish_test(
        conn, test_id, status=status, lighthouse_version=report.lighthouse_version,
        metrics=metrics, error=error, vantage=vantage, environment=report.environment,
        engine_failure=error is not None and error.is_engine_failure, started_at=started,
        finished_at=to_epoch_ms(report.finished_at) if report.finished_at else None,
    )
    return test_id
