"""The quiet windows (``PAGELAB_QUIET_WINDOW_MS``, docs/engine.md) the suite's engine runs
use where Lighthouse's measurement is not what a test is about (docs/decisions.md, "Suite
time"). Modules opt in with the fixtures of conftest.py; a fixture that measures only
part of a module's runs uses :func:`quiet_window` itself."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

#: The quiet window of the engine tests whose subject is not what Lighthouse measures
#: (``PAGELAB_QUIET_WINDOW_MS``, docs/engine.md): the store, the faces, the gates, the
#: service, flows' steps and INP (timespans, which the window does not touch), the
#: notebooks, the quickstarts. 50 ms instead of Lighthouse's 1000 ms: 1.13 s a run of the
#: demo's /fast against 1.50 s at 250 ms and 3.1 s at 1000, and measured side by side
#: (benchmarks/quiet_window.py --baseline 250 --window 50) every metric of /fast, /heavy
#: and /lean as it was; only /shift's banner, 500 ms after load, is no longer seen (CLS 0):
#: the tests that read it keep Lighthouse's window, with the measurement's own tests (the
#: demo pages' traits in tests/test_engine.py, fitness, visual progress).
QUICK_WINDOW_MS = "50"
#: The window of engine tests that read no paint: the first byte (the history of builds) or
#: only whether and where runs ran (the team store's and the fleet's bookkeeping). At 0
#: Lighthouse waits for the load event alone, not for the first paint, so FCP, LCP,
#: Speed Index, TBT and the score are missing: 0.66 s a run of the demo's /fast, 1.51 s at
#: 250 ms (benchmarks/quiet_window.py).
LOAD_ONLY_WINDOW_MS = "0"


@contextmanager
def quiet_window(ms: str | None) -> Iterator[None]:
    """Runs started inside (and processes started inside: servers, workers, pytester) use
    a quiet window of ``ms`` (None: Lighthouse's own)."""
    # Imported here: conftest.py imports this module before any test imports pagelab.
    from pagelab.engine import QUIET_WINDOW_VARIABLE

    with pytest.MonkeyPatch.context() as patch:
        if ms is None:
            patch.delenv(QUIET_WINDOW_VARIABLE, raising=False)
        else:
            patch.setenv(QUIET_WINDOW_VARIABLE, ms)
        yield
