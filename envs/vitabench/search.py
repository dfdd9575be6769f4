"""VitaBench's fuzzy matching, in one place (upstream `vita/utils/utils.py`).

Every search/recommend tool ranks *all* candidates with thefuzz's `partial_ratio` and
keeps the top 100; look-ups by name (weather city, address, holiday) take the best match
above a threshold. Ranking is thefuzz's own (`process.extract`, default processor, ties
in candidate order), so the order a model sees is upstream's.
"""

from __future__ import annotations

from collections.abc import Mapping

from thefuzz import fuzz, process

__all__ = ["TOP_K", "fuzzy_match", "fuzzy_ratio_match", "rerank", "rerank_scored"]

#: how many results a search/recommend tool returns
TOP_K = 100


def rerank_scored(keywords: str, docs: Mapping[str, str]) -> list[tuple[str, str, int]]:
    """`(id, doc, score)` for every doc, best first. As upstream, a doc text shared by
    several ids maps back to the *last* of them (so that id can appear more than once)."""
    candidates = list(docs.values())
    owner = {doc: key for key, doc in docs.items()}
    ranked = process.extract(keywords, candidates, limit=None, scorer=fuzz.partial_ratio)
    return [(owner[doc], doc, score) for doc, score in ranked]


def rerank(keywords: str, docs: Mapping[str, str]) -> list[str]:
    """The ids of `docs` ranked by `partial_ratio` against `keywords`, best first."""
    return [key for key, _, _ in rerank_scored(keywords, docs)]


def fuzzy_match(x: str, y: str) -> bool:
    """Upstream's loose name match: partial ratio of at least 40."""
    return bool(fuzz.partial_ratio(x, y) >= 40)


def fuzzy_ratio_match(x: str, y: str) -> bool:
    """Upstream's address sanity check: plain ratio of at least 20."""
    return bool(fuzz.ratio(x, y) >= 20)
