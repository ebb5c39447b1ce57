"""Every device, connection and config option, observed on real Lighthouse runs.

Fixture servers on loopback record what they receive (user agent, Authorization, Cookie,
protocol, which URLs were requested) and pages beacon their viewport, DPR and cookies back.
Real runs cost ~5 s each, so each run checks several things: 24 runs in this module.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures_h2 import H2Site, spki_hash
from fixtures_http import make_self_signed_cert
from fixtures_site import RecordingSite, page
from pagelab import LocalRunner
from pagelab.catalog import CONNECTIONS, DEVICES
from pagelab.engine import Engine, RunResult, engine_install
from pagelab.models import Connection, Device, LighthouseConfig
from pagelab.store import Store
from quiet_windows import QUICK_WINDOW_MS, quiet_window

pytestmark = pytest.mark.engine


def _lhr(result: RunResult) -> dict[str, Any]:
    assert result.status == "success", result.error
    lhr: dict[str, Any] = json.loads(result.artifacts["lighthouse-json"])
    return lhr


def _network_requests(lhr: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The LHR's network-requests table, by URL."""
    items = lhr["audits"]["network-requests"]["details"]["items"]
    return {item["url"]: item for item in items}


def _observed(lhr: dict[str, Any], name: str) -> float:
    value: float = lhr["audits"]["metrics"]["details"]["items"][0][name]
    return value


# --- devices and connections -----------------------------------------------------------

# Thirteen connections over fifteen devices; the last two keep the device's own default.
_DEVICE_CONNECTIONS: list[tuple[Device, Connection | None]] = list(
    zip(Device, [*Connection, None, None], strict=True)
)

# Before it changes anything the page records the cookie and storage it found: a warm engine
# must start every run from a clean browser, so they are always empty.
_RESET_PROBE = """<script>
window.pagelabBefore = {cookie: document.cookie, storage: localStorage.getItem("seen")};
document.cookie = "seen=1; max-age=3600";
localStorage.setItem("seen", "1");
</script><script src="/cacheable.js"></script>"""


@pytest.fixture(scope="module")
def device_runs(engine: Engine) -> Iterator[tuple[RecordingSite, list[tuple[Device, Any]]]]:
    """One run per device (15), each with another connection, all on the shared engine. Their
    tests read what the page and the server saw and the LHR's settings, no timing: the short
    quiet window."""
    with RecordingSite() as site, quiet_window(QUICK_WINDOW_MS):
        # Cacheable for an hour: a second request proves the cache did not survive the run.
        site.add("/cacheable.js", "window.cached = 1;", content_type="text/javascript",
                 headers={"Cache-Control": "max-age=3600"})
        runs: list[tuple[Device, Any]] = []
        for device, connection in _DEVICE_CONNECTIONS:
            url = site.add(f"/{device.value}", page(device.value, head=_RESET_PROBE))
            result = engine.run(url, device, LighthouseConfig(connection=connection))
            runs.append((device, result))
        yield site, runs


def test_each_device_yields_its_own_viewport_dpr_and_user_agent(
    device_runs: tuple[RecordingSite, list[tuple[Device, RunResult]]], engine: Engine
) -> None:
    site, runs = device_runs
    chrome_major = (engine.chrome_version or "0").split(".")[0]
    beacons = {b["path"]: b for b in site.beacons}
    seen_screens = set()
    for device, result in runs:
        profile = DEVICES[device]
        lhr = _lhr(result)
        beacon = beacons[f"/{device.value}"]
        # What the page itself measured.
        assert beacon["innerWidth"] == profile.width, device
        assert beacon["innerHeight"] == profile.height, device
        assert beacon["devicePixelRatio"] == pytest.approx(profile.device_scale_factor), device
        seen_screens.add((beacon["innerWidth"], beacon["innerHeight"],
                          beacon["devicePixelRatio"]))
        # What the server received, and what the page's navigator said.
        (document,) = site.requests_for(f"/{device.value}")
        if profile.user_agent is not None:
            expected_ua = profile.user_agent.format(chrome_major=chrome_major)
        else:  # Lighthouse's own UA for the form factor, with the running Chrome's version
            expected_ua = lhr["environment"]["networkUserAgent"]
            assert f"Chrome/{chrome_major}.0.0.0" in expected_ua
            assert ("Mobile" in expected_ua) == profile.mobile
        assert document.headers["user-agent"] == expected_ua, device
        assert lhr["environment"]["networkUserAgent"] == expected_ua, device
        assert beacon["userAgent"] == expected_ua, device
        assert lhr["configSettings"]["formFactor"] == profile.form_factor
        # The resources a report needs are kept.
        assert {"screenshot", "filmstrip", "lighthouse-json", "html-report"} <= set(
            result.artifacts
        )
    # Devices that share a profile number (phoneG5 / phone5A differ in DPR only) stay apart.
    assert len(seen_screens) == len(runs) == 15


