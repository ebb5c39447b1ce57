"""Lighthouse's budget resource types: the one list frames and budgets share."""

from __future__ import annotations

__all__ = ["BUDGET_RESOURCE_TYPES", "RESOURCE_TYPES", "resource_type"]

#: Lighthouse's budget resource types (``resource-summary``), in its order.
RESOURCE_TYPES: tuple[str, ...] = (
    "document", "script", "stylesheet", "image", "media", "font", "other",
)
#: What a resource budget may limit: the types, plus the two sums ``resource-summary`` adds.
BUDGET_RESOURCE_TYPES: tuple[str, ...] = (*RESOURCE_TYPES, "third-party", "total")

# Chromium's request types Lighthouse sorts into its budget types; the rest is "other".
_BUDGET_TYPES = {
    "Document": "document", "Script": "script", "Stylesheet": "stylesheet",
    "Image": "image", "Media": "media", "Font": "font",
}


def resource_type(chromium_type: object) -> str:
    """Lighthouse's budget type (``script``) of a Chromium resource type (``Script``)."""
    return _BUDGET_TYPES.get(str(chromium_type), "other")
