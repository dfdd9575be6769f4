"""README.md cards of the three Hub repos we push: a trajectory dataset, a model, results.

Each card is YAML front matter built with `huggingface_hub`'s `DatasetCardData` /
`ModelCardData` (so the keys are the ones the Hub indexes: licence, task categories,
`configs` with the split files, `dataset_info.features`, `base_model`, `datasets`,
`model-index`) followed by a Markdown body saying where the data came from. Cards are
built from what is pushed, never from the environment: no token, no local home paths
beyond the file names the user gave.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from huggingface_hub import DatasetCard, DatasetCardData, EvalResult, ModelCard, ModelCardData
from pydantic import BaseModel, Field

from leaderboard.hub_data import DATASET_FEATURES, LogEntry

__all__ = ["DatasetCardInput", "ModelCardInput", "dataset_card", "eval_results",
           "model_card", "results_card"]

_TAGS = ["envfactory", "tool-use", "agents", "multi-turn", "function-calling"]
#: metrics that describe a spread, not a result (kept out of model-index)
_SPREAD = {"stderr", "std", "var"}


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "n>1M"


def _front(data: DatasetCardData | ModelCardData, body: str) -> str:
    return f"---\n{data.to_yaml()}\n---\n\n{body.strip()}\n"


def _fence(text: str, lang: str = "") -> str:
    ticks = "````" if "```" in text else "```"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


class DatasetCardInput(BaseModel):
    """What a trajectory dataset card says."""

    repo_id: str
    license: str
    split_files: dict[str, str]
    """Split -> parquet path in the repo."""
    counts: dict[str, int]
    num_bytes: dict[str, int] = Field(default_factory=dict)
    """Split -> size of its Arrow table (what `datasets` reports as num_bytes)."""
    environments: dict[str, int]
    """Environment -> trajectories using it."""
    sources: dict[str, str]
    """Source file name -> sha256."""
    manifests: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """manifest.json files found beside the data (QueryGen or export), by file name."""
    contamination_md: str | None = None
    contamination: dict[str, Any] | None = None


def dataset_card(card: DatasetCardInput) -> str:
    total = sum(card.counts.values())
    data = DatasetCardData(
        license=card.license, pretty_name=card.repo_id.split("/")[-1],
        task_categories=["text-generation"], language=["en"], tags=list(_TAGS),
        size_categories=[_size_category(total)],
        configs=[{"config_name": "default", "data_files": [
            {"split": split, "path": path} for split, path in card.split_files.items()]}],
        dataset_info={"features": DATASET_FEATURES._to_yaml_list(),
                      "splits": [{"name": s, "num_bytes": card.num_bytes.get(s, 0),
                                  "num_examples": n} for s, n in card.counts.items()],
                      "dataset_size": sum(card.num_bytes.values())},
    )
    splits = "\n".join(f"| {s} | {n} |" for s, n in card.counts.items())
    envs = "\n".join(f"| `{e}` | {n} |" for e, n in card.environments.items())
    sources = "\n".join(f"| `{name}` | `{sha}` |" for name, sha in card.sources.items())
    body = f"""
# {card.repo_id}

Multi-turn tool-use trajectories made with envfactory (the EnvFactory method): each
row is one episode over one or more stateful tool environments, with the user's turns,
the gold tool calls and the gold states. The `trajectory` column holds the canonical
`Trajectory` record as JSON; the other columns are flat views of it for filtering.

```python
from datasets import load_dataset
from harness.trajectory import Trajectory

ds = load_dataset("{card.repo_id}")
episode = Trajectory.model_validate_json(ds["train"][0]["trajectory"])
```

## Splits

| split | trajectories |
|---|---|
{splits}

## Environments used

| environment | trajectories |
|---|---|
{envs}

## Provenance

Source files (sha256 of their bytes):

| file | sha256 |
|---|---|
{sources}
{_manifests(card.manifests)}
## Contamination report

