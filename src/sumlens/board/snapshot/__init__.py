"""Shareable snapshots: one self-contained HTML file of some runs' scalars and images.

:func:`~sumlens.board.snapshot.build.build` is shared by ``sumlens snapshot`` and the
``GET /api/v1/snapshot`` route (the Scalars view's "Snapshot" button); what goes in is
:mod:`.content`'s, the page around it :mod:`.page`'s.
"""
