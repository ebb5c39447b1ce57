"""The A/A check users can run: how often would each gate fail on no change at all?

``pagelab gate-check URL --runs N --repeat K`` measures one page ``2 N`` times per repeat,
interleaved, and splits the runs alternately into two sides (run 0, 2, 4, ... against run 1,
3, 5, ...) of the same page, so every difference between them is noise. :func:`aa_check`
then applies both gates to each repeat: today's fixed threshold (the new median against the
baseline median plus the limit) and the regression gate (significant **and** beyond the
limit). Any failure is a false alarm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pagelab._cells import cell_key

from ._gate import GateRule, decide, fixed_threshold

if TYPE_CHECKING:
    import pandas as pd

    from ._limits import RegressionLimit

__all__ = ["AACount", "aa_check"]


@dataclass(frozen=True, slots=True)
class AACount:
    """One limit's false alarms over the repeats of an A/A check."""

    metric: str
    limit: str
    repeats: int
    #: Repeats today's fixed threshold failed.
    fixed_threshold: int
    #: Repeats the regression gate failed (regressions).
    gate: int
    #: Repeats the gate found inconclusive (they fail only with inconclusive=fail).
    inconclusive: int


def aa_check(
    repeats: Sequence[pd.DataFrame],
    limits: Mapping[str, RegressionLimit],
    rule: GateRule | None = None,
) -> list[AACount]:
    """For each limit, how many of ``repeats`` (each one page's wide frame of ``2 N`` runs
    in measuring order) each gate would fail, comparing the even-numbered runs (baseline)
    with the odd-numbered ones (new)."""
    rule = rule or GateRule()
    counts: list[AACount] = []
    for name, limit in limits.items():
        fixed = gate = inconclusive = 0
        for frame in repeats:
            ok = frame[frame["status"].astype(str) == "success"] if "status" in frame else frame
            values = ok[name].astype(float).tolist()
            base, new = values[0::2], values[1::2]
            cell = cell_key(frame.iloc[0].to_dict())
            result = decide(name, base, new, limit, cell=cell, rule=rule)
            gate += result.verdict == "regression"
            inconclusive += result.verdict == "inconclusive"
            if result.baseline_median is not None:
                fixed += not fixed_threshold(name, result.baseline_median, new, limit, cell=cell,
                                             n_baseline=len(base)).passed
        counts.append(AACount(name, str(limit), len(repeats), fixed, gate, inconclusive))
    return counts
