"""Every plugin the dashboard serves, declared once: the lists the server needs derive from here.

A plugin is named by the ``Event.plugin`` the readers give its values
(:data:`sumlens.io.PLUGINS`; how each file format names it is the readers' business:
:mod:`sumlens.io.decode`). Its declaration says how many values a series keeps by default
(``--samples-per-plugin`` changes it), which routes serve it, and the names MindInsight's
routes list it under (:data:`MINDINSIGHT_PLUGINS`). Routes are named by import
path (``"module:factory"``), not imported: this module stays light, so the settings,
``sumlens start`` and ``sumlens --version`` read it without loading the web framework;
:func:`sumlens.board.server.app.create_app` imports each named factory once and includes
its routes. Adding a plugin is one line in :data:`PLUGINS` (see ``docs/adding-a-plugin.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

SHARED_ROUTES = "sumlens.board.api.plugins:make_plugin_router"
"""``/samples``, ``/message`` and the image, histogram and tensor routes."""


@dataclass(frozen=True)
class Plugin:
    """One plugin: its name, the values a series keeps by default, the routes serving it.

    ``cap`` None: every value is kept (scalars, served downsampled by the core routes);
    ``router`` None: only the core routes serve it (:mod:`sumlens.board.api.runs`);
    ``message``: its values are protobuf messages (``/api/v1/message`` gives them as JSON);
    ``recorded`` False: its values are files beside the event files (the embedding
    projector's), found by the loader rather than returned by the readers, so it has no cap.
    ``rewritten``: its values describe the run and are written again whole when they change
    (lineage at every evaluation, hyper-parameters, graphs), mostly at step 0: a newer one
    replaces the kept ones at its step and after, and that is no restart (not counted).
    ``mindinsight``: the plugin names MindInsight's routes list its values under, each with
    its place in MindInsight's list (:data:`MINDINSIGHT_PLUGINS`); none where MindInsight's
    routes do not list it (lineage has routes of its own there).
    """

    name: str
    cap: int | None
    router: str | None
    message: bool = False
    recorded: bool = True
    rewritten: bool = False
    mindinsight: tuple[tuple[int, str], ...] = ()

    @property
    def router_module(self) -> str | None:
        """The module of :attr:`router` (None without one)."""
        return None if self.router is None else self.router.partition(":")[0]


PLUGINS: tuple[Plugin, ...] = (
    Plugin("scalar", cap=None, router=None, mindinsight=((1, "scalar"),)),
    Plugin("image", cap=10, router=SHARED_ROUTES, mindinsight=((0, "image"),)),
    Plugin("histogram", cap=500, router=SHARED_ROUTES, mindinsight=((4, "histogram"),)),
    Plugin("tensor", cap=10, router=SHARED_ROUTES, mindinsight=((5, "tensor"),)),
    Plugin(
        "graph",
        cap=10,
        router="sumlens.board.api.graph:make_graph_router",
        message=True,
        rewritten=True,
        mindinsight=((2, "graph"), (3, "optimized_graph")),
    ),
    Plugin(
        "landscape",
        cap=100,
        router="sumlens.board.api.landscape:make_landscape_router",
        message=True,
        mindinsight=((6, "loss_landscape"),),
    ),
    Plugin(
        "dataset_graph",
        cap=10,
        router="sumlens.board.api.lineage:make_lineage_router",
        message=True,
        rewritten=True,
    ),
    Plugin(
        "train_lineage",
        cap=100,
        router="sumlens.board.api.lineage:make_lineage_router",
        message=True,
        rewritten=True,
    ),
    Plugin(
        "eval_lineage",
        cap=100,
        router="sumlens.board.api.lineage:make_lineage_router",
        message=True,
        rewritten=True,
    ),
    Plugin(
        "custom_lineage_data",
        cap=100,
        router="sumlens.board.api.lineage:make_lineage_router",
        message=True,
        rewritten=True,
    ),
    Plugin("text", cap=10, router="sumlens.board.api.text:make_text_router"),
    Plugin("audio", cap=10, router="sumlens.board.api.audio:make_audio_router"),
    Plugin("pr_curve", cap=100, router="sumlens.board.api.pr_curve:make_pr_curve_router"),
    Plugin(
        "hparams",
        cap=10,
        router="sumlens.board.api.lineage:make_lineage_router",
        message=True,
        rewritten=True,
    ),
    Plugin(
        "run_metadata",
        cap=10,
        router="sumlens.board.api.graph:make_graph_router",
        message=True,
    ),
    Plugin(
        "embedding",
        cap=None,
        router="sumlens.board.api.embeddings:make_embedding_router",
        recorded=False,
    ),
)
"""Every plugin, in the order the API lists them (TensorBoard's caps for images, audio,
histograms, tensors and PR curves)."""

DEFAULT_CAPS: dict[str, int] = {p.name: p.cap for p in PLUGINS if p.cap is not None}
"""Values kept per series by default, for each plugin whose values are sampled."""
RECORDED: tuple[str, ...] = tuple(p.name for p in PLUGINS if p.recorded)
"""Plugins whose values the readers return (:data:`sumlens.io.PLUGINS`)."""
SAMPLED: tuple[str, ...] = tuple(DEFAULT_CAPS)
"""Plugins whose series keep a sample of their values (``/api/v1/samples``)."""
MESSAGE_PLUGINS: tuple[str, ...] = tuple(p.name for p in PLUGINS if p.message)
"""Plugins whose values are protobuf messages."""
REWRITTEN: frozenset[str] = frozenset(p.name for p in PLUGINS if p.rewritten)
"""Plugins whose values a newer one replaces without a restart (see :class:`Plugin`)."""
MINDINSIGHT_PLUGINS: tuple[str, ...] = tuple(
    name for _, name in sorted(entry for p in PLUGINS for entry in p.mindinsight)
)
"""MindInsight's plugin names, in the order its routes list them (its ``PluginNameEnum``)."""


def routers() -> tuple[str, ...]:
    """The distinct ``"module:factory"`` routes of the plugins, in declaration order."""
    return tuple(dict.fromkeys(p.router for p in PLUGINS if p.router is not None))


def served_by(module: str) -> tuple[str, ...]:
    """The plugins whose declared routes live in ``module`` (a route module's ``__name__``)."""
    return tuple(p.name for p in PLUGINS if p.router_module == module)
