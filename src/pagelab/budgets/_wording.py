"""How a check's status is printed, on every face (CLI, pytest summary, CI reports): one
table, so a missed limit reads the same everywhere."""

from __future__ import annotations

__all__ = ["STATUS_LABELS"]

#: status -> label: a missed limit in capitals so it cannot be overlooked.
STATUS_LABELS: dict[str, str] = {"pass": "pass", "warn": "warn", "fail": "FAIL"}
