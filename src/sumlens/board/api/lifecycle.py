"""A run's lifecycle under ``/api/v1``: hide or archive it, delete it to the trash, restore it.

* ``PUT /run-state?run=<run id>`` with ``{"state": "hidden" | "archived" | null}`` keeps the
  run's state in the shared state (every replica's run list shows it; the page leaves
  hidden and archived runs out unless asked) and answers ``{"run": ..., "state": ...}``.
* ``DELETE /run?run=<run id>`` moves the run's files to the base directory's trash
  (:mod:`sumlens.board.data.trash`), records the trash entry and answers it: ``{"id",
  "run_id", "location", "trash_location", "at", "by", "purge_at"}``. The run leaves the run
  list at the loader's next reload. ``./`` (the base directory itself) is refused (422).
* ``GET /trash`` answers ``{"entries": [...], "retention_days": ...}``: the entries of
  this base directory's own trash, newest first, each with when its files will be purged.
  Replicas serving nested base directories over one state (``/data`` and ``/data/proj``)
  each list, restore and purge only the entries of their own trash.
* ``POST /trash/restore?id=<entry id>`` moves the files back and drops the entry (409 while
  a run of that name exists again), answering the entry.

Entries older than ``trash_retention_days`` are purged (files deleted, entry dropped) when
the application starts and every :data:`PURGE_EVERY_S` after, by every replica: purging is
idempotent, so replicas purging at once do not fail. A folder of the trash with no entry
(a deletion cut short between moving the files and recording the entry) is purged once it
is as old. A purged run's state (hidden, archived) goes with it, unless a run of that name
is served again. Who may do what is the gate's (:mod:`sumlens.board.server.access`); these
routes check nothing of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, Protocol

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from sumlens.board.data.surface import ReadSurface
from sumlens.board.errors import BoardError, NotFound, QueryError
from sumlens.board.request_reading import asking_user, json_body
from sumlens.board.responses import json_response
from sumlens.board.settings import BoardSettings
from sumlens.board.state import SharedState
from sumlens.board.state.runs import TrashEntry, check_entry_id, check_state

_log = logging.getLogger("sumlens.board")

PURGE_EVERY_S = 3600.0
"""Seconds between purges of the trash (one more runs when the application starts)."""
MAX_BODY_BYTES = 4096
"""The largest run-state body read (it holds one word)."""
DAY_S = 86400.0


class RunFiles(Protocol):
    """What these routes ask of the trash's files (:class:`sumlens.board.data.trash.RunTrash`,
    handed in by the server)."""

    def deletable(self, run_id: str) -> str:
        """The location of run ``run_id``, or a 422 when it cannot be deleted (``./``)."""
        ...

    def delete(self, run_id: str, at: float) -> tuple[str, str]:
        """Move the run's files to a new entry; its id and the files' trash location."""
        ...

    def restore(self, entry_id: str, run_id: str) -> None:
        """Move the entry's files back to the run's directory."""
        ...

    def purge(self, entry_id: str) -> None:
        """Delete the entry's files (nothing when they are gone)."""
        ...

    def folders(self) -> dict[str, float]:
        """The trash's entry folders: id -> when it was made (epoch seconds)."""
        ...

    def holds(self, trash_location: str) -> bool:
        """Whether an entry's files at ``trash_location`` lie in this base directory's trash."""
        ...


async def _state_body(request: Request) -> str | None:
    """The state a ``PUT /run-state`` body asks for, or a 4xx saying what is wrong."""
    parsed = await json_body(request, MAX_BODY_BYTES)
    if not isinstance(parsed, dict) or set(parsed) != {"state"}:
        raise QueryError(
            f'body={parsed!r:.80} is not allowed: a run state is {{"state": "hidden"}}, '
            '{"state": "archived"} or {"state": null}'
        )
    return check_state(parsed["state"])


class RunExists(BoardError):
    """A restore of a run whose name is served again."""

    status = 409


