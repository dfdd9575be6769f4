"""A picture of the tool graph: one self-contained HTML page with an inline SVG.

People check a graph by looking at it: which tools of an environment feed which, and where
the cross-environment links go. The page needs no JavaScript library and no network: tools
are circles coloured by environment, `Tool_Depend` edges are arrows (dashed when they cross
environments, thicker for higher scores), and hovering a tool or an edge shows its
description, inputs and outputs, or the parameter pairs behind the edge.
"""

from __future__ import annotations

import colorsys
import html
import math
from collections.abc import Iterable
from pathlib import Path

import networkx as nx

from synthesis.graph import ToolGraph

__all__ = ["neighbourhood", "render_html", "select_tools"]


def neighbourhood(graph: ToolGraph, tool_id: str, radius: int = 1) -> list[str]:
    """Tools within `radius` Tool_Depend hops of `tool_id`, either direction."""
    seen = {tool_id}
    frontier = {tool_id}
    for _ in range(radius):
        frontier = {n for t in frontier for n in graph.successors(t) + graph.predecessors(t)}
        frontier -= seen
        seen |= frontier
    return sorted(seen)


def select_tools(graph: ToolGraph, *, env: str | None = None, tool: str | None = None,
                 radius: int = 1) -> list[str]:
    """An environment's tools, a tool's neighbourhood, or (neither) the whole graph."""
    if tool is not None:
        if tool not in graph.g:
            raise KeyError(f"no tool {tool!r} in the graph")
        return neighbourhood(graph, tool, radius)
    if env is not None:
        tools = graph.tools_of(env)
        if not tools:
            raise KeyError(f"no environment {env!r}; known: {', '.join(graph.environments())}")
        return tools
    return graph.tools()


def _colours(envs: Iterable[str]) -> dict[str, str]:
    envs = sorted(envs)
    out = {}
    for i, env in enumerate(envs):
        r, g, b = colorsys.hls_to_rgb(i / max(len(envs), 1), 0.55, 0.6)
        out[env] = f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"
    return out


def _tool_tooltip(graph: ToolGraph, tid: str) -> str:
    node = graph.g.nodes[tid]

    def describe(pid: str) -> str:
        p = graph.g.nodes[pid]
        star = "*" if p.get("required") else ""
        return f"  {p['name']}{star} ({p['type']})"

    lines = [tid, node.get("description", "").split("\n")[0],
             "write" if node.get("write") else "read", "inputs (* required):"]
    lines += [describe(p) for p in graph.inputs(tid)] or ["  -"]
    lines += ["outputs:"] + ([describe(p) for p in graph.outputs(tid)] or ["  -"])
    return "\n".join(lines)


def _edge_tooltip(graph: ToolGraph, a: str, b: str) -> str:
    pairs = [f"  {graph.g.nodes[o]['name']} -> {graph.g.nodes[i]['name']} ({s:.2f})"
             for o in graph.outputs(a)
             for _, i, d in graph.g.out_edges(o, data=True)
             if d.get("kind") == "Parameter_Relate" and graph.g.has_edge(i, b)
             for s in [float(d.get("score") or 0.0)]]
    data = graph.g.edges[a, b]
    score = data.get("score")
    head = f"{a} -> {b} [{data.get('source')}" + (f", {score:.2f}]" if score else "]")
    return "\n".join([head, *pairs])


def render_html(graph: ToolGraph, tool_ids: Iterable[str], *, title: str = "tool graph",
                size: int = 900, seed: int = 0) -> str:
    """The page for these tools and the Tool_Depend edges among them."""
    tools = sorted(set(tool_ids))
    keep = set(tools)
    view = nx.DiGraph()
    view.add_nodes_from(tools)
    edges = [(a, b) for a, b, k in graph.g.edges(data="kind")
             if k == "Tool_Depend" and a in keep and b in keep]
    view.add_edges_from(edges)
    pos = nx.spring_layout(view, seed=seed, k=2.0 / math.sqrt(max(len(tools), 1)))
    margin = 60
    scale = (size - 2 * margin) / 2

    def xy(n: str) -> tuple[float, float]:
        x, y = pos[n]
        return margin + (x + 1) * scale, margin + (y + 1) * scale

    colours = _colours({graph.env_of(t) for t in tools})
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
             f'viewBox="0 0 {size} {size}">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="16" refY="5" '
             'markerWidth="6" markerHeight="6" orient="auto-start-reverse">'
             '<path d="M 0 0 L 10 5 L 0 10 z" fill="#666"/></marker></defs>']
    for a, b in edges:
        (x1, y1), (x2, y2) = xy(a), xy(b)
        crossing = graph.env_of(a) != graph.env_of(b)
        score = float(graph.g.edges[a, b].get("score") or 0.5)
        dash = ' stroke-dasharray="5,4"' if crossing else ""
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#888" '
            f'stroke-width="{0.6 + 2 * max(score - 0.5, 0):.2f}"{dash} '
            f'marker-end="url(#arrow)"><title>{html.escape(_edge_tooltip(graph, a, b))}'
            '</title></line>')
    for t in tools:
        x, y = xy(t)
        node = graph.g.nodes[t]
        parts.append(
            f'<g><circle cx="{x:.1f}" cy="{y:.1f}" r="8" fill="{colours[node["env"]]}" '
            f'stroke="#333"><title>{html.escape(_tool_tooltip(graph, t))}</title></circle>'
            f'<text x="{x + 10:.1f}" y="{y + 4:.1f}" font-size="11" font-family="sans-serif">'
            f'{html.escape(node["tool"])}</text></g>')
    parts.append("</svg>")
    legend = "".join(f'<span style="color:{c}">&#9679;</span> {html.escape(e)} &nbsp; '
                     for e, c in colours.items())
    cross = sum(1 for a, b in edges if graph.env_of(a) != graph.env_of(b))
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title></head><body style='font-family:sans-serif'><h2>{html.escape(title)}"
            f"</h2><p>{len(tools)} tools, {len(edges)} Tool_Depend edges ({cross} across "
            f"environments, dashed). Hover for details.</p><p>{legend}</p>"
            + "".join(parts) + "</body></html>")


def write_view(graph: ToolGraph, out: Path, *, env: str | None = None,
               tool: str | None = None, radius: int = 1) -> Path:
    tools = select_tools(graph, env=env, tool=tool, radius=radius)
    title = (f"neighbourhood of {tool} (radius {radius})" if tool else
             f"environment {env}" if env else "tool graph")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(graph, tools, title=title), encoding="utf-8")
    return out