def test_each_connection_sets_its_throttling_and_a_missing_one_the_device_default(
    device_runs: tuple[RecordingSite, list[tuple[Device, RunResult]]],
) -> None:
    _, runs = device_runs
    for (device, result), (_, connection) in zip(runs, _DEVICE_CONNECTIONS, strict=True):
        profile = DEVICES[device]
        link = CONNECTIONS[connection] if connection else profile.default_connection
        throttling = _lhr(result)["configSettings"]["throttling"]
        assert throttling["rttMs"] == link.rtt_ms, connection
        assert throttling["throughputKbps"] == link.down_kbps, connection
        assert throttling["cpuSlowdownMultiplier"] == profile.cpu_slowdown, device
    assert {c for _, c in _DEVICE_CONNECTIONS} >= set(Connection)


def test_warm_engine_resets_cookies_storage_and_cache_between_runs(
    device_runs: tuple[RecordingSite, list[tuple[Device, RunResult]]],
) -> None:
    site, runs = device_runs
    # Each page set a cookie and local storage: the next run's page found neither, and its
    # server never received the cookie.
    befores = [b["before"] for b in site.beacons]
    assert len(befores) == len(runs)
    assert all(before == {"cookie": "", "storage": None} for before in befores), befores
    assert [b["cookie"] for b in site.beacons] == ["seen=1"] * len(runs)
    for device, _ in runs:
        assert "cookie" not in site.requests_for(f"/{device.value}")[0].headers
    # The cacheable script was fetched again by every run: no HTTP cache survived.
    assert len(site.requests_for("/cacheable.js")) == len(runs)


# --- credentials, cookies, user agent ----------------------------------------------------


