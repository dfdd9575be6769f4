"""LLM passes over the tool graph: add-only Tool_Depend refinement and user-provided labels.

Embeddings find data-flow links between similarly described parameters; they miss workflow links
inside one environment (log in before booking) and cannot tell which inputs a user can simply say.
Two model passes fill that in, as in the EnvFactory release (notes/envfactory.md §7).
Each pass has two sets of prompts (`prompts=`): ``"release"`` (the default) sends the
release's own requests and reads replies as its code does (`synthesis.graph_llm_release`);
``"ours"`` is the variant described here. Which ran is recorded in the graph
(``graph.g.graph["llm_prompts"]``, per pass), and a pass refuses to continue a graph the
other variant started unless asked to redo it.

- ``refine_edges``: per environment, intra-environment only, the model proposes *new* successors
  for tools; it can never remove an edge or link to itself, and every name is checked against the
  environment's tools. Cross-environment edges stay embedding-only.
- ``classify_user_provided``: every parameter, in batches of 32 with its tool as context, gets
  ``user_provided`` True/False; a batch that keeps failing leaves ``None`` (= not user-provided).
- ``audit_orphans``: required inputs that are neither user-provided nor produced by any tool, with
  an optional patch marking them user-provided so their tools can be sampled at all.

Both passes call the model through Inspect (``get_model(role="synth")``), so any provider works;
replies are JSON in a tagged block, validated, and retried with the error fed back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, get_args

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
    get_model,
)
from pydantic import BaseModel

from envs.concurrency import bounded_gather
from harness.reask import ask_until_valid
from synthesis import graph_llm_release as release
from synthesis.sampler import HasGraph, unproducible_required_inputs

ROLE = "synth"
MAX_ATTEMPTS = 3
BATCH_SIZE = 32
EDGE_TAG = "new_edges"
LABEL_TAG = "user_provided"
#: graph attribute listing the environments the edge pass has refined (for resume)
REFINED_KEY = "llm_refined_envs"
#: graph attribute recording, per pass ("edges", "labels"), which prompts ran
PROMPTS_KEY = "llm_prompts"

#: the release's prompts and reply reading (default), or ours
Prompts = Literal["release", "ours"]
PROMPTS: tuple[str, ...] = get_args(Prompts)

#: the retry request after a reply `parse_new_edges` / `parse_labels` refused
AGAIN = "That reply could not be used: {problem}. Answer again, following the format exactly."


class ReplyError(ValueError):
    """A reply that cannot be used; its message goes back to the model."""


class EnvRefinement(BaseModel):
    """Outcome of the edge pass for one environment."""

    env: str
    added: list[tuple[str, str]]  # (from tool id, to tool id)
    attempts: int
    error: str | None = None  # last error when every attempt failed


class LabelBatch(BaseModel):
    """Outcome of the classification pass for one batch of parameters."""

    params: list[str]
    attempts: int
    error: str | None = None  # set when the batch failed and its params stay None


def prompts_conflict(graph: HasGraph, step: str, prompts: str, *, redo: bool) -> str | None:
    """Why pass `step` cannot run with `prompts` on this graph: an unknown variant, or
    one the other variant started (unless the pass is redone); None when it can."""
    if prompts not in PROMPTS:
        return f"prompts must be one of {', '.join(PROMPTS)}, not {prompts!r}"
    before = graph.g.graph.get(PROMPTS_KEY, {}).get(step)
    if before is not None and before != prompts and not redo:
        return (f"the graph's {step} pass ran with --prompts {before}; continue it with "
                f"--prompts {before}, or redo it (--redo) with --prompts {prompts}")
    return None


def record_prompts(graph: HasGraph, step: str, prompts: Prompts, *, redo: bool) -> None:
    """Record that pass `step` runs with `prompts` (ValueError: `prompts_conflict`)."""
    problem = prompts_conflict(graph, step, prompts, redo=redo)
    if problem:
        raise ValueError(problem)
    graph.g.graph.setdefault(PROMPTS_KEY, {})[step] = prompts


def resolve_model(model: str | Model | None = None) -> Model:
    """The model bound to the ``synth`` role, else ``model`` (a Model passed in always wins)."""
    if isinstance(model, Model):
        return model
    return get_model(role=ROLE, default=model)


def _tagged_json(text: str, tag: str) -> Any:
    found = re.findall(rf"<{tag}>(.*?)</{tag}>", text, flags=re.DOTALL)
    if not found:
        raise ReplyError(f"no <{tag}>...</{tag}> block in the reply")
    body = found[-1].strip()
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", body)
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the <{tag}> block is not valid JSON: {exc}") from exc


# ---------------------------------------------------------------- Tool_Depend refinement

EDGE_SYSTEM = f"""You review the tools of one software environment and find which tool is
naturally called after which. Tool B should follow tool A when A's result feeds one of B's
inputs, when B completes or continues what A started, or when a user doing a realistic task
would call B right after A. Only propose links that are clearly useful; proposing none is fine.
You may only ADD links: existing links stay as they are, and a tool never follows itself.

