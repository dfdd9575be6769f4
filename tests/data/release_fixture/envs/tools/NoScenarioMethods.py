"""A server whose API class lacks load_scenario/save_scenario (test data)."""
from mcp.server.fastmcp import FastMCP


class NoScenarioMethodsAPI:
    def ping(self) -> dict:
        return {"pong": True}


mcp = FastMCP(name="NoScenarioMethods")
api = NoScenarioMethodsAPI()


@mcp.tool()
def ping() -> dict:
    """
    Answer pong.

    Returns:
        pong (bool): Always true.
    """
    return api.ping()


if __name__ == "__main__":
    mcp.run()
