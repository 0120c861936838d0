"""A record's network graph: captured once, from the network's first forward call.

The network is ``SummaryRecord(network=...)``'s, or the first ``train_network`` given to
``record()``. Until the record's first ``record()``, the inputs of each model's first call
are kept (:class:`sumlens.graph.capturing.OutermostCalls`), so that a network given only
then (as MindSpore's one-shot usage does) is captured at once, from that call. Captured on
the caller's thread, at a ``record()``: ``torch.export`` briefly swaps the live module's
parameters for fake tensors, which must not happen while another thread trains it.

:mod:`sumlens.graph` needs torch, which the writer does not load: it is imported only
when a network is given (torch is loaded by then) or torch is already loaded.
"""

from __future__ import annotations

import sys
from typing import Any

from sumlens._log import logger
from sumlens.summary.items import Item


class NetworkGraph:
    """The graph of one record's network, until it is written."""

    def __init__(self, network: Any) -> None:
        self.done = False
        """True once the graph was built (or can no longer be)."""
        self._pending: Any = None
        """A ``sumlens.graph.capturing.PendingGraph`` until the graph is built."""
        self._calls: Any = None
        """A ``sumlens.graph.capturing.OutermostCalls`` until the first ``record()``."""
        if network is not None:
            self._watch(network)
        elif "torch" in sys.modules:  # a model of this run may be called before record()
            from sumlens.graph.capturing import OutermostCalls

            self._calls = OutermostCalls()

    def take(self, train_network: Any) -> Item | None:
        """The graph's item, once, at the first ``record()`` after the network's first
        forward call (None meanwhile, and after); keeps no earlier calls from then on."""
        item = None if self.done else self._build(train_network)
        self.stop_keeping_calls()
        return item

    def stop_keeping_calls(self) -> None:
        """Keep no earlier forward calls (a network given later is captured from its next)."""
        if self._calls is not None:
            self._calls.release()
            self._calls = None

    def close(self, record: str) -> None:
        """Stop watching; warn if a network's graph was never written (``record`` names it)."""
        self.stop_keeping_calls()
        pending, self._pending = self._pending, None
        if pending is None:
            return
        network = type(pending.network).__name__
        if pending.ready():
            reason = "no record() call followed its first forward call"
        else:
            reason = "it was never called"
        logger.warning("%s: no graph of network %s was written: %s", record, network, reason)
        pending.cancel()

    def after_fork(self) -> None:
        """In a forked child: capture nothing (the child's hooks are gone already)."""
        self.done = True
        if self._calls is not None:
            self._calls.abandon()
            self._calls = None

    def _watch(self, network: Any) -> None:
        """Keep the inputs of ``network``'s first forward call: one already made while this
        record was open (held since its creation), else the next one."""
        from sumlens.graph.capturing import PendingGraph

        inputs = None if self._calls is None else self._calls.inputs_of(network)
        self._pending = PendingGraph(network, inputs)

    def _build(self, train_network: Any) -> Item | None:
        if self._pending is None:
            if train_network is None:
                return None
            self._watch(train_network)
        if not self._pending.ready():
            return None
        pending, self._pending = self._pending, None
        self.done = True
        try:
            result = pending.build()
        except Exception as err:  # a bug of ours must not stop training
            logger.error("could not build the graph of %s: %r", type(pending.network).__name__, err)
            return None
        logger.info(
            "graph of %s captured (%s) in %.2f s",
            type(pending.network).__name__,
            result.path,
            result.seconds,
        )
        return Item("graph", "graph", result.graph)
