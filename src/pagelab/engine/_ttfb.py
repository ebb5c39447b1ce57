"""The TTFB probe: one GET per location with libcurl (pycurl), timed by libcurl itself.

Every probe opens a fresh connection on a fresh ``Curl`` handle and resolves the name
again, so ``dns_lookup``, ``tcp_connection`` and ``tls_handshake`` are never the ~0 of a
reused connection. Timings come from libcurl's ``*_TIME_T`` infos (integer microseconds,
cumulative from the start of the request) and are reported in milliseconds.
"""

from __future__ import annotations

import errno
import math
import os
import time
from urllib.parse import urlsplit

import pycurl
from pydantic import TypeAdapter, ValidationError

from pagelab._exceptions import InvalidInputError
from pagelab.catalog import ttfb_region
from pagelab.models import (
    PageUrl,
    TTFBData,
    TTFBError,
    TTFBLocationResult,
    TTFBResult,
    TTFBStatus,
    TTFBTimings,
    validation_message,
)

from ._targets import IPAddress, TargetPolicy, enforced, resolve

__all__ = ["TTFB_ERROR_CODES", "location_result", "probe", "run_ttfb"]

#: Every ``TTFBError.code`` a probe can report.
TTFB_ERROR_CODES = (
    "CONNECTION_REFUSED",
    "DNS_FAILURE",
    "TLS_FAILURE",
    "TIMEOUT",
    "PROBE_FAILED",
    "TARGET_REFUSED",
)

_USER_AGENT = "pagelab-ttfb/0.1 (libcurl)"

# libcurl result codes that mean the TLS layer failed: handshake, certificate verification,
# CA file, ciphers, pinning, OCSP stapling. 98 (CURLE_SSL_CLIENTCERT) and 101
# (CURLE_ECH_REQUIRED) are newer than the constants pycurl exports.
_TLS_ERRORS = frozenset(
    {
        pycurl.E_SSL_CONNECT_ERROR,
        pycurl.E_SSL_ENGINE_NOTFOUND,
        pycurl.E_SSL_ENGINE_SETFAILED,
        pycurl.E_SSL_CERTPROBLEM,
        pycurl.E_SSL_CIPHER,
        pycurl.E_PEER_FAILED_VERIFICATION,
        pycurl.E_USE_SSL_FAILED,
        pycurl.E_SSL_ENGINE_INITFAILED,
        pycurl.E_SSL_CACERT_BADFILE,
        pycurl.E_SSL_SHUTDOWN_FAILED,
        pycurl.E_SSL_CRL_BADFILE,
        pycurl.E_SSL_ISSUER_ERROR,
        pycurl.E_SSL_PINNEDPUBKEYNOTMATCH,
        pycurl.E_SSL_INVALIDCERTSTATUS,
        98,
        101,
    }
)

_HTTP_VERSIONS: dict[int, float] = {
    pycurl.CURL_HTTP_VERSION_1_0: 1.0,
    pycurl.CURL_HTTP_VERSION_1_1: 1.1,
    pycurl.CURL_HTTP_VERSION_2_0: 2.0,
    pycurl.CURL_HTTP_VERSION_3: 3.0,
}

_PAGE_URL: TypeAdapter[str] = TypeAdapter(PageUrl)


def _ms(microseconds: int) -> float:
    return round(microseconds / 1000, 3)


class _HeaderCollector:
    """Collects the header lines of the last response libcurl reports.

    Interim responses (``100 Continue``, ``103 Early Hints``) come first with their own
    status line, so a status line starts the collection afresh.
    """

    def __init__(self) -> None:
        self.headers: dict[str, str] = {}
        self._last: str | None = None

    def __call__(self, line: bytes) -> None:
        # Header bytes are ISO-8859-1 by HTTP's definition; latin-1 never fails to decode.
        text = line.decode("latin-1").rstrip("\r\n")
        if text.startswith("HTTP/"):
            self.headers = {}
            self._last = None
        elif text[:1] in (" ", "\t") and self._last is not None:
            # Obsolete line folding (RFC 7230 3.2.4): the line continues the previous value.
            self.headers[self._last] += " " + text.strip()
        elif ":" in text:
            name, _, value = text.partition(":")
            name = name.strip().lower()
            value = value.strip()
            previous = self.headers.get(name)
            self.headers[name] = value if previous is None else f"{previous}, {value}"
            self._last = name


