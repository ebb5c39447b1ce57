"""Pieces shared by the routers."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel

from pagelab.models import MAX_STRING_LENGTH

from .._errors import ApiProblem
from .._ratelimit import ConcurrencyGate

__all__ = ["MAX_ID_LENGTH", "ListResponse", "gate_refusal", "not_found"]

#: The spec's limit for path ids: a longer id cannot exist, so it is a 404.
MAX_ID_LENGTH = MAX_STRING_LENGTH

ItemT = TypeVar("ItemT")


class ListResponse(BaseModel, Generic[ItemT]):
    """``{"data": [...]}``, the envelope of every list."""

    data: list[ItemT]


def not_found(what: str, id: str) -> ApiProblem:
    shown = id if len(id) <= 100 else f"{id[:100]}…"
    return ApiProblem(404, f"no {what} with id {shown!r}")


def gate_refusal(gate: ConcurrencyGate, bound: str, what: tuple[str, str],
                 retry_after_s: int) -> ApiProblem:
    """The answer when ``gate`` refused a request (``what``: the noun, singular and
    plural): the key's own bound is the caller's to wait for (429); the server's,
    everyone's (503). Both with ``Retry-After``."""
    def counted(n: int) -> str:
        return f"{n} {what[0] if n == 1 else what[1]}"

    status, reached = (
        (429, f"at most {counted(gate.per_caller)} of one key run at once")
        if bound == "caller"
        else (503, f"the server runs {counted(gate.total)} already")
    )
    return ApiProblem(status, f"{reached}; retry in {retry_after_s} s",
                      headers={"Retry-After": str(retry_after_s)})
