"""Which build a run measures: the one rule every face resolves ``build=`` by
(docs/history.md, "Build context"; docs/decisions.md).

The build comes whole from the first source that names a commit:

1. ``build=`` given (a :class:`~pagelab.models.Build` or a dict of its fields);
2. ``PAGELAB_COMMIT`` (with ``PAGELAB_BRANCH``, ``PAGELAB_COMMIT_TIME``,
   ``PAGELAB_BUILD_URL``, ``PAGELAB_PULL_REQUEST``);
3. the CI's own variables (GitHub Actions, GitLab CI, CircleCI, Buildkite, Jenkins, Azure
   Pipelines: :data:`CI_SYSTEMS`);
4. with ``git=True`` only (``pagelab check`` and the pytest plugin): ``git`` in the working
   directory (HEAD's commit, branch and committer time); no git or no repository: none,
   silently;
5. else none.

Never mixed: a branch from one source beside a commit from another could name a build
that never existed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from pagelab._exceptions import InvalidInputError
from pagelab.models import Build, BuildInput, coerce_build, invalid_input

__all__ = ["BUILD_VARIABLES", "CI_SYSTEMS", "CiSystem", "git_build", "resolve_build"]

Environ = Mapping[str, str]

#: ``PAGELAB_*`` variable -> :class:`Build` field: the override any CI (or a shell) sets.
BUILD_VARIABLES: dict[str, str] = {
    "PAGELAB_COMMIT": "commit",
    "PAGELAB_BRANCH": "branch",
    "PAGELAB_COMMIT_TIME": "commit_time",
    "PAGELAB_BUILD_URL": "build_url",
    "PAGELAB_PULL_REQUEST": "pull_request",
}


def _first(env: Environ, *names: str) -> str | None:
    for name in names:
        if env.get(name):
            return env[name]
    return None


def _strip_ref(ref: str | None, prefix: str = "refs/heads/") -> str | None:
    return ref.removeprefix(prefix) if ref else None


def _github(env: Environ) -> dict[str, str | None]:
    ref = env.get("GITHUB_REF", "")
    run = (f"{env['GITHUB_SERVER_URL']}/{env['GITHUB_REPOSITORY']}/actions/runs/"
           f"{env['GITHUB_RUN_ID']}"
           if all(env.get(n) for n in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY",
                                       "GITHUB_RUN_ID")) else None)
    # A pull request's run is on refs/pull/<n>/merge; its branch is GITHUB_HEAD_REF.
    pull = ref.split("/")[2] if ref.startswith("refs/pull/") and ref.count("/") >= 3 else None
    return {"commit": env.get("GITHUB_SHA"),
            "branch": _first(env, "GITHUB_HEAD_REF", "GITHUB_REF_NAME") or _strip_ref(ref),
            "build_url": run, "pull_request": pull}


def _gitlab(env: Environ) -> dict[str, str | None]:
    return {"commit": env.get("CI_COMMIT_SHA"),
            "branch": _first(env, "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_COMMIT_BRANCH",
                             "CI_COMMIT_REF_NAME"),
            "commit_time": env.get("CI_COMMIT_TIMESTAMP"), "build_url": env.get("CI_JOB_URL"),
            "pull_request": env.get("CI_MERGE_REQUEST_IID")}


def _circle(env: Environ) -> dict[str, str | None]:
    pull = env.get("CIRCLE_PR_NUMBER") or (
        env["CIRCLE_PULL_REQUEST"].rstrip("/").rsplit("/", 1)[-1]
        if env.get("CIRCLE_PULL_REQUEST") else None)
    return {"commit": env.get("CIRCLE_SHA1"), "branch": env.get("CIRCLE_BRANCH"),
            "build_url": env.get("CIRCLE_BUILD_URL"), "pull_request": pull}


def _buildkite(env: Environ) -> dict[str, str | None]:
    pull = env.get("BUILDKITE_PULL_REQUEST")
    return {"commit": env.get("BUILDKITE_COMMIT"), "branch": env.get("BUILDKITE_BRANCH"),
            "build_url": env.get("BUILDKITE_BUILD_URL"),
            "pull_request": pull if pull and pull != "false" else None}


def _jenkins(env: Environ) -> dict[str, str | None]:
    # The git plugin names the branch with its remote (origin/main); a multibranch
    # pipeline's BRANCH_NAME does not.
    branch = env.get("BRANCH_NAME") or env.get("GIT_BRANCH")
    if branch and "/" in branch and not env.get("BRANCH_NAME"):
        branch = branch.split("/", 1)[1]
    return {"commit": env.get("GIT_COMMIT"), "branch": branch,
            "build_url": env.get("BUILD_URL"), "pull_request": env.get("CHANGE_ID")}


def _azure(env: Environ) -> dict[str, str | None]:
    base = env.get("SYSTEM_COLLECTIONURI", "").rstrip("/")
    run = (f"{base}/{env['SYSTEM_TEAMPROJECT']}/_build/results?buildId={env['BUILD_BUILDID']}"
           if base and env.get("SYSTEM_TEAMPROJECT") and env.get("BUILD_BUILDID") else None)
    return {"commit": env.get("BUILD_SOURCEVERSION"),
            "branch": _strip_ref(_first(env, "SYSTEM_PULLREQUEST_SOURCEBRANCH",
                                        "BUILD_SOURCEBRANCH")),
            "build_url": run,
            "pull_request": _first(env, "SYSTEM_PULLREQUEST_PULLREQUESTNUMBER",
                                   "SYSTEM_PULLREQUEST_PULLREQUESTID")}


@dataclass(frozen=True, slots=True)
class CiSystem:
    """A CI the build is read from: its name, the variable saying a job runs on it, and how
    its variables give the build's fields."""

    name: str
    marker: str
    fields: Callable[[Environ], dict[str, str | None]]