def _discard(_chunk: bytes) -> None:
    """Body sink: libcurl reads the whole body (``total`` includes it), we keep none of it."""


def _classify(code: int, message: str, os_errno: int) -> TTFBError:
    detail = message or "unknown libcurl error"
    if os_errno:
        detail += f" [{os.strerror(os_errno)}]"
    detail += f" (libcurl error {code})"
    # errno 0: libcurl kept no errno (several addresses tried); refusal is the usual cause.
    if code == pycurl.E_COULDNT_CONNECT and os_errno in (0, errno.ECONNREFUSED):
        kind = "CONNECTION_REFUSED"
    elif code == pycurl.E_COULDNT_RESOLVE_HOST:
        kind = "DNS_FAILURE"
    elif code in _TLS_ERRORS:
        kind = "TLS_FAILURE"
    elif code == pycurl.E_OPERATION_TIMEDOUT:
        kind = "TIMEOUT"
    else:
        # Includes CURLE_COULDNT_CONNECT for an unreachable host or network: the server
        # did not refuse, the packets never got there.
        kind = "PROBE_FAILED"
    return TTFBError(code=kind, message=detail)


def probe(
    url: str,
    *,
    timeout: float = 30.0,
    verify_tls: bool = True,
    ca_file: str | None = None,
    policy: TargetPolicy | None = None,
) -> tuple[TTFBData | None, TTFBError | None]:
    """Time one ``GET url`` from this machine; returns ``(data, None)`` or ``(None, error)``.

    The request uses a new libcurl handle with a fresh connection and a fresh DNS lookup
    (``FRESH_CONNECT``, ``FORBID_REUSE``, ``DNS_CACHE_TIMEOUT`` 0), follows no redirect (a
    301 is the measured answer), ignores ``*_proxy`` environment variables (a proxy would
    be measured instead of the server), sends no ``Accept-Encoding`` (like the curl CLI)
    and offers HTTP/2 over TLS (``CURL_HTTP_VERSION_2TLS``), so ``http_version`` is what
    the server negotiated: 1.0, 1.1, 2.0 or 3.0. The body is read and discarded; ``total``
    includes it, and ``timeout`` (seconds) bounds the whole transfer.

    Timings, in milliseconds rounded to 3 decimals, from libcurl's cumulative times:
    ``dns_lookup`` = namelookup, ``tcp_connection`` = connect - namelookup,
    ``tls_handshake`` = appconnect - connect (0 for http), ``server_processing`` =
    starttransfer - pretransfer, ``ttfb`` = starttransfer, ``total`` = total.

    ``response_headers`` are those of the final response (not of a ``100 Continue``), with
    lower-case names; a repeated header's values are joined with ``", "``. Every value is
    kept as the string the server sent, including numeric-looking ones such as
    ``content-length``: converting would be a guess (``"007"``, an ETag of digits) and a
    consumer gets one type to handle.

    Failures never raise; the error's ``code`` is ``CONNECTION_REFUSED``, ``DNS_FAILURE``,
    ``TLS_FAILURE`` (handshake or certificate), ``TIMEOUT`` or ``PROBE_FAILED`` (anything
    else, e.g. an unreachable network or a malformed reply), and its ``message`` carries
    libcurl's. Any HTTP status, 4xx and 5xx included, is a successful probe: the server
    answered.

    ``verify_tls=False`` skips certificate and host name checks; ``ca_file`` trusts that
    PEM bundle instead of the system's (both are meant for tests with a self-signed
    certificate). A non-positive or non-finite ``timeout`` raises
    :class:`~pagelab.InvalidInputError`: that is a caller's bug, not a probe failure.

    With a restricting ``policy`` (the server's SSRF guard) the host is resolved here, every
    address is checked, and libcurl connects to the checked address only
    (``CURLOPT_CONNECT_TO`` with an empty source: whatever host libcurl itself parses from
    the URL, it cannot connect anywhere else). A refused address is the error
    ``TARGET_REFUSED`` and no connection is made. ``dns_lookup`` is then the time of that
    resolution, added to libcurl's cumulative times.
    """
    if not (math.isfinite(timeout) and timeout > 0):
        raise InvalidInputError(f"timeout: must be a positive number of seconds, got {timeout!r}")
    connect_to: str | None = None
    dns_us = 0
    guarded = enforced(policy)
    if guarded is not None:
        pinned = _pinned_address(url, guarded)
        if isinstance(pinned, TTFBError):
            return None, pinned
        address, port, dns_us = pinned
        literal = f"[{address}]" if address.version == 6 else str(address)
        connect_to = f"::{literal}:{port}"
    headers = _HeaderCollector()
    curl = pycurl.Curl()
    try:
        try:
            # Bytes, so a non-ASCII URL reaches libcurl (which handles IDN and escaping)
            # instead of failing in pycurl's ASCII conversion.
            curl.setopt(pycurl.URL, url.encode("utf-8"))
        except (ValueError, pycurl.error) as exc:  # lone surrogate, NUL byte
            return None, TTFBError(code="PROBE_FAILED", message=f"unusable URL: {exc}")
        curl.setopt(pycurl.PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
        curl.setopt(pycurl.FRESH_CONNECT, 1)
        curl.setopt(pycurl.FORBID_REUSE, 1)
        curl.setopt(pycurl.DNS_CACHE_TIMEOUT, 0)
        curl.setopt(pycurl.FOLLOWLOCATION, 0)
        curl.setopt(pycurl.PROXY, "")  # "" disables the *_proxy environment variables
        curl.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_2TLS)
        curl.setopt(pycurl.USERAGENT, _USER_AGENT)
        # No signals: DNS timeouts must not rely on SIGALRM, which breaks in threads.
        curl.setopt(pycurl.NOSIGNAL, 1)
        # libcurl reads 0 as "no timeout", so never let rounding produce it.
        curl.setopt(pycurl.TIMEOUT_MS, max(1, round(timeout * 1000)))
        curl.setopt(pycurl.HEADERFUNCTION, headers)
        curl.setopt(pycurl.WRITEFUNCTION, _discard)
        if connect_to is not None:
            curl.setopt(pycurl.CONNECT_TO, [connect_to])
        if not verify_tls:
            curl.setopt(pycurl.SSL_VERIFYPEER, 0)
            curl.setopt(pycurl.SSL_VERIFYHOST, 0)
        elif ca_file is not None:
            curl.setopt(pycurl.CAINFO, ca_file)
        try:
            curl.perform()
        except pycurl.error as exc:
            code = int(exc.args[0]) if exc.args else -1
            message = str(exc.args[1]) if len(exc.args) > 1 else ""
            return None, _classify(code, message, int(curl.getinfo(pycurl.OS_ERRNO)))

        # With a pinned address our own lookup came first: shift libcurl's cumulative times.
        namelookup = dns_us + int(curl.getinfo(pycurl.NAMELOOKUP_TIME_T))
        connect = dns_us + int(curl.getinfo(pycurl.CONNECT_TIME_T))
        appconnect = int(curl.getinfo(pycurl.APPCONNECT_TIME_T))
        appconnect = dns_us + appconnect if appconnect else 0
        pretransfer = dns_us + int(curl.getinfo(pycurl.PRETRANSFER_TIME_T))
        starttransfer = dns_us + int(curl.getinfo(pycurl.STARTTRANSFER_TIME_T))
        total = dns_us + int(curl.getinfo(pycurl.TOTAL_TIME_T))
        version = int(curl.getinfo(pycurl.INFO_HTTP_VERSION))
        status = int(curl.getinfo(pycurl.RESPONSE_CODE))
    finally:
        curl.close()

    # The differences are clamped at 0 because the model forbids negatives; libcurl's
    # times are monotonic on a fresh connection, so the clamp only guards against a
    # libcurl quirk, and appconnect is 0 when no TLS took place.
    timings = TTFBTimings(
        dns_lookup=_ms(namelookup),
        tcp_connection=_ms(max(0, connect - namelookup)),
        tls_handshake=_ms(max(0, appconnect - connect)) if appconnect else 0.0,
        server_processing=_ms(max(0, starttransfer - pretransfer)),
        ttfb=_ms(starttransfer),
        total=_ms(total),
    )
    data = TTFBData(
        timings=timings,
        http_version=_HTTP_VERSIONS.get(version, 0.0),
        http_status=status,
        response_headers=dict(headers.headers),
    )
    return data, None


