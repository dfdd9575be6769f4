"""Inspect log samples → canonical `Trajectory` records, for every benchmark.

Every task that runs on the episode loop leaves `EpisodeProgress` in its sample's store
(the messages in order, the turn counter, the termination reason, the final state), and
names its environments in the sample metadata (`environments`, plus `initial_state`
where the task has snapshots). That is all a converter needs, so one function serves
BFCL, τ², the EnvFactory tasks and whatever comes next; training exports, the
leaderboard, `envfactory tau2 grade` and `envfactory/replay` read what it writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalSample, read_eval_log_samples
from inspect_ai.util import Store

from envs.names import split_name
from harness.episode import EpisodeProgress
from harness.trajectory import Call, Message, Provenance, Trajectory, Turn

__all__ = ["find_logs", "progress_of", "trajectories", "trajectory_of", "turns_of"]


def progress_of(sample: EvalSample) -> EpisodeProgress:
    """The episode progress a sample's store holds (defaults if it ran no episode)."""
    return EpisodeProgress(store=Store(dict(sample.store)))


def turns_of(messages: list[Message], environments: list[str]) -> list[Turn]:
    """Per user turn: the user's words, the agent's calls with their results, and its
    last text (each call with its result and, if it failed, the kind). Calls are split
    into environment and tool where the names are qualified."""
    envs = dict.fromkeys(environments)
    results = {m.tool_call_id: m for m in messages if m.role == "tool"}
    turns: dict[int, Turn] = {}
    for m in messages:
        if m.turn is None:
            continue
        turn = turns.setdefault(m.turn, Turn(user=""))
        if m.role == "user" and not m.tool_calls:
            turn.user = f"{turn.user}\n{m.content or ''}".strip()
        elif m.role == "assistant":
            if m.content:
                turn.assistant = m.content
            for c in m.tool_calls or []:
                env, name = split_name(c.name, envs) or (
                    environments[0] if len(environments) == 1 else "", c.name)
                result = results.get(c.id)
                turn.calls.append(Call(
                    env=env, name=name, arguments=c.arguments,
                    ok=None if result is None else not result.error,
                    result=None if result is None else result.content,
                    error_kind=None if result is None else result.error_kind))
    return [turns[i] for i in sorted(turns)]


#: sample metadata that identifies a task beyond its id, kept in the record's metadata
SAMPLE_KEYS = ("task_set", "language", "revision")


def trajectory_of(sample: EvalSample, model: str | None = None,
                  task: str | None = None) -> Trajectory:
    """The canonical record of one sample (gold calls and states kept where the sample
    carried its task as a `Trajectory`, as the EnvFactory tasks do)."""
    progress = progress_of(sample)
    meta: dict[str, Any] = dict(sample.metadata or {})
    gold = meta.get("trajectory")
    environments = list(meta.get("environments") or (gold or {}).get("environments") or [])
    turns = turns_of(progress.messages, environments)
    if gold is not None:
        for turn, gold_turn in zip(turns, Trajectory.model_validate(gold).turns,
                                   strict=False):
            turn.gold_calls = gold_turn.gold_calls
    scores = {k: v.value for k, v in (sample.scores or {}).items()}
    return Trajectory(
        id=str(sample.id), environments=environments,
        initial_state=meta.get("initial_state") or (gold or {}).get("initial_state") or {},
        turns=turns, final_state=progress.final_state, messages=progress.messages,
        termination=progress.termination,
        provenance=Provenance(source="inspect-log", model=model,
                              split=meta.get("split"), domain=meta.get("domain")),
        metadata={"task": task, "epoch": sample.epoch, "scores": scores,
                  "limit": sample.limit.type if sample.limit else None,
                  # what a benchmark's re-grading needs to find the task (VitaBench)
                  **{k: meta[k] for k in SAMPLE_KEYS if k in meta}})


def trajectories(log: Path | str) -> Iterator[Trajectory]:
    """Every sample of an Inspect log file as a `Trajectory`, streamed."""
    from inspect_ai.log import read_eval_log

    header = read_eval_log(str(log), header_only=True)
    for sample in read_eval_log_samples(str(log), all_samples_required=False):
        yield trajectory_of(sample, model=header.eval.model, task=header.eval.task)



#: files Inspect writes beside logs that are not logs
_NOT_LOGS = {"logs.json", "eval-set.json", "listing.json"}


def find_logs(paths: Iterable[Path]) -> list[Path]:
    """The log files `paths` name: each file as given, each folder as every `.eval` /
    `.json` log under it (recursively, hidden folders and Inspect's listing files
    skipped), in order, without repeats. (Inspect's `list_eval_logs` would read the
    header of every file outside its own naming scheme, as costly as reading the log.)

    A path that does not exist, or a folder without a single log, raises
    `FileNotFoundError` naming it: converting it to nothing would hide a wrong path."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            logs = [file for file in sorted(path.rglob("*"))
                    if file.suffix in (".eval", ".json") and file.name not in _NOT_LOGS
                    and not any(p.startswith(".") for p in file.relative_to(path).parts)
                    and file.is_file()]
            if not logs:
                raise FileNotFoundError(f"{path}: no Inspect logs (*.eval, *.json) in this "
                                        "folder")
            found.update(dict.fromkeys(logs))
        elif path.is_file():
            found[path] = None
        else:
            raise FileNotFoundError(f"{path}: no such log file or folder")
    return list(found)
