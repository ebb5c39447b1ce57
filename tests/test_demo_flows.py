"""The demo site's pages for user flows, over plain HTTP: the sign-in form's session cookie
unlocks the members page; the single-page app serves every route. (The flows themselves run
in tests/test_flow_runs_engine.py.)"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from pagelab.demo import DemoServer


@pytest.fixture(scope="module")
def site() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


def test_the_members_page_needs_the_session_cookie(site: DemoServer) -> None:
    with httpx.Client(base_url=site.url, follow_redirects=False) as client:
        assert client.get(site.page_url("members")).headers["location"] == "/login"
        wrong = client.post(f"{site.url}/login", data={"user": "ada", "password": "guess"})
        assert (wrong.status_code, wrong.headers["location"]) == (303, "/login?failed=1")
        assert 'id="login-failed"' in client.get(wrong.headers["location"]).text
        assert client.get(site.page_url("members")).status_code == 303
        right = client.post(f"{site.url}/login",
                            data={"user": "ada", "password": site.password})
        assert (right.status_code, right.headers["location"]) == (303, "/members")
        assert "HttpOnly" in right.headers["set-cookie"]
        members = client.get(site.page_url("members"))
        assert members.status_code == 200
        assert 'id="members"' in members.text
    # Another client (another browser) is not signed in.
    assert httpx.get(site.page_url("members"), follow_redirects=True).url.path == "/login"


def test_a_sign_in_form_too_large_is_refused(site: DemoServer) -> None:
    response = httpx.post(f"{site.url}/login", content=b"x" * 10_000,
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 400


def test_the_app_serves_every_route(site: DemoServer) -> None:
    home = httpx.get(site.page_url("app?render=50"))
    details = httpx.get(f"{site.url}/app/details")
    assert home.status_code == details.status_code == 200
    assert home.text == details.text  # one document: the client draws the route's view
    assert 'id="to-details"' in home.text
