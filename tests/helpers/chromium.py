"""Debian's Chromium, as every browser test of the suite starts it: once per session.

Playwright's sync API runs one event loop per thread, so two browsers started by
``sync_playwright()`` in one test session collide ("Sync API inside the asyncio loop"):
every test that needs a browser takes the session's (``browser`` in ``tests/conftest.py``)
and opens its own pages or contexts in it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def launched_chromium() -> Iterator[Browser]:
    """Headless Debian Chromium (fails, does not skip, when it is not installed)."""
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's Chromium. Install it with "
            "`sudo apt-get install chromium` (never `playwright install`).",
            pytrace=False,
        )
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()
