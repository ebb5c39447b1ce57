"""The baseline of a branch's history: ``--pagelab-against=history`` compares this build's
runs with the newest stable builds of its branch in the store (docs/pytest-plugin.md,
"Against the branch's history"; docs/decisions.md).

Per cell, the builds after the newest change point of the regression limits' metrics
(:func:`pagelab.stats.change_points`), at most the newest :data:`HISTORY_BUILDS`, become a
:class:`Baseline` through :func:`make_baseline`: the gate is then exactly the one a baseline
file gets. :func:`baseline_from_history` is pure (a frame in); :func:`history_baseline`
reads the runs through the face's runner (only its ``list``, :class:`PagedTests`: the
budgets never import the runners).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pagelab._build import resolve_build
from pagelab._cells import CellKey, cell_keys, cell_label
from pagelab._exceptions import InvalidInputError
from pagelab._history import PagedTests, read_history
from pagelab.models import Build, BuildInput

from ._baseline import Baseline, compare_baseline, make_baseline
from ._gate import DEFAULT_ALPHA, GateRule, RegressionResult
from ._limits import RegressionLimit
from ._models import BudgetResult
from ._tables import regression_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["HISTORY_BUILDS", "HISTORY_RUNS", "HistoryBaseline", "baseline_from_history",
           "compare_history", "history_baseline", "history_build"]

#: The newest builds of a stable segment a history baseline keeps: with 3 runs a build, 30
#: runs, past which the gate's power hardly grows (docs/pytest-plugin.md, "Figures"), while
#: an older build adds drift too slow for a change point to name.
HISTORY_BUILDS = 10
#: The newest runs of the branch read (every cell's): enough for the change points of
#: 10 builds of 3 runs and a long history before them, for dozens of cells.
HISTORY_RUNS = 5000
#: What a build without a branch is told: the history is a branch's.
NO_BRANCH = ("no branch: set PAGELAB_BRANCH (with PAGELAB_COMMIT) or run in a git checkout "
             "on a branch")


@dataclass(frozen=True, slots=True)
class HistoryBaseline:
    """A branch history's :class:`Baseline` (a cell the history lacks is absent from it, as
    from a baseline file without it), per page (URL, device, location) the line saying
    which builds it holds, and the build checked against it (:func:`history_baseline`'s)."""

    baseline: Baseline
    branch: str
    notes: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    build: Build | None = None

    def notes_for(self, results: Iterable[tuple[str, BudgetResult]]) -> list[str]:
        """Which builds of the history each page of the baseline checks in ``results`` (a
        :class:`FrameCheck`'s) met, once a page."""
        pages = dict.fromkeys((r.url, r.device, r.location) for kind, r in results
                              if kind == "baseline")
        return [note for page in pages for note in self.notes.get(page, [])]


def history_build(build: BuildInput = None) -> Build:
    """The build being checked (``build=``, else ``PAGELAB_COMMIT``..., the CI's variables,
    git: the pipeline's faces' rule), which must name its branch: InvalidInputError
    (:data:`NO_BRANCH`) when it does not."""
    measured = resolve_build(build, git=True)
    if measured is None or measured.branch is None:
        raise InvalidInputError(NO_BRANCH)
    return measured


def history_baseline(runner: PagedTests, metrics: Sequence[str], *, build: BuildInput = None,
                     alpha: float = DEFAULT_ALPHA, builds: int = HISTORY_BUILDS,
                     limit: int = HISTORY_RUNS) -> HistoryBaseline:
    """The baseline of the branch of the build being checked (:func:`history_build`): the
    newest ``limit`` runs ``runner`` stored for that branch, less the build's own
    (:func:`baseline_from_history`)."""
    from pagelab.frames import to_frame

    measured = history_build(build)
    branch = str(measured.branch)
    frame = to_frame(read_history(runner, branch=branch, limit=limit))
    return replace(baseline_from_history(frame, metrics, branch=branch,
                                         exclude_commit=measured.commit, alpha=alpha,
                                         builds=builds), build=measured)


def compare_history(history: HistoryBaseline, frame: pd.DataFrame,
                    limits: Mapping[str, RegressionLimit], urls: Iterable[str] | None = None,
                    *, rule: GateRule | None = None,
                    ) -> tuple[list[RegressionResult], list[str]]:
    """The regression checks of ``frame``'s runs (only those of ``urls`` when given: a
    replayed file may hold other pages) against ``history``, and the lines the plugin's
    summary shows for them: the heading, the table, the baseline's warnings and which
    builds each page met."""
    if urls is not None:
        frame = frame[frame["url"].astype(str).isin(set(urls))]
    compared = compare_baseline(history.baseline, frame, limits, rule=rule)
    return compared.results, [
        f"baseline comparison (history of {history.branch})",
        *regression_table([{**r.to_dict(), "kind": "baseline"} for r in compared.results]),
        *compared.warnings, *history.notes_for(("baseline", r) for r in compared.results)]


def baseline_from_history(frame: pd.DataFrame, metrics: Sequence[str], *, branch: str,
                          exclude_commit: str | None = None, alpha: float = DEFAULT_ALPHA,
                          builds: int = HISTORY_BUILDS) -> HistoryBaseline:
    """Per page cell of ``frame`` (a wide frame of a branch's runs, with ``commit``), the
    runs of the builds after the newest change of any of ``metrics`` at ``alpha`` (no
    change: the whole history), at most the newest ``builds``, as one :class:`Baseline`.
    Runs that did not succeed, without a commit, of ``exclude_commit`` (the build being
    checked) and flow steps are left out."""
    import pandas as pd

    # Loaded on use: importing the budgets stays free of pandas and numpy.
    from pagelab._change_points import build_order, change_points

    if builds < 1:
        raise InvalidInputError(f"builds: expected a positive number, got {builds!r}")
    runs = frame[frame["commit"].notna()] if "commit" in frame.columns else frame.iloc[:0]
    if exclude_commit is not None:
        runs = runs[runs["commit"].astype(str) != exclude_commit]
    if "flow" in runs.columns:
        runs = runs[runs["flow"].isna()]
    if "status" in runs.columns:  # a build of failed runs only is no build of the level
        runs = runs[runs["status"].astype(str) == "success"]
    runs = runs.reset_index(drop=True)
    changes = (change_points(runs, metric=list(metrics), alpha=alpha)
               if len(runs) and metrics else None)
    changed = {} if changes is None else _changes_by_cell(changes)
    keys = cell_keys(runs)
    kept: list[pd.DataFrame] = []
    notes: dict[tuple[str, str, str], list[str]] = {}
    for key in dict.fromkeys(keys):
        rows = runs[[k == key for k in keys]]
        position, ordered = build_order(rows)
        change = changed.get(key, {})
        start = max((ordered.index(c) for c in change if c in ordered), default=0)
        chosen = ordered[max(start, len(ordered) - builds):]
        first = len(ordered) - len(chosen)
        kept.append(rows[position >= first])
        page = (str(key[0]), str(key[1]), str(key[2]))
        notes.setdefault(page, []).append(
            _note(key, branch, chosen, len(ordered), len(kept[-1]), ordered[start] if start
                  else None, change.get(ordered[start], ()) if start else ()))
    if not kept:  # no history: every cell is one the baseline lacks
        return HistoryBaseline(Baseline("median", []), branch)
    selected = pd.concat(kept, ignore_index=True)
    return HistoryBaseline(make_baseline(selected, commit=build_order(selected)[1][-1]),
                           branch, notes)


def _changes_by_cell(changes: pd.DataFrame) -> dict[CellKey, dict[str, tuple[str, ...]]]:
    """Per cell, each commit a level changed at and the metrics that changed there."""
    found: dict[CellKey, dict[str, tuple[str, ...]]] = {}
    for key, commit, metric in zip(cell_keys(changes), changes["commit"].astype(str),
                                   changes["metric"].astype(str), strict=True):
        at = found.setdefault(key, {})
        at[commit] = (*at.get(commit, ()), metric)
    return found


def _note(key: CellKey, branch: str, chosen: Sequence[str], total: int, runs: int,
          change: str | None, metrics: Sequence[str]) -> str:
    """``history baseline for mobile/us http://…/: 4 builds of main (12 runs), 3f2c9a1 to
    9d0e1b2: since largest_contentful_paint changed at 3f2c9a1``."""
    from pagelab._change_points import short_commit

    held = (f"{len(chosen)} build{'s' if len(chosen) != 1 else ''} of {branch} ({runs} run"
            f"{'s' if runs != 1 else ''}), {short_commit(chosen[0])} to "
            f"{short_commit(chosen[-1])}")
    if change is not None:
        why = f"since {', '.join(metrics)} changed at {short_commit(change)}"
        if chosen[0] != change:
            why += f" (the newest {len(chosen)})"
    elif len(chosen) < total:
        why = f"the newest {len(chosen)} of {total}, no change among them"
    else:
        why = "no change among them"
    return f"history baseline for {cell_label(key)}: {held}: {why}"
