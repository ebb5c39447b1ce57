"""What one test measured and checked: kept on the item, shown as JUnit properties and sent
to the controller on the test's report."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = ["OUTCOME_KEY", "RecordedOutcome", "locate_checks", "record_outcome"]


@dataclass
class RecordedOutcome:
    """What one test measured and checked, carried to the controller on the report."""

    checks: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: runs=auto: where each cell stopped.
    notes: list[str] = field(default_factory=list)

    def dumps(self) -> str:
        return json.dumps(asdict(self))


OUTCOME_KEY = pytest.StashKey[RecordedOutcome]()


def record_outcome(item: pytest.Item, outcome: RecordedOutcome) -> None:
    """Keep ``outcome`` on ``item`` and add its checks as JUnit XML properties."""
    item.stash[OUTCOME_KEY] = outcome
    from pagelab.budgets import check_where

    # One <property> per check, the figures in the value.
    seen = {name for name, _ in item.user_properties}
    for check in outcome.checks:
        name = f"pagelab {check['metric']} {check_where(check, check.get('template'))}"
        if name in seen:
            continue
        seen.add(name)
        item.user_properties.append((name, f"{check['label']}: {check['message']}"))


def locate_checks(
    item: pytest.Item, outcome: RecordedOutcome, line: Callable[[Mapping[str, Any]], int]
) -> None:
    """Give each check not yet located the ``file`` (relative to the rootdir) and ``line``
    that CI annotations and reports point at."""
    for check in outcome.checks:
        if "file" not in check:
            check["file"] = Path(item.location[0]).as_posix()
            check["line"] = line(check)
