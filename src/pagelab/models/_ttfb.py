"""TTFB test results. Timings are in milliseconds."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ._display import ttfb_html, ttfb_text
from ._enums import TTFBStatus

__all__ = ["TTFBData", "TTFBError", "TTFBLocationResult", "TTFBResult", "TTFBTimings"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TTFBTimings(_Model):
    """libcurl phase durations in milliseconds (see ``docs/concepts.md``).

    ``dns_lookup`` = namelookup; ``tcp_connection`` = connect - namelookup;
    ``tls_handshake`` = appconnect - connect (0 for http); ``server_processing`` =
    starttransfer - pretransfer; ``ttfb`` = starttransfer; ``total`` = total.
    """

    dns_lookup: float = Field(ge=0)
    tcp_connection: float = Field(ge=0)
    tls_handshake: float = Field(ge=0)
    server_processing: float = Field(ge=0)
    ttfb: float = Field(ge=0)
    total: float = Field(ge=0)


class TTFBData(_Model):
    timings: TTFBTimings
    #: 1.0, 1.1, 2 or 3.
    http_version: float
    http_status: int
    #: Lower-case header names; repeated headers joined with ", ".
    response_headers: dict[str, str | int | float] = Field(default_factory=dict)


class TTFBError(_Model):
    """Why a probe failed: ``CONNECTION_REFUSED``, ``DNS_FAILURE``, ``TLS_FAILURE``,
    ``TIMEOUT`` or ``PROBE_FAILED``."""

    code: str
    message: str


class TTFBLocationResult(_Model):
    location_id: str
    location_name: str
    status: TTFBStatus
    data: TTFBData | None = None
    error: TTFBError | None = None


class TTFBResult(_Model):
    url: str
    region: str
    result: list[TTFBLocationResult]
    #: pagelab extension: which machine measured it (``"local"`` for this machine).
    vantage: str | None = None

    def _repr_html_(self) -> str:
        """Jupyter's rich display: a table of the locations' timings (ms)."""
        return ttfb_html(self)

    def __str__(self) -> str:
        return ttfb_text(self)
