"""The single-turn entries: the installed bfcl-eval's question and possible-answer files
joined by id, one Inspect sample per entry (the entry's `question[0]` messages as-is, its
functions and ground truth in the metadata), and the category names and collections the
task's `category` option takes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

from envs.bfcl import package
from envs.bfcl.categories import (
    AST_CATEGORIES,
    LIVE_CATEGORIES,
    NON_LIVE_CATEGORIES,
    RELEVANCE_CATEGORIES,
    SINGLE_TURN_CATEGORIES,
    V3_NAMES,
)
from envs.jsonl import read_objects
from tasks._bfcl.common import select_categories

CATEGORIES = SINGLE_TURN_CATEGORIES

_COLLECTIONS = {
    "all": CATEGORIES,
    "single_turn": CATEGORIES,
    "non_live": NON_LIVE_CATEGORIES,
    "live": LIVE_CATEGORIES,
    "ast": AST_CATEGORIES,
    "relevance": RELEVANCE_CATEGORIES,
    "python": tuple(c for c in CATEGORIES if c not in ("java", "javascript")),
    "non_python": ("java", "javascript"),
}

LANGUAGE = {"java": "Java", "javascript": "JavaScript"}  # everything else: Python
"""The checker's language per category."""


def resolve_categories(category: str | Sequence[str]) -> list[str]:
    """"all", a collection (non_live, live, ast, relevance, python, non_python) or a comma
    list of categories, by our (v3) names or bfcl-eval V4's (`simple_python`, ...)."""
    return select_categories(
        category,
        lambda name: _COLLECTIONS.get(name, (V3_NAMES.get(name, name),)),
        CATEGORIES,
        lambda _, cat: (f"unknown BFCL single-turn category {cat!r}; choose from "
                        f"{', '.join(CATEGORIES)} or {', '.join(_COLLECTIONS)}"),
        "no BFCL single-turn category selected")


@dataclass(frozen=True)
class Entry:
    """One single-turn entry: its question, functions and possible answer."""

    id: str
    category: str  # v3 name (simple, java, ...)
    test_category: str  # as the official code derives it from the id (V4: simple_python)
    messages: list[dict[str, Any]]
    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, Any]] | None  # None for the relevance categories

    @property
    def language(self) -> str:
        return LANGUAGE.get(self.category, "Python")


def _test_category(entry_id: str) -> str:
    # official: test_entry["id"].rsplit("_", 1)[0]
    return entry_id.rsplit("_", 1)[0]


@cache
def load_entries(category: str) -> tuple[Entry, ...]:
    """Questions joined with possible answers (by id) for one v3 category."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown BFCL single-turn category {category!r}")
    questions = read_objects(package.data_file(category))
    answers: dict[str, list[dict[str, Any]]] = {}
    if category not in RELEVANCE_CATEGORIES:
        for row in read_objects(package.data_file(category, possible_answer=True)):
            answers[row["id"]] = row["ground_truth"]
    entries = []
    for q in questions:
        if category not in RELEVANCE_CATEGORIES and q["id"] not in answers:
            raise ValueError(f"{q['id']}: no possible answer in the installed bfcl-eval")
        entries.append(
            Entry(
                id=q["id"],
                category=category,
                test_category=_test_category(q["id"]),
                messages=list(q["question"][0]),
                functions=list(q["function"]),
                ground_truth=answers.get(q["id"]),
            )
        )
    return tuple(entries)


def _chat_message(message: dict[str, Any]) -> ChatMessage:
    role, content = message["role"], message["content"]
    if role == "system":
        return ChatMessageSystem(content=content)
    if role == "assistant":
        return ChatMessageAssistant(content=content)
    if role == "user":
        return ChatMessageUser(content=content)
    raise ValueError(f"unexpected message role {role!r} in BFCL data")


def to_sample(entry: Entry) -> Sample:
    return Sample(
        id=entry.id,
        input=[_chat_message(m) for m in entry.messages],
        target=json.dumps(entry.ground_truth) if entry.ground_truth is not None else "",
        metadata={
            "category": entry.category,
            "test_category": entry.test_category,
            "language": entry.language,
            "functions": entry.functions,
            "ground_truth": entry.ground_truth,
        },
    )


def load_dataset(categories: Iterable[str]) -> MemoryDataset:
    cats = list(categories)
    samples = [to_sample(e) for cat in cats for e in load_entries(cat)]
    return MemoryDataset(samples, name="bfcl_singleturn:" + ",".join(cats))
