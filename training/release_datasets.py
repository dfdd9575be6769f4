"""The EnvFactory release's Hub datasets as training inputs, read at a pinned commit.

The release publishes its training data on the Hub: `LARK-Lab/EnvFactory-SFT-FILTERED` and
`-SFT-ALL` (LlamaFactory alpaca with `history`) and `-RL` (one row per turn with gold
calls). Both formats are what the release's `src/utils/data_process.py` writes
(notes/envfactory.md §10), and the row models here say field for field which:

- SFT (`convert_to_sft_data`): `instruction`, `input` (always ""), `output` (an optional
  `<think>...</think>\\n\\n` prefix, then assistant text or `<tool_call>` blocks), `system`
  (the release's system prompt with the chain's tools) and `history` (earlier
  `[input, output]` pairs). The release's LlamaFactory entry maps them as
  prompt=instruction, query=input, response=output, history=history, system=system; the
  export keeps that (with an empty `tools` column, as the tools are in the system prompt).
- RL (`convert_to_rl_data`): `prompt` (JSON string of the history messages and the turn's
  query), `data_source`, `agent_name`, `ability`, `reward_model` {`ground_truth` (JSON
  string of `[{name, arguments, masked_arguments}]`), `style`} and `extra_info.
  mcp_factory_kwargs` {`mcp_servers`, `initial_config`, `final_config`} (JSON strings).
  Each row becomes one of our verl rows (`training/rl_export.py`'s shape): its world is the
  release environments `release/<Server>` with the row's own starting scenario loaded
  through each server's `load_scenario` (so the server's validation applies now, not in
  the middle of a rollout), its gold the row's calls, whose "Server-tool" names are
  exactly our model-facing names for release environments (`envs.names`).

A revision is required and must be a commit (`ID@<40 hex>`): a branch would read whatever
was pushed last (`envs.releases.hub_snapshot`, the one pinned Hub read, with its retries).
Bad rows never stop a read and are never dropped silently: a row with an unknown or missing
field, a value of the wrong type, a server the release does not have, a scenario the
server refuses or a gold call naming no tool of its servers is one line naming the file,
row and field, counted under its reason, and left out; the rest are read.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Json, ValidationError

from envs.jsonl import numbered_records
from envs.release_envs import PREFIX, ReleaseEnvError, get_release
from envs.releases import UnpinnedRevision, hub_snapshot
from envs.world import World

__all__ = ["RELEASE_DATASETS", "HubRef", "HubSource", "HubUsageError", "ReleaseRlRow",
           "RlRow", "RowReport", "SftRow", "ThinkMode", "data_files", "parse_hub_ref",
           "read_release_rows", "release_rl_rows", "release_sft_samples", "snapshot"]

Kind = Literal["sft", "rl"]
ThinkMode = Literal["keep", "strip"]

#: the release's datasets (its README) and which writer of data_process.py made each
RELEASE_DATASETS: dict[str, Kind] = {
    "LARK-Lab/EnvFactory-SFT-FILTERED": "sft",
    "LARK-Lab/EnvFactory-SFT-ALL": "sft",
    "LARK-Lab/EnvFactory-RL": "rl",
}
#: data files read from a snapshot (data_process.py writes JSON arrays; the Hub may hold
#: JSON Lines or parquet conversions of them)
DATA_SUFFIXES = (".json", ".jsonl", ".parquet")
#: a file whose name has one of these words is the validation split
_VAL_WORDS = re.compile(r"(^|[^a-z])(val|validation|valid|test|dev)([^a-z]|$)")
_THINK = re.compile(r"^<think>.*?</think>\n\n", re.DOTALL)


class HubUsageError(ValueError):
    """A `--hub` value that cannot name a release dataset at a pinned commit."""


# --- rows, as data_process.py writes them ----------------------------------------------

class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SftRow(_Row):
    """One SFT sample (`convert_to_sft_data`, the dict appended at data_process.py:270)."""

    instruction: str  # format_step(input step).strip(): user text or <tool_response> blocks
    input: str  # always ""
    output: str  # optional "<think>…</think>\n\n" + format_step(output step)
    system: str  # SYSTEM_PROMPT with {user_tools} and {tools} filled in
    history: list[Annotated[list[str], Field(min_length=2, max_length=2)]]  # [in, out]


class _Message(_Row):
    role: Literal["user", "assistant"]  # QWEN3_ROLE_MAPPING's values
    content: str


class GoldCall(_Row):
    """One of the turn's tool calls (data_process.py:310)."""

    name: str  # "Server-tool"
    arguments: dict[str, Any]
    masked_arguments: list[str]