def test_credentials_and_cookies_reach_the_tested_origin_only_and_are_never_stored(
    engine: Engine, data_dir: Path
) -> None:
    password, cookie_value = "canary-pass-5d81", "canary-cookie-93e0"
    token = base64.b64encode(f"ann:{password}".encode()).decode()
    # With a Chrome version unlike the browser's: it must arrive verbatim.
    user_agent = "Mozilla/5.0 (pagelab probe) Chrome/99.0.1234.5 Safari/537.36"
    with RecordingSite() as tested, RecordingSite() as other:
        other.add("/third.js", "window.third = 1;", content_type="text/javascript")
        other.add("/pixel.gif", b"GIF89a", content_type="image/gif")
        other.add("/landing.gif", b"GIF89a", content_type="image/gif")
        # A redirect from the tested origin to the other must not carry the credentials on.
        tested.add("/hop.gif", b"", status=302,
                   headers={"Location": other.url("/landing.gif")})
        tested.add("/own.js", "document.cookie = 'js=1'; fetch('/after').then(r => r.text());",
                   content_type="text/javascript")
        tested.add("/after", "ok", content_type="text/plain")
        url = tested.add("/", page("credentials", head=(
            f'<script src="/own.js"></script><script src="{other.url("/third.js")}"></script>'
            f'<img src="{other.url("/pixel.gif")}"><img src="/hop.gif">'
        )))
        report = LocalRunner(engine=engine).lighthouse(url, "desktop", "us", {
            "auth_username": "ann", "auth_password": password,
            "cookies": [f"sid={cookie_value}", "theme=dark"], "user_agent": user_agent,
        })
        assert report.status == "success", report.error

        own = {r.path: r.headers for r in tested.requests}
        assert {"/", "/own.js", "/after", "/hop.gif", "/beacon"} <= set(own)
        for path, headers in own.items():
            assert headers["authorization"] == f"Basic {token}", path
            assert f"sid={cookie_value}" in headers["cookie"], path
            assert "theme=dark" in headers["cookie"], path
            assert headers["user-agent"] == user_agent, path
        # The page's own cookie (set by its script) still travels with the config's.
        assert "js=1" in own["/after"]["cookie"]
        theirs = {r.path: r.headers for r in other.requests}
        assert set(theirs) == {"/third.js", "/pixel.gif", "/landing.gif"}
        for path, headers in theirs.items():
            assert "authorization" not in headers, path
            # Only what the browser's own jar holds: the page's js=1 (a cookie is per host,
            # not per port, so the jar sends it to this other port too), never the config's.
            assert headers.get("cookie", "js=1") == "js=1", path
            assert headers["user-agent"] == user_agent, path
        (beacon,) = tested.beacons
        assert beacon["userAgent"] == user_agent

    # No stored byte holds a secret: LHR, HTML report, screenshots, database.
    stored = b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())
    for secret in (password, cookie_value, token):
        assert secret.encode() not in stored, secret
    store = Store(data_dir)
    with store.connection() as conn:
        lhr = json.loads(store.artifacts.read(conn, report.id or "", "lighthouse-json") or b"{}")
    assert lhr["environment"]["networkUserAgent"] == user_agent


# --- blocking and HTTP versions (an engine that trusts the fixtures) ----------------------

# Ad hosts of third-party-web's "ad" category; they cannot be reached from here, so the
# flagged engine resolves every host name to a loopback fixture (--host-resolver-rules).
_AD_BLOCKED = ("http://securepubads.g.doubleclick.net/tag.js", "http://ib.adnxs.com/ut.js")
_AD_WHITELISTED = "http://static.criteo.net/js/ld.js"
_NOT_AN_AD = "http://cdn.pagelab-fixture.test/lib.js"


class _Fixtures:
    def __init__(self, tmp: Path) -> None:
        self.cert = make_self_signed_cert(tmp / "cert")
        self.hosts = RecordingSite()
        self.tmp = tmp

    def paths_by_host(self) -> set[tuple[str, str]]:
        return {(r.headers.get("host", ""), r.path) for r in self.hosts.requests}


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Fixtures]:
    made = _Fixtures(tmp_path_factory.mktemp("engine-fixtures"))
    with made.hosts:
        yield made


@pytest.fixture(scope="module")
def flagged_engine(fixtures: _Fixtures) -> Iterator[Engine]:
    """An engine whose Chromium trusts the fixture certificate and resolves every host name
    to the loopback fixture (test-only flags: never set by default)."""
    port = fixtures.hosts.origin.rsplit(":", 1)[1]
    flags = (
        f"--ignore-certificate-errors-spki-list={spki_hash(fixtures.cert)}",
        f"--host-resolver-rules=MAP * 127.0.0.1:{port}, EXCLUDE 127.0.0.1, EXCLUDE localhost",
    )
    with Engine(run_timeout=120, chromium_flags=flags) as engine:
        yield engine


