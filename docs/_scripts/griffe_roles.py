"""A griffe extension for the API reference: the docstrings' Sphinx roles as inline code.

pagelab's docstrings cross-reference with Sphinx roles (:func:`pagelab.measure`,
:class:`~pagelab.Results`), which Markdown would show raw, colons and all. This extension,
loaded by mkdocstrings (``extensions:`` in mkdocs.yml), rewrites each role to the inline code
Sphinx would print: the target as written, or its last part after ``~``. The docstrings stay
as they are (the source is the truth; pydoc and IDEs read them as they are).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

#: ``:role:`target``` or ``:py:role:`target```, with Sphinx's ``~`` (last part only) and
#: ``!`` (no link) prefixes.
ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj|const|ref):`([!~]?)([^`]+)`")


def plain_roles(text: str) -> str:
    """Every Sphinx role of ``text`` as inline code."""

    def replace(match: re.Match[str]) -> str:
        prefix, target = match.group(1), match.group(2)
        if "<" in target and target.endswith(">"):  # :ref:`title <label>`
            return f"`{target.split('<', 1)[0].strip()}`"
        shown = target.rsplit(".", 1)[-1] if prefix == "~" else target
        return f"`{shown}`"

    return ROLE.sub(replace, text)


class SphinxRolesAsCode(griffe.Extension):
    """Rewrites the roles of every docstring griffe loads."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        # Once the tree is complete: module docstrings included.
        if obj.docstring is not None:
            obj.docstring.value = plain_roles(obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        # The package's own docstring (on_object does not visit the root).
        self.on_object(obj=pkg)
