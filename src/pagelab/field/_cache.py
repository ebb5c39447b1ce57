"""A day's answers of the Chrome UX Report API, kept so a notebook does not spend the quota.

One JSON file per (endpoint, page or origin, form factor) under
``<data dir>/field-cache/<UTC date>/``: asked again on the same UTC day, the answer is read
from there; the next day (the report is updated daily) it is asked again and older days are
deleted. Only what the API answered is kept (its status and body), never the request's key.
A file rather than the store: the answers are a cache, not history (docs/decisions.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from pagelab._exceptions import StoreError
from pagelab._paths import data_dir

__all__ = ["Answer", "AnswerCache"]

#: The answers worth keeping for the day: the data, and that there is none.
CACHED_STATUSES = frozenset({200, 404})


@dataclass(frozen=True, slots=True)
class Answer:
    """What the API answered: its HTTP status and JSON body."""

    status: int
    body: dict[str, Any]


class AnswerCache:
    """The day's answers in ``directory`` (default ``<data dir>/field-cache``)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else data_dir() / "field-cache"

    def __repr__(self) -> str:
        return f"AnswerCache({str(self.directory)!r})"

    @staticmethod
    def today() -> date:
        return datetime.now(UTC).date()

    def _path(self, endpoint: str, query: dict[str, Any], day: date) -> Path:
        name = hashlib.sha256(
            json.dumps([endpoint, query], sort_keys=True).encode()).hexdigest()[:32]
        return self.directory / day.isoformat() / f"{name}.json"

    def get(self, endpoint: str, query: dict[str, Any]) -> Answer | None:
        """Today's answer to ``query`` at ``endpoint``, or None."""
        path = self._path(endpoint, query, self.today())
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # a damaged file is asked again and rewritten
        if not isinstance(saved, dict) or not isinstance(saved.get("body"), dict):
            return None
        return Answer(int(saved.get("status", 0)), saved["body"])

    def put(self, endpoint: str, query: dict[str, Any], answer: Answer) -> None:
        """Keep ``answer`` for today (only a 200 or a 404), and forget earlier days."""
        if answer.status not in CACHED_STATUSES:
            return
        day = self.today()
        path = self._path(endpoint, query, day)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._forget_before(day)
            text = json.dumps({"endpoint": endpoint, "query": query, "status": answer.status,
                               "body": answer.body}, sort_keys=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".answer-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(NameError, OSError):
                os.unlink(tmp)
            raise StoreError(
                f"cannot keep the Chrome UX Report answer in {self.directory}: "
                f"{exc.strerror or exc}") from exc

    def _forget_before(self, day: date) -> None:
        for child in self.directory.iterdir():
            if child.is_dir() and child.name < day.isoformat():
                shutil.rmtree(child, ignore_errors=True)
