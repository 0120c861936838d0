"""The dashboard's shared state wing: what users give the runs and the server, kept apart
from everything that can be rebuilt from the logs.

Run annotations and group colours, the audit log, users' saved views, run states (hidden,
archived) and the trash live here, in one SQLite file in the workspace or in a PostgreSQL
database several replicas share (:func:`open_state`). One interface
(:class:`~sumlens.board.state.backend.Backend`) hides which; the fronts above it are one
code path for both, and the schema is versioned by :mod:`sumlens.board.state.migrations`.
"""

from sumlens.board.state.shared import FILE_NAME, SharedState, open_state

__all__ = ["FILE_NAME", "SharedState", "open_state"]
