"""The password of a connection URL (PostgreSQL's, Redis's): found, and hidden wherever a
URL is printed (messages, logs, argparse's errors).

A password on the command line is readable by every local user in ``/proc/PID/cmdline``,
so the CLI refuses one there and points at the environment (docs/security.md,
"Credentials").
"""

from __future__ import annotations

import re

__all__ = ["redact_url", "url_has_password"]

#: ``scheme://user:PASSWORD@`` (up to the last ``@`` of the word: an unescaped ``@`` or
#: ``/`` in a password is hidden too) and ``?password=PASSWORD`` (libpq and redis-py both
#: read it).
_USERINFO_PASSWORD = re.compile(r"(://[^:/@\s]*):\S+@")
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&\s'\"]+", re.IGNORECASE)


def redact_url(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ``***``."""
    return _QUERY_PASSWORD.sub(r"\1***", _USERINFO_PASSWORD.sub(r"\1:***@", text))


def url_has_password(url: str) -> bool:
    """Whether ``url`` carries a password (in its user info or as ``?password=``): the
    same reading as :func:`redact_url`'s, so what one finds the other hides."""
    return redact_url(url) != url
