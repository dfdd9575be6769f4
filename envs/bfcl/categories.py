"""BFCL's category names, once, for every folder that names them.

The tasks select categories by these names, the leaderboard makes a column of each, the
benchmarks and tests walk them, and `package.data_file` maps them to the file names of
the installed release. They are plain data (no bfcl-eval import), so the leaderboard
and the CLI can read them without the package installed.

Our names are bfcl-eval v3's. V4 (2025.8.25) renamed three single-turn categories
(`simple` → `simple_python`, ...); `V4_NAMES` maps ours to theirs, `V3_NAMES` back, so
a user may type either and the data files of either release are found.
"""

from __future__ import annotations

__all__ = [
    "AST_CATEGORIES",
    "LIVE_CATEGORIES",
    "MULTI_TURN_CATEGORIES",
    "NON_LIVE_CATEGORIES",
    "RELEVANCE_CATEGORIES",
    "SINGLE_TURN_CATEGORIES",
    "V3_NAMES",
    "V4_NAMES",
]

#: the four multi-turn categories (official names `multi_turn_<name>`), in leaderboard order
MULTI_TURN_CATEGORIES = ("base", "miss_func", "miss_param", "long_context")

#: the 13 single-turn categories, in leaderboard order
NON_LIVE_CATEGORIES = (
    "simple", "java", "javascript", "multiple", "parallel", "parallel_multiple", "irrelevance",
)
LIVE_CATEGORIES = (
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "live_irrelevance", "live_relevance",
)
SINGLE_TURN_CATEGORIES = NON_LIVE_CATEGORIES + LIVE_CATEGORIES
#: scored on whether a call was made at all, not by the AST checker
RELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance", "live_relevance")
AST_CATEGORIES = tuple(c for c in SINGLE_TURN_CATEGORIES if c not in RELEVANCE_CATEGORIES)

#: bfcl-eval V4's names for the v3 categories it renamed, and back
V4_NAMES = {"simple": "simple_python", "java": "simple_java", "javascript": "simple_javascript"}
V3_NAMES = {v4: v3 for v3, v4 in V4_NAMES.items()}
