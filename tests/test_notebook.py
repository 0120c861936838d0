"""The dashboard in a notebook: ``%load_ext sumlens``, ``%sumlens`` and ``show``, in a real
IPython shell, with real background servers (``sumlens start``'s), behind a real Jupyter
server's jupyter-server-proxy in headless Chromium, and framed by a page of another local
origin (a notebook on another port), which the dashboard started for it lets frame it."""

from __future__ import annotations

import re
import socket
import urllib.error
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from helpers.board import free_port, get_json, wait_until, write_run
from helpers.board_page import WAIT_MS, BoardPage
from helpers.notebook_server import NO_PROXY, jupyter_server, stop_all
from helpers.page_server import page_server
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from playwright.sync_api import Browser, Page

from sumlens.notebook import (
    LOCAL_FRAME_ANCESTORS,
    SERVICE_PREFIX_ENV,
    Dashboard,
    NotebookError,
    show,
)

HUB_USER_PATH = "/user/tester/"
_IFRAME = re.compile(r'<iframe src="([^"]+)"')


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A base directory of one run, ``./run``."""
    folder = tmp_path_factory.mktemp("notebook") / "base"
    write_run(folder / "run", range(1, 11))
    return folder


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The test's workspace; every dashboard started there is stopped at the end. Not
    behind a hub unless the test says so."""
    monkeypatch.delenv(SERVICE_PREFIX_ENV, raising=False)
    folder = tmp_path / "workspace"
    yield folder
    stop_all(folder)


@pytest.fixture(scope="module")
def shell() -> InteractiveShell:
    """A real IPython shell with the extension loaded."""
    ipython = InteractiveShell.instance()
    ipython.run_line_magic("load_ext", "sumlens")
    return ipython


def _magic(shell: InteractiveShell, line: str) -> str:
    """Run ``%sumlens line``; the HTML it displayed."""
    with capture_output() as captured:
        shell.run_line_magic("sumlens", line)
    [output] = captured.outputs
    return str(output.data["text/html"])


def _frame_address(shown: str) -> str:
    found = _IFRAME.search(shown)
    assert found, shown
    return unescape(found[1])


def _cell_error(shell: InteractiveShell, cell: str, capsys: pytest.CaptureFixture[str]) -> str:
    """What a cell that fails shows (stdout and stderr), which must be one line."""
    capsys.readouterr()
    result = shell.run_cell(cell)
    assert result.error_in_exec is not None
    shown = "".join(capsys.readouterr()).strip()
    assert "Traceback" not in shown and len(shown.splitlines()) == 1, shown
    return shown


def test_the_magic_starts_a_dashboard_and_frames_it(
    shell: InteractiveShell, base: Path, workspace: Path
) -> None:
    shown = _magic(shell, f"--logdir {base} --workspace {workspace} --height 600")
    address = _frame_address(shown)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", address), address
    assert 'height="600"' in shown
    runs = wait_until(lambda: get_json(f"{address}api/v1/runs"))
    assert [run["id"] for run in runs["runs"]] == ["./run"]
    health = get_json(f"{address}api/v1/health")
    assert health is not None and health["base_dir"] == str(base)

    again = _magic(shell, f"--logdir {base} --workspace {workspace}")
    assert _frame_address(again) == address
    assert "already running" in again
    assert (get_json(f"{address}api/v1/health") or {}).get("pid") == health["pid"]
    assert len(list(workspace.glob("sumlens-*.json"))) == 1


def test_show_hands_back_the_server_and_stops_it(base: Path, workspace: Path) -> None:
    port = free_port()
    with capture_output():
        dashboard = show(base, port=port, workspace=workspace, reload_interval=0.5)
    assert isinstance(dashboard, Dashboard)
    assert (dashboard.server.port, dashboard.reused, dashboard.proxied) == (port, False, False)
    assert dashboard.address == f"http://127.0.0.1:{port}/"
    answer = get_json(f"{dashboard.address}api/v1/health")
    assert answer is not None and answer["pid"] == dashboard.server.pid
    with capture_output():
        assert show(base, workspace=workspace).server == dashboard.server  # no port: reused
    dashboard.stop()
    assert get_json(f"{dashboard.address}api/v1/health") is None
    assert not list(workspace.glob("sumlens-*.json"))


