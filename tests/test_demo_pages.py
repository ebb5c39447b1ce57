"""The demo site's pages render to fixed bytes (issue 36: one base template).

Engine metrics of the demo pages are read by many tests, so rendering the pages from one base
template (``pagelab/demo/static/_base.html``) must not change a byte: each page's SHA-256 below
was taken from the pages as they were written out in full before that change.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

import httpx
import pytest
from markupsafe import Markup

from pagelab.demo import DemoServer
from pagelab.demo._site import _article, _render
from pagelab.demo._store import STORE_PATHS, store_page

#: page (path or name) -> SHA-256 of its bytes; ``/bloated``'s cache-busting token reads 0.
PINNED = {
    "index": "fcd7e467bfc3f80dc45b2eb2e9493906280f258cbf5d5ce7c64abaff6caabfbc",
    "fast": "0876d5ab5b2aa2344fce3132db69ccffbfb3d761e270b165ad4338a347c79831",
    "heavy": "50e800af7dedb29e38ba5132c0b4311069935ded9cdb321af9bcf54babc9067e",
    "shift": "f724de40de968cf9793cf0c7a87821b5392625730bcac82d9548828e580a7cc3",
    "shop": "25c263a164eff44e4dd0d61d426e981aeb31cc13426266eae34e13839c2e0e5c",
    "members": "e92358368b085e027a4f966731f155318824b0a2c46d24de0fbea91e67d5c15f",
    "app": "590ed8bd3ac11ae2a59690b341831f7f804b134264dcd54a678ae1c9ad5f6d78",
    "login": "37745367cd19d8d1aa49e985c38c37f24922e47d898b32824e625b72e3be510c",
    "login?failed=1": "dd711d39cd0b204051632368f7cf4cec263185379b22ef7607fef301ad37348f",
    "slow?ms=0": "d2298d757b6f43aecf4ea384da57aefecd528d4ec25c3b2cf0e569daf0cb5398",
    "slow?ms=2000": "a9d212451f69787584c05e81ecdc6bc38017c00f482790c5090dcf168dceb56e",
    "slow?ms=30000": "13bc8ba68d0c2a005f9734d929dd1e0208a2057d7d23cd1569e2256682750e6a",
    "/store/": "70cf684aee36a0cb34c1db0b1b169649d7495c6e5b0ec8d6a7b5607cba141dbc",
    "/store/about": "5afc806c428cf4271781c306423f6979b0f60e03831d307c4e9b2b516b8d4482",
    "/store/category/shoes": "074ca038284184a0dccd01aefa5d2953b745e9eba3a157b9f40844b292cd6790",
    "/store/category/hats": "2c1e7a82b9d8651a2c5f1d8c2830e8df08d715535fab08a95b56e3b85768f028",
    "/store/category/bags": "7f8cb88cf5098c0feab4e4c7ceaa606175d9a2c9f18e476047e59413224bdef5",
    "/store/product/trail-runner":
        "030aef60ee4c6e65d4c60bd93f0b2165892a3d1dead2d480cb502057775ea72c",
    "/store/product/city-sneaker":
        "57ca7e6219b054d04b1077a365795ff6a449f3199a145d93c3841a6a42f011de",
    "/store/product/rain-boot": "1de237cac9b498d40a1255091b3296774f958324ab13f60a15ac0b612e38d588",
    "/store/product/linen-espadrille":
        "21bd8a7a8c1288eb68768adab39165967c85e9e70cb48d706dc91ac1b1e689bc",
    "/store/product/wool-beanie":
        "77ab6738285e85590c73a4198a2f0f24aba9bde4150dd1e67e26626a6fbd7b52",
    "/store/product/straw-sunhat":
        "e6bb5191251b2c9232bfa9e70e9ee6ebfa3dcff7f8d849c25823379cc2a3ea9d",
    "/store/product/rain-cap": "628bf0948d6edf2f78dcd060d073b4fb99bd3a35e572d3812fa35f44784dfbe5",
    "/store/product/felt-fedora":
        "f89acfc53656c52d4c054b1ae13f16af63a15b2514628f63a6f316b4cf2d6805",
    "/store/product/canvas-tote":
        "730bd8b038b8087d11ccd915aba7b517ef138e447d62d8e793f1c5f76962bb73",
    "/store/product/leather-satchel":
        "99ab50c91594ad18207728406450e92b4bf7469d7200b381e2ba3a161250b9a9",
    "/store/product/day-pack": "42cb00e4320906773314a5066225a52acc85839b8bc8289bef1504557d78a819",
    "/store/product/bike-pannier":
        "a30acb5bd4559b7aca157840dd9b2037678f7a4ae1353add0cb14a277c2a3e5b",
    "lean": "125bb5799a80c4d0148c8bbca56a23a63f0d7491a9a03f880da663933ec1d42b",
    "bloated": "182a5ca9ad0406599aa2a86d9efc8d17311eff3e163ba7af16f9f755ee417c5e",
}
_THIRD_PARTY = "http://127.0.0.2:8081"
_FAILED_LOGIN = Markup('<p id="login-failed" role="alert">Wrong user or password.</p>')


def _without_token(page: bytes) -> bytes:
    return re.sub(rb"cb=[0-9a-f]{12}", b"cb=0", page)


def rendered(page: str) -> bytes:
    if page in STORE_PATHS:
        found = store_page(page)
        assert found is not None
        title, text, links = found
        return _render("store", title=title, text=text, links=links)
    if page.startswith("slow?ms="):
        return _render("slow", ms=page.removeprefix("slow?ms="))
    if page.startswith("login"):
        return _render("login", message=_FAILED_LOGIN if "failed" in page else Markup(""))
    if page in ("lean", "bloated"):
        return _without_token(_article(page, _THIRD_PARTY))
    return _render(page)


@pytest.mark.parametrize("page", sorted(PINNED))
def test_each_page_renders_to_its_pinned_bytes(page: str) -> None:
    assert hashlib.sha256(rendered(page)).hexdigest() == PINNED[page]


def test_every_store_page_is_pinned() -> None:
    assert set(STORE_PATHS) <= set(PINNED)


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with DemoServer() as server, httpx.Client(base_url=server.url, trust_env=False,
                                              timeout=10) as http:
        yield http


@pytest.mark.parametrize(("path", "page"), [
    ("/", "index"), ("/fast", "fast"), ("/heavy", "heavy"), ("/shift", "shift"),
    ("/shop", "shop"), ("/app", "app"), ("/login", "login"), ("/login?failed=1", "login?failed=1"),
    ("/slow?ms=0", "slow?ms=0"), ("/store/", "/store/"), ("/store/about", "/store/about"),
    ("/lean", "lean"),
])
def test_the_server_sends_the_pinned_bytes(client: httpx.Client, path: str, page: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert hashlib.sha256(response.content).hexdigest() == PINNED[page]


def test_the_bloated_article_is_pinned_but_for_its_token(client: httpx.Client) -> None:
    page = client.get("/bloated").content
    third_party = re.search(rb'src="(http://[^/"]+)/static/widget.js', page)
    assert third_party is not None
    normalised = _without_token(page).replace(third_party.group(1), _THIRD_PARTY.encode())
    assert hashlib.sha256(normalised).hexdigest() == PINNED["bloated"]
