"""Service hardening (issue 10, docs/security.md): TTFB requests cannot freeze the API,
URL patterns match in linear time, the store is private and the link secret lives outside
the database, revoking a key stops its queued tests. Every server is on loopback."""

from __future__ import annotations

import re
import sqlite3
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from live_server import StartServer, create_key

from fixtures_http import SilentServer
from pagelab.models import LighthouseConfig, url_pattern_matches
from pagelab.store import Store, link_secrets, revoke_account, rotate_link_secret, transaction

DRIVER = Path(__file__).resolve().parents[2] / "src/pagelab/engine/node/driver.mjs"

# The issue's pattern: a backtracking matcher takes minutes on one URL with it.
EVIL_PATTERN = "*a*a*a*a*a*a*a*b"
EVIL_URL = "http://x/" + "a" * 5000


# -- TTFB: bounded, off the request thread pool -----------------------------------------


def test_ttfb_requests_to_a_silent_host_do_not_freeze_the_api(
    start_server: StartServer,
) -> None:
    # The probes wait the whole deadline on the silent host; the other routes must answer
    # inside that window. Checked by the order of events, not by a clock: before the fix
    # the other routes were answered only after the probes ended (28 s).
    deadline = 5.0
    server = start_server(ttfb_timeout=deadline, ttfb_deadline=deadline)
    keys = [server.key(ttfb=10) for _ in range(10)]
    answers: list[tuple[int, float, dict[str, str], dict[str, object]]] = []
    events: list[str] = []  # "get" / "ttfb-<status>", in the order they were answered
    with SilentServer() as silent:

        def post(key: str) -> None:
            started = time.monotonic()
            response = httpx.post(f"{server.base_url}/v1/ttfb-tests", timeout=60,
                                  headers={"X-API-KEY": key},
                                  json={"url": silent.url(), "region": "europe"})
            events.append(f"ttfb-{response.status_code}")
            answers.append((response.status_code, time.monotonic() - started,
                            dict(response.headers), response.json()))

        threads = [threading.Thread(target=post, args=(keys[i % 10],)) for i in range(40)]
        for thread in threads:
            thread.start()
        time.sleep(0.5)  # the probes are now waiting on the silent host
        with httpx.Client(base_url=server.base_url, timeout=10) as client:
            for path in ("/healthz", "/v1/locations", "/v1/ttfb-regions") * 3:
                assert client.get(path).status_code == 200
                events.append("get")
            listing = client.get("/v1/lighthouse-tests", headers={"X-API-KEY": keys[0]})
            assert listing.status_code == 200
            events.append("get")
        for thread in threads:
            thread.join()  # the probes end by their own deadline (a hang: pytest-timeout)
    # Every other route was answered while all eight probes were still pending.
    assert "ttfb-200" in events
    assert events.index("ttfb-200") > max(i for i, e in enumerate(events) if e == "get"), events
    statuses = sorted(status for status, *_ in answers)
    assert len(answers) == 40
    assert set(statuses) <= {200, 429, 503}, statuses
    assert statuses.count(200) == 8  # the global bound; the others were told to retry
    for status, took, headers, body in answers:
        if status == 200:
            # Ended by the probes' timeout (the host never answers, so nothing else ends
            # them), after really waiting for it.
            assert took >= deadline * 0.9, took
            results = body["result"]
            assert [r["status"] for r in results] == ["failed"] * len(results)  # type: ignore[attr-defined]
            assert {r["error"]["code"] for r in results} == {"TIMEOUT"}  # type: ignore[attr-defined]
        else:
            assert int(headers["retry-after"]) > 0
            assert body["code"] == ("rate_limited" if status == 429 else "unavailable")


def test_ttfb_per_key_bound_is_429(start_server: StartServer) -> None:
    server = start_server(ttfb_timeout=2.0, ttfb_deadline=2.0)
    key = server.key(ttfb=10)
    with SilentServer() as silent, ThreadPoolExecutor(4) as pool:
        futures = [
            pool.submit(httpx.post, f"{server.base_url}/v1/ttfb-tests", timeout=30,
                        headers={"X-API-KEY": key},
                        json={"url": silent.url(), "region": "oceania"})
            for _ in range(4)
        ]
        statuses = sorted(f.result().status_code for f in futures)
    assert statuses == [200, 200, 429, 429]
    with server.client(key) as client:
        # Only the two that ran were charged.
        assert client.get("/v1/account/credits").json()["ttfb"]["available_credits"] == 8


