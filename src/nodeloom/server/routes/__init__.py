"""The API's routers, one module per area: nodes, flows, runs, events."""