#: The CIs whose variables name the build, in the order they are tried.
CI_SYSTEMS: tuple[CiSystem, ...] = (
    CiSystem("GitHub Actions", "GITHUB_ACTIONS", _github),
    CiSystem("GitLab CI", "GITLAB_CI", _gitlab),
    CiSystem("CircleCI", "CIRCLECI", _circle),
    CiSystem("Buildkite", "BUILDKITE", _buildkite),
    CiSystem("Jenkins", "JENKINS_URL", _jenkins),
    CiSystem("Azure Pipelines", "TF_BUILD", _azure),
)


def _validated(fields: Mapping[str, str | None], source: str) -> Build:
    try:
        return Build.model_validate({k: v for k, v in fields.items() if v})
    except ValidationError as exc:
        raise InvalidInputError(f"{source}: {invalid_input(exc)}") from exc


def _git(*args: str, cwd: Path | None) -> str | None:
    """``git args`` in ``cwd``: its output, or None when git is missing or fails."""
    if shutil.which("git") is None:
        return None
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def git_build(cwd: str | os.PathLike[str] | None = None) -> Build | None:
    """HEAD's commit, branch (none when detached) and committer time in ``cwd`` (default:
    the working directory); None without git or outside a repository."""
    where = Path(cwd) if cwd is not None else None
    commit = _git("rev-parse", "HEAD", cwd=where)
    if commit is None:
        return None
    branch = _git("rev-parse", "--abbrev-ref", "HEAD", cwd=where)
    return Build(commit=commit, branch=branch if branch != "HEAD" else None,
                 commit_time=_git("log", "-1", "--format=%cI", commit, cwd=where))


def resolve_build(build: BuildInput = None, *, git: bool = False,
                  env: Environ | None = None,
                  cwd: str | os.PathLike[str] | None = None) -> Build | None:
    """The build a run measures, by the rule of this module's docstring. ``env`` defaults
    to ``os.environ``; ``git=True`` (``pagelab check``, the plugin) asks git in ``cwd`` last.
    A bad ``build=`` or ``PAGELAB_*`` / CI value raises :class:`~pagelab.InvalidInputError`
    naming its source."""
    given = coerce_build(build)
    if given is not None:
        return given
    environ = os.environ if env is None else env
    if environ.get("PAGELAB_COMMIT"):
        return _validated({field: environ.get(name) for name, field in
                           BUILD_VARIABLES.items()}, "the PAGELAB_* build variables")
    for ci in CI_SYSTEMS:
        if environ.get(ci.marker):
            fields = ci.fields(environ)
            if fields.get("commit"):
                return _validated(fields, f"{ci.name}'s variables")
    return git_build(cwd) if git else None