def test_blacklist_whitelist_and_adblock(flagged_engine: Engine, fixtures: _Fixtures) -> None:
    hosts = fixtures.hosts
    for path in ("/tag.js", "/ut.js", "/js/ld.js", "/lib.js", "/blocked/a.js", "/both.js",
                 "/keep.js", "/plain-part.js", "/q.js"):
        hosts.add(path, "1;", content_type="text/javascript")
    scripts = [*_AD_BLOCKED, _AD_WHITELISTED, _NOT_AN_AD, "/blocked/a.js", "/both.js", "/keep.js",
               "/plain-part.js", "/q.js?v=1"]
    url = hosts.add("/blocking", page("blocking", head="".join(
        f'<script src="{src}"></script>' for src in scripts)))
    local = hosts.origin.removeprefix("http://")

    # Control: without options every request reaches a server.
    hosts.clear()
    control = _network_requests(_lhr(flagged_engine.run(url, "desktop")))
    received = fixtures.paths_by_host()
    for src in scripts:
        absolute = src if src.startswith("http") else hosts.url(src)
        assert control[absolute]["statusCode"] == 200, absolute
    assert ("securepubads.g.doubleclick.net", "/tag.js") in received
    assert (local, "/blocked/a.js") in received

    hosts.clear()
    result = flagged_engine.run(url, "desktop", LighthouseConfig(
        adblock=True,
        # A pattern without `*` matches URLs containing it; `?` and `.` are literal.
        blacklist=["*/blocked/*", "*both*", "plain-part", "*/q.js?v=1"],
        whitelist=["*/both.js", "*static.criteo.net*"],
    ))
    requests = _network_requests(_lhr(result))
    received = fixtures.paths_by_host()
    # Blacklisted: never reached the server; failed in the LHR.
    assert (local, "/blocked/a.js") not in received
    assert requests[hosts.url("/blocked/a.js")]["statusCode"] == -1
    # Ad requests: blocked, shown as failed requests of the ad entity in the LHR.
    for ad in _AD_BLOCKED:
        assert requests[ad]["statusCode"] == -1, ad
        assert requests[ad]["transferSize"] == 0, ad
        assert requests[ad]["entity"], ad
    assert ("securepubads.g.doubleclick.net", "/tag.js") not in received
    assert ("ib.adnxs.com", "/ut.js") not in received
    # The whitelist wins over the blacklist and over adblock; other hosts are not ads.
    assert (local, "/both.js") in received
    assert ("static.criteo.net", "/js/ld.js") in received
    assert ("cdn.pagelab-fixture.test", "/lib.js") in received
    assert (local, "/keep.js") in received
    for src in (_AD_WHITELISTED, _NOT_AN_AD, hosts.url("/both.js"), hosts.url("/keep.js")):
        assert requests[src]["statusCode"] == 200, src
    assert (local, "/plain-part.js") not in received
    assert (local, "/q.js") not in received
    blacklisted = ["/blocked/a.js", "/plain-part.js", "/q.js?v=1"]
    assert sorted(result.blocked) == sorted(
        [(hosts.url(path), "blacklist") for path in blacklisted]
        + [(ad, "adblock") for ad in _AD_BLOCKED]
    )


def test_http_version_2_or_forced_1_1_over_tls(
    flagged_engine: Engine, fixtures: _Fixtures
) -> None:
    routes = {
        "/": ("text/html", page("h2", head='<script src="/sub.js"></script>',
                                beacon=False).decode()),
        "/sub.js": ("text/javascript", "window.sub = 1;"),
    }
    with H2Site(engine_install().node, fixtures.cert, routes, fixtures.tmp / "h2") as site:
        seen: dict[str, tuple[set[str], set[str]]] = {}
        for version in ("2", "1.1"):
            site.clear()
            lhr = _lhr(flagged_engine.run(site.url("/"), "desktop",
                                          LighthouseConfig(http_version=version)))
            server_side = {r["httpVersion"] for r in site.requests if r["path"] in routes}
            in_lhr = {r["protocol"] for u, r in _network_requests(lhr).items()
                      if u.startswith(site.url())}
            seen[version] = (server_side, in_lhr)
    assert seen["2"] == ({"2.0"}, {"h2"})
    assert seen["1.1"] == ({"1.1"}, {"http/1.1"})


# --- connections, throttling methods, video ------------------------------------------------


