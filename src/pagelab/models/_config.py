"""The Lighthouse config object of the spec."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from ._enums import Connection, HttpVersion, ThrottlingMethod
from ._types import MAX_STRING_LENGTH, BoundedStr

__all__ = [
    "MAX_BLACKLIST",
    "MAX_MATCHED_URL_LENGTH",
    "MAX_PATTERN_CHARACTERS",
    "MAX_PATTERN_WILDCARDS",
    "MAX_WHITELIST",
    "LighthouseConfig",
    "url_pattern_matches",
]

MAX_WHITELIST = 5
MAX_BLACKLIST = 10
#: Wildcards one URL pattern may hold. Matching is linear in any case (see
#: url_pattern_matches); the cap keeps patterns readable and each check cheap.
MAX_PATTERN_WILDCARDS = 8
#: The characters of one list's patterns that contain ``*``, together: matching one URL
#: costs at most (these characters x the URL's length), so the total is bounded at
#: creation (issue 22, finding 5). Plain patterns (a substring search) do not count.
MAX_PATTERN_CHARACTERS = 512
#: Longer URLs are not matched against the patterns at all: with a blacklist they are
#: blocked (``url-too-long``); the driver matches only up to this length.
MAX_MATCHED_URL_LENGTH = 4096

# RFC 6265 cookie-name: a token, i.e. visible ASCII without separators.
_COOKIE_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


# Searched in C instead of a Python loop over the characters (these checks run for every
# config a list page holds). Python's "\s" is exactly str.isspace(), checked over every code
# point; the control characters are those _check_header_value refuses.
_WHITE_SPACE = re.compile(r"\s")
_HEADER_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _check_url_pattern(value: str) -> str:
    if not value or _WHITE_SPACE.search(value):
        raise ValueError("URL pattern must be non-empty and contain no white space")
    if not value.strip("*"):
        raise ValueError("URL pattern must contain more than wildcards")
    if value.count("*") > MAX_PATTERN_WILDCARDS:
        raise ValueError(f"URL pattern must contain at most {MAX_PATTERN_WILDCARDS} '*'")
    return value


def _bounded_pattern_list(values: list[str]) -> list[str]:
    work = sum(len(value) for value in values if "*" in value)
    if work > MAX_PATTERN_CHARACTERS:
        raise ValueError(
            f"the patterns with '*' have {work} characters together; at most "
            f"{MAX_PATTERN_CHARACTERS} (each URL is matched against every one of them)"
        )
    return values


def _check_cookie(value: str) -> str:
    name, sep, cookie_value = value.partition("=")
    name = name.strip()
    if not sep or not _COOKIE_NAME.match(name):
        raise ValueError("cookie must be 'name=value' with a token as name")
    if ";" in cookie_value or "\r" in cookie_value or "\n" in cookie_value:
        raise ValueError("cookie value must not contain ';' or line breaks")
    return value


def _check_header_value(value: str) -> str:
    # Sent as an HTTP header: a line break would start another header (header injection).
    if _HEADER_CONTROL.search(value):
        raise ValueError("must not contain line breaks or other control characters")
    return value


# Patterns for the OpenAPI document: each a subset of what the validators accept.
# (URL patterns: printable ASCII other than '*', at most 8 '*'; "\s" is read differently
# by JSON Schema's ECMA regexes and by Python's str.isspace, so it is not used.)
_URL_PATTERN_SCHEMA = r"^\*{0,4}[!-)+-~]+(\*[!-)+-~]*){0,4}$"
_HEADER_TEXT_SCHEMA = r"^[^\x00-\x08\x0a-\x1f\x7f]*$"
_COOKIE_SCHEMA = r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+=[^;\x00-\x1f\x7f]*$"

UrlPattern = Annotated[
    BoundedStr, Field(json_schema_extra={"pattern": _URL_PATTERN_SCHEMA}),
    AfterValidator(_check_url_pattern),
]
HeaderText = Annotated[
    BoundedStr, Field(json_schema_extra={"pattern": _HEADER_TEXT_SCHEMA}),
    AfterValidator(_check_header_value),
]
Cookie = Annotated[
    BoundedStr, Field(json_schema_extra={"pattern": _COOKIE_SCHEMA}),
    AfterValidator(_check_cookie),
]


def url_pattern_matches(pattern: str, url: str) -> bool:
    """Whether ``url`` matches ``pattern``, where ``*`` matches any run of characters.

    A pattern without ``*`` matches any URL that contains it, as Chromium's
    ``Network.setBlockedURLs`` does.

    A greedy two-pointer match (the driver's ``wildcardMatches`` is the same algorithm):
    on a mismatch it goes back only to the last ``*`` seen, so the cost is at most
    O(len(pattern) x len(url)), never the exponential time a backtracking regex takes on
    ``*a*a*a*a*a*a*b``.
    """
    if "*" not in pattern:
        return pattern in url
    p = t = 0
    star = -1
    resume = 0
    while t < len(url):
        if p < len(pattern) and pattern[p] != "*" and pattern[p] == url[t]:
            p += 1
            t += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, resume = p, t
            p += 1
        elif star >= 0:
            # Let the last '*' swallow one more character and try again from there.
            p = star + 1
            resume += 1
            t = resume
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


# Plain-argument before-validators, one per field (no ValidationInfo built per call): every
# report a list page holds has a config, so they run 400 000 times per 100 000 reports on
# the ApiRunner list path (benchmarks/frames.py).
def _null_is(default: Any) -> Callable[[Any], Any]:
    """A before-validator reading null as ``default`` (the field's own default)."""

    def read(value: Any) -> Any:
        return default if value is None else value

    return read


def _http_version(value: Any) -> Any:
    # Null is the default; JSON clients send 2 or 1.1 as numbers as often as strings.
    if value.__class__ is str:
        return value
    if value is None:
        return HttpVersion.HTTP_2
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {2: "2", 1.1: "1.1"}.get(value, str(value))
    return value


#: Lighthouse categories a run may ask for (performance is always run; naming it asks for
#: the whole category, bf-cache included, which the default run skips).
LighthouseCategory = Literal[
    "performance", "accessibility", "best-practices", "seo", "agentic-browsing"
]


def _sorted_categories(value: list[str] | None) -> list[str] | None:
    # One order, so equal configs are equal and the engine's config cache is shared.
    return None if not value else sorted(set(value))


class LighthouseConfig(BaseModel):
    """Options of one Lighthouse run. Every field is optional and accepts null.

    Null is read as "the default": ``throttling_method`` ``simulated``, ``http_version``
    ``"2"``, ``video`` and ``adblock`` false, the rest unset.
    """

    model_config = ConfigDict(extra="ignore", frozen=True, str_max_length=MAX_STRING_LENGTH)

    connection: Connection | None = None
    throttling_method: Annotated[
        ThrottlingMethod, BeforeValidator(_null_is(ThrottlingMethod.SIMULATED))
    ] = ThrottlingMethod.SIMULATED
    http_version: Annotated[HttpVersion, BeforeValidator(_http_version)] = HttpVersion.HTTP_2
    video: Annotated[bool, BeforeValidator(_null_is(False))] = False
    adblock: Annotated[bool, BeforeValidator(_null_is(False))] = False
    user_agent: HeaderText | None = None
    auth_username: HeaderText | None = None
    auth_password: HeaderText | None = None
    cookies: list[Cookie] | None = None
    whitelist: Annotated[
        list[UrlPattern], Field(max_length=MAX_WHITELIST), AfterValidator(_bounded_pattern_list)
    ] | None = None
    blacklist: Annotated[
        list[UrlPattern], Field(max_length=MAX_BLACKLIST), AfterValidator(_bounded_pattern_list)
    ] | None = None
    #: Categories run besides performance (Lighthouse CI assertions on accessibility, best
    #: practices or SEO need them); null or empty: performance only, the fast default.
    categories: Annotated[
        list[LighthouseCategory] | None, AfterValidator(_sorted_categories)
    ] = None

    @property
    def has_secrets(self) -> bool:
        return bool(self.auth_password or self.cookies)

    def masked(self) -> LighthouseConfig:
        """A copy safe to echo or store: password and cookie values replaced by ``***``."""
        if not self.has_secrets:
            return self
        cookies = (
            [f"{c.partition('=')[0]}=***" for c in self.cookies] if self.cookies else self.cookies
        )
        password = "***" if self.auth_password else self.auth_password
        return self.model_copy(update={"auth_password": password, "cookies": cookies})
