"""The plugin registry (:mod:`sumlens.board.plugins`) and the settings that read it: every
list of plugins the server keeps is derived from the one declaration per plugin, MindInsight's
too, and no other list is written in the server's source."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi import APIRouter
from fastapi.routing import APIRoute
from helpers.memory_surface import MemorySurface
from helpers.source_imports import SRC, where

from sumlens.board import plugins
from sumlens.board.api import plugins as plugin_api
from sumlens.board.mindinsight import graph_nodes, jobs
from sumlens.board.query import lineage_table
from sumlens.board.server.app import create_app, plugin_router_factories
from sumlens.board.settings import BoardSettings, BoardSettingsError, parse_caps
from sumlens.io import PLUGINS as READ_PLUGINS

MINDINSIGHT_ORDER = (
    "image",
    "scalar",
    "graph",
    "optimized_graph",
    "histogram",
    "tensor",
    "loss_landscape",
)
"""MindInsight 2.3.1's plugins, in its order (``PluginNameEnum``: what its routes list)."""
KNOWN_LISTS = {
    ("sumlens/board/api/graph.py", ("graph", "dataset_graph")): "the plugins /graph draws",
}
"""Literal lists of plugin names the server keeps beside the registry, and why."""


def _paths(router: APIRouter) -> set[str]:
    return {route.path for route in router.routes if isinstance(route, APIRoute)}


def test_every_plugin_the_readers_return_is_declared_once() -> None:
    names = [plugin.name for plugin in plugins.PLUGINS]
    assert len(names) == len(set(names))
    assert set(plugins.RECORDED) == set(READ_PLUGINS)


def test_caps_are_derived_from_the_declarations() -> None:
    assert [plugins.DEFAULT_CAPS[p] for p in ("image", "histogram", "tensor")] == [10, 500, 10]
    assert "scalar" not in plugins.DEFAULT_CAPS  # scalars are kept in full
    assert all(2 <= cap <= 100_000 for cap in plugins.DEFAULT_CAPS.values())
    for name in plugins.DEFAULT_CAPS:  # each one can be set, singular or plural
        assert parse_caps(f"{name}=7,{name}s=8") == {name: 8}
    with pytest.raises(ValueError, match="scalar=5"):
        parse_caps("scalar=5")


def test_the_api_lists_are_derived_from_the_declarations() -> None:
    assert plugin_api.PLUGINS == plugins.SAMPLED == tuple(plugins.DEFAULT_CAPS)
    assert "scalar" not in plugin_api.PLUGINS
    assert set(plugin_api.MESSAGE_PLUGINS) == set(plugins.SAMPLED) - {
        "image",
        "histogram",
        "tensor",
        "text",
        "audio",
        "pr_curve",
    }
    assert set(lineage_table.LINEAGE_PLUGINS) == {
        "train_lineage",
        "eval_lineage",
        "custom_lineage_data",
        "dataset_graph",
        "hparams",
    }


def test_mindinsight_s_plugins_are_derived_from_the_declarations() -> None:
    assert plugins.MINDINSIGHT_PLUGINS == MINDINSIGHT_ORDER
    places = sorted(place for plugin in plugins.PLUGINS for place, _ in plugin.mindinsight)
    assert places == list(range(len(MINDINSIGHT_ORDER)))
    shown_as = {name: p.name for p in plugins.PLUGINS for _, name in p.mindinsight}
    assert shown_as == {
        "image": "image",
        "scalar": "scalar",
        "graph": "graph",
        "optimized_graph": "graph",  # the same GraphProto, simplified (mindinsight/jobs.py)
        "histogram": "histogram",
        "tensor": "tensor",
        "loss_landscape": "landscape",
    }
    assert jobs.PLUGINS is plugins.MINDINSIGHT_PLUGINS
    assert tuple(f"[:{name}]" for name in MINDINSIGHT_ORDER) == graph_nodes.PLUGIN_SUFFIXES
    # MindInsight's caps (its contract, kept in its wing) name only its plugins
    assert set(jobs.SAMPLES_PER_TAG) | set(jobs.TAGS_PER_PLUGIN) <= set(MINDINSIGHT_ORDER)


