"""The build on the API (issue 37, point 1): an optional ``build`` object on the creation
bodies and on every report, ``branch`` / ``commit`` filters on the list, bad input refused
with an error body; the ApiRunner sends the build it resolves, and ``pagelab.history``
reads a server's runs in build order. A real server on loopback, each store (worker off:
tests stay queued unless a test finishes them in the server's store)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from live_server import LiveServer

import pagelab
from pagelab import ApiRunner, RequestTimeoutError
from pagelab.models import Build, Metrics, TestStatus
from pagelab.store import finish_test, transaction

PAGE = "https://a.test/"
BUILD = {"commit": "a" * 40, "branch": "main", "commit_time": 1_764_000_000_000,
         "build_url": "https://ci.example/runs/7", "pull_request": "42"}


def _create(client: httpx.Client, **body: Any) -> httpx.Response:
    return client.post("/v1/lighthouse-tests", json={"url": PAGE, **body})


def _listed(client: httpx.Client, **params: str) -> list[str]:
    response = client.get("/v1/lighthouse-tests", params={"per_page": "100", **params})
    assert response.status_code == 200, response.text
    return [item["id"] for item in response.json()["data"]]


def test_a_test_created_with_a_build_reports_it_and_the_list_filters_by_it(
        server: LiveServer) -> None:
    with server.client(server.key()) as client:
        created = _create(client, build=BUILD)
        assert created.status_code == 201, created.text
        assert created.json()["build"] == BUILD
        test_id = created.json()["id"]
        assert client.get(f"/v1/lighthouse-tests/{test_id}").json()["build"] == BUILD
        # A client that sends no build is unaffected: its test has none.
        plain = _create(client)
        assert plain.status_code == 201
        assert plain.json()["build"] is None
        other = _create(client, build={"commit": "b" * 40, "branch": "feature"}).json()["id"]
        assert _listed(client, branch="main") == [test_id]
        assert _listed(client, commit="b" * 40) == [other]
        assert _listed(client, branch="main", commit="b" * 40) == []
        assert set(_listed(client)) == {test_id, plain.json()["id"], other}


def test_a_batch_s_items_carry_its_build(server: LiveServer) -> None:
    with server.client(server.key()) as client:
        response = client.post("/v1/lighthouse-batch-tests", json={
            "urls": [PAGE, "https://b.test/"], "devices": ["mobile"], "locations": ["us"],
            "batch_type": "multiple-urls", "build": {"commit": "c1", "branch": "main"}})
        assert response.status_code == 201, response.text
        items = response.json()["reports"]
        assert [item["build"]["commit"] for item in items] == ["c1", "c1"]
        again = client.get(f"/v1/lighthouse-batch-tests/{response.json()['id']}").json()
        assert [item["build"]["branch"] for item in again["reports"]] == ["main", "main"]
        assert sorted(_listed(client, commit="c1")) == sorted(i["id"] for i in items)


@pytest.mark.parametrize(("build", "words"), [
    ("main", "build: Input should be an object"),
    ({"branch": "main"}, "build.commit: Field required"),
    ({"commit": "x" * 101}, "build.commit: String should have at most 100 characters"),
    ({"commit": "a", "branch": 7}, "build.branch: Input should be a valid string"),
    ({"commit": "a", "build_url": "javascript:alert(1)"},
     "build.build_url: must be an http:// or https:// address"),
    ({"commit": "a", "commit_time": "yesterday"}, "build.commit_time"),
    ({"commit": "a", "commit_time": 1e20}, "build.commit_time: timestamp out of range"),
])
def test_a_bad_build_is_refused_with_an_error_body_and_nothing_is_created(
        server: LiveServer, build: object, words: str) -> None:
    with server.client(server.key(lighthouse=5)) as client:
        response = _create(client, build=build)
        assert response.status_code == 400
        body = response.json()
        assert body["code"] == "invalid_request"
        assert body["message"].startswith(words), body
        assert _listed(client) == []
        credits = client.get("/v1/account/credits").json()["lighthouse"]
        assert credits["available_credits"] == 5


def test_an_over_long_list_filter_is_refused(server: LiveServer) -> None:
    with server.client(server.key()) as client:
        for params in ({"branch": "b" * 256}, {"commit": "c" * 101}):
            response = client.get("/v1/lighthouse-tests", params=params)
            assert response.status_code == 400
            assert response.json()["code"] == "invalid_request"
            assert next(iter(params)) in response.json()["message"]


def test_the_api_runner_sends_the_build_it_resolves(
        server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    key = server.key()
    with ApiRunner(server.base_url, key, wait_timeout=0.3, poll_interval=0.1) as runner:
        with pytest.raises(RequestTimeoutError):  # the worker is off: it stays queued
            runner.lighthouse(PAGE, build=Build(commit="given", branch="main"))
        monkeypatch.setenv("PAGELAB_COMMIT", "from-env")
        monkeypatch.setenv("PAGELAB_BRANCH", "release")
        with pytest.raises(RequestTimeoutError):
            runner.lighthouse(PAGE)
        with pytest.raises(RequestTimeoutError):
            runner.batch([PAGE, "https://b.test/"], ["mobile"], ["us"],
                         build={"commit": "batch"})
        with pytest.raises(RequestTimeoutError):
            pagelab.measure([PAGE, "https://b.test/"], runs=2, runner=runner,
                            progress=False, build={"commit": "matrix", "branch": "main"})
        assert [r.build for r in runner.list(commit="given")] == [
            Build(commit="given", branch="main")]
        assert [r.build for r in runner.list(branch="release")] == [
            Build(commit="from-env", branch="release")]
        assert len(runner.list(commit="batch")) == 2
        # measure submits ahead: both cells of run 0 (one batch) before timing out.
        matrix = runner.list(commit="matrix", per_page=100)
        assert len(matrix) >= 2
        assert {r.url for r in matrix} == {PAGE, "https://b.test/"}


def test_history_reads_a_server_s_runs_in_build_order(server: LiveServer) -> None:
    key = server.key()
    with server.client(key) as client:
        ids = {commit: [_create(client, build={"commit": commit, "branch": branch}).json()["id"]
                        for _ in range(2)]
               for commit, branch in (("z1", "main"), ("a2", "main"), ("m3", "feature"))}
    # Build z1's second run after a2's first: build order is by each build's first run.
    start = datetime.now(UTC) - timedelta(minutes=30)
    minutes = {ids["z1"][0]: 0, ids["a2"][0]: 1, ids["z1"][1]: 2, ids["a2"][1]: 3,
               ids["m3"][0]: 4, ids["m3"][1]: 5}
    with server.store.connection() as conn, transaction(conn):
        for test_id, minute in minutes.items():
            conn.execute("UPDATE tests SET created_at = ? WHERE id = ?",
                         (int((start + timedelta(minutes=minute)).timestamp() * 1000), test_id))
            finish_test(conn, test_id, status=TestStatus.SUCCESS, lighthouse_version="13",
                        metrics=Metrics(largest_contentful_paint=1000.0 + minute), error=None,
                        vantage="local", environment=None)
    with ApiRunner(server.base_url, key) as runner:
        main = pagelab.history(PAGE, branch="main", runner=runner)
        everything = pagelab.history(runner=runner)
    frame = main.frame
    assert frame["commit"].tolist() == ["z1", "z1", "a2", "a2"]
    assert frame["id"].tolist() == [ids["z1"][0], ids["z1"][1], ids["a2"][0], ids["a2"][1]]
    assert frame["largest_contentful_paint"].tolist() == [1000.0, 1002.0, 1001.0, 1003.0]
    assert everything.frame["commit"].tolist() == ["z1", "z1", "a2", "a2", "m3", "m3"]