def _pinned_address(url: str, policy: TargetPolicy) -> tuple[IPAddress, int, int] | TTFBError:
    """(checked address, port, lookup microseconds), or the error that stops the probe."""
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return TTFBError(code="PROBE_FAILED", message="unusable URL: the port is out of range")
    host = parts.hostname or ""
    started = time.perf_counter_ns()
    addresses = resolve(host, port)
    dns_us = (time.perf_counter_ns() - started) // 1000
    if not addresses:
        return TTFBError(code="DNS_FAILURE", message=f"the host {host!r} does not resolve")
    refused = [a for a in addresses if not policy.allows_address(a)]
    if refused:
        return TTFBError(
            code="TARGET_REFUSED",
            message=f"{host!r} resolves to {refused[0]}, an address this server does not test",
        )
    return addresses[0], port, dns_us


def location_result(
    location_id: str, location_name: str, data: TTFBData | None, error: TTFBError | None
) -> TTFBLocationResult:
    return TTFBLocationResult(
        location_id=location_id,
        location_name=location_name,
        status=TTFBStatus.SUCCESS if error is None else TTFBStatus.FAILED,
        data=data,
        error=error,
    )


def _check_url(url: str) -> None:
    try:
        _PAGE_URL.validate_python(url)
    except ValidationError as exc:
        reason = validation_message(exc, "url", limit=1)
        raise InvalidInputError(f"{reason} (got {url!r})") from None