def _plugin_lists(tree: ast.Module, names: frozenset[str]) -> list[tuple[ast.AST, tuple[str, ...]]]:
    """Each tuple, list or set written in ``tree`` of two or more strings, all plugin names."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Tuple | ast.List | ast.Set) or len(node.elts) < 2:
            continue
        items = [item.value for item in node.elts if isinstance(item, ast.Constant)]
        if len(items) == len(node.elts) and all(item in names for item in items):
            found.append((node, tuple(items)))
    return found


def test_the_server_writes_no_other_list_of_plugins() -> None:
    """Both faces, the query layer and the snapshot name plugins from the registry: a tuple,
    list or set of plugin names (ours or MindInsight's) written anywhere else in
    ``sumlens.board`` is a second list to forget when a plugin comes. Maps from a plugin to
    what a face does with it (MindInsight's caps, its graph modes) are not lists."""
    names = frozenset(p.name for p in plugins.PLUGINS) | set(plugins.MINDINSIGHT_PLUGINS)
    registry = Path(plugins.__file__).resolve()
    found = []
    for path in sorted((SRC / "board").rglob("*.py")):
        if path.resolve() == registry:
            continue
        for node, items in _plugin_lists(ast.parse(path.read_text()), names):
            module = path.relative_to(SRC.parent).as_posix()
            if (module, items) not in KNOWN_LISTS:
                found.append(f"{where(path, node)}: {items}")
    assert found == []


def test_every_declared_router_is_served_once(tmp_path: Path) -> None:
    """Each ``module:factory`` resolves to routes over a read surface, and the application
    includes each of them once; only scalars rely on the core routes alone."""
    assert [p.name for p in plugins.PLUGINS if p.router is None] == ["scalar"]
    factories = plugin_router_factories()
    assert len(factories) == len(plugins.routers()) == len(set(factories))
    surface = MemorySurface()
    app = create_app(BoardSettings.create(tmp_path), surface)
    served = set(app.openapi()["paths"])
    for factory in factories:
        own = _paths(factory(surface))
        assert own and own <= served, factory


def test_the_registry_and_settings_load_no_web_framework() -> None:
    """``sumlens start`` and the command line's help read them: they must stay light."""
    code = (
        "import sys, sumlens.board.plugins, sumlens.board.settings; "
        "print(sorted(m for m in sys.modules if m.startswith(('fastapi', 'numpy', "
        "'sumlens.io', 'sumlens.board.api'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_settings_defaults_live_in_the_dataclass(tmp_path: Path) -> None:
    made = BoardSettings.create(tmp_path)
    assert made == BoardSettings(base_dir=tmp_path.resolve(), workspace=made.workspace)
    assert made.workspace == BoardSettings.workspace.expanduser()
    assert (made.host, made.port, made.reload_interval) == ("127.0.0.1", 8080, 3.0)


def test_settings_travel_as_json(tmp_path: Path) -> None:
    settings = BoardSettings.create(
        tmp_path,
        host="0.0.0.0",
        port=8123,
        reload_interval="0.5",
        workspace=tmp_path / "ws",
        url_path_prefix="team/a/",
        allowed_hosts="box.lan, Other",
        samples_per_plugin="images=20,histogram=30",
    )
    assert BoardSettings.from_json(settings.to_json()) == settings


@pytest.mark.parametrize(
    "text",
    ["", "[]", '{"base_dir": "/x"}', '{"port": 1, "extra": 2}'],
    ids=["empty", "list", "missing", "unknown"],
)
def test_settings_json_that_is_not_settings_is_refused(text: str) -> None:
    with pytest.raises(BoardSettingsError, match="not dashboard settings"):
        BoardSettings.from_json(text)
