"""How a check's status is printed, on every face (CLI, pytest summary, CI reports): one
table, so a missed limit reads the same everywhere."""

from __future__ import annotations

__all__ = ["STATUS_LABELS", "status_of"]

#: status -> label: a missed limit in capitals so it cannot be overlooked.
STATUS_LABELS: dict[str, str] = {"pass": "pass", "warn": "warn", "fail": "FAIL"}


def status_of(passed: bool, level: str | None) -> str:
    """A check's status: ``pass``, ``warn`` (a missed warn-level limit) or ``fail``."""
    return "pass" if passed else ("warn" if level == "warn" else "fail")
