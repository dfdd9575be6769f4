"""Minimal reproducer: what a large tool list costs Inspect per model call, by log setting.

    python benchmarks/inspect_tool_logging.py [--samples 10] [--calls 8] [--tools 32]
    python benchmarks/inspect_tool_logging.py --quick      # 4 samples, 6 calls (CI)

Nothing of this project runs here: a solver calls `mockllm/model` (zero latency, plain
text) `--calls` times per sample, offering `--tools` tools the size of BFCL
multi-turn's (~800 bytes each: a 200-character description, four parameters with
100-character descriptions; 32 tools ~ 26 KB, what one BFCL entry offers), or none.
Inspect copies the tool list into every model event and walks it again each time it
writes the event (the realtime buffer writes each event when it starts and when it
ends, and the sample's log walks all events once more), so the per-call cost grows
with the tool list, not with what changed.

For each log setting (Inspect's defaults; `log_realtime=False`; also
`log_samples=False`) it runs the eval twice in this process (after a warm-up), with
`--calls` calls per sample and with one, and reports the marginal CPU per call (the
difference over the extra calls) with the tools and without; `tools_ms_per_call` is
what the tool list adds, which is what an upstream change that logged each sample's
tools once (a pool, like the message pool) instead of in every event would save, up
to the one copy a request needs. Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

SETTINGS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "no realtime": {"log_realtime": False},
    "no realtime, no samples": {"log_realtime": False, "log_samples": False},
}


def tools(n: int) -> list[Any]:
    from inspect_ai.tool import ToolInfo, ToolParams
    from inspect_ai.util import JSONSchema

    return [ToolInfo(
        name=f"tool_{i}", description=f"Tool {i}. " + "x" * 200,
        parameters=ToolParams(properties={
            f"arg_{j}": JSONSchema(type="string", description=f"Argument {j}. " + "y" * 100)
            for j in range(4)}, required=[f"arg_{j}" for j in range(4)]))
        for i in range(n)]


def run(samples: int, calls: int, n_tools: int, options: dict[str, Any]) -> float:
    """CPU seconds of one eval: `samples` samples, `calls` model calls each."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import Generate, TaskState, solver

    offered = tools(n_tools)

    @solver
    def calls_solver() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            model = get_model()
            for k in range(calls):
                state.messages.append(ChatMessageUser(content=f"request {k}"))
                output = await model.generate(state.messages, tools=offered)
                state.messages.append(output.message)
            return state

        return solve

    task = Task(dataset=[Sample(input="start", id=i) for i in range(samples)],
                solver=calls_solver())
    def outputs() -> Any:  # usage given: mockllm would count tokens (tiktoken download)
        while True:
            output = ModelOutput.from_content("mockllm/model", "ok")
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            yield output

    model = get_model("mockllm/model", custom_outputs=outputs())
    with tempfile.TemporaryDirectory(prefix="inspect_tool_logging_") as log_dir:
        start = time.process_time()
        (log,) = eval(task, model=model, log_dir=log_dir, display="none", **options)
        cpu = time.process_time() - start
    if log.status != "success":
        raise RuntimeError(f"eval failed: {log.error}")
    return cpu


def marginal_ms(samples: int, calls: int, n_tools: int, options: dict[str, Any]) -> float:
    many = run(samples, calls, n_tools, options)
    one = run(samples, 1, n_tools, options)
    return 1000 * (many - one) / (samples * (calls - 1))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--calls", type=int, default=8, help="model calls per sample (≥ 2)")
    ap.add_argument("--tools", type=int, default=32)
    ap.add_argument("--quick", action="store_true", help="4 samples, 6 calls (CI)")
    args = ap.parse_args(argv)
    if args.quick:
        args.samples, args.calls = 4, 6
    if args.calls < 2:
        ap.error("--calls must be at least 2 (the marginal is over the extra calls)")

    from importlib.metadata import version

    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=True, width=None if sys.stderr.isatty() else 120)
    console.print("[dim]warm-up eval...[/dim]")
    run(2, 2, args.tools, {})
    figures: dict[str, dict[str, float]] = {}
    for label, options in SETTINGS.items():
        console.print(f"[dim]{label}...[/dim]")
        with_tools = marginal_ms(args.samples, args.calls, args.tools, options)
        without = marginal_ms(args.samples, args.calls, 0, options)
        figures[label] = {"with_tools_ms_per_call": round(with_tools, 2),
                          "no_tools_ms_per_call": round(without, 2),
                          "tools_ms_per_call": round(with_tools - without, 2),
                          "tools_share": round((with_tools - without) / with_tools, 3)
                          if with_tools > 0 else 0.0}
    inspect_version = version("inspect_ai")
    table = Table(title=f"Inspect {inspect_version}: marginal CPU per model call, mockllm, "
                  f"{args.tools} BFCL-sized tools vs none; load avg "
                  f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for col in ("setting", f"{args.tools} tools ms/call", "no tools ms/call",
                "tools add ms/call", "tools share"):
        table.add_column(col, justify="left" if col == "setting" else "right")
    for label, f in figures.items():
        table.add_row(label, *(str(v) for v in f.values()))
    console.print(table)
    line = {"inspect_ai": inspect_version, "samples": args.samples, "calls": args.calls,
            "tools": args.tools, "load_average": list(os.getloadavg()), "settings": figures}
    print(json.dumps(line), flush=True)
    return line


if __name__ == "__main__":
    main()