# -- URL patterns: linear time, capped wildcards -----------------------------------------


def _cpu_seconds(call: Callable[[], object]) -> float:
    """The fastest of three runs of ``call``, in this thread's CPU time: the time the
    machine's other load takes from this thread is not counted."""
    timings = []
    for _ in range(3):
        started = time.thread_time()
        call()
        timings.append(time.thread_time() - started)
    return min(timings)


def test_python_pattern_matching_is_linear() -> None:
    assert not url_pattern_matches(EVIL_PATTERN, EVIL_URL)
    assert url_pattern_matches(EVIL_PATTERN, EVIL_URL + "b")
    # Linear: a URL 100 times longer costs about 100 times as much (a quadratic matcher
    # 10 000 times; a backtracking one never finishes on EVIL_URL: pytest-timeout ends it).
    longer_url = EVIL_URL + "a" * 495000
    short = _cpu_seconds(lambda: url_pattern_matches(EVIL_PATTERN, EVIL_URL))
    long = _cpu_seconds(lambda: url_pattern_matches(EVIL_PATTERN, longer_url))
    print(f"100x longer URL: {long / short:.0f}x the CPU time ({short * 1000:.2f} ms)")
    assert long < 300 * short, (short, long)


CASES = [
    ("*.js", "http://a/x.js", True), ("*.js", "http://a/x.jsx", False),
    ("http://a/*/b*", "http://a/q/r/bz", True), ("a*b*c", "aXbYc", True),
    ("a*b*c", "aXbY", False), ("*a?b*", "xa?bx", True), ("*", "", True),
    ("ab*", "a", False), ("*ab", "aab", True), ("a**b", "ab", True),
]


def test_driver_pattern_matching_is_linear_and_agrees_with_python() -> None:
    source = DRIVER.read_text()
    match = re.search(r"^function wildcardMatches\(.*?^}\n", source, re.S | re.M)
    assert match is not None, "wildcardMatches not found in driver.mjs"
    script = match.group(0) + (
        "const cases = JSON.parse(process.argv[1]);"
        "const shortUrl = 'http://x/' + 'a'.repeat(50000);"
        "const longUrl = shortUrl + 'a'.repeat(4950000);"
        # The process's CPU time (the machine's other load is not counted), fastest of 3.
        f"const cpu = (u) => {{ let best = Infinity; for (let i = 0; i < 3; i++) {{"
        " const t = process.cpuUsage();"
        f" wildcardMatches({EVIL_PATTERN!r}, u); const d = process.cpuUsage(t);"
        " best = Math.min(best, d.user + d.system); } return best; };"
        "cpu(shortUrl);"  # the JIT warmed up before anything is timed
        "const short = cpu(shortUrl), long = cpu(longUrl);"
        f"const evil = wildcardMatches({EVIL_PATTERN!r}, shortUrl);"
        "console.log(JSON.stringify({short, long, evil,"
        " results: cases.map(([p, u]) => wildcardMatches(p, u))}));"
    )
    import json

    out = subprocess.run(["node", "-e", script, json.dumps(CASES)], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    result = json.loads(out)
    assert result["evil"] is False
    print(f"node: 100x longer URL: {result['long'] / result['short']:.0f}x the CPU time")
    # Linear: 100 times the URL, about 100 times the time (quadratic: 10 000 times).
    assert result["long"] < 300 * result["short"], result
    assert result["results"] == [expected for _, _, expected in CASES]
    assert [url_pattern_matches(p, u) for p, u, _ in CASES] == result["results"]


def test_patterns_with_too_many_wildcards_are_refused(start_server: StartServer) -> None:
    with pytest.raises(ValueError, match="at most 8"):
        LighthouseConfig(blacklist=["*a*a*a*a*a*a*a*a*a*a*a*a*b"])
    server = start_server()
    key = server.key(lighthouse=1)
    with server.client(key) as client:
        response = client.post("/v1/lighthouse-tests", json={
            "url": "http://127.0.0.1:9/", "config": {"blacklist": ["*a*a*a*a*a*a*a*a*a*a*b"]}})
        assert response.status_code == 400
        assert response.json()["message"].startswith("config.blacklist[0]")
        assert client.get("/v1/account/credits").json()["lighthouse"]["available_credits"] == 1


# -- the store: private files, the link secret outside the database ----------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.store("sqlite")  # the secret file (PostgreSQL keeps it in the database)
def test_store_files_are_private_and_the_secret_is_not_in_the_database(
    start_server: StartServer, tmp_path: Path
) -> None:
    data_dir = tmp_path / "private"
    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)
    server = start_server(data_dir=data_dir)
    key = server.key()
    with server.client(key) as client:
        test_id = client.post("/v1/lighthouse-tests", json={"url": "http://127.0.0.1:9/"}
                              ).json()["id"]
    with Store(data_dir).connection() as conn, transaction(conn):
        server_store = Store(data_dir)
        server_store.artifacts.write(conn, test_id, "lighthouse-json", b"{}")
    assert _mode(data_dir) == 0o700
    for name in ("pagelab.sqlite3", "pagelab.sqlite3-wal", "pagelab.sqlite3-shm",
                 "report-links.key"):
        assert _mode(data_dir / name) == 0o600, name
    artifact = data_dir / "artifacts" / test_id / "lhr.json"
    assert _mode(artifact) == 0o600
    assert _mode(artifact.parent) == 0o700
    assert _mode(data_dir / "artifacts") == 0o700
    with sqlite3.connect(data_dir / "pagelab.sqlite3") as raw:
        assert raw.execute("SELECT COUNT(*) FROM service_secrets").fetchone()[0] == 0
    secret = (data_dir / "report-links.key").read_text().strip()
    assert secret.encode() not in (data_dir / "pagelab.sqlite3").read_bytes()


