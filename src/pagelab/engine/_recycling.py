"""When the warm engine restarts its Chromium (and Node driver) between runs: a pure rule.

A warm Chromium's process tree grows with every run (issue 35, point 3: ~1.5 MB a run, not
levelling off): a worker that runs for days must restart it now and then. The engine asks
:meth:`RecyclingRule.due` after every run, still holding the engine lock, never during one.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagelab._exceptions import InvalidInputError
from pagelab.models import nonnegative_setting

__all__ = ["DEFAULT_RECYCLE_MB", "DEFAULT_RECYCLE_RUNS", "RecyclingRule"]

#: Runs after which Chromium is restarted (``$PAGELAB_RECYCLE_RUNS``; 0: never).
DEFAULT_RECYCLE_RUNS = 250
#: Resident memory of Chromium's process tree, MB, over which it is restarted
#: (``$PAGELAB_RECYCLE_MB``; 0: never). RSS summed over the tree, shared pages counted in
#: every process: cheap to read after each run, and what ``ps`` and the issue measured.
DEFAULT_RECYCLE_MB = 1500.0


@dataclass(frozen=True, slots=True)
class RecyclingRule:
    """Restart Chromium after ``after_runs`` runs of it, or once its process tree's memory
    is over ``above_mb`` MB; 0 turns that part off."""

    after_runs: int = DEFAULT_RECYCLE_RUNS
    above_mb: float = DEFAULT_RECYCLE_MB

    def __post_init__(self) -> None:
        if self.after_runs < 0 or self.above_mb < 0:
            raise InvalidInputError(
                f"recycling: after_runs={self.after_runs}, above_mb={self.above_mb}: "
                "expected numbers >= 0 (0: never)"
            )

    @classmethod
    def from_environment(
        cls, after_runs: int | None = None, above_mb: float | None = None
    ) -> RecyclingRule:
        """The given values, else ``$PAGELAB_RECYCLE_RUNS`` / ``$PAGELAB_RECYCLE_MB``, else
        the defaults."""
        runs = nonnegative_setting("PAGELAB_RECYCLE_RUNS")
        mb = nonnegative_setting("PAGELAB_RECYCLE_MB")
        return cls(
            after_runs=after_runs if after_runs is not None else
            int(runs) if runs is not None else DEFAULT_RECYCLE_RUNS,
            above_mb=above_mb if above_mb is not None else
            mb if mb is not None else DEFAULT_RECYCLE_MB,
        )

    def due(self, runs: int, tree_mb: float) -> str | None:
        """Why Chromium is to be restarted now, after ``runs`` runs of it with a tree of
        ``tree_mb`` MB; None: not yet."""
        if self.after_runs and runs >= self.after_runs:
            return f"{runs} runs (limit {self.after_runs})"
        if self.above_mb and tree_mb > self.above_mb:
            return f"{tree_mb:.0f} MB (limit {self.above_mb:.0f} MB)"
        return None

    def __str__(self) -> str:
        runs = f"after {self.after_runs} runs" if self.after_runs else "no run limit"
        memory = f"over {self.above_mb:.0f} MB" if self.above_mb else "no memory limit"
        return f"{runs}, {memory}"
