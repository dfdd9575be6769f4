"""A release environment's cost per call: in process (ours) vs the release's own stdio server.

    python benchmarks/release_env.py [--repeat N] [--instances M] [--spec release/Name@scenario]
    python benchmarks/release_env.py --quick      # 10 rounds, 2 instances (CI)

The release (LARK-AI-Lab/EnvFactory@eff3b22) serves each environment as its own FastMCP
server file over stdio, one process per client (its `MCPManager` and the verl fork's
`MCPManagerActor`: a client id per session, `load_scenario` first). Ours runs the same
file as an isolated module in this process (`envs.release_envs.create_release`) and calls
its tools through `Environment.call`, which takes a rollback snapshot before every call
(the format declares no read/write flag).

Same calls, one run: the scenario's read calls (Airline: `list_airports`,
`search_flights`, `get_flight_status`, `get_user_details`, with arguments taken from the
scenario's first flight and user) are made `--repeat` rounds on one instance each way,
and every answer of the two ways must be the same JSON (else exit 1). Figures:

* per call: wall µs in process vs wall µs over stdio (the client's round trip; the
  server's own CPU is in another process, so wall is the comparable figure), the ratio
  `stdio_over_inprocess_per_call`; in-process CPU µs too;
* per instance: `create_release` (module execution + `load_scenario`) vs a server
  process started, initialised and loaded (`--instances` of each, mean wall ms).

Needs the release files: `ENVFACTORY_RELEASE_DIR`, or the cached release; without them
it skips, with the reason in its JSON line. Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from envs.release_envs import (  # noqa: E402
    PREFIX,
    ReleaseEnvError,
    ReleaseScenario,
    create_release,
    get_release,
    release_root,
)

console = Console(stderr=True, highlight=False)
DEFAULT_SPEC = f"{PREFIX}Airline@scenario_001"

Call = tuple[str, dict[str, Any]]


def airline_calls(data: dict[str, Any]) -> list[Call]:
    """Airline's read calls, arguments from the scenario's first flight and user."""
    flight = next(iter(data["flights"].values()))
    date = str(flight["scheduled_departure"])[:10]
    user = next(iter(data["users"]))
    return [("list_airports", {}),
            ("search_flights", {"origin": flight["origin"],
                                "destination": flight["destination"], "date": date}),
            ("get_flight_status", {"flight_number": flight["flight_number"], "date": date}),
            ("get_user_details", {"user_id": user})]


CALL_BUILDERS = {"Airline": airline_calls}


def _scenario(name: str, scenario_id: str) -> ReleaseScenario:
    for scenario in get_release(name).scenarios():
        if scenario.scenario_id == scenario_id:
            return scenario
    raise ReleaseEnvError(f"{name}: no scenario {scenario_id!r}")


def in_process(spec: str, calls: list[Call], repeat: int) -> tuple[list[Any], float, float]:
    """(answers of the first round, wall µs per call, CPU µs per call) on one instance."""
    env = create_release(spec)
    answers = []
    for name, args in calls:  # first round: the answers, and warm-up
        result = env.call(name, args)
        if not result.ok:
            raise RuntimeError(f"in process {name}{args}: {result.error}")
        answers.append(json.loads(result.text()))
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        for name, args in calls:
            env.call(name, args)
    n = repeat * len(calls)
    return answers, (time.perf_counter() - w0) / n * 1e6, (time.process_time() - c0) / n * 1e6


async def _stdio_session(server: Path, data: dict[str, Any], body: Any) -> Any:
    """A fresh server process (the release's way: one per client), `load_scenario`, then
    `body(session)`."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(server)],
                                   cwd=str(server.parent))
    # the server logs every request on stderr: not part of the figures, and not shown
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            loaded = await session.call_tool("load_scenario", {"scenario": data})
            if loaded.isError:
                raise RuntimeError(f"{server.name} load_scenario: {_text(loaded)}")
            return await body(session)


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def stdio(server: Path, data: dict[str, Any], calls: list[Call],
                repeat: int) -> tuple[list[Any], float, float]:
    """(answers of the first round, wall µs per call, client CPU µs per call)."""
    async def body(session: Any) -> tuple[list[Any], float, float]:
        answers = []
        for name, args in calls:
            result = await session.call_tool(name, args)
            if result.isError:
                raise RuntimeError(f"stdio {name}{args}: {_text(result)}")
            answers.append(json.loads(_text(result)))
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(repeat):
            for name, args in calls:
                await session.call_tool(name, args)
        n = repeat * len(calls)
        return answers, (time.perf_counter() - w0) / n * 1e6, (time.process_time() - c0) / n * 1e6

    result: tuple[list[Any], float, float] = await _stdio_session(server, data, body)
    return result


