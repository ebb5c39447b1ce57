"""Secrets (passwords, cookie values, typed ``secret=True`` text) in every form a page or a
browser writes them, as one regular expression: the Python side scrubs messages with it, the
Node driver (``node/driver.mjs``) every string of the LHR, flow result and HAR.

A page does not keep a password as typed: a GET form puts ``Tr0ub4dor+%263+%40x`` in the
URL, markup holds ``Tr0ub4dor &amp;3``, a JSON text ``\\u0026``. Each character of a secret
is matched in any of its forms, so mixed spellings (``+`` for one space, ``%20`` for the
next) are found too (issue 34, point 2; docs/security.md lists the forms).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from html.entities import html5

__all__ = ["SecretScrubber"]

#: What a scrubbed secret reads as.
MASK = "***"

#: The short JSON escapes (RFC 8259, section 7), beside ``\\uXXXX`` for any character.
_JSON_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f",
                       "\n": "\\n", "\r": "\\r", "\t": "\\t"}


@cache
def _entity_names() -> dict[str, tuple[str, ...]]:
    """Character -> the HTML named references that stand for it (``&`` -> ``amp;``,
    ``AMP``...), the legacy ones without ``;`` included."""
    names: dict[str, list[str]] = {}
    for name, value in html5.items():
        if len(value) == 1:
            names.setdefault(value, []).append(name)
    return {char: tuple(found) for char, found in names.items()}


def _literal(text: str) -> str:
    """``text`` as a pattern Python's ``re`` and JavaScript's ``RegExp`` both read literally:
    ASCII punctuation as ``\\xHH`` (no identity escapes, which differ between the two)."""
    return "".join(c if c.isalnum() or not c.isascii() else f"\\x{ord(c):02x}" for c in text)


def _hex(digits: str) -> str:
    """Hex digits matched in either case (``2f`` -> ``2[Ff]``)."""
    return "".join(f"[{d.upper()}{d.lower()}]" if d.isalpha() else d for d in digits)


def _forms(char: str) -> list[str]:
    """Patterns of every spelling of one character: as itself, percent-encoded (UTF-8; a
    space also ``+``), as an HTML character reference, as a JSON escape."""
    code = ord(char)
    forms = [_literal(char)]
    if char == " ":
        forms.append(_literal("+"))
    forms.append("".join(f"%{_hex(f'{byte:02x}')}" for byte in char.encode("utf-8")))
    forms.append(f"&#0*{code};")
    forms.append(f"&#[Xx]0*{_hex(f'{code:x}')};")
    forms += [_literal(f"&{name}") for name in _entity_names().get(char, ())]
    if char in _JSON_SHORT_ESCAPES:
        forms.append(_literal(_JSON_SHORT_ESCAPES[char]))
    # JSON escapes UTF-16 code units: a character beyond the BMP is a surrogate pair.
    units = char.encode("utf-16-be", "surrogatepass")
    forms.append("".join(_literal("\\") + "u" + _hex(units[i:i + 2].hex())
                         for i in range(0, len(units), 2)))
    return forms


def secret_pattern(secret: str) -> str:
    """The pattern of ``secret`` in any of its forms (each character in any of its own)."""
    return "".join(f"(?:{'|'.join(_forms(char))})" for char in secret)


@dataclass(frozen=True, slots=True)
class SecretScrubber:
    """Replaces every secret of a run, in any form, by ``***``.

    :attr:`pattern` is the one expression (empty: nothing to scrub), written in the common
    subset of Python's and JavaScript's regular expressions: the driver compiles the same
    text with ``new RegExp(pattern, "g")``.
    """

    pattern: str = ""

    @classmethod
    def of(cls, secrets: Iterable[str]) -> SecretScrubber:
        # Longest first: a secret holding another is scrubbed whole, not around it.
        unique = sorted({s for s in secrets if s}, key=lambda s: (-len(s), s))
        return cls("|".join(secret_pattern(s) for s in unique))

    def scrub(self, text: str) -> str:
        # re's own cache keeps the compiled pattern between the messages of a run.
        return re.sub(self.pattern, MASK, text) if self.pattern else text