def make_lifecycle_router(
    surface: ReadSurface, shared: SharedState, trash: RunFiles, settings: BoardSettings
) -> APIRouter:
    """The lifecycle routes of ``surface``'s runs: states in ``shared.runs``, files moved
    by ``trash``, kept ``settings.trash_retention_days``."""
    runs = shared.runs
    retention_s = settings.trash_retention_days * DAY_S

    def entry_json(entry: TrashEntry) -> dict[str, Any]:
        return {
            "id": entry.id,
            "run_id": entry.run_id,
            "location": entry.location,
            "trash_location": entry.trash_location,
            "at": entry.at,
            "by": entry.by,
            "purge_at": entry.at + retention_s,
        }

    def entries() -> list[TrashEntry]:
        """This base directory's trash entries, newest first: those of its runs whose files
        lie in its own trash (a replica serving a directory above or below this one keeps
        its entries, and the files of their runs, in its own)."""
        return [entry for entry in runs.trashed()[::-1] if trash.holds(entry.trash_location)]

    def purge_expired(now: float) -> int:
        """Purge what is older than the retention; how many entries and folders went."""
        cutoff = now - retention_s
        listed = entries()
        known = {entry.id for entry in listed}
        purged = 0
        states = runs.states()
        for entry in listed:
            if entry.at <= cutoff:
                trash.purge(entry.id)
                runs.remove_trash(entry.id)
                if entry.run_id in states and not surface.has_run(entry.run_id):
                    runs.set(entry.run_id, None)  # a new run of that name starts shown
                purged += 1
        for entry_id, made in trash.folders().items():
            if entry_id not in known and made <= cutoff:
                trash.purge(entry_id)
                purged += 1
        return purged

    async def purge_every(interval: float) -> None:
        while True:
            try:
                purged = await run_in_threadpool(purge_expired, time.time())
                if purged:
                    _log.info("purged %d trash entries older than the retention", purged)
            except Exception as err:  # a store that does not answer: the next round tries
                _log.warning("purging the trash failed: %s", err)
            await asyncio.sleep(interval)

    @contextlib.asynccontextmanager
    async def purging(_: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(purge_every(PURGE_EVERY_S))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    router = APIRouter(prefix="/api/v1", lifespan=purging)

    def served(run_id: str) -> str:
        if not surface.has_run(run_id):
            raise NotFound(f"run={run_id!r} is not a run being served")
        return run_id

    @router.put("/run-state", summary="Hide or archive a run (null: neither)")
    async def put_run_state(
        request: Request,
        run: Annotated[str, Query(description="the run id, e.g. ./a/b")],
    ) -> Response:
        state = await _state_body(request)

        def put() -> Response:  # off the event loop: it waits on the loader and the database
            runs.set(served(run), state)
            return json_response({"run": run, "state": state})

        return await run_in_threadpool(put)

    @router.delete("/run", summary="Move a run's files to the trash")
    async def delete_run(
        request: Request,
        run: Annotated[str, Query(description="the run id, e.g. ./a/b")],
    ) -> Response:
        by = asking_user(request)

        def delete() -> Response:  # off the event loop: it moves files
            location = trash.deletable(run)  # a bad run id, ./ included, is said first
            at = time.time()
            entry_id, trash_location = trash.delete(served(run), at)
            entry = TrashEntry(
                id=entry_id,
                run_id=run,
                location=location,
                trash_location=trash_location,
                at=at,
                by=by,
            )
            try:
                runs.add_trash(entry)
            except Exception:
                trash.restore(entry_id, run)  # no entry, no deletion: the files go back
                raise
            return json_response(entry_json(entry))

        return await run_in_threadpool(delete)

    @router.get("/trash", summary="The deleted runs, and when each will be purged")
    def list_trash() -> Response:
        return json_response(
            {
                "entries": [entry_json(entry) for entry in entries()],
                "retention_days": settings.trash_retention_days,
            }
        )

    @router.post("/trash/restore", summary="Move a deleted run's files back")
    async def restore(
        id: Annotated[str, Query(description="the trash entry's id, as GET /trash says")],
    ) -> Response:
        check_entry_id(id)

        def put_back() -> Response:  # off the event loop: it moves files
            entry = next((entry for entry in entries() if entry.id == id), None)
            if entry is None:
                raise NotFound(f"id={id!r} is not an entry of the trash (purged, or restored)")
            if surface.has_run(entry.run_id):
                raise RunExists(
                    f"run={entry.run_id!r} exists again: move or delete it before restoring "
                    f"trash entry id={id!r}"
                )
            trash.restore(entry.id, entry.run_id)
            runs.remove_trash(entry.id)
            return json_response(entry_json(entry))

        return await run_in_threadpool(put_back)

    return router
