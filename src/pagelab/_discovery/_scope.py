"""Which URLs a scan may keep: the start URL's origin and path prefix, and the user's
include/exclude globs on the path."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from pagelab._exceptions import InvalidInputError

__all__ = ["PathGlobs", "Scope", "glob_pattern", "page_url"]


def page_url(url: str) -> str | None:
    """``url`` without its fragment when it is an absolute http(s) URL with a host, else
    None (``mailto:``, ``javascript:``, ``ftp:``, a relative or malformed URL)."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path or "/", parts.query, ""))


@dataclass(frozen=True, slots=True)
class Scope:
    """The origin (scheme, host, port) and path prefix every kept URL shares.

    The prefix is the start URL's path without its trailing slash: ``/shop`` keeps
    ``/shop`` and everything under ``/shop/``, not ``/shopping``."""

    origin: str
    prefix: str

    @classmethod
    def of(cls, start_url: str) -> Scope:
        url = page_url(start_url) if isinstance(start_url, str) else None
        if url is None:
            raise InvalidInputError(
                f"start_url: expected an absolute http:// or https:// URL, got {start_url!r}")
        parts = urlsplit(url)
        return cls(_origin(url), parts.path.rstrip("/"))

    def contains(self, url: str) -> bool:
        if _origin(url) != self.origin:
            return False
        path = urlsplit(url).path
        return not self.prefix or path == self.prefix or path.startswith(self.prefix + "/")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}[parts.scheme]
    port = parts.port or default
    host = (parts.hostname or "").lower()
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + ("" if port == default else f":{port}")


@functools.cache
def glob_pattern(glob: str) -> re.Pattern[str]:
    """A path glob as a regular expression: ``*`` is any run of characters within one
    segment (no ``/``), ``**`` any run including ``/``, ``?`` one character; the glob
    matches the whole path."""
    if not glob.startswith("/"):
        raise InvalidInputError(f"path glob {glob!r}: must start with '/' (a URL path)")
    out = []
    for token in re.split(r"(\*\*|\*|\?)", glob):
        out.append({"**": ".*", "*": "[^/]*", "?": "[^/]"}.get(token, re.escape(token)))
    return re.compile("".join(out))


class PathGlobs:
    """``include`` and ``exclude`` globs: a path is kept when it matches an include (or
    none was given) and no exclude."""

    def __init__(self, include: str | Sequence[str] | None,
                 exclude: str | Sequence[str] | None) -> None:
        self.include = [glob_pattern(g) for g in glob_list(include, "include")]
        self.exclude = [glob_pattern(g) for g in glob_list(exclude, "exclude")]

    def keeps(self, url: str) -> bool:
        path = urlsplit(url).path
        if self.include and not any(p.fullmatch(path) for p in self.include):
            return False
        return not any(p.fullmatch(path) for p in self.exclude)


def glob_list(value: str | Sequence[str] | None, name: str) -> list[str]:
    """``include``/``exclude`` as a list of globs (one string is one glob)."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    for item in items:
        if not isinstance(item, str):
            raise InvalidInputError(f"{name}: expected path globs (strings), got {item!r}")
    return items
