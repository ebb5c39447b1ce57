"""``POST /v1/discoveries`` (issue 39, point 5): discovery inside the service, under the
server's own target policy, and ``pagelab.scan`` on an ``ApiRunner`` discovering there.

Loopback only. A server's default policy refuses loopback, so the demo store (on
127.0.0.1) stands for a private site; ``--allow-target`` re-opens it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live_server import LiveServer, ServerProcess, StartServer, create_key

from fixtures_dns import LoopbackDns
from fixtures_scan import XML, html, scan_site, urlset
from fixtures_site import RecordingSite
from pagelab import (
    ApiRunner,
    AsyncClient,
    BadRequestError,
    Client,
    DiscoveryError,
    InsufficientCreditsError,
    ServerError,
    scan,
)
from pagelab._discovery import discover, group_templates, sample_templates
from pagelab._scan import scan_sample
from pagelab.budgets import TemplateScan
from pagelab.cli import main
from pagelab.demo import DemoServer
from pagelab.demo._store import STORE_PATHS

pytestmark = pytest.mark.store("sqlite")

REFUSED = "a private, loopback, link-local or reserved address this server does not test"
STORE_TEMPLATES = ["/store", "/store/about", "/store/category/*", "/store/product/*"]


@pytest.fixture(scope="module")
def store() -> Iterator[str]:
    with DemoServer() as site:
        yield site.url


@pytest.fixture
def site() -> Iterator[RecordingSite]:
    with scan_site() as server:
        yield server


def test_the_default_policy_refuses_a_loopback_site(start_server: StartServer,
                                                    site: RecordingSite) -> None:
    server = start_server(allow_private_targets=False)
    with server.client(server.key()) as client:
        answer = client.post("/v1/discoveries", json={"url": site.url("/")})
    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid_request"  # as a refused test target
    assert REFUSED in answer.json()["message"]
    assert site.requests == []


def test_allow_target_opens_the_demo_store_to_discovery(tmp_path: Path, store: str) -> None:
    # `pagelab serve --allow-target 127.0.0.0/8`, its own default policy otherwise.
    data_dir = tmp_path / "data"
    server = ServerProcess(data_dir, tmp_path / "server.log", "--allow-target", "127.0.0.0/8",
                           allow_private_targets=False).start()
    try:
        key = create_key(data_dir, lighthouse=10, ttfb=0)
        with Client(server.base_url, key) as client:
            site = client.discover(f"{store}/store/", per_template=2, seed=7)
        credits_left = httpx.get(f"{server.base_url}/v1/account/credits",
                                 headers={"X-API-KEY": key}).json()
    finally:
        server.stop()
    local = discover(f"{store}/store/")
    templates = group_templates(local.pages)
    assert [page.url for page in site.pages] == [store + path for path in STORE_PATHS]
    assert {page.url: page.template for page in site.pages} == templates
    assert sorted(set(templates.values())) == STORE_TEMPLATES
    assert site.sample == sample_templates(templates, 2, 7)
    assert site.source == "sitemap"
    assert site.sitemaps == local.sitemaps
    assert site.dropped == {"off_scope": 1}
    assert credits_left["lighthouse"]["available_credits"] == 10  # discovery charges nothing


def test_a_sitemap_on_a_refused_address_is_refused(start_server: StartServer,
                                                   site: RecordingSite) -> None:
    # The start URL is allowed; the sitemap robots.txt names is not (127.0.0.2).
    with RecordingSite("127.0.0.2", site.port) as private:
        private.add("/sitemap.xml", urlset(private.url("/secret")), content_type=XML)
        site.add("/robots.txt", f"Sitemap: {private.url('/sitemap.xml')}\n",
                 content_type="text/plain")
        server = start_server(allow_private_targets=False, allowed_targets=("127.0.0.1/32",))
        with server.client(server.key()) as client:
            answer = client.post("/v1/discoveries", json={"url": site.url("/")})
        assert private.requests == []
    assert answer.status_code == 400, answer.text
    assert answer.json()["message"].startswith(
        f"discovery request {private.url('/sitemap.xml')}: '127.0.0.2' is, or resolves to, "
        f"127.0.0.2: {REFUSED}")
    assert [r.path for r in site.requests] == ["/", "/robots.txt"]


def test_a_site_not_found_is_discovery_failed(server: LiveServer, site: RecordingSite) -> None:
    key = server.key()
    with server.client(key) as client:
        answer = client.post("/v1/discoveries", json={"url": site.url("/gone")})
    assert answer.status_code == 502
    assert answer.json() == {"code": "discovery_failed",
                             "message": f"start URL {site.url('/gone')}: the server answered 404"}
    with Client(server.base_url, key) as client, pytest.raises(ServerError) as caught:
        client.discover(site.url("/gone"))
    assert caught.value.code == "discovery_failed"
    with (ApiRunner(server.base_url, key) as runner,
          pytest.raises(DiscoveryError, match="/gone")):
        scan(site.url("/gone"), runner=runner, progress=False)


def test_a_key_without_credits_sends_no_request(server: LiveServer,
                                                site: RecordingSite) -> None:
    with server.client(server.key(lighthouse=0)) as client:
        answer = client.post("/v1/discoveries", json={"url": site.url("/")})
    assert answer.status_code == 402
    assert answer.json()["code"] == "insufficient_credits"
    assert site.requests == []


@pytest.mark.parametrize(("body", "field"), [
    ({"url": "http://a.test/", "max_pages": 5001}, "max_pages"),
    ({"url": "http://a.test/", "depth": 11}, "depth"),
    ({"url": "ftp://a.test/"}, "url"),
    ({"url": "http://a.test/", "include": "/x"}, "include"),
])
def test_bad_bodies_are_400(server: LiveServer, body: dict[str, object], field: str) -> None:
    with server.client(server.key()) as client:
        answer = client.post("/v1/discoveries", json=body)
    assert answer.status_code == 400
    assert field in answer.json()["message"]


def test_a_bad_glob_is_400(server: LiveServer, site: RecordingSite) -> None:
    with server.client(server.key()) as client:
        answer = client.post("/v1/discoveries", json={"url": site.url("/"),
                                                      "include": ["no-slash"]})
    assert answer.status_code == 400
    assert "must start with '/'" in answer.json()["message"]


def test_one_discovery_at_a_time_per_key(server: LiveServer) -> None:
    # A start page that answers late holds the first discovery while the others are sent.
    with RecordingSite() as slow:
        slow.add("/", html(), delay=5.0)
        key, other = server.key(), server.key()
        first: list[httpx.Response] = []
        with server.client(key) as client, server.client(other) as another:
            holder = threading.Thread(target=lambda: first.append(
                client.post("/v1/discoveries", json={"url": slow.url("/")})))
            holder.start()
            while not slow.requests:
                threading.Event().wait(0.01)
            with server.client(key) as again:
                busy = again.post("/v1/discoveries", json={"url": slow.url("/")})
            free = another.post("/v1/discoveries", json={"url": slow.url("/")})
            holder.join()
    assert busy.status_code == 429
    assert busy.json()["message"] == ("at most 1 discovery of one key run at once; "
                                      "retry in 10 s")
    assert busy.headers["Retry-After"] == "10"
    assert first[0].status_code == 200, first[0].text
    assert free.status_code == 200, free.text


def test_the_async_client_discovers(server: LiveServer, store: str) -> None:
    async def run() -> list[str]:
        async with AsyncClient(server.base_url, server.key()) as client:
            site = await client.discover(f"{store}/store/", include=["/store/product/*"],
                                         per_template=1)
        return [url for urls in site.sample.values() for url in urls]

    sample = asyncio.run(run())
    assert len(sample) == 1
    assert sample[0].startswith(f"{store}/store/product/")


def test_scan_on_an_api_runner_discovers_on_the_server(start_server: StartServer,
                                                       store: str) -> None:
    # This process reaches the store (a LocalRunner's scan discovers it); the server's
    # policy refuses it: the scan stops with the server's refusal, before any run.
    assert discover(f"{store}/store/").pages
    server = start_server(allow_private_targets=False)
    key = server.key(lighthouse=5)
    with (ApiRunner(server.base_url, key) as runner,
          pytest.raises(BadRequestError, match=REFUSED) as caught):
        scan(f"{store}/store/", runner=runner, per_template=1, progress=False)
    # The discovery's field (`url`), not a batch's (`urls[0]`): refused before any run.
    assert caught.value.message.startswith("url: '127.0.0.1' is, or resolves to, 127.0.0.1")
    with server.client(key) as client:
        assert client.get("/v1/lighthouse-tests").json()["data"] == []


def test_scan_on_an_api_runner_finds_a_site_only_the_server_can_name(
        named_shop: tuple[LiveServer, str], site: RecordingSite) -> None:
    # Found on the server; then the runs go to the API as one batch (two templates, one
    # page each: the key pays for one run only, so the batch is refused, nothing runs).
    server, start = named_shop
    with (ApiRunner(server.base_url, server.key(lighthouse=1)) as runner,
          pytest.raises(InsufficientCreditsError, match="the batch needs 2")):
        scan(start, runner=runner, per_template=1, progress=False)
    assert [(r.path, r.headers["host"]) for r in site.requests] == [
        ("/", f"shop.test:{site.port}"), ("/robots.txt", f"shop.test:{site.port}"),
        ("/sitemap.xml", f"shop.test:{site.port}")]


@pytest.fixture
def named_shop(start_server: StartServer, site: RecordingSite
               ) -> Iterator[tuple[LiveServer, str]]:
    """A server whose name server alone knows `shop.test` (this process cannot resolve
    it), and the start URL of ``site`` under that name: an about page and three products."""
    with LoopbackDns({"shop.test": ["127.0.0.1"]}) as names:
        start = f"http://shop.test:{site.port}/"
        site.add("/sitemap.xml", urlset(f"{start}about", *(f"{start}p/{slug}"
                                                             for slug in ("a", "b", "c"))),
                 content_type=XML)
        with pytest.raises(DiscoveryError, match="cannot be reached"):
            discover(start)
        server = start_server(allow_private_targets=False, allowed_targets=("127.0.0.0/8",),
                              dns_server=names.address)
        yield server, start


def test_a_budget_files_scan_is_sampled_on_the_server(named_shop: tuple[LiveServer, str],
                                                      ) -> None:
    server, start = named_shop
    plan = TemplateScan(start, ("/p/*", "/about", "/gone/*"), (("per_template", 2),))
    with ApiRunner(server.base_url, server.key(lighthouse=1)) as runner:
        sample = scan_sample(plan, runner)
    assert sample.keys() == {"/p/*", "/about"}
    assert sample["/about"] == [f"{start}about"]
    assert len(sample["/p/*"]) == 2


def test_pagelab_check_discovers_on_the_server(named_shop: tuple[LiveServer, str],
                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # The file's runs need 2 credits, the key has 1: the site is found (on the server),
    # then the batch is refused and nothing runs.
    server, start = named_shop
    file = tmp_path / "budgets.yaml"
    file.write_text(f"runs: 1\nscan: {{url: '{start}', per_template: 2}}\n"
                    "budgets: {server_response_time: 1000}\ntemplates:\n  /p/*: {}\n")
    monkeypatch.setenv("PAGELAB_API_URL", server.base_url)
    monkeypatch.setenv("PAGELAB_API_KEY", server.key(lighthouse=1))
    status = main(["check", str(file), "--no-progress"])
    assert status == 2
    assert capsys.readouterr().err == (
        "pagelab: error: 402 insufficient_credits: the batch needs 2 lighthouse credits; "
        "the pool has fewer (see GET /v1/account/credits)\n")
