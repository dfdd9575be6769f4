"""The paper's Overall column: one number per row, computed the way the EnvFactory paper
computes its Overall row.

The paper's printed Overall values (Qwen3 base 16.27 / 24.09 / 29.23, EnvFactory 19.74 /
30.77 / 33.40 at 1.7B / 4B / 8B) are, to the printed precision, the unweighted mean of four
benchmark numbers, BFCL counting once as the mean of its multi-turn and single-turn
numbers: mean((BFCL MT + BFCL ST) / 2, τ² average, VitaBench average, MCP-Atlas pass
rate). A row that lacks one of those parts still gets a value, the mean of what it has,
named partial with the parts it lacks, so it is never read as the paper's Overall.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["BFCL_PARTS", "OVERALL_KEY", "OVERALL_PARTS", "Overall", "paper_overall"]

OVERALL_KEY = "overall"
#: BFCL counts once, as the mean of these two columns
BFCL_PARTS = ("bfcl_mt", "bfcl_st")
#: every column the Overall reads, in the paper's order
OVERALL_PARTS = (*BFCL_PARTS, "tau2", "vitabench", "mcp_atlas")


@dataclass(frozen=True)
class Overall:
    value: float
    #: the parts (column keys) the row lacks; empty: the paper's Overall itself
    missing: tuple[str, ...]

    @property
    def partial(self) -> bool:
        return bool(self.missing)

    def note(self) -> str:
        if not self.missing:
            return "the paper's Overall formula"
        return (f"partial: the paper's Overall formula over the parts present only "
                f"({', '.join(self.missing)} missing)")


def paper_overall(values: Mapping[str, float]) -> Overall | None:
    """The Overall of a row whose column values are `values` (fractions or percentages,
    the result is in the same unit); None when it has none of the parts."""
    bfcl = [values[k] for k in BFCL_PARTS if k in values]
    parts = [sum(bfcl) / len(bfcl)] if bfcl else []
    parts += [values[k] for k in OVERALL_PARTS if k not in BFCL_PARTS and k in values]
    if not parts:
        return None
    return Overall(value=sum(parts) / len(parts),
                   missing=tuple(k for k in OVERALL_PARTS if k not in values))
