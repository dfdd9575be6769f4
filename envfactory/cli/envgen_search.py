"""`envfactory envgen search QUERY --corpus DIR`: ranked hits from the corpus index, or with
`--sketch OUT_DIR` the search agent (role `searcher`) writing API sketches for the query."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envfactory.cli.options import MaxTokensOpt, ModelArgsOpt, role_models
from synthesis.envgen.corpus import MARK_CLOSE, MARK_OPEN, Corpus, CorpusError, IndexStats
from synthesis.envgen.search_agent import SearchConfig

__all__ = ["search_cmd"]

console = Console()


def _print_stats(stats: IndexStats, corpus: Corpus) -> None:
    console.print(f"[dim]index {escape(str(corpus.index_path))}: {stats.files} files, "
                  f"{stats.sections} sections ({stats.indexed} indexed, {stats.removed} "
                  f"removed, {stats.unchanged} unchanged) in {stats.seconds:.2f} s[/dim]")
    for problem in stats.problems:
        console.print(f"[yellow]skipped {escape(problem)}[/yellow]")


def search_cmd(
    query: Annotated[str, typer.Argument(help="What to look for (free text), or with "
                                              "--sketch the goal for the search agent.")],
    corpus: Annotated[Path, typer.Option(help="Directory of API docs (md, rst, txt, html, "
                                               "json, yaml, OpenAPI).")],
    k: Annotated[int, typer.Option(help="Hits to print (with --sketch: hits per search of "
                                        "the agent, at most 20).", min=1)] = 10,
    index_dir: Annotated[Path | None, typer.Option(
        help="Where the index file goes (default $ENVFACTORY_CACHE/envgen_index).")] = None,
    sketch: Annotated[Path | None, typer.Option(
        help="Run the search agent and write its sketches into this directory.")] = None,
    model: Annotated[str | None, typer.Option(
        help="Model of the searcher role (Inspect name), with --sketch.")] = None,
    model_role: Annotated[list[str] | None, typer.Option(
        "--model-role", help="searcher=MODEL (overrides --model).")] = None,
    model_args: ModelArgsOpt = None,
    max_tokens: MaxTokensOpt = None,
    max_sketches: Annotated[int, typer.Option(help="Most sketches the agent writes.",
                                              min=1)] = 3,
    max_turns: Annotated[int, typer.Option(help="Most model calls of the agent.", min=1)] = 30,
    web_search: Annotated[str | None, typer.Option(
        help="Also give the agent Inspect's web_search tool with this provider (tavily, "
             "google, exa, or the model's own: openai, anthropic, ...); needs network.")]
    = None,
) -> None:
    """Search a document corpus (SQLite FTS5, BM25); with --sketch, let the search agent
    propose APIs for QUERY and write one sketch per API."""
    if sketch is None and (model or model_role or model_args or web_search):
        raise typer.BadParameter("--model, --model-role, -M and --web-search need --sketch OUT_DIR")
    index_path = index_dir / f"{corpus.resolve().name}.sqlite" if index_dir else None
    try:
        with Corpus(corpus, index_path) as docs:
            with console.status("indexing the corpus"):
                stats = docs.refresh()
            _print_stats(stats, docs)
            if sketch is None:
                _print_hits(docs, query, k)
            else:
                config = SearchConfig(max_sketches=max_sketches, max_turns=max_turns,
                                      k=min(k, 20))
                _run_agent(docs, query, sketch, model, model_role or [], model_args or [],
                           max_tokens, config, web_search)
    except CorpusError as e:
        raise typer.BadParameter(str(e)) from None


def _print_hits(docs: Corpus, query: str, k: int) -> None:
    hits = docs.search(query, k)
    if not hits:
        console.print(f"no section matches {escape(query)!r}")
        return
    table = Table(title=f"{escape(query)} — {len(hits)} hits (BM25)", show_lines=True)
    for col, style in (("#", "dim"), ("score", "cyan"), ("path", "green"), ("section", "bold"),
                       ("snippet", "")):
        table.add_column(col, style=style, overflow="fold")
    for i, hit in enumerate(hits, 1):
        snippet = (escape(hit.snippet).replace(MARK_OPEN, "[bold yellow]")
                   .replace(MARK_CLOSE, "[/bold yellow]"))
        table.add_row(str(i), f"{hit.score:.3f}", escape(hit.path), escape(hit.section),
                      snippet)
    console.print(table)


def _run_agent(docs: Corpus, goal: str, out: Path, model: str | None, model_role: list[str],
               model_args: list[str], max_tokens: int | None, config: SearchConfig,
               web_search: str | None) -> None:
    from inspect_ai.tool import web_search as inspect_web_search

    from synthesis.envgen.search_agent import (
        ROLE,
        network_available,
        run_search_agent,
    )
    from synthesis.roles import gold_player_problem

    searcher = role_models([ROLE], model, model_args, model_role, max_tokens)[ROLE]
    problem = gold_player_problem({ROLE: searcher}, "search-agent")
    if problem:
        raise typer.BadParameter(problem, param_hint="--model/--model-role")
    web = None
    if web_search is not None:
        if not network_available():
            raise typer.BadParameter("--web-search: this machine has no network (no outgoing "
                         "connection succeeded); search the local corpus only")
        web = inspect_web_search(providers=web_search)  # type: ignore[arg-type]
    with console.status(f"search agent ({escape(str(searcher))}) working on the goal"):
        result = asyncio.run(run_search_agent(goal, docs, out, searcher, config=config,
                                              web_search=web))
    table = Table(title=f"sketches -> {escape(str(out))}")
    table.add_column("sketch", style="green")
    for path in result.sketches:
        table.add_row(escape(path))
    console.print(table)
    console.print(f"{result.searches} searches, {result.reads} reads, {result.web_searches} "
                  f"web searches, {result.rejected_sketches} sketches refused, "
                  f"{result.turns} model calls, {result.tokens} tokens")
    if result.summary:
        console.print(escape(result.summary))
