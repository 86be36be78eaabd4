"""The HTTP server: the REST API over the run store and recorded runs, with live events
over SSE. See docs/api.md and docs/deployment.md.

    from nodeloom.server import ServerConfig, create_app

    app = create_app(ServerConfig(dev=True))       # serve it with uvicorn
"""

from nodeloom.server.app import create_app
from nodeloom.server.config import ServerConfig

__all__ = ["ServerConfig", "create_app"]