Reply with one JSON object inside <{EDGE_TAG}></{EDGE_TAG}> tags, mapping a tool name to the
list of tool names that should newly follow it, using the exact names listed. Example:
<{EDGE_TAG}>{{"find_flight": ["book_flight"]}}</{EDGE_TAG}>"""


def _env_tools(graph: HasGraph, env: str) -> dict[str, dict[str, Any]]:
    return {
        data["tool"]: {"id": node, **data}
        for node, data in sorted(graph.g.nodes(data=True))
        if data.get("kind") == "tool" and data["env"] == env
    }


def _adjacency(graph: HasGraph, tools: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    by_id = {t["id"]: name for name, t in tools.items()}
    return {
        name: sorted(
            by_id[dst]
            for _, dst, kind in graph.g.out_edges(t["id"], data="kind")
            if kind == "Tool_Depend" and dst in by_id
        )
        for name, t in tools.items()
    }


def edge_prompt(
    env: str, tools: dict[str, dict[str, Any]], adjacency: dict[str, list[str]]
) -> str:
    """The user message of the edge pass: the environment's tools and its current links."""
    lines = [f"Environment: {env}", "", "Tools:"]
    for name, tool in tools.items():
        lines.append(f"- {name}: {tool.get('description') or '(no description)'}")
    lines += ["", "Current links (tool -> tools that already follow it):"]
    for name, succ in adjacency.items():
        lines.append(f"- {name} -> {', '.join(succ) if succ else '(none)'}")
    lines += ["", "Which new links should be added?"]
    return "\n".join(lines)


def parse_new_edges(text: str, names: Iterable[str]) -> list[tuple[str, str]]:
    """New (from, to) tool-name pairs from a reply; unknown names or bad shapes raise ReplyError."""
    known = set(names)
    data = _tagged_json(text, EDGE_TAG)
    if not isinstance(data, dict):
        raise ReplyError("the block must hold a JSON object of tool name -> list of tool names")
    unknown: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for src, dsts in data.items():
        if not isinstance(dsts, list) or not all(isinstance(d, str) for d in dsts):
            raise ReplyError(f"the value for {src!r} must be a list of tool names")
        unknown |= {n for n in (src, *dsts) if n not in known}
        pairs |= {(src, d) for d in dsts if d != src}
    if unknown:
        raise ReplyError(f"unknown tool names {sorted(unknown)}; use only {sorted(known)}")
    return sorted(pairs)


