"""The `inspect eval-set` command line for one task of a suite against one model target
(an in-process `hf/local` checkpoint or an OpenAI-compatible URL), every value spelled so
that inspect's `key=value` parsing gives it back unchanged.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from training.autoscore.checkpoints import CheckpointInfo
from training.autoscore.suites import ScoreError, SuiteTask

URL_API_KEY_VAR = "ENVFACTORY_API_KEY"
"""The key `openai-api/envfactory/<name>` sends to a `--serve URL` server."""


class ModelTarget(BaseModel):
    """The model a suite runs against, as inspect's command line takes it."""

    model: str
    base_url: str | None = None
    model_args: dict[str, str | bool | int] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    """Set for the eval-set subprocess (the URL server's API key)."""


def hf_target(model_dir: Path, *, device: str = "cpu", tokenizer_dir: str | None = None
              ) -> ModelTarget:
    """The checkpoint in-process through Inspect's `hf/` provider, greedy. Named `hf/local`
    so no Hub lookup happens (harness/hf_local.py); `do_sample=false` because
    `--temperature 0` crashes transformers."""
    args: dict[str, str | bool | int] = {"model_path": str(model_dir), "device": device,
                                         "do_sample": False}
    if tokenizer_dir is not None:
        args["tokenizer_path"] = tokenizer_dir
    return ModelTarget(model="hf/local", model_args=args)


def url_target(url: str, model_name: str, api_key: str | None = None) -> ModelTarget:
    """An OpenAI-compatible server (vLLM, SGLang, ...) through `openai-api/envfactory/NAME`:
    Chat Completions with the tasks' own sampling parameters. (`openai/NAME` would treat an
    unknown name as OpenAI's newest reasoning model: temperature dropped, Responses API.)"""
    key = api_key or os.environ.get(URL_API_KEY_VAR) or os.environ.get("OPENAI_API_KEY")
    return ModelTarget(model=f"openai-api/envfactory/{model_name}", base_url=url,
                       env={URL_API_KEY_VAR: key or "unused"})


def _cli_value(value: Any, what: str) -> str:
    """`value` spelled so that inspect's `key=value` parsing (YAML, then a split at commas
    for strings) gives it back unchanged."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        raw = json.dumps(value, ensure_ascii=True)  # a YAML flow mapping: never split
    elif isinstance(value, str):
        if "," in value:
            raise ScoreError(f"{what} {value!r} contains a comma, which inspect's command "
                             "line splits into a list")
        try:
            plain = yaml.safe_load(value) == value
        except yaml.YAMLError:
            plain = False
        raw = value if plain else json.dumps(value, ensure_ascii=True)
    else:
        raise TypeError(f"{what}: cannot pass a {type(value).__name__} to inspect")
    if yaml.safe_load(raw) != value:
        raise ScoreError(f"{what} {value!r} cannot be passed to inspect's command line")
    return raw


def inspect_command() -> list[str]:
    """Inspect's CLI from this interpreter's environment."""
    exe = Path(sys.executable).parent / "inspect"
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "inspect_ai"]


def eval_set_argv(task: SuiteTask, target: ModelTarget, log_dir: Path, *,
                  limit: int | None, max_tokens: int | None = None,
                  metadata: dict[str, Any] | None = None,
                  extra_args: Sequence[str] = (),
                  inspect: Sequence[str] | None = None,
                  roles: Mapping[str, str] | None = None, epochs: int | None = None,
                  sample_ids: Sequence[str] | None = None) -> list[str]:
    """The `inspect eval-set` command line for one task of a suite (run from REPO_ROOT).

    `--log-dir-allow-dirty`: the results folder holds the suite's other tasks, and logs of
    earlier runs with other options (another --max-tokens): eval-set reuses only the logs
    whose task identity matches and leaves the rest alone. `roles` bind models to the
    tasks' roles (`--model-role user=...`); Inspect records them in the log
    (`eval.model_roles`). `epochs`: `--epochs N` (the tasks' own reducers give pass^k).
    """
    argv = [*(inspect or inspect_command()), "eval-set", task.task,
            "--log-dir", str(log_dir), "--log-dir-allow-dirty", "--display", "plain",
            "--model", target.model]
    if target.base_url is not None:
        argv += ["--model-base-url", target.base_url]
    for key, value in target.model_args.items():
        argv += ["-M", f"{key}={_cli_value(value, f'model argument {key}')}"]
    for key, value in task.args.items():
        argv += ["-T", f"{key}={_cli_value(value, f'task option {key}')}"]
    for role, model in (roles or {}).items():
        argv += ["--model-role", f"{role}={_cli_value(model, f'{role} model')}"]
    if limit is not None:
        argv += ["--limit", str(limit)]
    if sample_ids is not None:
        for sample_id in sample_ids:
            _cli_value(sample_id, "sample id")  # no comma inside one id
        argv += ["--sample-id", ",".join(sample_ids)]
    if epochs is not None:
        argv += ["--epochs", str(epochs)]
    if max_tokens is not None:
        argv += ["--max-tokens", str(max_tokens)]
    for key, value in (metadata or {}).items():
        argv += ["--metadata", f"{key}={_cli_value(value, f'metadata {key}')}"]
    return argv + list(extra_args)




def checkpoint_hf_target(info: CheckpointInfo, device: str = "cpu") -> ModelTarget:
    """`hf_target` for a checkpoint. A LoRA adapter directory loads as it is (transformers
    reads adapter_config.json, loads the base model and the adapter, when peft is
    installed); its tokenizer comes from the base model unless the adapter has its own."""
    tokenizer = None
    if info.kind == "lora" and not (info.path / "tokenizer_config.json").is_file():
        tokenizer = info.base_model
    return hf_target(info.path, device=device, tokenizer_dir=tokenizer)

