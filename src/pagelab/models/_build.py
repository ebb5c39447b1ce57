"""The build a test measured: its commit, branch and where known its commit time, CI build
page and pull request (issue 37). What a stored test, a frame row and an API body carry;
where it comes from is :mod:`pagelab._build` (docs/history.md, "Build context")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from pagelab._exceptions import InvalidInputError

from ._types import Timestamp
from ._validation import invalid_input, unknown_value

__all__ = [
    "MAX_BRANCH_LENGTH",
    "MAX_BUILD_URL_LENGTH",
    "MAX_COMMIT_LENGTH",
    "MAX_PULL_REQUEST_LENGTH",
    "Build",
    "BuildInput",
    "build_filters",
    "coerce_build",
]

#: A commit id: a SHA-256 git hash is 64 hex digits; other systems' ids are shorter.
MAX_COMMIT_LENGTH = 100
#: A branch name (git allows longer; no CI shows one that long).
MAX_BRANCH_LENGTH = 255
#: The CI build page's address.
MAX_BUILD_URL_LENGTH = 2000
#: What the OpenAPI document promises of a commit, branch or pull request: printable ASCII,
#: a subset of what the validator accepts (any text without control characters), so a
#: schema-driven client never sends a value the server refuses.
_TEXT_SCHEMA = {"pattern": r"^[ -~]*$"}
#: ... and of a build URL: http(s), printable ASCII.
_URL_SCHEMA = {"pattern": r"^https?://[!-~]*$"}
#: A pull (merge) request's number or id.
MAX_PULL_REQUEST_LENGTH = 100


#: C0 control characters and DEL.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _printable(value: str) -> str:
    # Shown in tables, reports and CLI rows: one line, no control characters. (A regex: a
    # loop over the characters was a third of the time of reading a long history.)
    if _CONTROL.search(value):
        raise ValueError("must not contain control characters")
    return value


def _web_address(value: str) -> str:
    # A report links to it: only a web page, never javascript: or file:.
    if not value.lower().startswith(("http://", "https://")):
        raise ValueError("must be an http:// or https:// address")
    return _printable(value)


def _as_text(value: Any) -> Any:
    # A pull request is a number to GitHub and GitLab, an id to others: kept as text.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class Build(BaseModel):
    """The build a test measured: ``commit`` (required), ``branch``, ``commit_time``,
    ``build_url`` (the CI build's page) and ``pull_request``; strings capped in length
    (docs/history.md, "Build context")."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    commit: Annotated[str, Field(min_length=1, max_length=MAX_COMMIT_LENGTH,
                                 json_schema_extra=_TEXT_SCHEMA),
                      AfterValidator(_printable)]
    branch: Annotated[str, Field(min_length=1, max_length=MAX_BRANCH_LENGTH,
                                 json_schema_extra=_TEXT_SCHEMA),
                      AfterValidator(_printable)] | None = None
    commit_time: Timestamp | None = None
    build_url: Annotated[str, Field(max_length=MAX_BUILD_URL_LENGTH,
                                    json_schema_extra=_URL_SCHEMA),
                         AfterValidator(_web_address)] | None = None
    pull_request: Annotated[str, BeforeValidator(_as_text),
                            Field(min_length=1, max_length=MAX_PULL_REQUEST_LENGTH,
                                  json_schema_extra=_TEXT_SCHEMA),
                            AfterValidator(_printable)] | None = None


#: ``build=``: a :class:`Build`, a mapping of its fields, or None.
BuildInput = Build | Mapping[str, Any] | None


def coerce_build(build: BuildInput) -> Build | None:
    """``build=`` read: a :class:`Build` as it is, a mapping validated (an unknown key is
    refused, with the closest field's name), None as None; raises
    :class:`~pagelab.InvalidInputError` naming the bad field."""
    if build is None or isinstance(build, Build):
        return build
    if not isinstance(build, Mapping):
        raise InvalidInputError(
            f"build: expected a Build or a dict of commit, branch, ..., got {type(build).__name__}")
    known = list(Build.model_fields)
    for key in build:
        if key not in known:
            raise InvalidInputError(f"build: {unknown_value(key, known, what='key')}")
    try:
        return Build.model_validate(dict(build))
    except ValidationError as exc:
        raise invalid_input(exc, "build") from exc


def build_filters(branch: object, commit: object) -> tuple[str | None, str | None]:
    """The ``branch`` / ``commit`` filters of a list, checked alike by every runner: a
    string no longer than a stored one can be, or None; else
    :class:`~pagelab.InvalidInputError`."""
    return (_filter("branch", branch, MAX_BRANCH_LENGTH),
            _filter("commit", commit, MAX_COMMIT_LENGTH))


def _filter(name: str, value: object, cap: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidInputError(f"{name}: expected a non-empty string, got {value!r}"[:200])
    if len(value) > cap:
        raise InvalidInputError(f"{name}: at most {cap} characters, got {len(value)}")
    return value
