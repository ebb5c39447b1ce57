"""DNS rebinding against a real ``pagelab serve`` (issue 22, finding 2; docs/security.md).

The server runs as a child process with its in-process worker and the real engine, the
policy allowing only 127.0.0.1 (``--allow-target 127.0.0.1/32``) and ``--dns-server``
pointed at a DNS server the test starts. Each rebinding name answers 127.0.0.1 at its first
A query and 127.0.0.2 at the next: allowed when checked, forbidden a moment later. The
forbidden server on 127.0.0.2 records every connection and request and must see none; an
allowed twin on 127.0.0.1 listens on its very port, so a connection made to the checked
address succeeds.

The assertions also need positive evidence that the names went through the egress proxy
(the query counts, the twin's requests): without the proxy Chromium asks the system
resolver, which knows none of these names, and "nothing reached" would hold vacuously.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from live_server import ServerProcess, create_key, wait_final

from fixtures_dns import LoopbackDns
from fixtures_site import RecordingSite, page

#: The test's URL has this host: the guard's look-up at creation gets 127.0.0.1, the
#: proxy's look-up in the run gets 127.0.0.2.
URL_NAME = "rebind.test"
#: An allowed page loads subresources from this host: the proxy's one look-up gets
#: 127.0.0.1 and every connection of the run is pinned to it.
SUBRESOURCE_NAME = "assets.test"
SUBRESOURCES = ("/app.js", "/pixel.gif?1", "/pixel.gif?2", "/pixel.gif?3")

# What the runs reach is under test, not what they measure: the server the module starts
# runs them with the short quiet window (conftest.py).
pytestmark = pytest.mark.usefixtures("quick_navigation")


@dataclass(frozen=True)
class RebindingSetup:
    server: ServerProcess
    key: str
    names: LoopbackDns
    allowed: RecordingSite
    forbidden: RecordingSite
    twin: RecordingSite


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RebindingSetup]:
    root = tmp_path_factory.mktemp("rebinding")
    with RecordingSite("127.0.0.2") as forbidden, RecordingSite() as allowed, \
            RecordingSite("127.0.0.1", forbidden.port) as twin, \
            LoopbackDns({name: ["127.0.0.1", "127.0.0.2"]
                          for name in (URL_NAME, SUBRESOURCE_NAME)}) as names:
        for site in (forbidden, twin):
            site.add("/", page(f"<h1>served by {site.origin}</h1>", beacon=False))
            site.add("/app.js", "window.app = 1;", content_type="text/javascript")
            site.add("/pixel.gif", b"GIF89a", content_type="image/gif")
        server = ServerProcess(
            root / "data", root / "server.log", "--allow-target", "127.0.0.1/32",
            "--dns-server", names.address, allow_private_targets=False,
        ).start()
        try:
            yield RebindingSetup(server, create_key(root / "data"), names, allowed,
                                 forbidden, twin)
        finally:
            server.stop()


def _run(setup: RebindingSetup, url: str) -> dict[str, Any]:
    """Create a Lighthouse test of ``url`` and wait for its final report."""
    with httpx.Client(base_url=setup.server.base_url, timeout=30,
                      headers={"X-API-KEY": setup.key}) as client:
        created = client.post("/v1/lighthouse-tests", json={"url": url, "device": "desktop"})
        assert created.status_code == 201, created.text
        return wait_final(client, created.json()["id"])


@pytest.mark.engine
def test_a_url_whose_name_rebinds_after_the_check_reaches_nothing(
    setup: RebindingSetup,
) -> None:
    url = f"http://{URL_NAME}:{setup.twin.port}/"
    report = _run(setup, url)  # created: the guard's look-up answered 127.0.0.1
    # The run's own look-up (the egress proxy's) answered 127.0.0.2: refused, so the page
    # never loaded.
    assert setup.forbidden.requests == []
    assert setup.forbidden.connections == 0
    assert report["status"] == "failed", report
    assert setup.names.a_queries(URL_NAME) == 2  # the guard's, then the proxy's
    assert setup.twin.requests_for("/") == []


@pytest.mark.engine
def test_a_page_referencing_a_rebinding_name_reaches_only_the_checked_address(
    setup: RebindingSetup,
) -> None:
    origin = f"http://{SUBRESOURCE_NAME}:{setup.twin.port}"
    url = setup.allowed.add("/page", page(
        "<h1>rebinding subresources</h1>"
        + "".join(f'<img src="{origin}{path}">' for path in SUBRESOURCES[1:]),
        head=f'<script src="{origin}{SUBRESOURCES[0]}"></script>', beacon=False,
    ))
    report = _run(setup, url)
    assert report["status"] == "success", report["error"]
    assert setup.forbidden.requests == []
    assert setup.forbidden.connections == 0
    assert setup.allowed.requests_for("/page")
    # One look-up for the whole run (127.0.0.1, checked and pinned): the answer 127.0.0.2
    # was never asked for, and every subresource came from the checked address.
    assert setup.names.a_queries(SUBRESOURCE_NAME) == 1
    assert {r.path for r in setup.twin.requests} >= {"/app.js", "/pixel.gif"}
