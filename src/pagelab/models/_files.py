"""Reading a YAML or JSON file (a budget file, a flow file, a lighthouserc's budgets file):
one loader, one wording of what is wrong with it."""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path
from typing import Any

from pagelab._exceptions import InvalidInputError

__all__ = ["DATA_FILE_SUFFIXES", "read_data_file"]

#: The suffixes of the files :func:`read_data_file` reads (``.json``: JSON, else YAML).
DATA_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def read_data_file(path: str | PathLike[str], what: str,
                   error: type[InvalidInputError] = InvalidInputError) -> Any:
    """The parsed content of a ``.json`` file (JSON) or any other (YAML); ``error`` naming
    the file (``what`` it is) and the line when it cannot be read or parsed."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise error(f"{file}: cannot read the {what} ({reason})") from exc
    if file.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise error(f"{file}: not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise error(f"{file}: not valid YAML ({where}{problem})") from exc