def run_ttfb(
    url: str,
    region: str,
    *,
    timeout: float = 30.0,
    vantage: str = "local",
    policy: TargetPolicy | None = None,
) -> TTFBResult:
    """A TTFB test of ``url`` for every location of ``region``, probed one after another.

    The embedded default has a single vantage point: every location of the region is
    measured *from this machine*, so the locations differ by noise only, not by
    geography; ``vantage`` (recorded in the result) names the machine that measured. Each
    location gets its own :func:`probe` (fresh connection and DNS lookup) with TLS
    verification on. A location whose probe fails has ``status="failed"`` and an
    ``error``; the call itself raises only :class:`~pagelab.InvalidInputError`, naming
    ``url`` (not an absolute http(s) URL of at most 5000 characters), ``region`` (not a
    TTFB region id) or ``timeout``, before any request is made.
    """
    _check_url(url)
    catalog_region = ttfb_region(region)
    if not (math.isfinite(timeout) and timeout > 0):
        raise InvalidInputError(f"timeout: must be a positive number of seconds, got {timeout!r}")
    results: list[TTFBLocationResult] = []
    for location in catalog_region.locations:
        data, error = probe(url, timeout=timeout, policy=policy)
        results.append(location_result(location.id, location.name, data, error))
    return TTFBResult(url=url, region=catalog_region.id, result=results, vantage=vantage)
