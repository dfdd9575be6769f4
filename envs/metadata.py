"""EnvFactory environment *metadata* (no code): tool specs for the tool graph.

The metadata format (`{Class}_metadata.json`) describes an environment by
`class_name`, `description` and `tools[]` with `input_schema` and `output_schema`.
Nothing here executes; the tool graph only needs names, schemas and descriptions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envs.envfactory_format import READ_PREFIXES

__all__ = ["MetadataEnvironment", "MetadataTool", "load_metadata", "load_metadata_dir"]


class MetadataTool(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    description: str
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object",
                                                                  "properties": {}})
    output_schema: dict[str, Any] = Field(default_factory=dict)

    @property
    def write(self) -> bool:
        """Heuristic: the format has no read/write flag; read-like names are reads."""
        return not self.name.startswith(READ_PREFIXES)


class MetadataEnvironment(BaseModel):
    model_config = ConfigDict(extra="allow")

    class_name: str
    description: str
    tools: list[MetadataTool] = Field(min_length=1)


def load_metadata(path: Path) -> MetadataEnvironment:
    """One metadata file; errors name the file and the offending field."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from e
    try:
        return MetadataEnvironment.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{path}: field {where!r}: {first['msg']}") from e


def load_metadata_dir(directory: Path) -> list[MetadataEnvironment]:
    """Every `*_metadata.json` in a directory, sorted by class name."""
    files = sorted(Path(directory).glob("*_metadata.json"))
    if not files:
        raise FileNotFoundError(f"{directory}: no *_metadata.json files")
    return sorted((load_metadata(p) for p in files), key=lambda m: m.class_name)
