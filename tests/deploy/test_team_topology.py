"""docs/team.md's topology, as a team runs it: two replicas over one bucket (moto's S3) and
one PostgreSQL database, behind nginx with TLS and the path prefix ``/sumlens/``.

* a tag written through replica A shows through replica B, asked directly and in B's page
  in Chromium; B restarted (drained by SIGTERM, exit 0) shows it too;
* A killed by SIGKILL in the middle of a stream of writes through nginx: every write that
  was answered 2xx is in the state at the end; the ones that were not are retried by the
  client (nginx retries idempotent PUTs itself) and counted;
* with ``auth_request.conf``: a request the auth service does not approve never reaches a
  replica; an approved one lands as that user, whatever header the client forged.
"""

from __future__ import annotations

import threading
import time
from urllib.parse import urlsplit

import httpx
from helpers.board import wait_until
from helpers.team import EDITOR_TOKEN, SESSION_COOKIE, Team
from playwright.sync_api import Browser

SEEN_WITHIN = 1.0
"""Seconds a write on one replica may take to show on another (the issue's bound)."""
PAGE_BOUND = 15.0
"""Seconds B's open page may take to show it: its next poll of the run list, plus a
page on a loaded machine (a bound on a wait, not a budget)."""
STREAM = 400
"""Writes in the stream replica A is killed in the middle of."""


def _tags(client: httpx.Client, url: str, run: str) -> list[str]:
    runs = client.get(url).raise_for_status().json()["runs"]
    return next(item["annotation"]["tags"] for item in runs if item["id"] == run)


def _annotate(client: httpx.Client, url: str, tags: list[str]) -> None:
    body = {"tags": tags, "note": "", "colour": None}
    client.put(url, params={"run": "./alpha"}, json=body).raise_for_status()


def test_a_tag_written_through_a_shows_through_b_and_in_bs_page(
    team: Team, browser: Browser
) -> None:
    context = browser.new_context(
        ignore_https_errors=True, extra_http_headers={"Authorization": f"Bearer {EDITOR_TOKEN}"}
    )
    page = context.new_page()
    page.goto(team.b.url("/#/runs"))
    page.locator(".run-link", has_text="./alpha").first.wait_for(timeout=PAGE_BOUND * 1000)
    with team.direct() as client:
        _annotate(client, team.a.url("/api/v1/annotation"), ["from-a"])
        wait_until(
            lambda: "from-a" in _tags(client, team.b.url("/api/v1/runs"), "./alpha"),
            timeout=SEEN_WITHIN,
            interval=0.02,
        )
    page.locator('.run-tag[data-tag="from-a"]').first.wait_for(timeout=PAGE_BOUND * 1000)
    context.close()
    assert "from-a" in _tags(team.client, "api/v1/runs", "./alpha")  # and through nginx


def test_b_restarted_shows_the_tag(team: Team) -> None:
    _annotate(team.client, "api/v1/annotation", ["before-restart"])
    assert team.b.stop() == 0  # SIGTERM drains and exits 0
    team.b.start()
    with team.direct() as client:
        assert _tags(client, team.b.url("/api/v1/runs"), "./alpha") == ["before-restart"]


def test_killing_a_mid_stream_loses_no_answered_write(team: Team) -> None:
    """Group colours ``g0`` ... each once: what the state holds at the end is checkable
    write by write. The client retries a write that got no answer or a 5xx (up to 3
    tries); one that never succeeds is reported, not lost silently."""
    answered: list[str] = []
    retried: list[str] = []
    failed: list[str] = []
    half = threading.Event()

    def stream() -> None:
        for i in range(STREAM):
            name = f"g{i}"
            for attempt in range(3):
                try:
                    response = team.client.put(
                        "api/v1/group-colour", params={"group": name}, json={"colour": "#336699"}
                    )
                    if response.status_code < 300:
                        answered.append(name)
                        break
                except httpx.TransportError:
                    pass
                retried.append(name)
                time.sleep(0.05 * (attempt + 1))  # a client's back-off before its retry
            else:
                failed.append(name)
            if i == STREAM // 2:
                half.set()

    writer = threading.Thread(target=stream)
    writer.start()
    assert half.wait(120)
    team.a.kill()
    writer.join(300)
    assert not writer.is_alive()
    try:
        with team.direct() as client:
            exported = client.get(team.b.url("/api/v1/annotations")).raise_for_status().json()
        held = set(exported["group_colours"])
        lost = [name for name in answered if name not in held]
        assert lost == [], f"{len(lost)} answered writes lost: {lost[:10]}"
        assert failed == [], f"{len(failed)} writes failed after 3 tries (retried: {retried})"
        assert len(answered) == STREAM
    finally:
        team.a.start()  # the next test has both replicas again


def test_auth_request_lets_only_approved_requests_through(proxy_team: Team) -> None:
    nginx = proxy_team.nginx
    with httpx.Client(
        base_url=nginx.url, verify=str(nginx.certificate), timeout=30, trust_env=False
    ) as anonymous:
        refused = anonymous.get("api/v1/runs", headers={"X-Forwarded-User": "mallory"})
        assert refused.status_code == 401
        page = anonymous.get("")
        assert page.status_code == 302
        to = urlsplit(page.headers["location"])  # nginx makes the redirect absolute
        assert (to.path, to.query) == ("/oauth2/start", "rd=/sumlens/")
    with httpx.Client(
        base_url=nginx.url,
        verify=str(nginx.certificate),
        timeout=30,
        trust_env=False,
        cookies={SESSION_COOKIE: "carol"},
    ) as carol:
        session = carol.get("api/v1/session", headers={"X-Forwarded-User": "mallory"}).json()
        assert (session["mode"], session["user"], session["role"]) == ("proxy", "carol", "editor")
        _annotate(carol, "api/v1/annotation", ["from-carol"])
        entries = carol.get("api/v1/audit").raise_for_status().json()["entries"]
        assert (entries[0]["user"], entries[0]["action"]) == ("carol", "annotation.set")
    with httpx.Client(
        base_url=nginx.url,
        verify=str(nginx.certificate),
        timeout=30,
        trust_env=False,
        cookies={SESSION_COOKIE: "dave"},
    ) as dave:
        denied = dave.put(
            "api/v1/annotation",
            params={"run": "./alpha"},
            json={"tags": ["from-dave"], "note": "", "colour": None},
        )
        assert denied.status_code == 403  # a viewer: the group guests has no role
