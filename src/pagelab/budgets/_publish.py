"""Writing the CI reports of :mod:`._ci` where CI looks for them: the files asked for, the
GitHub job summary, and the annotations to print. Shared by the pytest plugin and
``pagelab check``."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._ci import code_quality_issues, markdown_summary, workflow_commands

__all__ = ["publish_ci_reports", "write_results"]


def publish_ci_reports(
    checks: Sequence[Mapping[str, Any]],
    *,
    markdown: str | os.PathLike[str] | None = None,
    codequality: str | os.PathLike[str] | None = None,
    runs: Iterable[Mapping[str, Any]] = (),
    errors: Sequence[str] = (),
    notes: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """Write the Markdown summary to ``markdown`` and the GitLab Code Quality report to
    ``codequality`` (when given); append the summary to ``$GITHUB_STEP_SUMMARY`` when that
    is set and something was checked. Return the GitHub workflow commands to print on
    stdout: none unless ``GITHUB_ACTIONS=true``.

    Under GitHub Actions local reports are named relative to the workspace
    (``$GITHUB_WORKSPACE``, else the working directory), as an artifact uploaded from it
    holds them: the runner's absolute paths mean nothing to a reviewer."""
    env = os.environ if environ is None else environ
    github = env.get("GITHUB_ACTIONS") == "true"
    workspace = Path(env.get("GITHUB_WORKSPACE") or Path.cwd()).resolve() if github else None
    summary_file = env.get("GITHUB_STEP_SUMMARY")
    to_summary = bool(summary_file) and bool(checks or errors)
    if markdown is not None or to_summary:
        text = markdown_summary(checks, runs=runs, errors=errors, notes=notes,
                                workspace=workspace)
        if markdown is not None:
            _write(Path(markdown), text)
        if summary_file and to_summary:
            # GitHub reads the file after the step: append, as other steps' tools do.
            with Path(summary_file).open("a", encoding="utf-8") as stream:
                stream.write(text + "\n")
    if codequality is not None:
        _write(Path(codequality), json.dumps(code_quality_issues(checks), indent=2) + "\n")
    return workflow_commands(checks, workspace=workspace) if github else []


def write_results(path: str | os.PathLike[str], *, version: str, aggregation: str,
                  checks: Sequence[Mapping[str, Any]], errors: Sequence[Mapping[str, str]],
                  baseline_warnings: Sequence[str], notes: Sequence[str],
                  runs: Sequence[Mapping[str, Any]]) -> None:
    """Write every check and run as the results JSON (``--pagelab-results``), which
    :func:`pagelab.frames.read_runs` reads back (``--replay``); ``version``: pagelab's."""
    from datetime import UTC, datetime

    document = {
        "pagelab": version,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "aggregation": aggregation, "checks": checks, "errors": errors,
        "baseline_warnings": baseline_warnings, "notes": notes, "runs": runs,
    }
    _write(Path(path), json.dumps(document, indent=2) + "\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
