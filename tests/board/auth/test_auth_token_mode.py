"""``--auth token`` over the real server: who may read, who may write, the session cookie.

alice is an editor, bob a viewer, root@ops an admin (``auth_cases``). A request without a
token is a 401 (the page sends a person to the sign-in page); a viewer's write is a 403
naming the role needed and the one held; an editor's write lands and is in the audit log.
The session cookie one server made verifies on a second server with the same token file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from auth_cases import BOUND, NOTE, RUN, TOKENS, Serve, bearer

from sumlens.board.server.tokens import COOKIE_NAME, SESSION_SECONDS, TokenBook


@pytest.fixture
def url(serve: Serve, token_file: Path, roles_file: Path) -> Iterator[str]:
    with serve(auth="token", token_file=token_file, roles_file=roles_file) as served:
        yield served


def test_without_a_token_the_data_is_refused_and_the_page_sends_to_sign_in(url: str) -> None:
    for path in ("/api/v1/runs", f"/api/v1/scalars?run={RUN}", "/api/v1/annotations"):
        answer = httpx.get(url + path, timeout=BOUND)
        assert answer.status_code == 401, path
        assert answer.headers["WWW-Authenticate"] == "Bearer"
        assert "not signed in" in answer.json()["detail"]
    page = httpx.get(url + "/", timeout=BOUND)
    assert page.status_code == 303 and page.headers["location"] == "/signin"
    signin = httpx.get(url + "/signin", timeout=BOUND)
    assert signin.status_code == 200 and 'type="password"' in signin.text
    for path in ("/static/signin/signin.js", "/static/signin/signin.css", "/static/core/api.js"):
        assert httpx.get(url + path, timeout=BOUND).status_code == 200, path
    assert httpx.get(url + "/static/app.js", timeout=BOUND).status_code == 401
    health = httpx.get(url + "/api/v1/health", timeout=BOUND)
    assert health.status_code == 200


def test_a_wrong_token_is_a_401_that_does_not_repeat_it(url: str) -> None:
    wrong = "not-a-token-of-this-server-42"
    answer = httpx.get(url + "/api/v1/runs", headers={"Authorization": f"Bearer {wrong}"})
    assert answer.status_code == 401 and wrong not in answer.text
    answer = httpx.post(url + "/api/v1/session", json={"token": wrong}, timeout=BOUND)
    assert answer.status_code == 401 and wrong not in answer.text
    assert "set-cookie" not in answer.headers


def test_a_viewer_reads_and_may_not_write(url: str) -> None:
    assert httpx.get(url + "/api/v1/runs", headers=bearer("bob"), timeout=BOUND).status_code == 200
    answer = httpx.put(
        url + "/api/v1/annotation", params={"run": RUN}, json=NOTE, headers=bearer("bob")
    )
    assert answer.status_code == 403
    detail = answer.json()["detail"]
    assert "needs the role editor" in detail and "'bob' holds viewer" in detail
    audit = httpx.get(url + "/api/v1/audit", headers=bearer("bob"), timeout=BOUND)
    assert audit.status_code == 403 and "needs the role editor" in audit.json()["detail"]


def test_an_editors_write_lands_and_is_audited(url: str) -> None:
    answer = httpx.put(
        url + "/api/v1/annotation", params={"run": RUN}, json=NOTE, headers=bearer("alice")
    )
    assert answer.status_code == 200, answer.text
    runs = httpx.get(url + "/api/v1/annotations", headers=bearer("bob"), timeout=BOUND).json()
    assert runs["annotations"][RUN]["note"] == NOTE["note"]
    entries = httpx.get(url + "/api/v1/audit", headers=bearer("alice"), timeout=BOUND).json()
    newest = entries["entries"][0]
    assert (newest["user"], newest["role"], newest["action"], newest["target"]) == (
        "alice",
        "editor",
        "annotation.set",
        RUN,
    )
    imported = httpx.post(
        url + "/api/v1/annotations", json={"annotations": {}}, headers=bearer("alice")
    )
    assert imported.status_code == 403 and "needs the role admin" in imported.json()["detail"]


def test_the_session_cookie_signs_in_and_out(url: str) -> None:
    with httpx.Client(base_url=url, timeout=BOUND) as client:
        answer = client.post("/api/v1/session", json={"token": TOKENS["alice"]})
        assert answer.status_code == 200
        assert answer.json()["user"] == "alice" and answer.json()["can_write"] is True
        flags = [part.strip().lower() for part in answer.headers["set-cookie"].split(";")]
        assert "httponly" in flags and "samesite=strict" in flags and "path=/" in flags
        assert "secure" not in flags  # plain HTTP, no trusted proxy said https
        assert f"max-age={SESSION_SECONDS}" in flags
        assert TOKENS["alice"] not in answer.headers["set-cookie"]
        assert client.get("/api/v1/runs").status_code == 200
        session = client.get("/api/v1/session").json()
        assert session == {
            "mode": "token",
            "user": "alice",
            "role": "editor",
            "read_only": False,
            "can_write": True,
            "can_admin": False,
            "why": None,
        }
        assert client.get("/", follow_redirects=False).status_code == 200
        assert client.delete("/api/v1/session").status_code == 200
        assert COOKIE_NAME not in client.cookies
        assert client.get("/api/v1/runs").status_code == 401
        assert client.get("/api/v1/session").json()["why"] == "You are not signed in."


def test_an_expired_or_altered_cookie_is_refused(url: str, token_file: Path) -> None:
    book = TokenBook(token_file)
    expired = book.make_session("alice", now=time.time() - SESSION_SECONDS - 5)
    fresh = book.make_session("alice")
    name, expiry, mac = fresh.rsplit(".", 2)
    altered = [
        f"bob.{expiry}.{mac}",  # another name
        f"{name}.{int(expiry) + 3600}.{mac}",  # a later expiry
        f"{name}.{expiry}.{'0' * len(mac)}",  # a made-up MAC
        f"{name}.{int(time.time()) + 10 * SESSION_SECONDS}.{mac}",  # too far ahead
    ]
    for value in [expired, *altered]:
        answer = httpx.get(url + "/api/v1/runs", cookies={COOKIE_NAME: value}, timeout=BOUND)
        assert answer.status_code == 401, value
    ok = httpx.get(url + "/api/v1/runs", cookies={COOKIE_NAME: fresh}, timeout=BOUND)
    assert ok.status_code == 200


def test_a_cookie_from_one_replica_verifies_on_another(
    serve: Serve, url: str, token_file: Path, roles_file: Path
) -> None:
    first = httpx.post(url + "/api/v1/session", json={"token": TOKENS["root@ops"]})
    cookie = first.cookies[COOKIE_NAME]
    with serve(auth="token", token_file=token_file, roles_file=roles_file) as second:
        session = httpx.get(second + "/api/v1/session", cookies={COOKIE_NAME: cookie}).json()
        assert session["user"] == "root@ops" and session["can_admin"] is True


def test_the_cookie_is_secure_behind_a_trusted_proxy_over_tls(
    serve: Serve, token_file: Path
) -> None:
    with serve(
        auth="token", token_file=token_file, trusted_proxies="127.0.0.1", url_path_prefix="/team"
    ) as url:
        answer = httpx.post(
            url + "/api/v1/session",
            json={"token": TOKENS["alice"]},
            headers={"X-Forwarded-Proto": "https"},
        )
        flags = [part.strip().lower() for part in answer.headers["set-cookie"].split(";")]
        assert "secure" in flags and "path=/team/" in flags
        page = httpx.get(url + "/", timeout=BOUND)
        assert page.status_code == 303 and page.headers["location"] == "/team/signin"


def test_the_token_file_is_followed_without_a_restart(
    serve: Serve, tmp_path: Path, token_file: Path
) -> None:
    mine = tmp_path / "tokens.txt"
    mine.write_text(token_file.read_text())
    with serve(auth="token", token_file=mine) as url:
        late = "erin-token-0123456789abcdef"
        assert (
            httpx.get(url + "/api/v1/runs", headers={"Authorization": f"Bearer {late}"}).status_code
            == 401
        )
        mine.write_text(mine.read_text() + f"erin:{late}\n")
        later = os.stat(mine).st_mtime_ns + 10**9
        os.utime(mine, ns=(later, later))
        answer = httpx.get(url + "/api/v1/runs", headers={"Authorization": f"Bearer {late}"})
        assert answer.status_code == 200
        good = mine.read_text()
        mine.write_text("erin:short\n")  # a bad edit (or one caught half way): no token
        os.utime(mine, ns=(later, later))  # even within the same tick of the clock
        answer = httpx.get(url + "/api/v1/runs", headers={"Authorization": f"Bearer {late}"})
        assert answer.status_code == 401
        mine.write_text(good)  # mended: read again at the next request
        os.utime(mine, ns=(later, later))
        answer = httpx.get(url + "/api/v1/runs", headers={"Authorization": f"Bearer {late}"})
        assert answer.status_code == 200
        mine.unlink()  # deleting the file revokes every token
        answer = httpx.get(url + "/api/v1/runs", headers={"Authorization": f"Bearer {late}"})
        assert answer.status_code == 401


def test_no_page_or_answer_holds_a_token(url: str) -> None:
    with httpx.Client(base_url=url, timeout=BOUND, headers=bearer("root@ops")) as client:
        bodies = [
            client.get(path).text
            for path in ("/", "/signin", "/api/v1/health", "/api/v1/session", "/api/v1/runs")
        ]
        bodies.append(client.get("/api/v1/openapi.json").text)
    for token in TOKENS.values():
        assert not any(token in body for body in bodies)


def test_the_open_routes_read_little_and_open_only_the_sign_in_files(url: str) -> None:
    """Anyone may sign in, so a sign-in body is read up to 8 KiB only; and the sign-in
    page's files are open by their exact paths, not by a prefix a path can climb out of."""
    huge = {"token": "x" * 10_000}
    refused = httpx.post(url + "/api/v1/session", json=huge, timeout=BOUND)
    assert refused.status_code == 400 and "8,192 bytes" in refused.json()["detail"]
    assert httpx.get(url + "/static/signin/signin.js", timeout=BOUND).status_code == 200
    for climbing in ("/static/signin/%2e%2e/app.js", "/static/signin/../app.js"):
        answer = httpx.get(url + climbing, timeout=BOUND)
        assert answer.status_code == 401, climbing