def _ffprobe_frames(video: Path) -> tuple[int, int]:
    """(decoded frames, distinct frames) of a video file."""
    ffprobe, ffmpeg = shutil.which("ffprobe"), shutil.which("ffmpeg")
    assert ffprobe is not None
    assert ffmpeg is not None
    out = subprocess.run(
        [ffprobe, "-v", "error", "-count_frames", "-select_streams", "v:0",
         "-show_entries", "stream=nb_read_frames,codec_name", "-of", "json", str(video)],
        capture_output=True, text=True, check=True,
    ).stdout
    stream = json.loads(out)["streams"][0]
    assert stream["codec_name"] == "vp8"
    hashes = subprocess.run(
        [ffmpeg, "-v", "error", "-i", str(video), "-f", "framemd5", "-"],
        capture_output=True, text=True, check=True,
    ).stdout
    distinct = {line.rsplit(",", 1)[-1].strip() for line in hashes.splitlines()
                if line and not line.startswith("#")}
    return int(stream["nb_read_frames"]), len(distinct)


def test_connections_throttling_methods_and_video_on_the_heavy_page(
    engine: Engine, demo_url: str, tmp_path: Path
) -> None:
    heavy = demo_url + "/heavy"

    def run(**config: Any) -> tuple[RunResult, dict[str, Any]]:
        result = engine.run(heavy, "desktop", LighthouseConfig(**config))
        return result, _lhr(result)

    _, fiber = run(connection="fiber")
    _, slow = run(connection="3g_slow")
    simulated_run, simulated = run(connection="4g_fast")
    applied_run, applied = run(connection="4g_fast", throttling_method="applied", video=True)

    def lcp(lhr: dict[str, Any]) -> float:
        value: float = lhr["audits"]["largest-contentful-paint"]["numericValue"]
        return value

    # A slower connection gives a slower LCP (1.5 MB hero image: seconds at 400 kbps).
    assert lcp(slow) > lcp(simulated) > lcp(fiber)
    assert lcp(slow) > 3 * lcp(fiber)

    # Applied throttling really slows the page load in the browser; simulated throttling
    # loads at full speed and only computes the slower metrics.
    assert applied["configSettings"]["throttlingMethod"] == "devtools"
    assert simulated["configSettings"]["throttlingMethod"] == "simulate"
    observed_applied = _observed(applied, "observedLargestContentfulPaint")
    observed_simulated = _observed(simulated, "observedLargestContentfulPaint")
    assert observed_applied > observed_simulated + 500
    # Applied: the metric is what the browser saw.
    assert lcp(applied) == pytest.approx(observed_applied, rel=0.05)
    duration = lambda r: (r.finished_at - r.started_at).total_seconds()  # noqa: E731
    assert duration(applied_run) > duration(simulated_run) + 0.5

    # The video: a real load, frames that change, as long as the load at least.
    assert "video" not in simulated_run.artifacts
    video = tmp_path / "load.webm"
    video.write_bytes(applied_run.artifacts["video"])
    frames, distinct = _ffprobe_frames(video)
    assert frames > 1
    assert distinct > 1
    assert frames / 10 >= observed_applied / 1000  # 10 fps, up to the LCP and beyond


def test_video_encoding_keeps_the_page_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without Lighthouse: three frames painted at 0, 0.5 and 1.2 s become a 10 fps video
    that shows each for as long as it was on screen, the last held 1 s."""
    from PIL import Image

    from pagelab.engine._video import Frame, VideoError, encode_video

    frames = []
    for index, (ms, color) in enumerate([(0, "white"), (500, "gray"), (1200, "black")]):
        file = tmp_path / f"f{index}.jpg"
        Image.new("RGB", (251, 499), color).save(file)  # odd sizes: the encoder evens them
        frames.append(Frame(file, ms))
    video = tmp_path / "v.webm"
    video.write_bytes(encode_video(frames, video))
    count, distinct = _ffprobe_frames(video)
    assert count == 22  # 2.2 s at 10 fps
    assert distinct == 3

    with pytest.raises(VideoError, match="no screenshots"):
        encode_video([], tmp_path / "none.webm")
    monkeypatch.setenv("PAGELAB_FFMPEG", str(tmp_path / "missing-ffmpeg"))
    with pytest.raises(VideoError, match="ffmpeg is missing"):
        encode_video(frames, tmp_path / "other.webm")
