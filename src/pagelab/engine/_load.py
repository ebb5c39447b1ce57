"""How busy the machine is: read when a run starts, so a report says what it was measured on.

Two kernel figures, free to read, and one probe of our own:

* the 1-minute load average (``/proc/loadavg``): runnable and waiting tasks, averaged;
* CPU pressure (``/proc/pressure/cpu``, Linux PSI): the share of the last 10 s in which at
  least one runnable task waited for a CPU, in percent. 0 on a quiet machine, whatever the
  number of cores;
* the CPU share (:func:`cpu_share`): the share of a core a busy task of this process's
  priority gets right now. Both figures above miss a machine whose every core one other
  process keeps busy: the load per CPU tends to 1 (not above it), and in Lighthouse's quiet
  waits nothing waits for a CPU, so the pressure read as a run starts stayed low. A task
  that wants a core does not get one there: it shares one (docs/decisions.md, "One busy
  process per core").

The kernel figures are None where the kernel does not offer them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MachineLoad", "cpu_share", "machine_load"]

_PRESSURE = Path("/proc/pressure/cpu")

#: The probe: windows of busy work, with pauses between them so that another task's short
#: burst (a browser closing its last page) does not fill them all. ~60 ms of CPU at most.
_PROBE_WINDOWS = 3
_PROBE_WINDOW_S = 0.02
_PROBE_PAUSE_S = 0.05
#: A window's share that already reads as a core of its own: the probe stops there.
_WHOLE_CORE = 0.95


@dataclass(frozen=True, slots=True)
class MachineLoad:
    """The machine's load at one moment."""

    #: 1-minute load average.
    load_average: float | None
    #: Percent of the last 10 s in which some task waited for a CPU (PSI ``some avg10``).
    cpu_pressure: float | None
    cpu_count: int | None
    #: The share of a core a busy task got (:func:`cpu_share`), 0 to 1.
    cpu_share: float | None = None


def _cpu_pressure() -> float | None:
    try:
        line = _PRESSURE.read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    fields = dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)
    try:
        return float(fields["avg10"])
    except (KeyError, ValueError):
        return None


def _busy_share(seconds: float) -> float:
    """Spin for ``seconds``: the CPU time this thread got over the wall time it took."""
    wall, cpu = time.perf_counter(), time.thread_time()
    end = wall + seconds
    while time.perf_counter() < end:
        pass
    return (time.thread_time() - cpu) / (time.perf_counter() - wall)


def cpu_share() -> float:
    """The share of a core (0 to 1) a busy task of this process's priority gets now: the
    best of a few short windows of busy work. About 1 with a core free, 0.5 with one busy
    task of the same priority on every core, less with more; a lower-priority (niced) task
    takes little of it."""
    shares: list[float] = []
    for window in range(_PROBE_WINDOWS):
        if window:
            time.sleep(_PROBE_PAUSE_S)
        shares.append(_busy_share(_PROBE_WINDOW_S))
        # A core to itself already: the later windows (and their pauses: 0.16 s of every
        # run, the lock held) could not show more.
        if shares[-1] >= _WHOLE_CORE:
            break
    return round(min(max(shares), 1.0), 2)


def machine_load() -> MachineLoad:
    """The load average, CPU pressure, CPU count and CPU share now."""
    try:
        load_average: float | None = round(os.getloadavg()[0], 2)
    except OSError:
        load_average = None
    return MachineLoad(load_average, _cpu_pressure(), os.cpu_count(), cpu_share())
