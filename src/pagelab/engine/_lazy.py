"""An engine for long-lived workers: started on the first test, dropped after a failure."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ._engine import Engine

__all__ = ["LazyEngine"]

logger = logging.getLogger("pagelab.engine")


class LazyEngine:
    """Holds at most one :class:`Engine`, made by ``factory`` when first asked for.

    A worker that only answers reads never starts Chromium; after a crash the worker calls
    :meth:`close` and the next test gets a fresh engine.
    """

    def __init__(self, factory: Callable[[], Engine] = Engine) -> None:
        self._factory = factory
        self._engine: Engine | None = None

    def get(self) -> Engine:
        if self._engine is None:
            self._engine = self._factory()
        return self._engine

    def close(self) -> None:
        """Close the engine if one runs; a failure to close is logged, never raised."""
        engine, self._engine = self._engine, None
        if engine is not None:
            try:
                engine.close()
            except Exception:
                logger.exception("closing the engine failed")