def test_serve_flags_reach_the_server(shell: InteractiveShell, base: Path, workspace: Path) -> None:
    shown = _magic(
        shell,
        f"--logdir={base} --workspace {workspace} --no-watch --reload-interval 0.5 "
        "--url-path-prefix /board",
    )
    address = _frame_address(shown)
    assert address.endswith("/board/")
    health = wait_until(lambda: get_json(f"{address}api/v1/health"))
    assert health["watching"] is False


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("--logdir {missing}", "does not exist"),
        ("--logdir {base} --bogus 3", "--bogus is not a flag of the dashboard"),
        ("--port 8080", "needs --logdir"),
        ("--logdir {base} --port eighty", "--port 'eighty' is not a whole number"),
        ("--logdir {base} --port 70000", "--port 70000 is not allowed"),
        ("--logdir {base} --height 5", "height=5 is not allowed"),
        ("--logdir {base} --reload-interval", "--reload-interval needs a value"),
        ("--logdir {base} --proxy=user/x", "proxy='user/x' is not allowed"),
        ("--logdir {base} stray", "'stray' is not a flag"),
    ],
)
def test_bad_input_is_one_line_in_the_cell(
    shell: InteractiveShell,
    base: Path,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    line: str,
    said: str,
) -> None:
    cell = (
        "%sumlens " + line.format(base=base, missing=base / "missing") + f" --workspace {workspace}"
    )
    shown = _cell_error(shell, cell, capsys)
    assert shown.startswith("sumlens: error:") and said in shown, shown
    assert not list(workspace.glob("sumlens-*.json"))