class _RewardModel(_Row):
    ground_truth: Json[list[GoldCall]]
    style: str


class _McpFactoryKwargs(_Row):
    mcp_servers: Json[list[str]]
    initial_config: Json[dict[str, dict[str, Any]]]
    final_config: Json[dict[str, dict[str, Any]]]


class _ExtraInfo(_Row):
    mcp_factory_kwargs: _McpFactoryKwargs


class RlRow(_Row):
    """One RL sample (`convert_to_rl_data`, the dict built at data_process.py:317)."""

    prompt: Json[list[_Message]]  # history + [{"role": "user", "content": query}]
    data_source: str  # "EnvFactory"
    agent_name: str  # "tool_agent"
    ability: str  # "tool_use"
    reward_model: _RewardModel
    extra_info: _ExtraInfo


# --- where the rows came from ------------------------------------------------------------

class HubRef(BaseModel):
    dataset: str
    revision: str
    kind: Kind


class HubSource(BaseModel):
    """What an export read from the Hub, for its manifest."""

    dataset: str
    kind: Kind
    #: the revision asked for and the commit the snapshot holds
    revision: str
    commit: str
    #: data files read, relative to the snapshot, each with its split
    files: dict[str, str]
    rows_read: int
    rows_kept: int
    #: reason -> rows left out for it
    skipped: dict[str, int] = Field(default_factory=dict)
    #: one line per row left out, naming the file, row and field
    problems: list[str] = Field(default_factory=list)


def parse_hub_ref(spec: str) -> HubRef:
    """`LARK-Lab/EnvFactory-RL@<commit>` -> a HubRef; a missing revision or an id that is
    not one of the release's datasets is a `HubUsageError` (the commit's form is checked
    by `envs.releases.hub_snapshot`, before any download)."""
    dataset, sep, revision = spec.partition("@")
    if dataset not in RELEASE_DATASETS:
        raise HubUsageError(f"--hub {spec!r}: not a dataset of the EnvFactory release; use "
                            f"one of {', '.join(RELEASE_DATASETS)} followed by @<commit>")
    if not sep or not revision:
        raise HubUsageError(f"--hub {spec!r}: a revision is required ({dataset}@<commit>, "
                            "the 40-hex commit to read), so the export says which data it is")
    return HubRef(dataset=dataset, revision=revision, kind=RELEASE_DATASETS[dataset])


def snapshot(ref: HubRef) -> tuple[Path, str]:
    """The local snapshot folder of `ref` and its commit (the Hub cache; retried). A
    revision that is not a commit is a `HubUsageError`; a dataset that cannot be fetched
    (offline and not cached, missing, gated) an `OSError` naming it."""
    try:
        return hub_snapshot(ref.dataset, ref.revision, option="--hub ID@REV")
    except UnpinnedRevision as e:
        raise HubUsageError(str(e)) from None
    except Exception as e:  # noqa: BLE001 - the client's errors share no base class
        raise OSError(f"cannot fetch the Hub dataset {ref.dataset}@{ref.revision}: "
                      f"{type(e).__name__}: {_one_line(e)}") from e


def _split_of(path: Path) -> str:
    return "val" if _VAL_WORDS.search(path.stem.lower()) else "train"


def data_files(folder: Path) -> list[Path]:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in DATA_SUFFIXES
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    if not files:
        raise FileNotFoundError(f"{folder}: no data file ({', '.join(DATA_SUFFIXES)})")
    return files


