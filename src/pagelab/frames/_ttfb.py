"""TTFB results as a DataFrame: one row per (probe, location).

:func:`ttfb_frame` columns (times in milliseconds, libcurl's phases as in
:class:`pagelab.models.TTFBTimings`; NaN where the probe failed):

=======================  ========  ========================================================
column                   dtype     meaning
=======================  ========  ========================================================
probe                    Int64     which result of the input (0-based): repeats of one test
url                      string    probed URL
region                   string    TTFB region id (``europe``)
location                 string    TTFB location id (``de-west``)
location_name            string    its city (``Frankfurt``)
status                   category  ``success`` or ``failed``
error_code               string    ``CONNECTION_REFUSED``, ``TIMEOUT``... when failed
dns_ms                   float64   DNS lookup
tcp_ms                   float64   TCP connection
tls_ms                   float64   TLS handshake (0 for ``http``)
server_processing_ms     float64   request sent to first byte
ttfb_ms                  float64   time to first byte (from the start)
content_transfer_ms      float64   first byte to last byte (``total - ttfb``)
total_ms                 float64   the whole exchange
http_version             float64   1.0, 1.1, 2 or 3
http_status              Int64     the response's status code
vantage                  string    which machine measured (``local``)
=======================  ========  ========================================================
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from pagelab._exceptions import InvalidInputError
from pagelab.models import TTFBResult, TTFBStatus

__all__ = ["TTFB_COLUMNS", "ttfb_frame"]

#: Column -> dtype of :func:`ttfb_frame`, in column order.
TTFB_COLUMNS: dict[str, Any] = {
    "probe": "Int64",
    "url": "string",
    "region": "string",
    "location": "string",
    "location_name": "string",
    "status": pd.CategoricalDtype([s.value for s in TTFBStatus]),
    "error_code": "string",
    "dns_ms": "float64",
    "tcp_ms": "float64",
    "tls_ms": "float64",
    "server_processing_ms": "float64",
    "ttfb_ms": "float64",
    "content_transfer_ms": "float64",
    "total_ms": "float64",
    "http_version": "float64",
    "http_status": "Int64",
    "vantage": "string",
}

_NAN = float("nan")


def ttfb_frame(result: TTFBResult | Iterable[TTFBResult]) -> pd.DataFrame:
    """One row per location of a :class:`~pagelab.TTFBResult` (or of each result of a list,
    ``probe`` telling the repeats apart); columns in :data:`TTFB_COLUMNS`, times in ms."""
    results = [result] if isinstance(result, TTFBResult) else _results(result)
    cols: dict[str, list[Any]] = {name: [] for name in TTFB_COLUMNS}
    for index, item in enumerate(results):
        for loc in item.result:
            data = loc.data
            timings = data.timings if data is not None else None
            cols["probe"].append(index)
            cols["url"].append(item.url)
            cols["region"].append(item.region)
            cols["location"].append(loc.location_id)
            cols["location_name"].append(loc.location_name)
            cols["status"].append(loc.status.value)
            cols["error_code"].append(loc.error.code if loc.error is not None else None)
            cols["dns_ms"].append(timings.dns_lookup if timings else _NAN)
            cols["tcp_ms"].append(timings.tcp_connection if timings else _NAN)
            cols["tls_ms"].append(timings.tls_handshake if timings else _NAN)
            cols["server_processing_ms"].append(timings.server_processing if timings else _NAN)
            cols["ttfb_ms"].append(timings.ttfb if timings else _NAN)
            cols["content_transfer_ms"].append(
                max(timings.total - timings.ttfb, 0.0) if timings else _NAN
            )
            cols["total_ms"].append(timings.total if timings else _NAN)
            cols["http_version"].append(data.http_version if data is not None else _NAN)
            cols["http_status"].append(data.http_status if data is not None else None)
            cols["vantage"].append(item.vantage)
    return pd.DataFrame(
        {name: pd.Series(cols[name], dtype=dtype) for name, dtype in TTFB_COLUMNS.items()},
        columns=list(TTFB_COLUMNS),
    )


def _results(items: Iterable[TTFBResult]) -> list[TTFBResult]:
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise InvalidInputError(
            f"expected a TTFBResult or a list of them, got {type(items).__name__}"
        )
    out = list(items)
    for item in out:
        if not isinstance(item, TTFBResult):
            raise InvalidInputError(
                f"expected a TTFBResult or a list of them, got a list holding "
                f"{type(item).__name__}"
            )
    return out
