"""A server that parses but fails on import: it needs a module nobody has (test data)."""
from mcp.server.fastmcp import FastMCP

import envfactory_release_fixture_missing_module  # noqa: F401


class ImportFailsAPI:
    def __init__(self):
        self.items = {}

    def load_scenario(self, scenario: dict) -> None:
        self.items = dict(scenario.get("items", {}))

    def save_scenario(self) -> dict:
        return {"items": self.items}


mcp = FastMCP(name="ImportFails")
api = ImportFailsAPI()


@mcp.tool()
def list_items() -> dict:
    """
    List the items.

    Returns:
        items (dict): All items.
    """
    return {"items": api.items}


if __name__ == "__main__":
    mcp.run()