def test_a_secret_kept_in_the_database_moves_to_the_file(tmp_path: Path) -> None:
    data_dir = tmp_path / "legacy"
    create_key(data_dir)
    legacy = "ab" * 32
    with Store(data_dir).connection() as conn:
        conn.execute("INSERT INTO service_secrets (name, value) VALUES ('report-links', ?)",
                     (legacy,))
        assert link_secrets(data_dir, conn) == [bytes.fromhex(legacy)]
        assert conn.execute("SELECT COUNT(*) FROM service_secrets").fetchone()[0] == 0
    assert (data_dir / "report-links.key").read_text().split() == [legacy]


@pytest.mark.store("sqlite")  # the secret file (PostgreSQL keeps it in the database)
def test_rotation_keeps_or_drops_old_links(start_server: StartServer, tmp_path: Path) -> None:
    data_dir = tmp_path / "rotate"
    first = start_server(data_dir=data_dir, worker=False)
    key = first.key()
    with first.client(key) as client:
        batch = client.post("/v1/lighthouse-batch-tests", json={
            "urls": ["http://127.0.0.1:9/"], "devices": ["desktop"], "locations": ["us"],
            "batch_type": "multiple-urls"}).json()
    link = batch["report_url"].replace(first.base_url, "")
    first.__exit__(None, None, None)
    rotate_link_secret(data_dir)  # the previous secret still verifies
    second = start_server(data_dir=data_dir)
    with second.client() as client:
        assert client.get(link).status_code == 200
    second.__exit__(None, None, None)
    rotate_link_secret(data_dir, keep_previous=False)
    third = start_server(data_dir=data_dir)
    with third.client() as client:
        assert client.get(link).status_code == 404


def test_revoking_a_key_fails_and_refunds_its_queued_tests(start_server: StartServer) -> None:
    server = start_server()
    key = server.key(lighthouse=3)
    with server.client(key) as client:
        test_id = client.post("/v1/lighthouse-tests", json={"url": "http://127.0.0.1:9/"}
                              ).json()["id"]
    with server.store.connection() as conn, transaction(conn, immediate=True):
        account = revoke_account(conn, key[:11])
        assert account is not None
        row = conn.execute("SELECT status, error_code, run_config_json FROM tests WHERE id = ?",
                           (test_id,)).fetchone()
        credits = conn.execute("SELECT lighthouse_credits FROM accounts WHERE id = ?",
                               (account.id,)).fetchone()[0]
    assert (row["status"], row["error_code"], row["run_config_json"]) == (
        "failed", "ACCOUNT_REVOKED", None)
    assert credits == 3
