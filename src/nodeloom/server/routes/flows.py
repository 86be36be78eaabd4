"""Saved flows and their versions; validation without saving."""

from __future__ import annotations

from typing import Annotated, Any

import yaml
from fastapi import APIRouter, Query, Response

from nodeloom.engine.flow import load
from nodeloom.errors import GraphError
from nodeloom.plugins.registry import Registry
from nodeloom.server.errors import ApiError
from nodeloom.server.models import (
    FlowCreate,
    FlowList,
    FlowUpdate,
    FlowVersionModel,
    ValidateRequest,
    ValidationResult,
    VersionList,
)
from nodeloom.server.routes.responses import LARGEST_INT, errors
from nodeloom.server.runtime import State
from nodeloom.store import FlowSummary, FlowVersion, FlowVersionInfo
from nodeloom.tools import allow_list as python_tools

router = APIRouter(tags=["flows"])


@router.post("/api/flows", status_code=201, response_model=FlowVersionModel, responses=errors())
async def create_flow(body: FlowCreate, state: State) -> dict[str, Any]:
    """Save a new flow (version 1). The graph is validated first: if it is invalid the
    answer is 422 listing every issue, and nothing is saved."""
    document = native_document(body.document, state.registry)
    return _version(await state.store.save_flow(body.name, document))


@router.get("/api/flows", response_model=FlowList, responses=errors())
async def list_flows(state: State) -> dict[str, Any]:
    """Every flow (not deleted), the most recently saved first."""
    return {"flows": [_summary(flow) for flow in await state.store.list_flows()]}


@router.get("/api/flows/{flow_id}", response_model=FlowVersionModel, responses=errors(404))
async def get_flow(
    flow_id: str,
    state: State,
    version: Annotated[
        int | None, Query(ge=1, le=LARGEST_INT, description="default: the latest")
    ] = None,
) -> dict[str, Any]:
    """A version of a flow, with its graph document."""
    return _version(await state.store.get_flow(flow_id, version))


@router.put("/api/flows/{flow_id}", response_model=FlowVersionModel, responses=errors(404))
async def update_flow(flow_id: str, body: FlowUpdate, state: State) -> dict[str, Any]:
    """Save a new version of a flow (validated first, as when creating)."""
    current = await state.store.get_flow(flow_id)
    document = native_document(body.document, state.registry)
    name = body.name if body.name is not None else current.name
    return _version(await state.store.save_flow(name, document, flow_id))


@router.get("/api/flows/{flow_id}/versions", response_model=VersionList, responses=errors(404))
async def list_versions(flow_id: str, state: State) -> dict[str, Any]:
    """Every version of a flow, oldest first, without documents."""
    return {"versions": [_version_info(v) for v in await state.store.list_versions(flow_id)]}


@router.delete(
    "/api/flows/{flow_id}", status_code=204, response_class=Response, responses=errors(404)
)
async def delete_flow(flow_id: str, state: State) -> Response:
    """Delete a flow. Its versions are kept, so its past runs still show what ran."""
    await state.store.delete_flow(flow_id)
    return Response(status_code=204)


@router.post("/api/validate", response_model=ValidationResult, responses=errors())
async def validate(body: ValidateRequest, state: State) -> Any:
    """Check a graph without saving it: `valid`, and every issue, located. A valid graph
    comes back as `document` in the native format (a file of another format, converted)."""
    document = _parsed(body.document) if isinstance(body.document, str) else body.document
    try:
        native = native_document(document, state.registry)
    except GraphError as exc:
        return {"valid": False, "issues": [issue.to_json() for issue in exc.issues]}
    return {"valid": True, "issues": [], "document": native}


def _parsed(text: str) -> dict[str, Any]:
    """A document's text (JSON is YAML too), read with YAML's safe loader. Aliases are
    refused: a few bytes of them can stand for an exponentially large graph."""
    try:
        if any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text)):
            raise ApiError(
                422,
                "invalid_request",
                "the document text uses YAML aliases (*name); write the values out instead",
            )
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ApiError(
            422, "invalid_request", f"the document text is neither JSON nor YAML: {exc}"
        ) from None
    if not isinstance(document, dict):
        raise ApiError(
            422,
            "invalid_request",
            f"the document text must hold an object (a graph), not {type(document).__name__}",
        )
    return document


def native_document(document: dict[str, Any], registry: Registry) -> dict[str, Any]:
    """The document in the native format (any format nodeloom reads is converted), once
    it has loaded without an issue. Raises GraphError listing every issue."""
    try:
        flow = load(document, registry=registry)
    except GraphError as exc:  # the allow-list's issues too, if it is a native document
        refused = python_tools.issues(document)
        if refused:
            raise GraphError([*exc.issues, *refused]) from None
        raise
    assert flow.document is not None
    python_tools.check(flow.document)
    return flow.document


def _summary(flow: FlowSummary) -> dict[str, Any]:
    return {
        "id": flow.id,
        "name": flow.name,
        "latest_version": flow.latest_version,
        "created_at": flow.created_at.isoformat(),
        "updated_at": flow.updated_at.isoformat(),
    }


def _version(version: FlowVersion) -> dict[str, Any]:
    return {
        "flow_id": version.flow_id,
        "name": version.name,
        "version": version.version,
        "document": version.document,
        "document_hash": version.document_hash,
        "created_at": version.created_at.isoformat(),
    }


def _version_info(info: FlowVersionInfo) -> dict[str, Any]:
    return {
        "flow_id": info.flow_id,
        "version": info.version,
        "document_hash": info.document_hash,
        "size": info.size,
        "created_at": info.created_at.isoformat(),
    }
