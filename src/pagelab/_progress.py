"""The progress bar of :func:`pagelab.measure` and ``pagelab check``: finished runs, failed
runs, and why it is not moving when another process holds the engine."""

from __future__ import annotations

import contextlib
from typing import Any

from pagelab._closing import Closing
from pagelab.engine import EngineWait, engine_waits
from pagelab.models import FlowReport, TestReport

__all__ = ["ProgressBar"]


class ProgressBar(Closing):
    """A ``tqdm.auto`` bar (a widget in notebooks, a bar on stderr elsewhere) counting runs;
    its postfix names failed runs and a wait for the engine. Use as a context manager."""

    def __init__(self, total: int) -> None:
        from tqdm.auto import tqdm

        self._bar: Any = tqdm(total=total, desc="pagelab", unit="run", dynamic_ncols=True)
        self._failed = 0
        self._waiting = ""
        self._watch = contextlib.ExitStack()
        self._watch.enter_context(engine_waits(self.engine_wait))

    def add(self, report: TestReport | FlowReport) -> None:
        """Count one finished run."""
        if report.status.value == "failed":
            self._failed += 1
        self._show(refresh=False)
        self._bar.update(1)

    def engine_wait(self, wait: EngineWait) -> None:
        """Show (or, once it is over, clear) a wait for the engine."""
        self._waiting = "" if wait.acquired else str(wait)
        self._show(refresh=True)

    def _show(self, *, refresh: bool) -> None:
        parts = [f"failed={self._failed}" if self._failed else "", self._waiting]
        self._bar.set_postfix_str(", ".join(p for p in parts if p), refresh=refresh)

    def close(self) -> None:
        self._watch.close()
        self._bar.close()

