"""Knowledge collections over HTTP: list, drop, search, and upload files to ingest as a
recorded run (follow its progress on the run's event stream). See docs/knowledge.md."""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Request, Response, UploadFile
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from nodeloom.engine.result import RunResult
from nodeloom.fleet.jobs import Job
from nodeloom.server.errors import ApiError
from nodeloom.server.models import RunAccepted
from nodeloom.server.routes.responses import errors
from nodeloom.server.runtime import State

router = APIRouter(tags=["knowledge"])
_NAME = re.compile(r"^[\w][\w .-]{0,127}$")


class CollectionModel(BaseModel):
    name: str
    model: str
    dimension: int
    chunks: int
    sources: int


class CollectionList(BaseModel):
    collections: list[CollectionModel]


class SearchRequest(BaseModel):
    query: str = Field(min_length=1, max_length=4000)
    top_k: int = Field(5, ge=1, le=100)
    mode: str = Field("hybrid", pattern="^(hybrid|vector|keyword)$")
    filter: dict[str, Any] | None = None


class HitModel(BaseModel):
    text: str
    score: float
    metadata: dict[str, Any]
    id: str


class SearchResult(BaseModel):
    hits: list[HitModel]
    context: str


def _collection(name: str) -> str:
    if not _NAME.match(name):
        raise ApiError(
            422,
            "invalid_request",
            f"invalid collection name {name!r}: use letters, digits, '_', '-', '.', spaces "
            "(at most 128, starting with a letter or digit)",
        )
    return name


async def _store() -> Any:
    from nodeloom.knowledge import open_store
    from nodeloom.paths import data_dir

    return await open_store(data_dir=data_dir())


def _knowledge_error(exc: Exception) -> ApiError:
    code = getattr(exc, "code", "invalid_request")
    status = 404 if code == "knowledge_collection_not_found" else 422
    return ApiError(status, code, str(exc))


@router.get("/api/knowledge/collections", response_model=CollectionList, responses=errors())
async def list_collections() -> dict[str, Any]:
    """Every collection with its model, dimension and counts."""
    store = await _store()
    try:
        return {"collections": [c.to_json() for c in await store.list_collections()]}
    finally:
        await store.close()


@router.delete(
    "/api/knowledge/collections/{name}",
    status_code=204,
    response_class=Response,
    responses=errors(404),
)
async def drop_collection(name: str) -> Response:
    """Delete a collection and everything in it."""
    store = await _store()
    try:
        if not await store.drop_collection(_collection(name)):
            raise ApiError(404, "not_found", f"there is no knowledge collection '{name}'")
    finally:
        await store.close()
    return Response(status_code=204)


@router.post(
    "/api/knowledge/collections/{name}/search",
    response_model=SearchResult,
    responses=errors(404),
)
async def search_collection(name: str, body: SearchRequest) -> dict[str, Any]:
    """The `knowledge-search` node's output for `query`: hits and a cited context."""
    from nodeloom.knowledge import KnowledgeError, search
    from nodeloom.knowledge.runtime import search_embedder
    from nodeloom.paths import data_dir

    store = await _store()
    embedder = None
    try:
        if body.mode != "keyword":
            embedder = await search_embedder({}, data_dir(), store, _collection(name))
        return await search(
            store, name, body.query, embedder, top_k=body.top_k, mode=body.mode, where=body.filter
        )
    except (KnowledgeError, ValueError) as exc:
        raise _knowledge_error(exc) from None
    finally:
        if embedder is not None:
            embedder.close()
        await store.close()


def _safe_name(filename: str | None) -> str:
    name = PurePosixPath((filename or "").replace("\\", "/")).name.strip()
    name = re.sub(r"[^\w .()-]", "_", name)[:200]
    if not name or name.startswith("."):
        raise ApiError(422, "invalid_request", f"the uploaded file name {filename!r} is not usable")
    return name


@router.post(
    "/api/knowledge/collections/{name}/files",
    status_code=202,
    response_model=RunAccepted,
    responses=errors(),
)
async def upload_files(
    name: str,
    request: Request,
    state: State,
    files: Annotated[list[UploadFile], File(description="txt, md, html, pdf, docx, csv, json")],
    chunk_size: Annotated[int, Form(ge=16, le=2048)] = 256,
    chunk_overlap: Annotated[int, Form(ge=0, le=1024)] = 32,
) -> JSONResponse:
    """Save the files and ingest them into the collection as a recorded run (Document
    Loader -> Text Chunker -> Embedder -> Knowledge Write, mode replace_source: uploading
    a file of the same name again replaces its chunks). Answers 202 with the run; its
    events (`progress` of the Embedder: embedded/of) show the ingestion's progress."""
    from nodeloom.engine.flow import load
    from nodeloom.knowledge.formats import MIMES
    from nodeloom.paths import data_dir
    from nodeloom.server.routes.runs import _accepted

    collection = _collection(name)
    if chunk_overlap >= chunk_size:
        raise ApiError(422, "invalid_request", "chunk_overlap must be smaller than chunk_size")
    folder = data_dir() / "knowledge" / "uploads" / uuid.uuid4().hex
    references = []
    for upload in files:
        safe = _safe_name(upload.filename)
        if Path(safe).suffix.lower() not in MIMES:
            raise ApiError(
                422,
                "invalid_request",
                f"{safe}: unsupported file type; supported: {', '.join(sorted(MIMES))}",
            )
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / safe
        target.write_bytes(await upload.read())
        references.append({"$ref": f"file:{target}", "mime": upload.content_type, "name": safe})
    if not references:
        raise ApiError(422, "invalid_request", "upload at least one file (form field `files`)")
    document = ingest_document(collection, references, chunk_size, chunk_overlap)
    flow = load(document, registry=state.registry)
    job = Job.start(uuid.uuid4().hex, document=document, trigger={})

    async def closing(outcome: Awaitable[RunResult]) -> RunResult:
        try:
            return await outcome
        finally:
            await flow.aclose()

    return await _accepted(state, request, await state.submit(job, flow=flow, wrap=closing))


def ingest_document(
    collection: str, references: list[dict[str, Any]], chunk_size: int, chunk_overlap: int
) -> dict[str, Any]:
    """The ingest graph an upload runs."""
    nodes = [
        ("load", "document-loader", {"name": "Load uploads", "sources": references}),
        (
            "chunk",
            "text-chunker",
            {"name": "Chunk", "chunk_size": chunk_size, "chunk_overlap": chunk_overlap},
        ),
        ("embed", "embedder", {"name": "Embed"}),
        (
            "write",
            "knowledge-write",
            {"name": "Write", "collection": collection, "mode": "replace_source"},
        ),
    ]
    return {
        "name": f"Ingest into {collection}",
        "nodes": [{"id": i, "type": t, "data": d} for i, t, d in nodes],
        "edges": [
            {"source": a, "target": b}
            for a, b in (("load", "chunk"), ("chunk", "embed"), ("embed", "write"))
        ],
    }