def instance_costs(spec: str, server: Path, data: dict[str, Any],
                   instances: int) -> tuple[float, float]:
    """Mean wall ms of one instance each way: `create_release(spec)` vs a server process
    started, initialised and loaded with the scenario (and closed)."""
    async def nothing(session: Any) -> None:
        return None

    t0 = time.perf_counter()
    for _ in range(instances):
        create_release(spec)
    ours = (time.perf_counter() - t0) / instances * 1e3
    theirs = []
    for _ in range(instances):
        t1 = time.perf_counter()
        asyncio.run(_stdio_session(server, data, nothing))
        theirs.append((time.perf_counter() - t1) * 1e3)
    return ours, statistics.mean(theirs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 rounds, 2 instances")
    ap.add_argument("--repeat", type=int, default=200, help="rounds of the calls")
    ap.add_argument("--instances", type=int, default=5, help="instances created each way")
    ap.add_argument("--spec", default=DEFAULT_SPEC,
                    help=f"release/<Name>@<scenario> (calls known for: "
                         f"{', '.join(CALL_BUILDERS)})")
    args = ap.parse_args()
    repeat, instances = (10, 2) if args.quick else (args.repeat, args.instances)
    name, _, scenario_id = args.spec.removeprefix(PREFIX).partition("@")
    if name not in CALL_BUILDERS or not scenario_id:
        console.print(f"error: --spec {args.spec}: give release/<Name>@<scenario> with Name one "
                      f"of {', '.join(CALL_BUILDERS)}")
        return 2
    if release_root() is None:
        print(json.dumps({"benchmark": "release_env", "skipped": "no release root "
                          "(set ENVFACTORY_RELEASE_DIR to a checkout of LARK-AI-Lab/EnvFactory)"}))
        return 0
    env = get_release(name)
    scenario = _scenario(name, scenario_id)
    calls = CALL_BUILDERS[name](scenario.data)
    ours, our_wall, our_cpu = in_process(args.spec, calls, repeat)
    theirs, their_wall, their_cpu = asyncio.run(stdio(env.server, scenario.data, calls, repeat))
    if ours != theirs:
        console.print("error: in-process and stdio answers differ:")
        for (tool, _), a, b in zip(calls, ours, theirs, strict=True):
            if a != b:
                console.print(f"  {tool}: in process {json.dumps(a)[:200]} / stdio "
                              f"{json.dumps(b)[:200]}")
        return 1
    our_make, their_make = instance_costs(args.spec, env.server, scenario.data, instances)
    table = Table(title=f"{args.spec}: {len(calls)} read calls x {repeat} rounds, "
                        f"{instances} instances each way (one run)")
    table.add_column("figure")
    table.add_column("in process", justify="right")
    table.add_column("release stdio", justify="right")
    table.add_column("stdio / in process", justify="right")
    table.add_row("per call, wall µs", f"{our_wall:,.1f}", f"{their_wall:,.1f}",
                  f"{their_wall / our_wall:,.1f}")
    table.add_row("per call, CPU µs (stdio: client only)", f"{our_cpu:,.1f}",
                  f"{their_cpu:,.1f}", "")
    table.add_row("per instance, wall ms", f"{our_make:,.1f}", f"{their_make:,.1f}",
                  f"{their_make / our_make:,.1f}")
    console.print(table)
    print(json.dumps({"benchmark": "release_env", "spec": args.spec, "calls": len(calls),
                      "rounds": repeat, "instances": instances,
                      "inprocess_call_us": round(our_wall, 1),
                      "inprocess_call_cpu_us": round(our_cpu, 1),
                      "stdio_call_us": round(their_wall, 1),
                      "stdio_client_cpu_us": round(their_cpu, 1),
                      "stdio_over_inprocess_per_call": round(their_wall / our_wall, 2),
                      "inprocess_instance_ms": round(our_make, 2),
                      "stdio_instance_ms": round(their_make, 2),
                      "stdio_over_inprocess_per_instance": round(their_make / our_make, 2),
                      "answers_equal": True}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
