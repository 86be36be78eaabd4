"""The FastAPI application: `create_app(config)`.

The store is opened when the server starts (lifespan) and closed when it stops; runs
still going then are cancelled. Every /api route needs a bearer token unless `dev`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from pydantic import BaseModel
from starlette.routing import Route

from nodeloom import __version__
from nodeloom.fleet.broker import require_postgres
from nodeloom.fleet.signals import RunSignals
from nodeloom.fleet.submit import Submitter
from nodeloom.observability.heap import settle_heap
from nodeloom.observability.metrics import RunMetrics
from nodeloom.plugins.registry import Registry, default_registry
from nodeloom.runs import RunService
from nodeloom.server.auth import require_token
from nodeloom.server.broadcast import Broadcaster
from nodeloom.server.config import ServerConfig
from nodeloom.server.errors import install_error_handlers
from nodeloom.server.limits import BodyLimit
from nodeloom.server.mcp_endpoint import PATH as MCP_PATH
from nodeloom.server.mcp_endpoint import McpEndpoint
from nodeloom.server.origin import DevGuard
from nodeloom.server.routes import (
    chat,
    credentials,
    decisions,
    evaluations,
    events,
    files,
    flows,
    hooks,
    knowledge,
    nodes,
    operations,
    runs,
    schedules,
    tokens,
    tools,
    websocket,
    workers,
)
from nodeloom.server.routes import openai as openai_routes
from nodeloom.server.runtime import Launcher, ServerState
from nodeloom.server.seed import import_flows
from nodeloom.server.timers import running_timers
from nodeloom.server.tokens import TokenStore
from nodeloom.server.ui import ui_files
from nodeloom.store import Store
from nodeloom.tools import allow_list as python_tools


class Health(BaseModel):
    status: str
    version: str


def create_app(config: ServerConfig | None = None, *, registry: Registry | None = None) -> FastAPI:
    config = config or ServerConfig()
    mcp = McpEndpoint()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if config.queue_url:
            require_postgres(config.database_url, "nodeloom serve")
        store = await Store.open(config.database_url)
        found = registry or default_registry()
        if config.flows:
            for saved in await import_flows(store, found, config.flows):
                print(f"nodeloom serve: saved flow {saved}", file=sys.stderr)
        broadcaster = Broadcaster()
        runs = RunService(store, found, observer=RunMetrics(), woken=True, check=python_tools.check)
        signals = None
        if store.listen_url is not None:  # Postgres: follow other processes' runs live
            signals = RunSignals(store.listen_url)
            await signals.start()
        state = ServerState(
            config=config,
            store=store,
            registry=found,
            runs=runs,
            tokens=TokenStore(config.tokens_file),
            broadcaster=broadcaster,
            launcher=Launcher(broadcaster),
            queue=Submitter(config.queue_url, runs) if config.queue_url else None,
            signals=signals,
        )
        app.state.nodeloom = state
        ops = app.state.operations = await operations.Operations.open(config, store, state.runs)
        python_tools.enforce()  # flows import only the operator's allow-listed functions
        try:
            async with running_timers(state), mcp.running(state):
                if config.settle_heap:  # start-up is over: what is alive now stays
                    settle_heap()
                yield
        finally:
            python_tools.enforce(False)
            try:
                await state.aclose()
                await ops.aclose()  # after the runs: its last counts include them
            finally:
                await store.close()

    app = FastAPI(
        title="nodeloom",
        version=__version__,
        description="Saved flows, runs and their live events. See docs/api.md.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    app.add_middleware(BodyLimit, max_bytes=config.max_body_bytes)
    if config.dev:  # no token: refuse DNS rebinding and cross-site requests instead
        app.add_middleware(DevGuard, public_hosts=config.public_hosts)

    @app.get("/health", response_model=Health, tags=["server"])
    async def health() -> Health:
        """Whether the server is up (no token needed: for load balancers)."""
        return Health(status="ok", version=__version__)

    protected = [Depends(require_token)]
    routers = (
        nodes,
        flows,
        runs,
        schedules,
        files,
        chat,
        events,
        credentials,
        tokens,
        tools,
        evaluations,
        knowledge,
        workers,
    )
    for router in (module.router for module in routers):
        app.include_router(router, dependencies=protected)
    app.include_router(openai_routes.router, dependencies=protected)
    app.include_router(operations.health_router)  # no token: fixed codes and counts only
    app.include_router(operations.metrics_router, dependencies=protected)
    app.include_router(websocket.router)  # checks the token itself (header or ?token=)
    app.include_router(hooks.router)  # no bearer token: the webhook's secret is its auth
    app.include_router(decisions.router)  # no bearer token: the link's signature is its auth
    # The saved flows as MCP tools (streamable HTTP); checks the bearer token itself.
    app.router.routes.append(Route(MCP_PATH, mcp, methods=["GET", "POST", "DELETE"]))
    ui = ui_files()
    if ui is not None:  # last: every route above wins over a file of the same path
        app.mount("/", ui, name="ui")
    return app
