"""How busy the machine is: read when a run starts, so a report says what it was measured on.

Two kernel figures, both free to read (no sampling of our own):

* the 1-minute load average (``/proc/loadavg``): runnable and waiting tasks, averaged;
* CPU pressure (``/proc/pressure/cpu``, Linux PSI): the share of the last 10 s in which at
  least one runnable task waited for a CPU, in percent. This is the figure that tells whether
  the page had the CPUs to itself: 0 on a quiet machine, whatever the number of cores.

Either is None where the kernel does not offer it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MachineLoad", "machine_load"]

_PRESSURE = Path("/proc/pressure/cpu")


@dataclass(frozen=True, slots=True)
class MachineLoad:
    """The machine's load at one moment."""

    #: 1-minute load average.
    load_average: float | None
    #: Percent of the last 10 s in which some task waited for a CPU (PSI ``some avg10``).
    cpu_pressure: float | None
    cpu_count: int | None


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


def machine_load() -> MachineLoad:
    """The load average, CPU pressure and CPU count now."""
    try:
        load_average: float | None = round(os.getloadavg()[0], 2)
    except OSError:
        load_average = None
    return MachineLoad(load_average, _cpu_pressure(), os.cpu_count())