async def refine_edges(
    graph: HasGraph,
    *,
    model: str | Model | None = None,
    envs: Iterable[str] | None = None,
    max_attempts: int = MAX_ATTEMPTS,
    max_concurrency: int = 8,
    redo: bool = False,
    on_result: Callable[[EnvRefinement], None] | None = None,
    prompts: Prompts = "release",
) -> list[EnvRefinement]:
    """Ask the model for new intra-environment Tool_Depend edges and add them (source "llm").

    Each environment's edges are added as soon as its reply is parsed, and the environment is
    recorded in ``graph.g.graph["llm_refined_envs"]``; `on_result` then sees the outcome (the
    CLI saves the graph there), so an interrupted pass resumes with the environments not yet
    refined. ``redo`` refines recorded environments again. The sampler sorts successors, so
    the order in which replies arrive does not change sampled chains. With
    ``prompts="release"`` each environment gets the release's request and retries
    (`graph_llm_release.refine_env`; ``max_attempts`` requests at most).
    """
    record_prompts(graph, "edges", prompts, redo=redo)
    llm = resolve_model(model)
    all_envs = sorted({d["env"] for _, d in graph.g.nodes(data=True) if d.get("kind") == "tool"})
    done: list[str] = graph.g.graph.setdefault(REFINED_KEY, [])
    chosen = [e for e in (all_envs if envs is None else sorted(set(envs) & set(all_envs)))
              if redo or e not in done]

    async def release_job(env: str) -> EnvRefinement:
        outcome = await release.refine_env(graph.g, env, llm, max_attempts)
        result = EnvRefinement(env=env, added=outcome.added, attempts=outcome.requests,
                               error=outcome.error)
        if result.error is None and env not in done:
            done.append(env)
        if on_result:
            on_result(result)
        return result

    async def job(env: str) -> EnvRefinement:
        tools = _env_tools(graph, env)
        adjacency = _adjacency(graph, tools)
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=EDGE_SYSTEM),
            ChatMessageUser(content=edge_prompt(env, tools, adjacency)),
        ]
        asked = await ask_until_valid(
            llm, messages, lambda text: parse_new_edges(text, tools), attempts=max_attempts,
            again=AGAIN, refused=(ReplyError,))
        pairs, used, error = asked.value, asked.attempts, asked.problem
        result = EnvRefinement(
            env=env, attempts=used, error=error,
            added=[(tools[a]["id"], tools[b]["id"]) for a, b in pairs or []
                   if b not in adjacency[a]])
        for src, dst in result.added:
            graph.g.add_edge(src, dst, kind="Tool_Depend", source="llm", score=None)
        if error is None and env not in done:
            done.append(env)
        if on_result:
            on_result(result)
        return result

    run = release_job if prompts == "release" else job
    return await bounded_gather((run(env) for env in chosen), max_concurrency)


# ---------------------------------------------------------------- user-provided labels

LABEL_SYSTEM = f"""You label the parameters of software tools. For each numbered parameter,
decide: could a user state this value directly in their own words when asking for help, with
no lookup, calculation or tool call needed to know it?

true: things people say, such as a search query, a city, a date, a person's name, the text of a
message, a file path they name, an amount they want.
false: internal identifiers (ids, UUIDs), keys and tokens, timestamps, coordinates, derived codes
(zip codes, time zones worked out from something else), values a tool returns, configuration
flags, page numbers or cursors. When in doubt, answer false.

Reply with one JSON object inside <{LABEL_TAG}></{LABEL_TAG}> tags, mapping every parameter
number (as a string) to true or false. Example:
<{LABEL_TAG}>{{"0": true, "1": false}}</{LABEL_TAG}>"""


def label_prompt(graph: HasGraph, params: Sequence[str]) -> str:
    """The user message of the label pass: numbered parameters with their tool as context."""
    g = graph.g
    lines = ["Parameters:"]
    for i, param in enumerate(params):
        p = g.nodes[param]
        tool = g.nodes.get(f"{p['env']}-{p['tool']}", {})
        role = "input of" if p["direction"] == "input" else "returned by"
        lines.append(
            f"{i}. {p['name']} ({p.get('type', 'string')}), {role} tool {p['tool']} "
            f"[{p['env']}: {tool.get('description') or 'no description'}]: "
            f"{p.get('description') or 'no description'}"
        )
    return "\n".join(lines)


def parse_labels(text: str, n: int) -> dict[int, bool]:
    """``{idx: bool}`` for exactly the indices 0..n-1; anything else raises ReplyError."""
    data = _tagged_json(text, LABEL_TAG)
    if not isinstance(data, dict):
        raise ReplyError("the block must hold a JSON object of parameter number -> true/false")
    labels: dict[int, bool] = {}
    for key, value in data.items():
        if not str(key).isdigit() or not 0 <= int(key) < n:
            raise ReplyError(f"{key!r} is not a parameter number 0..{n - 1}")
        if not isinstance(value, bool):
            raise ReplyError(f"the value for {key} must be true or false")
        labels[int(key)] = value
    missing = [i for i in range(n) if i not in labels]
    if missing:
        raise ReplyError(f"missing parameter numbers {missing}")
    return labels


