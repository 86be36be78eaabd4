"""Downloads: `GET /api/runs/{run_id}/files/{sha256}` streams a blob a run holds.

A run holds a blob when one of its values (its trigger, a node's outputs) carries a blob
reference the store signed: a webhook upload, an HTTP Request download. Events and the
UI show the reference (name, mime, size), never the bytes; this route serves the bytes,
to a caller with a bearer token, and only for a digest the run holds: a digest that is
malformed, forged (not signed, so never recorded), another run's, or pruned is 404, and
a path in its place never reaches the file system (see docs/security.md).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from nodeloom.files import safe_name
from nodeloom.server.errors import ApiError
from nodeloom.server.routes.responses import errors
from nodeloom.server.runtime import State

router = APIRouter(tags=["runs"])

# A download never renders in the UI's origin: always an attachment, no sniffing, and a
# sandbox should a browser open it anyway (a blob's media type is the uploader's word).
_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox",
    "Cache-Control": "private, no-store",
}


@router.get(
    "/api/runs/{run_id}/files/{sha256}",
    response_class=FileResponse,
    responses={
        **errors(404),
        200: {"content": {"application/octet-stream": {}}, "description": "the bytes"},
    },
)
async def download_file(
    run_id: str,
    sha256: str,
    state: State,
    name: Annotated[str | None, Query(max_length=255)] = None,
) -> FileResponse:
    """The bytes of a blob the run holds (an upload or a download of the run's), streamed
    as an attachment named `name` (the reference's name; reduced to a plain file name)
    with the media type recorded for it. 404 for a digest the run does not hold."""
    await state.store.get_run(run_id, resolve=False)  # 404 for an unknown run
    found = await state.store.run_blob(run_id, sha256)
    if found is None:
        raise ApiError(
            404,
            "not_found",
            f"run {run_id} holds no file {sha256[:80]!r}: give the sha256 of a blob reference "
            "in the run's trigger or outputs (`$ref`: `blob:<sha256>`)",
        )
    path, _, mime = found
    return FileResponse(  # streamed a chunk at a time; the name quoted by Starlette
        path,
        media_type=mime or "application/octet-stream",
        filename=safe_name(name, default=sha256[:16]),
        headers=_HEADERS,
    )
