"""Where the browser for the web UI's end-to-end tests and benchmark is, and how it is
started: Debian's Chromium (`apt-get install chromium`), driven by the `playwright`
package. Never `playwright install`: it downloads a browser of its own."""

from __future__ import annotations

import os
import shutil

CHROMIUM = os.environ.get("NODELOOM_CHROMIUM", "/usr/bin/chromium")

# Headless as root in a container, with no calls home (a closed network refuses them).
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium() -> str | None:
    """The Chromium executable, or None when it is not installed."""
    if os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    return shutil.which(CHROMIUM)
