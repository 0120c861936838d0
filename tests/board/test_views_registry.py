"""The page's list of views (``static/views.js``) agrees with the server's plugin registry
(:data:`sumlens.board.plugins.PLUGINS`): the page names no plugin the server lacks, every
plugin with values to show is reached from a view or a run dashboard's card, and a plugin's
view and folder carry the plugin's name (``docs/adding-a-plugin.md``).

``views.js`` is run by Node.js as the browser runs it (an ES module that imports nothing),
not parsed here, so what is checked is what the page builds from.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import sumlens.board
from sumlens.board.plugins import PLUGINS

STATIC = Path(sumlens.board.__file__).resolve().parent / "static"
REGISTERED = {plugin.name for plugin in PLUGINS}
NOT_IN_VIEWS = {
    # RunMetadata (a step's compute time and memory per operator) has no view or card of
    # its own: the graph view reads it for the run whose graph it draws (graph/graph.js).
    "run_metadata",
}
"""Registry plugins no view or card of ``views.js`` names; a plugin added to the registry
without a view fails :func:`test_every_plugin_is_reached_from_a_view_or_a_card` until it
gets one or is listed here with the reason."""


def _read_views() -> dict[str, Any]:
    """``VIEWS`` and ``CARDS`` of ``views.js``, as Node.js imports the module."""
    node = shutil.which("node")
    assert node, "node is missing: the page's view list is read with Node.js (.ci/run has it)"
    # the module's text and one line printing its lists, run as an ES module from stdin (as
    # the page loads it, whatever the nearest package.json says of the module type)
    script = (STATIC / "views.js").read_text() + (
        "\nconsole.log(JSON.stringify({ views: VIEWS, cards: CARDS }));\n"
    )
    done = subprocess.run(
        [node, "--input-type=module"],
        input=script,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def page() -> dict[str, Any]:
    return _read_views()


def _plugin_views(page: dict[str, Any]) -> list[dict[str, Any]]:
    return [view for view in page["views"] if "plugin" in view]


def test_every_plugin_the_page_names_is_registered(page: dict[str, Any]) -> None:
    named = {view["name"]: view["plugin"] for view in _plugin_views(page)}
    assert {name: plugin for name, plugin in named.items() if plugin not in REGISTERED} == {}
    for card in page["cards"]:
        assert set(card["plugins"]) <= REGISTERED, f"card {card['kind']!r} of {card['view']!r}"
        if "plugins" not in _declared_card(page, card):  # the card stands for its kind
            assert card["plugins"] == [card["kind"]]


def _declared_card(page: dict[str, Any], card: dict[str, Any]) -> dict[str, Any]:
    """``card`` as its view declares it (CARDS fills in ``plugins``)."""
    (view,) = [view for view in page["views"] if view["name"] == card["view"]]
    (declared,) = [entry for entry in view["cards"] if entry["kind"] == card["kind"]]
    return declared


def test_every_plugin_is_reached_from_a_view_or_a_card(page: dict[str, Any]) -> None:
    reached = {view["plugin"] for view in _plugin_views(page)}
    reached |= {plugin for card in page["cards"] for plugin in card["plugins"]}
    assert NOT_IN_VIEWS <= REGISTERED, "NOT_IN_VIEWS names a plugin the registry lacks"
    assert reached & NOT_IN_VIEWS == set(), "a plugin of NOT_IN_VIEWS is shown: unlist it"
    assert REGISTERED - NOT_IN_VIEWS - reached == set()


def test_a_plugin_view_is_named_after_its_plugin(page: dict[str, Any]) -> None:
    views = _plugin_views(page)
    assert len(views) >= 7
    for view in views:
        name, plugin = view["name"], view["plugin"]
        assert name in (plugin, f"{plugin}s"), f"view {name!r} shows {plugin!r}"
        assert view["module"] == f"{name}/{name}.js", view
        assert all(style.startswith(f"{name}/") for style in view["styles"]), view
    assert len({view["plugin"] for view in views}) == len(views), "two views of one plugin"


def test_every_view_and_card_is_named_once_and_its_files_exist(page: dict[str, Any]) -> None:
    names = [view["name"] for view in page["views"]]
    assert len(names) == len(set(names))
    kinds = [card["kind"] for card in page["cards"]]
    assert len(kinds) == len(set(kinds))
    for view in page["views"]:
        for path in [view["module"], *view.get("styles", [])]:
            assert (STATIC / path).is_file(), f"{view['name']}: static/{path} is missing"
