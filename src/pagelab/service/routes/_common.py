"""Pieces shared by the routers."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel

from pagelab.models import MAX_STRING_LENGTH

from .._errors import ApiProblem

__all__ = ["MAX_ID_LENGTH", "ListResponse", "not_found"]

#: The spec's limit for path ids: a longer id cannot exist, so it is a 404.
MAX_ID_LENGTH = MAX_STRING_LENGTH

ItemT = TypeVar("ItemT")


class ListResponse(BaseModel, Generic[ItemT]):
    """``{"data": [...]}``, the envelope of every list."""

    data: list[ItemT]


def not_found(what: str, id: str) -> ApiProblem:
    shown = id if len(id) <= 100 else f"{id[:100]}…"
    return ApiProblem(404, f"no {what} with id {shown!r}")