async def classify_user_provided(
    graph: HasGraph,
    *,
    model: str | Model | None = None,
    only_unknown: bool = True,
    batch_size: int = BATCH_SIZE,
    max_attempts: int = MAX_ATTEMPTS,
    max_concurrency: int = 8,
    on_result: Callable[[LabelBatch], None] | None = None,
    prompts: Prompts = "release",
) -> list[LabelBatch]:
    """Set ``user_provided`` on every parameter node (inputs and outputs), batch by batch.

    With ``only_unknown`` (default) parameters already labelled keep their label, so a rerun
    (after a failure or an interruption) only asks about what is still unlabelled. A batch
    that fails every attempt leaves its parameters ``None``. Labels are written as each batch
    is parsed, then `on_result` sees the batch (the CLI saves the graph there).

    With ``prompts="release"`` the parameters and batches are the release's (its own
    flattening, tool order, inputs then outputs; `graph_llm_release.label_batches`), each
    sent and read as the release does; afterwards our object nodes, which the release
    never asks about, are labelled from their fields (`derive_object_labels`).
    """
    record_prompts(graph, "labels", prompts, redo=not only_unknown)
    llm = resolve_model(model)
    if prompts == "release":
        return await _release_labels(graph, llm, only_unknown=only_unknown,
                                     batch_size=batch_size, max_attempts=max_attempts,
                                     max_concurrency=max_concurrency, on_result=on_result)
    g = graph.g
    params = sorted(
        n for n, d in g.nodes(data=True)
        if d.get("kind") == "param" and (not only_unknown or d.get("user_provided") is None)
    )
    batches = [params[i : i + batch_size] for i in range(0, len(params), batch_size)]

    async def job(batch: list[str]) -> LabelBatch:
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=LABEL_SYSTEM),
            ChatMessageUser(content=label_prompt(graph, batch)),
        ]
        asked = await ask_until_valid(
            llm, messages, lambda text: parse_labels(text, len(batch)), attempts=max_attempts,
            again=AGAIN, refused=(ReplyError,))
        labels, used, error = asked.value, asked.attempts, asked.problem
        for i, param in enumerate(batch):
            g.nodes[param]["user_provided"] = None if labels is None else labels[i]
        report = LabelBatch(params=batch, attempts=used, error=error)
        if on_result:
            on_result(report)
        return report

    return await bounded_gather((job(b) for b in batches), max_concurrency)


async def _release_labels(graph: HasGraph, llm: Model, *, only_unknown: bool, batch_size: int,
                          max_attempts: int, max_concurrency: int,
                          on_result: Callable[[LabelBatch], None] | None) -> list[LabelBatch]:
    g = graph.g
    batches = release.label_batches(g, only_unknown=only_unknown, batch_size=batch_size)

    async def job(batch: release.Batch) -> LabelBatch:
        outcome = await release.label_batch(batch, llm, max_attempts)
        for i, (_, _, node) in enumerate(batch.params):
            if node is not None and outcome.labels is not None and i in outcome.labels:
                g.nodes[node]["user_provided"] = outcome.labels[i]
        report = LabelBatch(params=[n for _, _, n in batch.params if n is not None],
                            attempts=outcome.requests, error=outcome.error)
        if on_result:
            on_result(report)
        return report

    reports = await bounded_gather((job(b) for b in batches), max_concurrency)
    release.derive_object_labels(g)
    return reports


def audit_orphans(graph: HasGraph, *, auto_patch: bool = False) -> list[str]:
    """Required inputs neither user-provided nor produced by any tool; optionally mark them
    user-provided (the release's auto-patch) so the tools that need them can be sampled."""
    orphans = unproducible_required_inputs(graph)
    if auto_patch:
        for param in orphans:
            graph.g.nodes[param]["user_provided"] = True
    return orphans
