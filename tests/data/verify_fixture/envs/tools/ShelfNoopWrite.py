"""Shelf whose add_item reports success and stores nothing (a state defect)."""
from typing import Dict

from mcp.server.fastmcp import FastMCP
from pydantic import BaseModel, Field


# Section 1: Schema
class Item(BaseModel):
    item_id: str = Field(..., description="Item identifier")
    name: str = Field(..., min_length=1, description="Item name")


class ShelfScenario(BaseModel):
    items: Dict[str, Item] = Field(default={}, description="Items by item_id")
    current_time: str = Field(default="2025-01-01T00:00:00",
                              pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")


Scenario_Schema = [Item, ShelfScenario]


# Section 2: Class
class ShelfAPI:
    def __init__(self):
        self.items: Dict[str, Item] = {"i1": Item(item_id="i1", name="lamp")}
        self.current_time = "2025-01-01T00:00:00"

    def load_scenario(self, scenario: dict) -> None:
        model = ShelfScenario(**scenario)
        self.items = model.items
        self.current_time = model.current_time

    def save_scenario(self) -> dict:
        return {"items": {k: v.model_dump() for k, v in self.items.items()},
                "current_time": self.current_time}

    def get_item(self, item_id: str) -> dict:
        item = self.items[item_id]
        return {"item_id": item.item_id, "name": item.name}

    def add_item(self, item_id: str, name: str) -> None:
        self.items[item_id] = Item(item_id=item_id, name=name)

    def remove_item(self, item_id: str) -> None:
        del self.items[item_id]


# Section 3: MCP Tools
mcp = FastMCP(name="ShelfNoopWrite")
api = ShelfAPI()


@mcp.tool()
def load_scenario(scenario: dict) -> str:
    """Load a scenario.

    Args:
        scenario (dict): Scenario matching ShelfScenario.
    """
    api.load_scenario(scenario)
    return "Successfully loaded scenario"


@mcp.tool()
def save_scenario() -> dict:
    """Save the current state."""
    return api.save_scenario()


@mcp.tool()
def get_item(item_id: str) -> dict:
    """Get one item.

    Args:
        item_id (str): Item identifier.
    """
    if item_id not in api.items:
        raise ValueError(f"Item {item_id} not found")
    return api.get_item(item_id)


@mcp.tool()
def add_item(item_id: str, name: str) -> str:
    """Add an item.

    Args:
        item_id (str): Item identifier.
        name (str): Item name.
    """
    if item_id in api.items:
        raise ValueError(f"Item {item_id} already exists")
    if not name:
        raise ValueError("Name must not be empty")
    return "Successfully added item"  # forgets api.add_item(item_id, name)


@mcp.tool()
def remove_item(item_id: str) -> str:
    """Remove an item.

    Args:
        item_id (str): Item identifier.
    """
    if item_id not in api.items:
        raise ValueError(f"Item {item_id} not found")
    api.remove_item(item_id)
    return "Successfully removed item"


# Section 4: Entry Point
if __name__ == "__main__":
    mcp.run()
