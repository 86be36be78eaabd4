"""The web UI: the bundle built from `frontend/` into the package (`nodeloom/web`), served
at `/` with no token (the page asks for one when the API answers 401).

File names under `assets/` carry a content hash, so they are cached for good; the page
itself is checked on every load. The page may load only what the server itself serves."""

from __future__ import annotations

import os
from pathlib import Path

from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

BUNDLE = Path(__file__).resolve().parent.parent / "web"

_HEADERS = {
    # React Flow positions nodes with style attributes: inline styles must be allowed.
    "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class UiFiles(StaticFiles):
    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers.update(_HEADERS)
        immutable = Path(full_path).parent.name == "assets"
        response.headers["Cache-Control"] = (
            "public, max-age=31536000, immutable" if immutable else "no-cache"
        )
        return response


def ui_files() -> UiFiles | None:
    """The UI's files, or None when the bundle is missing (a source checkout that has not
    built it: `cd frontend && npm ci && npm run build`)."""
    if not (BUNDLE / "index.html").is_file():
        return None
    return UiFiles(directory=BUNDLE, html=True)
