"""A small MCP server for the concierge example: city facts from a fixed table.

python examples/mcp/facts_server.py      (stdio; the MCP Server node starts it)
"""

from mcp.server.mcpserver import MCPServer

CITIES = {
    "paris": {"country": "France", "population": 2_102_650, "timezone": "Europe/Paris"},
    "tokyo": {"country": "Japan", "population": 14_094_034, "timezone": "Asia/Tokyo"},
    "lima": {"country": "Peru", "population": 10_092_000, "timezone": "America/Lima"},
}

server = MCPServer("city-facts")


@server.tool()
def city_facts(city: str) -> dict:
    """Country, population and time zone of a city."""
    facts = CITIES.get(city.strip().lower())
    if facts is None:
        return {"error": f"no facts about {city}; known: {', '.join(sorted(CITIES))}"}
    return {"city": city, **facts}


@server.tool()
def known_cities() -> list[str]:
    """The cities this server knows."""
    return sorted(CITIES)


if __name__ == "__main__":
    server.run()
