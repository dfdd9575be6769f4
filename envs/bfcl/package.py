"""Where things live inside the pinned `bfcl-eval` package, across its releases.

bfcl-eval moved constants between modules when BFCL V4 arrived (2025.8.25) and renamed
its data files (`BFCL_v3_*` → `BFCL_v4_*`). Everything version-dependent is resolved
here, once, so the rest of the code asks for "the multi-turn checker" or "the data
file of category X" and never cares which release is installed. The installed version
and data prefix are the dataset version and go into every log.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from functools import cache
from pathlib import Path
from typing import Any

from envs.bfcl.categories import V4_NAMES
from envs.release_registry import BFCL_PROJECT_ROOT

__all__ = [
    "BfclNotInstalled",
    "bfcl_version",
    "class_module",
    "data_dir",
    "data_file",
    "data_prefix",
    "func_doc_file",
    "version_info",
]

PINNED_VERSION = "2025.8.6.2"


class BfclNotInstalled(RuntimeError):
    """bfcl-eval is missing; `make install` installs the pinned release."""


# Importing `bfcl_eval.utils` (V4: also via `bfcl_eval.model_handler.utils`) creates
# result/, score/, .file_locks/ under BFCL_PROJECT_ROOT (default: site-packages). Set it
# before any bfcl_eval import, i.e. when this module is imported (default: the cache's
# `bfcl/`, so bfcl-eval never writes into site-packages).
os.environ.setdefault("BFCL_PROJECT_ROOT", str(BFCL_PROJECT_ROOT.path()))


@cache
def _package_dir() -> Path:
    try:
        import bfcl_eval
    except ImportError as e:  # pragma: no cover - exercised only without the package
        raise BfclNotInstalled(
            "bfcl-eval is not installed. Run `make install` (it installs "
            f"bfcl-eval=={PINNED_VERSION} with --no-deps)."
        ) from e
    return Path(bfcl_eval.__file__).parent


def bfcl_version() -> str:
    """Installed bfcl-eval version, e.g. '2025.8.6.2'."""
    _package_dir()
    return importlib.metadata.version("bfcl-eval")


def data_dir() -> Path:
    return _package_dir() / "data"


@cache
def data_prefix() -> str:
    """'BFCL_v3' or 'BFCL_v4': the prefix of the installed release's data files."""
    names = {p.name for p in data_dir().glob("BFCL_v*_multi_turn_base.json")}
    for prefix in ("BFCL_v4", "BFCL_v3"):
        if f"{prefix}_multi_turn_base.json" in names:
            return prefix
    raise BfclNotInstalled(f"no BFCL_v*_multi_turn_base.json under {data_dir()}")


def version_info() -> dict[str, str]:
    """What every log records as the dataset version."""
    return {"bfcl_eval_version": bfcl_version(), "bfcl_data_prefix": data_prefix()}




def data_file(category: str, *, possible_answer: bool = False) -> Path:
    """Path of a category's question (or ground-truth) file in the installed release."""
    name = category
    if data_prefix() == "BFCL_v4":
        name = V4_NAMES.get(category, category)
    base = data_dir() / "possible_answer" if possible_answer else data_dir()
    path = base / f"{data_prefix()}_{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"BFCL category {category!r}: {path} does not exist")
    return path


@cache
def _backend_config() -> Any:
    for module in (
        "bfcl_eval.constants.executable_backend_config",  # V4
        "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils",  # v3
    ):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        if hasattr(mod, "CLASS_FILE_PATH_MAPPING"):
            return mod
    raise BfclNotInstalled("CLASS_FILE_PATH_MAPPING not found in bfcl-eval")


#: The eight backends of the v3 multi-turn categories. V4 also maps WebSearchAPI and
#: MemoryAPI_kv/_vector/_rec_sum, which need packages outside the light install
#: (html2text + SerpAPI, overrides, faiss, sentence-transformers) and no v3 entry uses.
V3_BACKENDS = frozenset({
    "GorillaFileSystem", "MathAPI", "MessageAPI", "TicketAPI", "TradingBot", "TravelAPI",
    "TwitterAPI", "VehicleControlAPI",
})


def backend_classes() -> list[str]:
    """Class names of the installed release's executable v3 multi-turn backends."""
    return [c for c in _backend_config().CLASS_FILE_PATH_MAPPING if c in V3_BACKENDS]


def class_module(class_name: str) -> str:
    return str(_backend_config().CLASS_FILE_PATH_MAPPING[class_name])


def stateless_classes() -> list[str]:
    return list(_backend_config().STATELESS_CLASSES)


@cache
def func_doc_file(class_name: str) -> Path:
    """The official JSON function docs of one backend class."""
    mapping: dict[str, str] | None = None
    for module in ("bfcl_eval.constants.executable_backend_config",
                   "bfcl_eval.constants.category_mapping"):
        try:
            mapping = importlib.import_module(module).MULTI_TURN_FUNC_DOC_FILE_MAPPING
            break
        except (ImportError, AttributeError):
            continue
    if mapping is None:
        raise BfclNotInstalled("MULTI_TURN_FUNC_DOC_FILE_MAPPING not found in bfcl-eval")
    return data_dir() / "multi_turn_func_doc" / mapping[class_name]
