"""Reference lists, credits and the error body."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["CreditPool", "Credits", "ErrorBody", "LocationInfo", "TTFBLocation", "TTFBRegion"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class LocationInfo(_Model):
    """An entry of ``GET /v1/locations``."""

    id: str
    name: str
    full_name: str
    region: str


class TTFBLocation(_Model):
    id: str
    name: str


class TTFBRegion(_Model):
    """An entry of ``GET /v1/ttfb-regions``."""

    id: str
    name: str
    locations: list[TTFBLocation]


class CreditPool(_Model):
    available_credits: int
    available_paid_credits: int


class Credits(_Model):
    lighthouse: CreditPool
    ttfb: CreditPool
    credits_refill_date: str


class ErrorBody(_Model):
    """The body of every error response: a stable ``code`` and a readable ``message``."""

    code: str
    message: str
