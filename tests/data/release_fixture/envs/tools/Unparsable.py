# A server file cut short: it does not parse (test data for a broken entry).
from mcp.server.fastmcp import FastMCP

mcp = FastMCP(name="Unparsable")

@mcp.tool()
def lookup(key: str -> dict:
    return {}
