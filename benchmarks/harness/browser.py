"""The headless Chromium that the browser benchmarks drive through Playwright: Debian's,
launched with the browser tests' arguments (software rendering)."""

from __future__ import annotations

from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def open_chromium(playwright: Any) -> Any:
    """A headless Chromium of ``playwright`` (``sync_playwright()``'s), to be closed."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