@dataclass
class _Undecodable:
    reason: str


def _decode(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        return _Undecodable(f"not JSON: {e}")


def _raw_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """(row number, raw row) of one data file; row numbers count from 0 in the order the
    file holds them (a JSON array's index, a JSONL file's line - 1, a parquet row)."""
    if path.suffix == ".jsonl":
        for lineno, row in numbered_records(path, _decode, "row"):
            yield lineno - 1, row
    elif path.suffix == ".json":
        document = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(document, list):
            raise ValueError(f"{path.name}: expected a JSON array of rows (as data_process.py "
                             f"writes), got {type(document).__name__}")
        yield from enumerate(document)
    else:
        import datasets

        # parquet has one schema for all rows: a field a row lacks reads as null, and is
        # dropped here, so that the row model reports it as missing (not as a bad value)
        for i, row in enumerate(datasets.Dataset.from_parquet(str(path)).to_list()):
            yield i, {k: v for k, v in row.items() if v is not None}


def _problem(error: ValidationError) -> tuple[str, str]:
    """(reason, "field: what") of the first error of a row model."""
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "row"
    if first["type"] == "missing":
        return "missing field", f"{where}: missing"
    if first["type"] == "extra_forbidden":
        return "unknown field", f"{where}: unknown field (data_process.py writes no such field)"
    return "bad value", f"{where}: {first['msg']}"


@dataclass
class RowReport:
    """What reading one dataset kept and left out."""

    files: dict[str, str] = field(default_factory=dict)
    read: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    #: told each problem line as it is found (the CLI prints them)
    on_problem: Callable[[str], None] | None = None

    def skip(self, reason: str, line: str) -> None:
        self.skipped[reason] += 1
        self.problems.append(line)
        if self.on_problem is not None:
            self.on_problem(line)


def read_release_rows(folder: Path, model: type[_Row], report: RowReport
                      ) -> Iterator[tuple[str, str, int, Any]]:
    """(file, split, row number, validated row) of every data file in `folder`; rows that
    the model refuses are recorded in `report`, not yielded. A file that cannot be read at
    all counts as one problem of its own."""
    skip = report.skip
    for path in data_files(folder):
        name = str(path.relative_to(folder))
        split = _split_of(path)
        report.files[name] = split
        try:
            rows = list(_raw_rows(path))
        except (OSError, UnicodeDecodeError, ValueError) as e:
            skip("unreadable file", f"{name}: cannot be read: {e}")
            continue
        for i, raw in rows:
            report.read += 1
            where = f"{name} row {i}"
            if isinstance(raw, _Undecodable):
                skip("undecodable row", f"{where}: {raw.reason}")
                continue
            try:
                row = model.model_validate(raw)
            except ValidationError as e:
                reason, what = _problem(e)
                skip(reason, f"{where}: {what}")
                continue
            yield name, split, i, row


# --- SFT rows -> our LlamaFactory samples -------------------------------------------------

def release_sft_samples(folder: Path, think: ThinkMode, report: RowReport
                        ) -> list[dict[str, Any]]:
    """The SFT rows of `folder` as our alpaca samples (`training.export.SFT_FEATURES`):
    `id` `<file>#<row>`, the release's five columns as written, `tools` empty (the tools
    are in the release's system prompt). `think="strip"` drops the `<think>...</think>`
    prefix data_process.py writes before a target (history pairs never carry one)."""
    samples = []
    for name, _split, i, row in read_release_rows(folder, SftRow, report):
        output = _THINK.sub("", row.output, count=1) if think == "strip" else row.output
        samples.append({"id": f"{name}#{i}", "instruction": row.instruction,
                        "input": row.input, "output": output, "system": row.system,
                        "tools": "", "history": [list(pair) for pair in row.history]})
    return samples


# --- RL rows -> our verl rows -------------------------------------------------------------

@dataclass
class ReleaseRlRow:
    """One release RL row, checked against the release environments, ready for
    `training.rl_export.release_rl_row`."""

    where: str
    split: str
    conversation: str  # servers + first message: the rows of one conversation share it
    environments: list[str]
    start_state: dict[str, dict[str, Any]]
    gold_final_state: dict[str, dict[str, Any]]
    prompt: list[dict[str, str]]
    gold: list[dict[str, Any]]
    tool_selection: list[str]


def _conversation(row: RlRow) -> str:
    first = row.prompt[0].content if row.prompt else ""
    key = json.dumps([row.extra_info.mcp_factory_kwargs.mcp_servers, first])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


class _Skip(Exception):
    """A release RL row that cannot become an episode here: its reason and its line."""

    def __init__(self, reason: str, line: str) -> None:
        super().__init__(line)
        self.reason, self.line = reason, line


def _check(row: RlRow, where: str, root: Path | None) -> tuple[list[str], list[str]]:
    """(environments, tool names) of the row's episode; `_Skip` when it cannot be one."""
    kwargs = row.extra_info.mcp_factory_kwargs
    at = f"{where}: extra_info.mcp_factory_kwargs"
    if not kwargs.mcp_servers:
        raise _Skip("no server", f"{at}.mcp_servers: empty")
    for server in kwargs.mcp_servers:
        try:
            entry = get_release(server, root)
        except ReleaseEnvError as e:
            raise _Skip("unknown server",
                        f"{at}.mcp_servers: unknown server {server!r} ({e})") from None
        if entry.problem:
            raise _Skip("unusable server",
                        f"{at}.mcp_servers: server {server!r}: {entry.problem}")
        for config in ("initial_config", "final_config"):
            if server not in getattr(kwargs, config):
                raise _Skip("no scenario", f"{at}.{config}: no scenario for server {server!r}")
    envs = [PREFIX + s for s in kwargs.mcp_servers]
    try:
        world = World(envs)
    except Exception as e:  # noqa: BLE001 - a server that fails to import: its own entry
        raise _Skip("unusable server", f"{at}.mcp_servers: {type(e).__name__}: "
                                       f"{_one_line(e)}") from None
    for config in ("initial_config", "final_config"):
        scenarios = getattr(kwargs, config)
        try:  # the rollout's own path: each server's load_scenario and its validation
            world.restore({PREFIX + s: scenarios[s] for s in kwargs.mcp_servers})
        except Exception as e:  # noqa: BLE001 - any server's own validation error type
            raise _Skip("invalid scenario", f"{at}.{config}: refused by the server's "
                                            f"load_scenario: {type(e).__name__}: "
                                            f"{_one_line(e)}") from None
    tools = [name for name, _ in world.tools()]
    for k, call in enumerate(row.reward_model.ground_truth):
        if call.name not in tools:
            raise _Skip("unknown tool", f"{where}: reward_model.ground_truth[{k}].name: "
                                        f"{call.name!r} is no tool of {', '.join(envs)}")
    return envs, tools


def _one_line(error: BaseException, limit: int = 300) -> str:
    return " ".join(str(error).split())[:limit]


def release_rl_rows(folder: Path, report: RowReport, root: Path | None = None
                    ) -> list[ReleaseRlRow]:
    """The RL rows of `folder` that make an episode on the release environments of
    `root` (default `envs.release_envs.release_root()`); the rest are in `report`."""
    out = []
    for name, split, i, row in read_release_rows(folder, RlRow, report):
        where = f"{name} row {i}"
        try:
            envs, tools = _check(row, where, root)
        except _Skip as skip:
            report.skip(skip.reason, skip.line)
            continue
        kwargs = row.extra_info.mcp_factory_kwargs
        out.append(ReleaseRlRow(
            where=where, split=split, conversation=_conversation(row), environments=envs,
            start_state={PREFIX + s: kwargs.initial_config[s] for s in kwargs.mcp_servers},
            gold_final_state={PREFIX + s: kwargs.final_config[s] for s in kwargs.mcp_servers},
            prompt=[m.model_dump() for m in row.prompt],
            gold=[c.model_dump() for c in row.reward_model.ground_truth],
            tool_selection=tools))
    return out
