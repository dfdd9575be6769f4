"""JSON encoding of arbitrary Python object graphs (BFCL backend state).

BFCL's backends keep their state in plain Python objects (a file tree whose nodes
point back at their parents, sets, int-keyed dicts, a `random.Random`), so a Pydantic
schema cannot describe it. This codec turns such a graph into plain JSON and back,
exactly: shared and cyclic references are kept (`$ref`), and types JSON lacks are
tagged (`$tuple`, `$set`, `$dict`, `$random`, `$datetime`, `$object`).
"""

from __future__ import annotations

import datetime as _dt
import importlib
import random
from typing import Any

__all__ = ["decode", "encode"]

_TAGS = ("$ref", "$tuple", "$set", "$dict", "$random", "$datetime", "$object")


def encode(value: Any) -> Any:
    """Encode `value` (any graph of builtins and plain objects) as JSON-able data."""
    return _Encoder().encode(value)


def decode(data: Any) -> Any:
    """Rebuild the object graph produced by `encode`."""
    return _Decoder().decode(data)


class _Encoder:
    def __init__(self) -> None:
        self.ids: dict[int, int] = {}

    def encode(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, list):
            return [self.encode(x) for x in v]
        if isinstance(v, tuple):
            return {"$tuple": [self.encode(x) for x in v]}
        if isinstance(v, (set, frozenset)):
            items = [self.encode(x) for x in v]
            try:
                items.sort()
            except TypeError:
                pass
            return {"$set": items}
        if isinstance(v, dict):
            if all(isinstance(k, str) and k not in _TAGS for k in v):
                return {k: self.encode(x) for k, x in v.items()}
            return {"$dict": [[self.encode(k), self.encode(x)] for k, x in v.items()]}
        if isinstance(v, random.Random):
            return {"$random": _lists(v.getstate())}
        if isinstance(v, _dt.datetime):
            return {"$datetime": v.isoformat()}
        if hasattr(v, "__dict__") and not isinstance(v, type):
            if id(v) in self.ids:
                return {"$ref": self.ids[id(v)]}
            self.ids[id(v)] = n = len(self.ids)
            cls = type(v)
            return {
                "$object": f"{cls.__module__}:{cls.__qualname__}",
                "$id": n,
                "$attrs": {k: self.encode(x) for k, x in vars(v).items()},
            }
        raise TypeError(f"cannot encode value of type {type(v).__name__}")


class _Decoder:
    def __init__(self) -> None:
        self.objects: dict[int, Any] = {}

    def decode(self, d: Any) -> Any:
        if isinstance(d, list):
            return [self.decode(x) for x in d]
        if not isinstance(d, dict):
            return d
        if "$ref" in d:
            return self.objects[d["$ref"]]
        if "$tuple" in d:
            return tuple(self.decode(x) for x in d["$tuple"])
        if "$set" in d:
            return {self.decode(x) for x in d["$set"]}
        if "$dict" in d:
            return {self.decode(k): self.decode(x) for k, x in d["$dict"]}
        if "$random" in d:
            rng = random.Random()
            rng.setstate(_tuples(d["$random"]))
            return rng
        if "$datetime" in d:
            return _dt.datetime.fromisoformat(d["$datetime"])
        if "$object" in d:
            module, _, qualname = d["$object"].partition(":")
            cls: Any = importlib.import_module(module)
            for part in qualname.split("."):
                cls = getattr(cls, part)
            obj = cls.__new__(cls)
            self.objects[d["$id"]] = obj
            obj.__dict__.update({k: self.decode(x) for k, x in d["$attrs"].items()})
            return obj
        return {k: self.decode(x) for k, x in d.items()}


def _lists(v: Any) -> Any:
    return [_lists(x) for x in v] if isinstance(v, tuple) else v


def _tuples(v: Any) -> Any:
    return tuple(_tuples(x) for x in v) if isinstance(v, list) else v
