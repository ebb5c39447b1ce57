"""``pagelab.connect()`` with ``PAGELAB_API_URL`` set: an ApiRunner that really talks to a
``pagelab serve`` started here (child process, worker off; the TTFB probe runs in the
server itself), against the bundled demo site on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from live_server import ServerProcess, create_key

import pagelab
from pagelab import ApiRunner
from pagelab.client import Client


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[ServerProcess, str]]:
    data_dir = tmp_path / "served"
    key = create_key(data_dir, lighthouse=5, ttfb=5)
    server = ServerProcess(data_dir, tmp_path / "serve.log", "--no-worker").start()
    try:
        yield server, key
    finally:
        server.stop()


def test_connect_with_an_api_url_talks_to_that_server(
    serve: tuple[ServerProcess, str], demo_url: str, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    server, key = serve
    monkeypatch.setenv("PAGELAB_API_URL", server.base_url)
    monkeypatch.setenv("PAGELAB_API_KEY", key)
    # A data dir given or set is not used: the runs and the store are the server's.
    with pagelab.connect(str(tmp_path / "unused")) as runner:
        assert isinstance(runner, ApiRunner)
        assert repr(runner) == f"ApiRunner({server.base_url!r})"
        # A real TTFB probe, made by the server, charged to this key.
        result = runner.ttfb(f"{demo_url}/fast", "oceania")
        assert result.vantage == "local"
        assert [r.status.value for r in result.result] == ["success"] * len(result.result)
        assert all(r.data is not None and r.data.timings.ttfb > 0 for r in result.result)
        # A Lighthouse test queued through the same runner is the server's, read back.
        created = runner.client.create_test(f"{demo_url}/fast", "desktop", "us")
        assert [t.id for t in runner.list()] == [created.id]
        got = runner.get(created.id or "")
        assert (got.id, got.status.value) == (created.id, "idle")
        assert {loc.id for loc in runner.locations()} >= {"us"}
    assert not (tmp_path / "unused").exists()
    # What the server's store says, seen by another client of the same key.
    with Client(server.base_url, key) as other:
        credits = other.get_credits()
    assert credits.ttfb.available_credits == 4
    assert credits.lighthouse.available_credits == 4


def test_connect_with_an_api_url_and_a_wrong_key_is_refused_by_the_server(
    serve: tuple[ServerProcess, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, _ = serve
    monkeypatch.setenv("PAGELAB_API_URL", server.base_url)
    monkeypatch.setenv("PAGELAB_API_KEY", "not-a-key")
    with pagelab.connect() as runner, pytest.raises(pagelab.AuthenticationError):
        runner.list()