def test_a_port_taken_by_something_else_is_said(
    shell: InteractiveShell, base: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cell = f"%sumlens --logdir {base} --port {port} --workspace {workspace}"
        shown = _cell_error(shell, cell, capsys)
    assert f"--port {port}: the port is already in use" in shown, shown


def _framing_policy(address: str) -> str:
    """The ``Content-Security-Policy`` the dashboard at ``address`` answers with."""
    with NO_PROXY.open(f"{address}api/v1/health", timeout=10) as response:
        return str(response.headers["Content-Security-Policy"])


def test_a_local_dashboard_lets_this_machines_pages_frame_it(
    shell: InteractiveShell, base: Path, workspace: Path
) -> None:
    """Started for a local notebook (another origin than the dashboard's), the server
    lets pages of this machine frame it; a caller's own origins replace those."""
    address = _frame_address(_magic(shell, f"--logdir {base} --workspace {workspace}"))
    assert _framing_policy(address) == " ".join(
        ("frame-ancestors", "'self'", *LOCAL_FRAME_ANCESTORS)
    )
    shown = _magic(
        shell,
        f"--logdir {base} --workspace {workspace} --port {free_port()} "
        "--frame-ancestors http://localhost:8888,http://127.0.0.1:8888",
    )
    assert _framing_policy(_frame_address(shown)) == (
        "frame-ancestors 'self' http://localhost:8888 http://127.0.0.1:8888"
    )
    assert "frame-ancestors" not in shown  # it lets this notebook's page frame it


def test_a_reused_dashboard_that_may_not_be_framed_is_said(base: Path, workspace: Path) -> None:
    with capture_output():
        started = show(base, workspace=workspace, frame_ancestors=())
    assert started.frameable and _framing_policy(started.address) == "frame-ancestors 'self'"
    with capture_output() as captured:
        reused = show(base, workspace=workspace)
    assert reused.server == started.server and not reused.frameable
    shown = captured.outputs[0].data["text/html"]
    [said] = [line for line in shown.splitlines() if "--frame-ancestors" in line]
    assert "stop it" in said and "open it in a new tab" in said


def test_show_refuses_what_is_no_setting(base: Path, workspace: Path) -> None:
    with pytest.raises(NotebookError, match="colour: not a setting of the dashboard"):
        show(base, workspace=workspace, colour="red")
    with pytest.raises(NotebookError, match="url_path_prefix='/x' can't be combined"):
        show(base, workspace=workspace, proxy=True, url_path_prefix="/x")
    with pytest.raises(NotebookError, match="--frame-ancestors entry 'localhost' is not allowed"):
        show(base, workspace=workspace, frame_ancestors="localhost")


# Behind jupyter-server-proxy


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Jupyter server under a hub's user path, with jupyter-server-proxy."""
    with jupyter_server(tmp_path_factory.mktemp("jupyter"), HUB_USER_PATH) as address:
        yield address


@pytest.fixture
def behind_hub(shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's environment as JupyterHub sets it (in the IPython shell, whose display
    the captures read)."""
    monkeypatch.setenv(SERVICE_PREFIX_ENV, HUB_USER_PATH)


def _fetch(url: str) -> tuple[int, bytes, Any]:
    try:
        with NO_PROXY.open(url, timeout=10) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as err:
        return err.code, err.read(), err.headers


def test_behind_the_proxy_the_frame_goes_through_the_notebook_server(
    jupyter: str, base: Path, workspace: Path, behind_hub: None
) -> None:
    with capture_output() as captured:
        dashboard = show(base, workspace=workspace)
    port = dashboard.server.port
    assert dashboard.proxied
    assert dashboard.address == f"{HUB_USER_PATH}proxy/absolute/{port}/"
    shown = captured.outputs[0].data["text/html"]
    assert _frame_address(shown) == dashboard.address
    assert "--allowed-hosts" in shown  # what to do when the hub's own name is refused
    status, page, _ = _fetch(jupyter + dashboard.address)
    assert status == 200 and b"<!doctype html>" in page
    runs = wait_until(lambda: get_json(f"{jupyter}{dashboard.address}api/v1/runs"))
    assert [run["id"] for run in runs["runs"]] == ["./run"]
    with capture_output():
        assert show(base, workspace=workspace).server == dashboard.server  # reused


def test_a_base_path_the_prefix_rule_refuses_uses_the_stripping_proxy(
    tmp_path: Path, base: Path, workspace: Path
) -> None:
    user_path = "/user/ana@example.org/"  # an e-mail user name, as OAuth hubs make them
    with jupyter_server(tmp_path / "jupyter", user_path) as address:
        with capture_output():
            dashboard = show(base, workspace=workspace, proxy=user_path)
        assert dashboard.address == f"{user_path}proxy/{dashboard.server.port}/"
        runs = wait_until(lambda: get_json(f"{address}{dashboard.address}api/v1/runs"))
        assert [run["id"] for run in runs["runs"]] == ["./run"]
        status, page, _ = _fetch(address + dashboard.address)
        assert status == 200 and b"<!doctype html>" in page


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page; its test fails on a script error in it."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(WAIT_MS)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    context.close()
    assert not errors, errors


def _proxied_dashboard(base: Path, workspace: Path) -> Dashboard:
    with capture_output():
        return show(base, workspace=workspace)


def test_the_page_through_the_proxy_lists_the_run(
    jupyter: str, base: Path, workspace: Path, behind_hub: None, page: Page, tmp_path: Path
) -> None:
    dashboard = _proxied_dashboard(base, workspace)
    board = BoardPage(page, jupyter + dashboard.address.rstrip("/"), tmp_path)
    board.open()
    board.wait_runs_listed(["./run"])


def test_the_frame_in_the_notebook_page_shows_the_dashboard(
    jupyter: str, base: Path, workspace: Path, behind_hub: None, page: Page
) -> None:
    """The cell's HTML placed in a page of the notebook server's origin, as Jupyter shows a
    cell's output: the framed dashboard loads and lists the run."""
    with capture_output() as captured:
        dashboard = show(base, workspace=workspace, height=500)
    # A page of the notebook server, with its headers (its "not found" page: HTML under
    # the same frame-ancestors policy as JupyterLab's; its API's JSON may frame nothing)
    page.goto(f"{jupyter}{HUB_USER_PATH}a-notebook-page")
    page.evaluate(
        "(html) => { document.body.innerHTML = html; }", captured.outputs[0].data["text/html"]
    )
    frame = page.frame_locator("iframe")
    frame.locator(".run-row:not([hidden]) .run-link", has_text="./run").wait_for(timeout=WAIT_MS)
    assert dashboard.address in page.evaluate("() => document.querySelector('iframe').src")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"], ids=["same-site", "cross-site"])
def test_a_notebook_page_on_another_local_origin_frames_the_dashboard(
    base: Path, workspace: Path, page: Page, host: str
) -> None:
    """The cell's HTML in a page of another port (a local Jupyter's): the framed
    dashboard loads and lists the run. ``localhost`` is another site than 127.0.0.1,
    where the frame's page may not use the browser's storage."""
    with capture_output() as captured:
        dashboard = show(base, workspace=workspace, height=500)
    assert not dashboard.proxied
    cell = captured.outputs[0].data["text/html"]
    with page_server({"/notebook": f"<!doctype html><body>{cell}</body>"}) as port:
        page.goto(f"http://{host}:{port}/notebook")
        frame = page.frame_locator("iframe")
        run = frame.locator(".run-row:not([hidden]) .run-link", has_text="./run")
        run.wait_for(timeout=WAIT_MS)
