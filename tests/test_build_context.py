"""Which build a run measures (issue 37, point 1): the one rule of ``pagelab._build`` read
from a real environment mapping, real ``git`` in a real temporary repository, and the
``Build`` model's checks."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pagelab import InvalidInputError
from pagelab._build import BUILD_VARIABLES, CI_SYSTEMS, git_build, resolve_build
from pagelab.models import Build, build_filters, coerce_build

SHA = "3f2c9a1b4d5e6f708192a3b4c5d6e7f8091a2b3c"


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """A git repository with one commit on branch ``feature/x``; its path and HEAD."""
    path = tmp_path / "repo"
    path.mkdir()

    def git(*args: str) -> str:
        when = {"GIT_COMMITTER_DATE": "2026-11-01T10:00:00+00:00"}
        return subprocess.run(["git", *args], cwd=path, check=True, capture_output=True,
                              text=True, env={**os.environ, **when}).stdout.strip()

    git("init", "-q", "-b", "feature/x")
    (path / "a.txt").write_text("a")
    git("add", "a.txt")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "a")
    return path, git("rev-parse", "HEAD")


def test_given_build_wins_over_every_other_source(repo: tuple[Path, str]) -> None:
    env = {"PAGELAB_COMMIT": "env", "GITHUB_ACTIONS": "true", "GITHUB_SHA": "gh"}
    built = resolve_build({"commit": "given", "branch": "main"}, git=True, env=env,
                          cwd=repo[0])
    assert built == Build(commit="given", branch="main")
    model = Build(commit="m")
    assert resolve_build(model, env=env) is model


def test_pagelab_variables_outrank_the_ci_and_come_whole() -> None:
    env = {"PAGELAB_COMMIT": "abc", "PAGELAB_BRANCH": "main",
           "PAGELAB_COMMIT_TIME": "2026-11-01T10:00:00Z",
           "PAGELAB_BUILD_URL": "https://ci.example/1", "PAGELAB_PULL_REQUEST": "7",
           "GITLAB_CI": "true", "CI_COMMIT_SHA": "gl", "CI_COMMIT_REF_NAME": "other"}
    assert resolve_build(env=env) == Build(
        commit="abc", branch="main", commit_time=datetime(2026, 11, 1, 10, tzinfo=UTC),
        build_url="https://ci.example/1", pull_request="7")
    # A branch without a commit names no build: the next source decides, whole.
    assert resolve_build(env={"PAGELAB_BRANCH": "main"}) is None


@pytest.mark.parametrize(("env", "expected"), [
    ({"GITHUB_ACTIONS": "true", "GITHUB_SHA": SHA, "GITHUB_REF": "refs/pull/42/merge",
      "GITHUB_HEAD_REF": "fix-lcp", "GITHUB_SERVER_URL": "https://github.com",
      "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "99"},
     {"branch": "fix-lcp", "build_url": "https://github.com/o/r/actions/runs/99",
      "pull_request": "42"}),
    ({"GITHUB_ACTIONS": "true", "GITHUB_SHA": SHA, "GITHUB_REF": "refs/heads/main"},
     {"branch": "main"}),
    ({"GITLAB_CI": "true", "CI_COMMIT_SHA": SHA, "CI_COMMIT_REF_NAME": "main",
      "CI_COMMIT_TIMESTAMP": "2026-11-01T10:00:00+00:00", "CI_JOB_URL": "https://gl/j/1",
      "CI_MERGE_REQUEST_IID": "5"},
     {"branch": "main", "commit_time": datetime(2026, 11, 1, 10, tzinfo=UTC),
      "build_url": "https://gl/j/1", "pull_request": "5"}),
    ({"CIRCLECI": "true", "CIRCLE_SHA1": SHA, "CIRCLE_BRANCH": "dev",
      "CIRCLE_BUILD_URL": "https://circleci.com/b/3",
      "CIRCLE_PULL_REQUEST": "https://github.com/o/r/pull/8"},
     {"branch": "dev", "build_url": "https://circleci.com/b/3", "pull_request": "8"}),
    ({"BUILDKITE": "true", "BUILDKITE_COMMIT": SHA, "BUILDKITE_BRANCH": "main",
      "BUILDKITE_BUILD_URL": "https://buildkite.com/b/4", "BUILDKITE_PULL_REQUEST": "false"},
     {"branch": "main", "build_url": "https://buildkite.com/b/4"}),
    ({"JENKINS_URL": "https://jenkins/", "GIT_COMMIT": SHA, "GIT_BRANCH": "origin/main",
      "BUILD_URL": "https://jenkins/job/1/"},
     {"branch": "main", "build_url": "https://jenkins/job/1/"}),
    ({"TF_BUILD": "True", "BUILD_SOURCEVERSION": SHA, "BUILD_SOURCEBRANCH": "refs/heads/rel",
      "SYSTEM_COLLECTIONURI": "https://dev.azure.com/org/", "SYSTEM_TEAMPROJECT": "p",
      "BUILD_BUILDID": "12"},
     {"branch": "rel", "build_url": "https://dev.azure.com/org/p/_build/results?buildId=12"}),
], ids=["github-pr", "github-push", "gitlab", "circleci", "buildkite", "jenkins", "azure"])
def test_each_ci_names_its_build(env: dict[str, str], expected: dict[str, object]) -> None:
    assert resolve_build(env=env) == Build(commit=SHA, **expected)  # type: ignore[arg-type]


def test_every_ci_system_is_tested() -> None:
    assert {ci.name for ci in CI_SYSTEMS} == {"GitHub Actions", "GitLab CI", "CircleCI",
                                              "Buildkite", "Jenkins", "Azure Pipelines"}


def test_git_only_when_asked_and_silent_without_a_repository(
        repo: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, head = repo
    assert resolve_build(env={}, cwd=path) is None  # measure: no git
    built = resolve_build(env={}, git=True, cwd=path)
    assert built == Build(commit=head, branch="feature/x",
                          commit_time=datetime(2026, 11, 1, 10, tzinfo=UTC))
    # A detached HEAD has no branch.
    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=path, check=True)
    assert git_build(path) == Build(commit=head, commit_time=built.commit_time)
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert resolve_build(env={}, git=True, cwd=outside) is None
    monkeypatch.setenv("PATH", str(outside))  # no git on the PATH at all
    assert resolve_build(env={}, git=True, cwd=path) is None


@pytest.mark.parametrize(("build", "words"), [
    ("abc", "build: expected a Build or a dict"),
    ({"comit": "abc"}, "build: unknown key 'comit': did you mean 'commit'?"),
    ({"branch": "main"}, "build.commit: Field required"),
    ({"commit": "x" * 101}, "build.commit: String should have at most 100 characters"),
    ({"commit": "a", "branch": "b" * 256}, "build.branch: String should have at most 255"),
    ({"commit": "a", "build_url": "javascript:alert(1)"}, "build.build_url: "
     "must be an http:// or https:// address"),
    ({"commit": "a\nb"}, "build.commit: must not contain control characters"),
    ({"commit": 5}, "build.commit: Input should be a valid string"),
])
def test_bad_build_input_is_refused_naming_the_field(build: object, words: str) -> None:
    with pytest.raises(InvalidInputError, match="^" + words.replace("(", r"\(")
                       .replace(")", r"\)").replace("?", r"\?")):
        coerce_build(build)  # type: ignore[arg-type]


def test_a_bad_environment_value_names_its_source() -> None:
    with pytest.raises(InvalidInputError, match=r"the PAGELAB_\* build variables: build_url"):
        resolve_build(env={"PAGELAB_COMMIT": "a", "PAGELAB_BUILD_URL": "file:///etc"})


def test_a_pull_request_number_reads_as_text() -> None:
    assert Build(commit="a", pull_request=12).pull_request == "12"  # type: ignore[arg-type]


def test_list_filters_are_capped() -> None:
    assert build_filters("main", None) == ("main", None)
    with pytest.raises(InvalidInputError, match="commit: at most 100 characters"):
        build_filters(None, "c" * 101)
    with pytest.raises(InvalidInputError, match="branch: expected a non-empty string"):
        build_filters(3, None)


def test_a_baseline_s_commit_is_the_one_rule_s(repo: tuple[Path, str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # budgets.current_commit (a saved baseline's commit) delegates to resolve_build: a bare
    # GITHUB_SHA outside GitHub Actions is no build's, PAGELAB_COMMIT outranks git.
    from pagelab.budgets import current_commit

    for name in [*BUILD_VARIABLES, *(ci.marker for ci in CI_SYSTEMS)]:
        monkeypatch.delenv(name, raising=False)
    path, head = repo
    monkeypatch.setenv("GITHUB_SHA", "b" * 40)
    assert current_commit(path) == head
    assert current_commit(path.parent) is None  # no repository there
    monkeypatch.setenv("PAGELAB_COMMIT", "c" * 40)
    assert current_commit(path) == "c" * 40
