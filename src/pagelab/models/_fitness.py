"""Is the measuring machine fit to measure? The one rule that marks a run ``noisy``.

A run is *noisy* when the machine that measured it was, as it started, any of:

* **slow**: Lighthouse's CPU benchmark (``benchmark_index``) below ``min_benchmark_index``
  (1000 by default: the line below which Lighthouse itself warns that the host is slower
  than its 4x CPU slowdown assumes);
* **loaded**: the 1-minute load average per CPU (``load_average / cpu_count``) above
  ``max_load_per_cpu`` (1.0: more runnable tasks than CPUs, on average, for a minute);
* **contended**: CPU pressure (``cpu_pressure``, Linux PSI ``some avg10``) above
  ``max_cpu_pressure`` (60 %: the previous run's own Lighthouse work leaves up to about
  50 % on an idle 2-core machine);
* **shared**: the share of a core a busy task got (``cpu_share``, the engine's own probe)
  below ``min_cpu_share`` (0.75: about 1 with a core free, 0.5 when another process keeps
  every core busy).

A figure the machine did not give (no PSI, no benchmark) never makes a run noisy; a run
with none of them is not judged (``noisy`` None). The thresholds come from
``$PAGELAB_FIT_MIN_BENCHMARK_INDEX``, ``$PAGELAB_FIT_MAX_LOAD_PER_CPU``,
``$PAGELAB_FIT_MAX_CPU_PRESSURE`` and ``$PAGELAB_FIT_MIN_CPU_SHARE`` (docs/engine.md, "A
machine unfit to measure"); the engine applies them where the run is measured, so a report
keeps the verdict of the machine that made it.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from pagelab._exceptions import InvalidInputError

from ._reports import EngineEnvironment

__all__ = ["FitnessRule", "nonnegative_setting", "unfit_runs_note"]


def nonnegative_setting(variable: str) -> float | None:
    """The number ``$variable`` holds (None when unset or blank). Raises
    :class:`~pagelab.InvalidInputError` naming the variable when it is not a finite number of
    at least 0."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError as exc:
        raise InvalidInputError(f"{variable}: expected a number, got {text!r}") from exc
    if not math.isfinite(value) or value < 0:
        raise InvalidInputError(f"{variable}: expected a number of at least 0, got {text!r}")
    return value


#: Variable -> default of each threshold (``_settings_env.ENVIRONMENT`` documents them).
_VARIABLES = {
    "min_benchmark_index": ("PAGELAB_FIT_MIN_BENCHMARK_INDEX", 1000.0),
    "max_load_per_cpu": ("PAGELAB_FIT_MAX_LOAD_PER_CPU", 1.0),
    "max_cpu_pressure": ("PAGELAB_FIT_MAX_CPU_PRESSURE", 60.0),
    "min_cpu_share": ("PAGELAB_FIT_MIN_CPU_SHARE", 0.75),
}


@dataclass(frozen=True, slots=True)
class FitnessRule:
    """The thresholds of a fit machine (defaults: see the module)."""

    min_benchmark_index: float = _VARIABLES["min_benchmark_index"][1]
    max_load_per_cpu: float = _VARIABLES["max_load_per_cpu"][1]
    max_cpu_pressure: float = _VARIABLES["max_cpu_pressure"][1]
    min_cpu_share: float = _VARIABLES["min_cpu_share"][1]

    def __post_init__(self) -> None:
        for name in _VARIABLES:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not (
                    math.isfinite(value) and value >= 0):
                raise InvalidInputError(
                    f"{name}: expected a number of at least 0, got {value!r}")

    @classmethod
    def from_environment(cls) -> FitnessRule:
        """The rule with the thresholds its variables set (the defaults for the rest).
        Raises :class:`~pagelab.InvalidInputError` naming a variable that is not a number."""
        values: dict[str, float] = {}
        for name, (variable, _) in _VARIABLES.items():
            value = nonnegative_setting(variable)
            if value is not None:
                values[name] = value
        return cls(**values)

    def reasons(self, environment: EngineEnvironment) -> list[str]:
        """Why a machine in ``environment`` is unfit (``benchmark index 640 below 1000``,
        ``load 2.9 per CPU above 1``, ``CPU pressure 97 % above 60 %``, ``CPU share 0.48
        below 0.75``); empty when fit."""
        found: list[str] = []
        index = environment.benchmark_index
        if index is not None and index < self.min_benchmark_index:
            found.append(f"benchmark index {index:g} below {self.min_benchmark_index:g}")
        load, cpus = environment.load_average, environment.cpu_count
        if load is not None and cpus and load / cpus > self.max_load_per_cpu:
            found.append(f"load {load / cpus:.2g} per CPU above {self.max_load_per_cpu:g}")
        pressure = environment.cpu_pressure
        if pressure is not None and pressure > self.max_cpu_pressure:
            found.append(f"CPU pressure {pressure:g} % above {self.max_cpu_pressure:g} %")
        share = environment.cpu_share
        if share is not None and share < self.min_cpu_share:
            found.append(f"CPU share {share:g} below {self.min_cpu_share:g}")
        return found

    def describe(self) -> str:
        """The thresholds of a fit machine, in the words of :meth:`reasons`."""
        return (f"benchmark index >= {self.min_benchmark_index:g}, load per CPU <= "
                f"{self.max_load_per_cpu:g}, CPU pressure <= {self.max_cpu_pressure:g} %, "
                f"CPU share >= {self.min_cpu_share:g}")

    def noisy(self, environment: EngineEnvironment) -> bool | None:
        """Whether a run measured in ``environment`` is noisy; None when the environment
        holds none of the figures the rule reads."""
        if (environment.benchmark_index is None and environment.cpu_pressure is None
                and environment.cpu_share is None
                and (environment.load_average is None or not environment.cpu_count)):
            return None
        return bool(self.reasons(environment))

    def mark(self, environment: EngineEnvironment) -> EngineEnvironment:
        """``environment`` marked ``noisy``, with its ``unfit_reasons``, by this rule."""
        return environment.model_copy(update={
            "noisy": self.noisy(environment), "unfit_reasons": self.reasons(environment)})


def unfit_runs_note(noisy: int, runs: int) -> str:
    """``machine unfit: 3 of 5 runs``: what the gate (and any reader of runs) says when
    unfit runs alone would make the call."""
    return f"machine unfit: {noisy} of {runs} run{'s' if runs != 1 else ''}"