{_contamination(card)}
"""
    return str(DatasetCard(_front(data, body)))


def _manifests(manifests: Mapping[str, dict[str, Any]]) -> str:
    parts = []
    for name, manifest in manifests.items():
        parts.append(f"\n`{name}` (the run's manifest):\n\n"
                     + _fence(json.dumps(manifest, indent=2, ensure_ascii=False), "json"))
    return "\n".join(parts) + "\n" if parts else ""


def _contamination(card: DatasetCardInput) -> str:
    if card.contamination_md:
        # the report's own headings sit one level below this section's
        return "\n".join("#" + line if line.startswith("#") else line
                         for line in card.contamination_md.strip().splitlines())
    if card.contamination is not None:
        keys = ("trajectories", "user_turns", "ngram", "embedder", "flagged")
        summary = {k: card.contamination[k] for k in keys if k in card.contamination}
        return _fence(json.dumps(summary, indent=2, ensure_ascii=False), "json")
    return ("No contamination report was found beside the data "
            "(`envfactory synth contamination DATA --out DIR` writes one).")


# --- models ---------------------------------------------------------------------------


def eval_results(entries: Sequence[LogEntry]) -> list[EvalResult]:
    """model-index results: per task (the log with the most samples), every metric of every
    score except spreads (stderr...)."""
    best: dict[str, LogEntry] = {}
    for entry in entries:
        if entry.status != "success" or not entry.metrics:
            continue
        held = best.get(entry.task)
        if held is None or (entry.samples, entry.created) > (held.samples, held.created):
            best[entry.task] = entry
    out = []
    for task, entry in sorted(best.items()):
        for name, value in entry.metrics.items():
            if name.rsplit("/", 1)[-1] in _SPREAD:
                continue
            out.append(EvalResult(
                task_type="text-generation", task_name="tool use",
                dataset_type=task, dataset_name=f"{task} ({entry.samples} samples)",
                metric_type=name.rsplit("/", 1)[-1], metric_name=name,
                metric_value=round(value, 6), verified=False))
    return out


class ModelCardInput(BaseModel):
    """What a model card says."""

    model_config = {"arbitrary_types_allowed": True}

    repo_id: str
    license: str
    kind: str
    """"model" (full weights) or "lora" (an adapter)."""
    base_model: str | None = None
    provenance: dict[str, Any] | None = None
    training_files: dict[str, str] = Field(default_factory=dict)
    """Training config files (name -> text) shown in the card."""
    datasets: list[str] = Field(default_factory=list)
    """Hub dataset repos trained on."""
    logs: list[LogEntry] = Field(default_factory=list)


def _hub_id(name: str | None) -> str | None:
    """`name` when it reads as a Hub repo id (not a local path or a short local name)."""
    if not name or name.startswith(("/", ".", "~")) or name.count("/") != 1:
        return None
    return name


def model_card(card: ModelCardInput) -> str:
    results = eval_results(card.logs)
    base = _hub_id(card.base_model)
    data = ModelCardData(
        model_name=card.repo_id.split("/")[-1], license=card.license,
        library_name="peft" if card.kind == "lora" else "transformers",
        pipeline_tag="text-generation", tags=list(_TAGS),
        base_model=base, datasets=card.datasets or None,
        eval_results=results or None)
    prov = card.provenance or {}
    table = "\n".join(f"| {k} | {v} |" for k, v in prov.items() if k != "data") or \
        "| (no envfactory_provenance.json) | |"
    data_rows = "\n".join(f"| `{name}` | `{sha}` |"
                          for name, sha in (prov.get("data") or {}).items())
    data_section = (f"\nTraining data files (sha256):\n\n| file | sha256 |\n|---|---|\n"
                    f"{data_rows}\n" if data_rows else "")
    datasets = "".join(f"- [{d}](https://huggingface.co/datasets/{d})\n"
                       for d in card.datasets) or "- (none named)\n"
    configs = "\n\n".join(f"`{name}`:\n\n{_fence(text, _lang(name))}"
                          for name, text in card.training_files.items()) or \
        "(no training config found beside the checkpoint)"
    scores = "\n".join(
        f"| {e.task} | {e.samples} | "
        f"{', '.join(f'{k} {v:.3f}' for k, v in e.metrics.items()) or '-'} | {e.status} |"
        for e in sorted(card.logs, key=lambda e: e.task))
    body = f"""
# {card.repo_id}

A {"LoRA adapter" if card.kind == "lora" else "model"} trained with envfactory
{f"from `{card.base_model}`" if card.base_model else ""}.

## Provenance

| field | value |
|---|---|
{table}
{data_section}
## Datasets

{datasets}
## Training config

{configs}

## Evaluation

Auto-scored with Inspect AI (`envfactory score run`); the `model-index` above lists the
same numbers.

| task | samples | metrics | status |
|---|---|---|---|
{scores or "| (no scored logs found) | | | |"}
"""
    return str(ModelCard(_front(data, body)))


def _lang(name: str) -> str:
    return {"json": "json", "yaml": "yaml", "yml": "yaml"}.get(name.rsplit(".", 1)[-1], "")


# --- results --------------------------------------------------------------------------


def results_card(repo_id: str, license: str, entries: Sequence[LogEntry]) -> str:
    data = DatasetCardData(
        license=license, pretty_name=f"{repo_id.split('/')[-1]} results",
        tags=[*_TAGS, "evaluation", "inspect-ai"],
        configs=[{"config_name": "default",
                  "data_files": [{"split": "train", "path": "index.jsonl"}]}])
    rows = "\n".join(
        f"| {e.task} | `{e.model}` | {e.envfactory.get('run_id', '-')} | "
        f"{e.envfactory.get('step', '-')} | {e.samples} | "
        f"{', '.join(f'{k} {v:.3f}' for k, v in e.metrics.items()) or '-'} | "
        f"{e.status} | `{e.path}` |"
        for e in sorted(entries, key=lambda e: (e.task, e.model, e.created)))
    body = f"""
# {repo_id}

Inspect AI evaluation logs of envfactory checkpoints and baselines. `logs/` holds the log
files as Inspect wrote them (`inspect view`, `inspect_ai.log.read_eval_log`);
`index.jsonl` lists one entry per log (task, model, status, samples, metrics and the
checkpoint provenance auto-scoring recorded). `envfactory leaderboard build --from-hub
{repo_id}` builds the leaderboard from them.

| task | model | run | step | samples | metrics | status | file |
|---|---|---|---|---|---|---|---|
{rows}
"""
    return str(DatasetCard(_front(data, body)))
