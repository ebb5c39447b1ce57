"""The TTFB probe against real loopback servers (no mocks): timings, HTTPS, failures."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

from fixtures_http import (
    FixtureServer,
    SelfSignedCert,
    SilentServer,
    closed_port,
    make_self_signed_cert,
    server_tls_context,
)
from pagelab._exceptions import InvalidInputError
from pagelab.catalog import TTFB_REGIONS
from pagelab.engine._ttfb import TTFB_ERROR_CODES, probe, run_ttfb
from pagelab.models import TTFBData, TTFBError, TTFBStatus


@pytest.fixture(scope="module")
def http_server() -> Iterator[FixtureServer]:
    with FixtureServer() as server:
        yield server


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> SelfSignedCert:
    return make_self_signed_cert(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def https_server(cert: SelfSignedCert) -> Iterator[FixtureServer]:
    with FixtureServer(server_tls_context(cert)) as server:
        yield server


def _ok(result: tuple[TTFBData | None, TTFBError | None]) -> TTFBData:
    data, error = result
    assert error is None, error
    assert data is not None
    return data


def _failed(result: tuple[TTFBData | None, TTFBError | None]) -> TTFBError:
    data, error = result
    assert data is None
    assert error is not None
    assert error.code in TTFB_ERROR_CODES
    return error


# --- successful probes ---------------------------------------------------------------


def test_delayed_first_byte_is_server_processing(http_server: FixtureServer) -> None:
    # The delay bounds every probe from below; a busy shared machine can only add to it,
    # so the tightest of three is held to the 50 ms ceiling.
    probes = [_ok(probe(http_server.url("/delay/200"))) for _ in range(3)]
    assert all(p.timings.server_processing >= 200 for p in probes)
    data = min(probes, key=lambda p: p.timings.server_processing)
    t = data.timings
    assert 200 <= t.server_processing <= 250
    assert t.ttfb >= 200
    assert t.ttfb >= t.dns_lookup + t.tcp_connection + t.server_processing - 0.01
    assert t.total >= t.ttfb
    assert t.tls_handshake == 0
    assert data.http_status == 200
    assert data.http_version == 1.1


def test_timings_are_milliseconds_with_three_decimals(http_server: FixtureServer) -> None:
    t = _ok(probe(http_server.url("/"))).timings
    for value in t.model_dump().values():
        assert value >= 0
        assert round(value, 3) == value
    # A loopback request with no server delay: a few ms at most (the 200 ms test shows ms).
    assert t.total < 1000


def test_total_includes_the_body(http_server: FixtureServer) -> None:
    t = _ok(probe(http_server.url("/slow-body/150"))).timings
    assert t.server_processing < 100
    assert t.total - t.ttfb >= 140


def test_each_probe_opens_a_new_connection() -> None:
    with FixtureServer() as server:
        for _ in range(3):
            _ok(probe(server.url("/")))
        assert server.requests == 3
        assert server.connections == 3


def test_response_headers_lower_case_and_joined(http_server: FixtureServer) -> None:
    headers = _ok(probe(http_server.url("/headers"))).response_headers
    assert headers["set-cookie"] == "a=1, b=2"
    assert headers["x-fixture"] == "yes"
    assert headers["content-type"] == "text/html; charset=utf-8"
    # Documented choice: numeric-looking values stay strings.
    assert isinstance(headers["content-length"], str)
    assert all(name == name.lower() for name in headers)


def test_only_the_final_response_headers_are_kept(http_server: FixtureServer) -> None:
    data = _ok(probe(http_server.url("/early-hints")))
    assert data.http_status == 200
    assert "link" not in data.response_headers
    assert data.response_headers["content-type"] == "text/html; charset=utf-8"


def test_error_statuses_are_successful_probes(http_server: FixtureServer) -> None:
    assert _ok(probe(http_server.url("/status/404"))).http_status == 404
    assert _ok(probe(http_server.url("/status/503"))).http_status == 503


def test_redirects_are_not_followed() -> None:
    with FixtureServer() as server:
        data = _ok(probe(server.url("/redirect")))
        assert data.http_status == 302
        assert data.response_headers["location"] == "/"
        assert server.requests == 1


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_https_with_ca_file(https_server: FixtureServer, cert: SelfSignedCert, host: str) -> None:
    data = _ok(probe(https_server.url("/delay/50", host=host), ca_file=str(cert.cert_file)))
    t = data.timings
    assert t.tls_handshake > 0
    # The server's 50 ms delay is in the server's time (no upper bound: a busy machine
    # stretches it, and the suite asserts no wall-clock limit).
    assert t.server_processing >= 50
    assert t.ttfb >= t.tcp_connection + t.tls_handshake + t.server_processing - 0.01
    # The stdlib server speaks HTTP/1.1 only: ALPN settles on http/1.1 although h2 is offered.
    assert data.http_version == 1.1
    assert data.http_status == 200


def test_https_without_verification(https_server: FixtureServer) -> None:
    data = _ok(probe(https_server.url("/"), verify_tls=False))
    assert data.timings.tls_handshake > 0


# --- failures ------------------------------------------------------------------------


def test_closed_port_is_connection_refused() -> None:
    error = _failed(probe(f"http://127.0.0.1:{closed_port()}/"))
    assert error.code == "CONNECTION_REFUSED"
    assert "libcurl error 7" in error.message


def test_unresolvable_name_is_dns_failure() -> None:
    # RFC 6761: .invalid never resolves, so this needs no network.
    # A resolver left to wait out the 10 s would report TIMEOUT (libcurl's
    # "Resolving timed out"), not the name's failure.
    error = _failed(probe("http://nonexistent.invalid/", timeout=10))
    assert error.code == "DNS_FAILURE"
    assert "nonexistent.invalid" in error.message


def test_self_signed_cert_without_ca_file_is_tls_failure(https_server: FixtureServer) -> None:
    error = _failed(probe(https_server.url("/")))
    assert error.code == "TLS_FAILURE"
    assert "certificate" in error.message.lower()


def test_wrong_ca_file_is_tls_failure(https_server: FixtureServer, tmp_path: Path) -> None:
    other = make_self_signed_cert(tmp_path / "other")
    error = _failed(probe(https_server.url("/"), ca_file=str(other.cert_file)))
    assert error.code == "TLS_FAILURE"


def test_plain_http_to_a_tls_port_is_probe_failed(https_server: FixtureServer) -> None:
    url = https_server.url("/").replace("https://", "http://")
    assert _failed(probe(url, timeout=5)).code == "PROBE_FAILED"


def test_silent_server_times_out() -> None:
    with SilentServer() as silent, ThreadPoolExecutor(1) as pool:
        # Connected first with a 30 s timeout: still waiting when the 1 s probe gives up
        # (a probe that ignored its timeout would end them alike, the first one first).
        longer = pool.submit(probe, silent.url(), timeout=30)
        while not any(c.raddr and c.raddr.port == silent.port
                      for c in psutil.Process().net_connections("tcp")):
            time.sleep(0.01)
        started = time.monotonic()
        error = _failed(probe(silent.url(), timeout=1))
        elapsed = time.monotonic() - started
        assert not longer.done()
        silent.close()  # resets the connection the longer probe waits on
    assert error.code == "TIMEOUT"
    assert elapsed >= 0.9  # waited for its timeout (a lower bound: load only adds to it)


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/", "http://a\x00b/", "http://\udc80.test/"])
def test_unusable_urls_fail_without_raising(url: str) -> None:
    assert _failed(probe(url)).code == "PROBE_FAILED"


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf")])
def test_probe_rejects_a_bad_timeout(timeout: float) -> None:
    with pytest.raises(InvalidInputError, match="timeout"):
        probe("http://127.0.0.1/", timeout=timeout)


# --- run_ttfb ------------------------------------------------------------------------


def test_run_ttfb_probes_every_location_of_the_region() -> None:
    with FixtureServer() as server:
        url = server.url("/delay/20")
        result = run_ttfb(url, "oceania")
        assert server.connections == 2
    expected = [(loc.id, loc.name) for loc in TTFB_REGIONS["oceania"].locations]
    assert [(r.location_id, r.location_name) for r in result.result] == expected
    assert len(result.result) == 2
    assert result.url == url
    assert result.region == "oceania"
    assert result.vantage == "local"
    for location in result.result:
        assert location.status == TTFBStatus.SUCCESS
        assert location.error is None
        assert location.data is not None
        assert location.data.timings.server_processing >= 20


def test_run_ttfb_reports_failed_locations() -> None:
    result = run_ttfb(f"http://127.0.0.1:{closed_port()}/", "africa", vantage="ci-runner")
    assert result.vantage == "ci-runner"
    [location] = result.result
    assert location.status == TTFBStatus.FAILED
    assert location.data is None
    assert location.error is not None
    assert location.error.code == "CONNECTION_REFUSED"
    # The spec's wire shape: data null and an error object for a failed location.
    dumped = result.model_dump(mode="json")
    assert dumped["result"][0]["error"]["code"] == "CONNECTION_REFUSED"


def test_run_ttfb_rejects_an_unknown_region() -> None:
    with pytest.raises(InvalidInputError, match="region"):
        run_ttfb("http://127.0.0.1/", "atlantis")


@pytest.mark.parametrize(
    "url",
    ["", "not a url", "/relative/path", "ftp://example.com/", "http://", "mailto:a@b.c",
     "http://exa mple.com/", "http://" + "a" * 5000 + ".com/"],
)
def test_run_ttfb_rejects_a_bad_url(url: str) -> None:
    with pytest.raises(InvalidInputError, match=r"^url: "):
        run_ttfb(url, "oceania")


def test_run_ttfb_rejects_a_bad_timeout() -> None:
    with pytest.raises(InvalidInputError, match="timeout"):
        run_ttfb("http://127.0.0.1/", "oceania", timeout=0)
