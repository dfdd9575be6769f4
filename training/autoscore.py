"""Every checkpoint auto-scored: `envfactory score run CHECKPOINT` / `score watch RUN_DIR`.

A checkpoint directory is scored by running the benchmark tasks **by path** with `inspect
eval-set` in a subprocess (training never imports `tasks/`; DESIGN.md), one eval-set per
task, all into one results directory per run and checkpoint:

    <log-dir>/<run_id>/<checkpoint dir name>/<limit-N | all>/

`inspect eval-set` pairs each task with the finished logs already in that folder, so a
rerun (after a crash, or by `score watch`) resumes and skips finished work. The last
level keeps runs with different `--limit`s apart: eval-set does not count the limit as
part of a task's identity, so a 5-sample log would otherwise pass for a full run.

The checkpoint's provenance (`training/provenance.py`) goes into every log's eval metadata
(`envfactory_run_id`, `envfactory_method`, `envfactory_base_model`, `envfactory_step`,
`envfactory_config_sha256`, `envfactory_data`, `envfactory_created`,
`envfactory_checkpoint`), so the leaderboard can group the checkpoints of one run.

Models: `--serve hf` runs the directory in-process through Inspect's `hf/local` provider;
`--serve URL` uses an OpenAI-compatible server that is already up; `--serve vllm` starts
`vllm serve DIR` (GPU machines), runs the suite against it as for a URL, and stops it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import typer
import yaml
from pydantic import BaseModel, Field
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from training.provenance import CheckpointProvenance, read_provenance

__all__ = [
    "DEFAULT_LIMITS", "REPO_ROOT", "SCORED_FILE", "SUITES", "CheckpointInfo", "ModelTarget",
    "NotAModelDir", "ScoreError", "ScoreResult", "ScoredState", "SuiteTask", "TaskScore",
    "checkpoint_complete", "checkpoint_hf_target", "eval_set_argv", "find_checkpoints",
    "hf_target", "inspect_checkpoint", "needs_merge", "provenance_metadata",
    "resolve_provenance", "results_dir", "score_app", "score_checkpoint", "url_target",
    "check_suite", "scoring_beside", "vllm_server", "watch", "watch_command",
]

REPO_ROOT = Path(__file__).resolve().parent.parent
"""The checkout whose `tasks/` folder is run (the eval-set subprocesses' working dir)."""

SCORED_FILE = ".envfactory_scored.json"
"""What `score watch` has scored, in the watched run directory."""

Suite = Literal["quick", "full", "demo"]


class SuiteTask(BaseModel):
    """One task of a suite: its path (relative to the repository root) and `-T` options."""

    task: str
    """`tasks/<folder>/<file>.py@<task>`, as `inspect eval-set` takes it."""
    args: dict[str, str | int] = Field(default_factory=dict)
    max_samples: int | None = None
    """At most this many samples whatever the run's `--limit` (a slow task in a fast suite)."""

    def limit(self, run_limit: int | None) -> int | None:
        """The `--limit` this task runs with under the run's limit."""
        if self.max_samples is None:
            return run_limit
        return self.max_samples if run_limit is None else min(run_limit, self.max_samples)

    @property
    def name(self) -> str:
        return self.task.rsplit("@", 1)[-1]


_ENVFACTORY = SuiteTask(task="tasks/envfactory/envfactory.py@envfactory",
                        args={"split": "heldout"})
_BFCL_MULTITURN = SuiteTask(task="tasks/bfcl_multiturn/bfcl_multiturn.py@bfcl_multiturn")

SUITES: dict[str, tuple[SuiteTask, ...]] = {
    # the held-out EnvFactory tasks and BFCL multi-turn (its first entries, the `base`
    # category, under a limit): a few minutes' signal per checkpoint
    "quick": (_ENVFACTORY, _BFCL_MULTITURN),
    # Every benchmark that runs with the agent model alone. τ²'s simulated user (role
    # `user`) defaults to the agent's model; bind a fixed one with
    # `--inspect-arg=--model-role --inspect-arg=user=...`. VitaBench and MCP-Atlas are
    # left out: VitaBench needs a `judge` role (a run without one fails) and MCP-Atlas
    # needs the judge plus its installed MCP servers (`envfactory mcp-atlas install`);
    # run them with plain `inspect eval` where those are configured.
    "full": (
        _ENVFACTORY,
        _BFCL_MULTITURN,
        SuiteTask(task="tasks/bfcl_singleturn/bfcl_singleturn.py@bfcl_singleturn"),
        SuiteTask(task="tasks/tau2/tau2.py@tau2_airline"),
        SuiteTask(task="tasks/tau2/tau2.py@tau2_retail"),
        SuiteTask(task="tasks/tau2/tau2.py@tau2_telecom"),
    ),
    # `envfactory demo` on 2 CPU cores in minutes: the first held-out task with at most 3
    # tool-calling steps per user turn (a tuned 135M model otherwise calls tools until its
    # context is full), and BFCL single-turn `simple` entries (one short prompt, one call)
    "demo": (
        SuiteTask(task=_ENVFACTORY.task, args={**_ENVFACTORY.args, "max_steps": 3},
                  max_samples=1),
        SuiteTask(task="tasks/bfcl_singleturn/bfcl_singleturn.py@bfcl_singleturn",
                  args={"category": "simple"}),
    ),
}
DEFAULT_LIMITS: dict[str, int | None] = {"quick": 5, "full": None, "demo": 5}
"""Samples per task when `--limit` is not given (None: the whole benchmark)."""

URL_API_KEY_VAR = "ENVFACTORY_API_KEY"
"""The key `openai-api/envfactory/<name>` sends to a `--serve URL` server."""


class ScoreError(RuntimeError):
    """A checkpoint cannot be scored as asked (bad option, server down, vLLM missing)."""


class NotAModelDir(ScoreError):
    """The checkpoint path is not a transformers model or LoRA adapter directory."""


# --- checkpoints and their provenance -------------------------------------------------


class CheckpointInfo(BaseModel):
    """What kind of directory a checkpoint is."""

    path: Path
    kind: Literal["model", "lora"]
    base_model: str | None = None
    """A LoRA adapter's `base_model_name_or_path` (None for a full model)."""


def inspect_checkpoint(path: Path) -> CheckpointInfo:
    """Classify `path`: a full model (config.json) or a LoRA adapter (adapter_config.json
    only). Raises `NotAModelDir` naming the directory otherwise."""
    if not path.is_dir():
        raise NotAModelDir(f"{path}: no such directory")
    if (path / "config.json").is_file():
        return CheckpointInfo(path=path, kind="model")
    adapter = path / "adapter_config.json"
    if adapter.is_file():
        try:
            config = json.loads(adapter.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise NotAModelDir(f"{adapter}: cannot read it: {e}") from None
        base = config.get("base_model_name_or_path") if isinstance(config, dict) else None
        if not isinstance(base, str) or not base:
            raise NotAModelDir(f"{adapter}: no base_model_name_or_path; the adapter's base "
                               "model is unknown")
        return CheckpointInfo(path=path, kind="lora", base_model=base)
    raise NotAModelDir(f"{path}: not a model directory: it has neither config.json (a "
                       "transformers model) nor adapter_config.json (a LoRA adapter)")


_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "adapter_model.safetensors",
            "adapter_model.bin")
_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")


def checkpoint_complete(path: Path) -> bool:
    """Whether a checkpoint directory is finished: a config (config.json or
    adapter_config.json), its weights (every shard an index names), and nothing still
    being written (no `*.tmp` entry, the name not ending in `.tmp`)."""
    if path.name.endswith(".tmp") or not path.is_dir():
        return False
    try:
        names = {p.name for p in path.iterdir()}
    except OSError:  # deleted meanwhile (save_total_limit)
        return False
    if any(name.endswith(".tmp") for name in names):
        return False
    if not names & {"config.json", "adapter_config.json"}:
        return False
    if names & set(_WEIGHTS):
        return True
    for index in names & set(_INDEXES):
        try:
            weight_map = json.loads((path / index).read_text(encoding="utf-8"))["weight_map"]
        except (OSError, ValueError, KeyError, TypeError):
            return False
        if set(weight_map.values()) <= names:
            return True
    return False


_STEP = re.compile(r"^(?:checkpoint-|global_step_)(\d+)$")
VERL_HF_DIR = Path("actor") / "huggingface"
"""Where verl saves a step's model in transformers format (`save_contents` has hf_model)."""


def checkpoint_label(path: Path) -> str:
    """A checkpoint's name in its run: the directory's name, or for verl's
    `global_step_N/actor/huggingface` the step directory's (`global_step_N`)."""
    if path.parts[-2:] == VERL_HF_DIR.parts and len(path.parts) > 2:
        return path.parts[-3]
    return path.name


def _step_of(name: str) -> int | None:
    match = _STEP.search(name)
    return int(match.group(1)) if match else None


def resolve_provenance(info: CheckpointInfo, run_dir: Path | None = None
                       ) -> CheckpointProvenance:
    """The checkpoint's own provenance; else (in a watched run) the run directory's, with
    the step taken from the `checkpoint-N` name; else a record as method "base" (run id
    and base model: the directory's name; a LoRA adapter's base model, if it names one)."""
    own = read_provenance(info.path)
    if own is not None:
        return own
    step = _step_of(checkpoint_label(info.path))
    if run_dir is not None:
        parent = read_provenance(run_dir)
        if parent is not None:
            return parent.model_copy(update={"step": step})
    created = datetime.fromtimestamp(info.path.stat().st_mtime, UTC)
    return CheckpointProvenance(
        run_id=run_dir.name if run_dir is not None else info.path.name,
        method="base", base_model=info.base_model or info.path.name, step=step,
        created=created.isoformat(timespec="seconds"))


def provenance_metadata(prov: CheckpointProvenance, checkpoint: Path) -> dict[str, Any]:
    """The eval metadata every log of this checkpoint carries (`--metadata`)."""
    return {
        "envfactory_run_id": prov.run_id,
        "envfactory_method": prov.method,
        "envfactory_base_model": prov.base_model,
        "envfactory_step": prov.step,
        "envfactory_config_sha256": prov.config_sha256,
        # a mapping (file -> sha256), not a JSON string: inspect's --metadata splits string
        # values at commas, and a JSON object of two files has one
        "envfactory_data": prov.data,
        "envfactory_created": prov.created,
        "envfactory_checkpoint": str(checkpoint),
    }


def results_dir(log_root: Path, prov: CheckpointProvenance, checkpoint: Path,
                limit: int | None) -> Path:
    """`<log_root>/<run_id>/<checkpoint label>/<limit-N | all>` (absolute)."""
    leaf = f"limit-{limit}" if limit is not None else "all"
    name = checkpoint_label(checkpoint)
    for label, part in (("run id", prov.run_id), ("checkpoint name", name)):
        if not part or part in (".", "..") or "/" in part or os.sep in part:
            raise ScoreError(f"{checkpoint}: {label} {part!r} cannot name a folder")
    return (log_root / prov.run_id / name / leaf).resolve()


# --- the inspect eval-set command line ------------------------------------------------


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
                  inspect: Sequence[str] | None = None) -> list[str]:
    """The `inspect eval-set` command line for one task of a suite (run from REPO_ROOT).

    `--log-dir-allow-dirty`: the results folder holds the suite's other tasks, and logs of
    earlier runs with other options (another --max-tokens): eval-set reuses only the logs
    whose task identity matches and leaves the rest alone.
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
    if limit is not None:
        argv += ["--limit", str(limit)]
    if max_tokens is not None:
        argv += ["--max-tokens", str(max_tokens)]
    for key, value in (metadata or {}).items():
        argv += ["--metadata", f"{key}={_cli_value(value, f'metadata {key}')}"]
    return argv + list(extra_args)


# --- servers --------------------------------------------------------------------------


def _get_json(url: str, timeout: float = 10.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - local
        return json.loads(response.read())


def served_models(url: str) -> list[str]:
    """The model ids an OpenAI-compatible server lists at `GET <url>/models`."""
    try:
        listing = _get_json(url.rstrip("/") + "/models")
    except (OSError, ValueError) as e:  # URLError is an OSError
        raise ScoreError(f"--serve {url}: GET {url.rstrip('/')}/models failed: {e}") from None
    data = listing.get("data") if isinstance(listing, dict) else None
    return [str(m["id"]) for m in data or [] if isinstance(m, dict) and "id" in m]


def pick_model_name(url: str, preferred: str) -> str:
    """The server's one model, or `preferred` among several; else a clear error."""
    ids = served_models(url)
    if preferred in ids or len(ids) == 1:
        return preferred if preferred in ids else ids[0]
    listed = ", ".join(ids) if ids else "none"
    raise ScoreError(f"--serve {url}: the server lists {listed}; name the model with "
                     "--model-name")


def vllm_command() -> list[str]:
    """How to start vLLM here; `ScoreError` when it is not installed."""
    exe = Path(sys.executable).parent / "vllm"
    if exe.is_file():
        return [str(exe)]
    if importlib.util.find_spec("vllm") is not None:
        return [sys.executable, "-m", "vllm.entrypoints.cli.main"]
    found = shutil.which("vllm")
    if found:
        return [found]
    raise ScoreError(
        f"--serve vllm: vLLM is not installed (no `vllm` beside {sys.executable} or on PATH, "
        "and `import vllm` fails). It needs a GPU machine with vllm installed; elsewhere use "
        "--serve hf, or start a server yourself and pass --serve URL.")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def vllm_server(model_dir: Path, served_name: str, *, console: Console,
                command: Sequence[str] | None = None, args: Sequence[str] = (),
                startup_timeout: float = 1800.0) -> Iterator[str]:
    """`vllm serve MODEL_DIR` on a free local port; yields its base URL (`.../v1`) once
    `GET /v1/models` answers, and always stops the server (its whole process group)."""
    cmd = list(command) if command is not None else vllm_command()
    port = _free_port()
    tool_args = ([] if "--tool-call-parser" in args
                 else ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"])
    argv = [*cmd, "serve", str(model_dir), "--host", "127.0.0.1", "--port", str(port),
            "--served-model-name", served_name, *tool_args, *args]
    console.print(f"[bold]starting vLLM[/bold]: {escape(' '.join(argv))}")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    tail: list[str] = []
    reader = threading.Thread(target=_pump, args=(proc, console, "vllm | ", tail), daemon=True)
    reader.start()
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                raise ScoreError(f"vllm serve {model_dir} exited with {proc.returncode} "
                                 "before serving; its last lines:\n" + "\n".join(tail[-20:]))
            try:
                _get_json(url + "/models", timeout=5.0)
                break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise ScoreError(f"vllm serve {model_dir}: no answer at {url}/models after "
                                 f"{startup_timeout:.0f} s")
            time.sleep(1.0)
        yield url
    finally:
        _stop(proc)
        reader.join(timeout=10)


def _pump(proc: subprocess.Popen[str], console: Console, prefix: str, tail: list[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip("\n")
        tail.append(line)
        del tail[:-50]
        console.print(f"{prefix}{line}", markup=False, highlight=False, soft_wrap=True)


def _stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


# --- scoring --------------------------------------------------------------------------


class TaskScore(BaseModel):
    """One task's outcome: inspect's exit status, its log(s) and headline metrics."""

    task: str
    returncode: int
    seconds: float
    status: str = "not run"
    """The log's status (success, error, cancelled, started) or "not run"."""
    log: str | None = None
    """The log file's name (in the result's log_dir)."""
    samples: int = 0
    metrics: dict[str, float] = Field(default_factory=dict)
    """Every metric, as `<score>/<metric>`."""
    headline: dict[str, float] = Field(default_factory=dict)
    """Per score its `overall` metric if it has one, else its first."""


class ScoreResult(BaseModel):
    """What `score run` did for one checkpoint (`--json` prints it)."""

    checkpoint: str
    status: Literal["scored", "failed", "needs_merged_model"]
    message: str = ""
    provenance: CheckpointProvenance | None = None
    suite: str
    serve: str
    model: str | None = None
    limit: int | None = None
    log_dir: str | None = None
    tasks: list[TaskScore] = Field(default_factory=list)
    seconds: float = 0.0


def peft_available() -> bool:
    """transformers loads a LoRA directory directly (base + adapter) when peft is here."""
    return importlib.util.find_spec("peft") is not None


def checkpoint_hf_target(info: CheckpointInfo, device: str = "cpu") -> ModelTarget:
    """`hf_target` for a checkpoint. A LoRA adapter directory loads as it is (transformers
    reads adapter_config.json, loads the base model and the adapter, when peft is
    installed); its tokenizer comes from the base model unless the adapter has its own."""
    tokenizer = None
    if info.kind == "lora" and not (info.path / "tokenizer_config.json").is_file():
        tokenizer = info.base_model
    return hf_target(info.path, device=device, tokenizer_dir=tokenizer)


def needs_merge(info: CheckpointInfo, serve: str) -> str | None:
    """Why this LoRA checkpoint cannot be served as asked (None: it can)."""
    if info.kind != "lora" or serve not in ("hf", "vllm"):
        return None
    merge = ("merge it first (LlamaFactory: `llamafactory-cli export` with "
             "adapter_name_or_path and export_dir) and score the merged directory")
    if serve == "vllm":
        return (f"{info.path}: a LoRA adapter on {info.base_model}: needs a merged model for "
                f"--serve vllm; {merge}, or serve the adapter yourself (vllm serve BASE "
                "--enable-lora --lora-modules NAME=DIR) and pass --serve URL")
    if not peft_available():
        return (f"{info.path}: a LoRA adapter on {info.base_model}: needs a merged model, "
                "because Inspect's hf provider loads adapters only when peft is installed "
                f"(it is not, for {sys.executable}); install peft (the train stack has it) "
                f"or {merge}")
    return None


def score_checkpoint(
    checkpoint: Path, *, suite: Suite = "quick", serve: str = "hf", limit: int | None = None,
    log_root: Path = Path("scores"), max_tokens: int | None = None,
    model_name: str | None = None, device: str = "cpu", run_dir: Path | None = None,
    extra_args: Sequence[str] = (), console: Console | None = None,
    vllm_cmd: Sequence[str] | None = None, vllm_args: Sequence[str] = (),
) -> ScoreResult:
    """Score one checkpoint directory on a suite; see the module docstring.

    Raises `NotAModelDir` / `ScoreError` for what cannot start (not a model directory, a bad
    `--serve`, a server that does not answer); a task that fails inside inspect is
    reported in the result (status "failed"), and a rerun resumes it.
    """
    console = console or Console(stderr=True)
    if suite not in SUITES:
        raise ScoreError(f"--suite {suite!r}: use one of {', '.join(SUITES)}")
    if serve not in ("hf", "vllm") and not serve.startswith(("http://", "https://")):
        raise ScoreError(f"--serve {serve!r}: use hf, vllm or an http(s):// base URL")
    started = time.monotonic()
    checkpoint = checkpoint.expanduser().resolve()
    info = inspect_checkpoint(checkpoint)
    try:
        prov = resolve_provenance(info, run_dir.resolve() if run_dir is not None else None)
    except ValueError as e:  # a provenance file that is not a valid record
        raise ScoreError(str(e)) from None
    limit = DEFAULT_LIMITS[suite] if limit is None else limit
    result = ScoreResult(checkpoint=str(checkpoint), status="failed", provenance=prov,
                         suite=suite, serve=serve, limit=limit)
    reason = needs_merge(info, serve)
    if reason is not None:
        console.print(f"[yellow]skipped[/yellow] {escape(reason)}")
        return result.model_copy(update={"status": "needs_merged_model", "message": reason})
    out_dir = results_dir(log_root.expanduser(), prov, checkpoint, limit)
    metadata = provenance_metadata(prov, checkpoint)
    label = checkpoint_label(checkpoint)
    default_name = label if prov.run_id == label else f"{prov.run_id}/{label}"
    with _model(info, serve, model_name or default_name, device, console, vllm_cmd,
                vllm_args, explicit_name=model_name is not None) as target:
        argvs = [(task, eval_set_argv(task, target, out_dir, limit=task.limit(limit),
                                      max_tokens=max_tokens, metadata=metadata,
                                      extra_args=extra_args))
                 for task in SUITES[suite]]
        out_dir.mkdir(parents=True, exist_ok=True)
        console.print(f"[bold]scoring[/bold] {escape(str(checkpoint))} "
                      f"({prov.method}, run {escape(prov.run_id)}, step {prov.step}) on "
                      f"{suite} as {escape(target.model)} -> {escape(str(out_dir))}")
        scores = _run_tasks(argvs, target, out_dir, console)
    ok = all(s.returncode == 0 and s.status == "success" for s in scores)
    failed = [s.task for s in scores if not (s.returncode == 0 and s.status == "success")]
    result = result.model_copy(update={
        "status": "scored" if ok else "failed", "model": target.model,
        "log_dir": str(out_dir), "tasks": scores,
        "message": "" if ok else f"not finished: {', '.join(failed)} (rerun to resume)",
        "seconds": round(time.monotonic() - started, 1)})
    _print_summary(result, console)
    return result


@contextmanager
def _model(info: CheckpointInfo, serve: str, name: str, device: str, console: Console,
           vllm_cmd: Sequence[str] | None, vllm_args: Sequence[str],
           explicit_name: bool) -> Iterator[ModelTarget]:
    if serve == "hf":
        yield checkpoint_hf_target(info, device)
    elif serve == "vllm":
        with vllm_server(info.path, name, console=console, command=vllm_cmd,
                         args=vllm_args) as url:
            yield url_target(url, name)
    else:
        url = serve.rstrip("/")
        yield url_target(url, name if explicit_name else pick_model_name(url, name))


def _run_tasks(argvs: list[tuple[SuiteTask, list[str]]], target: ModelTarget, out_dir: Path,
               console: Console) -> list[TaskScore]:
    env = {**os.environ, **target.env, "PYTHONUNBUFFERED": "1"}
    scores: list[TaskScore] = []
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        ids = [progress.add_task(f"[{i}/{len(argvs)}] {task.name}: waiting", start=False,
                                 total=1)
               for i, (task, _) in enumerate(argvs, 1)]
        for i, ((task, argv), bar) in enumerate(zip(argvs, ids, strict=True), 1):
            label = f"[{i}/{len(argvs)}] {task.name}"
            progress.update(bar, description=f"{label}: running")
            progress.start_task(bar)
            progress.console.print(f"$ {' '.join(argv)}", markup=False, highlight=False,
                                   soft_wrap=True)
            began = time.monotonic()
            proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, errors="replace")
            assert proc.stdout is not None
            try:
                for line in proc.stdout:
                    progress.console.print(line.rstrip("\n"), markup=False,
                                           highlight=False, soft_wrap=True)
                returncode = proc.wait()
            except BaseException:
                _stop_child(proc)
                raise
            score = _task_score(task, returncode, time.monotonic() - began, out_dir)
            scores.append(score)
            mark = "done" if score.status == "success" and returncode == 0 else "FAILED"
            progress.update(bar, description=f"{label}: {mark} ({score.status})", completed=1)
            progress.stop_task(bar)
    return scores


def _stop_child(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _task_score(task: SuiteTask, returncode: int, seconds: float, out_dir: Path) -> TaskScore:
    """Find the log eval-set used for `task`: `eval-set.json` names its task id (that of a
    reused log too)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    score = TaskScore(task=task.task, returncode=returncode, seconds=round(seconds, 1))
    try:
        info = json.loads((out_dir / "eval-set.json").read_text(encoding="utf-8"))
        task_ids = {t["task_id"] for t in info["tasks"] if t.get("name") == task.name}
    except (OSError, ValueError, KeyError, TypeError):
        return score
    for log_info in list_eval_logs(str(out_dir), recursive=False):
        if log_info.task_id not in task_ids:
            continue
        log = read_eval_log(log_info, header_only=True)
        metrics: dict[str, float] = {}
        headline: dict[str, float] = {}
        for result in log.results.scores if log.results is not None else []:
            for name, metric in result.metrics.items():
                metrics[f"{result.name}/{name}"] = metric.value
            key = "overall" if "overall" in result.metrics else next(iter(result.metrics), None)
            if key is not None:
                headline[key if key == "overall" else result.name] = result.metrics[key].value
        return score.model_copy(update={
            "status": log.status, "log": log_info.name.rsplit("/", 1)[-1],
            "metrics": metrics, "headline": headline,
            "samples": log.results.completed_samples if log.results else 0})
    return score


def _print_summary(result: ScoreResult, console: Console) -> None:
    table = Table(title=f"{result.checkpoint}: {result.status} ({result.seconds:.0f} s)")
    for column in ("task", "status", "samples", "metrics", "seconds"):
        table.add_column(column)
    for task in result.tasks:
        metrics = ", ".join(f"{k} {v:.3f}" for k, v in task.headline.items())
        table.add_row(task.task.rsplit("@", 1)[-1], task.status, str(task.samples), metrics,
                      f"{task.seconds:.0f}")
    console.print(table)
    if result.log_dir:
        console.print(f"logs: {escape(result.log_dir)}")
    if result.message:
        console.print(f"[yellow]{escape(result.message)}[/yellow]")


# --- watching a training run -----------------------------------------------------------


class ScoredEntry(BaseModel):
    """One checkpoint's scoring under one (suite, limit), as `score watch` recorded it."""

    status: Literal["scored", "failed", "needs_merged_model"]
    message: str = ""
    log_dir: str | None = None
    attempts: int = 1
    at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


class ScoredState(BaseModel):
    """`<RUN_DIR>/.envfactory_scored.json`: checkpoint name -> scoring key -> entry."""

    checkpoints: dict[str, dict[str, ScoredEntry]] = Field(default_factory=dict)

    @classmethod
    def load(cls, run_dir: Path) -> ScoredState:
        path = run_dir / SCORED_FILE
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except ValueError as e:  # pydantic's ValidationError is one
            raise ScoreError(f"{path}: not a scoring record ({e}); delete it to rescore"
                             ) from None

    def save(self, run_dir: Path) -> None:
        fd, tmp = tempfile.mkstemp(dir=run_dir, prefix=f"{SCORED_FILE}.", suffix=".partial")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(self.model_dump_json(indent=2) + "\n")
        os.replace(tmp, run_dir / SCORED_FILE)


MAX_ATTEMPTS = 3
"""A checkpoint whose scoring failed is tried again on later passes, this many times in all."""


def find_checkpoints(run_dir: Path) -> list[Path]:
    """The complete checkpoints of a run, by step: `checkpoint-N` (HF Trainer /
    LlamaFactory), verl's `global_step_N/actor/huggingface`, then a LoRA run's `merged`
    model (`envfactory train sft` with merge: its final step)."""
    found = [p for p in run_dir.glob("checkpoint-*") if checkpoint_complete(p)]
    found += [p for p in run_dir.glob(f"global_step_*/{VERL_HF_DIR.as_posix()}")
              if checkpoint_complete(p)]

    def order(path: Path) -> tuple[bool, int, str]:
        step = _step_of(checkpoint_label(path))
        return step is None, step or 0, checkpoint_label(path)

    found.sort(key=order)
    merged = run_dir / "merged"
    # LlamaFactory's export writes the model, then we stamp provenance: only then it is done
    if checkpoint_complete(merged) and read_provenance(merged) is not None:
        found.append(merged)
    return found


def watch(run_dir: Path, *, interval: float = 60.0, once: bool = False,
          suite: Suite = "quick", limit: int | None = None,
          console: Console | None = None,
          sleep: Callable[[float], None] = time.sleep, **options: Any) -> list[ScoreResult]:
    """Score each complete checkpoint of `run_dir` (`find_checkpoints`) once, recording what
    was scored in `<run_dir>/.envfactory_scored.json`; with `once`, one pass, else forever
    (Ctrl-C)."""
    console = console or Console(stderr=True)
    if not run_dir.is_dir():
        raise ScoreError(f"{run_dir}: no such run directory")
    run_dir = run_dir.resolve()
    limit = DEFAULT_LIMITS[suite] if limit is None else limit
    key = f"{suite}/{'all' if limit is None else f'limit-{limit}'}"
    results: list[ScoreResult] = []
    while True:
        state = ScoredState.load(run_dir)
        for checkpoint in find_checkpoints(run_dir):
            name = checkpoint_label(checkpoint)
            previous = state.checkpoints.get(name, {}).get(key)
            if previous is not None and (previous.status != "failed"
                                         or previous.attempts >= MAX_ATTEMPTS):
                continue
            try:
                result = score_checkpoint(checkpoint, suite=suite, limit=limit,
                                          run_dir=run_dir, console=console, **options)
            except ScoreError as e:
                result = ScoreResult(checkpoint=str(checkpoint), status="failed",
                                     message=str(e), suite=suite,
                                     serve=str(options.get("serve", "hf")), limit=limit)
                console.print(f"[red]{escape(str(e))}[/red]")
            attempts = (previous.attempts + 1) if previous is not None else 1
            state.checkpoints.setdefault(name, {})[key] = ScoredEntry(
                status=result.status, message=result.message, log_dir=result.log_dir,
                attempts=attempts)
            state.save(run_dir)
            results.append(result)
        if once:
            return results
        console.print(f"[dim]watching {escape(str(run_dir))}: next look in "
                      f"{interval:.0f} s[/dim]")
        sleep(interval)


def watch_command(run_dir: Path, *, suite: Suite, limit: int | None, log_root: Path,
                  once: bool = False, interval: float = 60.0,
                  options: Sequence[str] = ()) -> list[str]:
    """`envfactory score watch RUN_DIR ...` with this interpreter (`options`: more of its
    flags, e.g. `--serve URL`)."""
    argv = [sys.executable, "-m", "envfactory", "score", "watch", str(run_dir),
            "--suite", suite, "--log-dir", str(log_root), "--interval", str(interval)]
    if limit is not None:
        argv += ["--limit", str(limit)]
    return argv + (["--once"] if once else []) + list(options)


@contextmanager
def scoring_beside(run_dir: Path, *, suite: Suite, limit: int | None, log_root: Path,
                   console: Console, interval: float = 60.0, options: Sequence[str] = ()
                   ) -> Iterator[subprocess.Popen[bytes]]:
    """Score a training run's checkpoints as they are saved, without blocking it.

    While the block runs (the trainer), `score watch` runs in its own process group, its
    output in `RUN_DIR/score-watch.log`. Afterwards it is stopped and one last `--once`
    pass scores what the trainer saved last (and resumes a scoring the stop cut short:
    eval-set skips finished work), in the foreground so its table is shown. A block that
    raises (training failed) stops the watcher and skips the last pass.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    log_root = log_root.expanduser().resolve()
    argv = watch_command(run_dir, suite=suite, limit=limit, log_root=log_root,
                         interval=interval, options=options)
    with (run_dir / "score-watch.log").open("ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT,
                                start_new_session=True)
    console.print(f"scoring checkpoints on `{suite}` as they are saved (pid {proc.pid}, "
                  f"log {escape(str(run_dir / 'score-watch.log'))}) into "
                  f"{escape(str(log_root))}")
    try:
        yield proc
    finally:
        _stop(proc)
    console.rule("scoring the checkpoints not scored during training")
    last = watch_command(run_dir, suite=suite, limit=limit, log_root=log_root, once=True,
                         options=options)
    code = subprocess.call(last, cwd=REPO_ROOT)
    if code != 0:
        again = " ".join(["envfactory", *last[3:]])
        console.print(f"[yellow]scoring finished with exit status {code}; `{escape(again)}` "
                      "resumes it[/yellow]")


# --- command line (wired into envfactory/cli.py as `score`) ---------------------------

score_app = typer.Typer(help="Score checkpoints on the benchmark suites (inspect eval-set).",
                        no_args_is_help=True)

_SuiteOpt = Annotated[str, typer.Option(help="quick (envfactory held-out + BFCL multi-turn, "
                                             "5 samples each), full, or demo (one held-out "
                                             "task, 3 steps a turn + BFCL single-turn "
                                             "simple: minutes on a CPU).")]
_ServeOpt = Annotated[str, typer.Option(help="hf (in-process, default), vllm (start `vllm "
                                             "serve`), or the base URL of a running "
                                             "OpenAI-compatible server.")]
_LimitOpt = Annotated[int | None, typer.Option(min=1, help="Samples per task (default: 5 "
                                                           "for quick, all for full).")]
_LogDirOpt = Annotated[Path, typer.Option(help="Results root: "
                                               "<log-dir>/<run_id>/<checkpoint>/.")]
_MaxTokensOpt = Annotated[int | None, typer.Option(min=1, help="Tokens per generation (hf "
                                                               "without it: up to 2048).")]
_ModelNameOpt = Annotated[str | None, typer.Option(
    help="The served model's name (URL: default the server's one model; vllm: "
         "<run_id>/<checkpoint>).")]
_DeviceOpt = Annotated[str, typer.Option(help="--serve hf: torch device.")]
_InspectArgOpt = Annotated[list[str] | None, typer.Option(
    "--inspect-arg", help="Passed on to inspect eval-set as is; repeatable "
                          "(e.g. --inspect-arg=--max-samples --inspect-arg=2).")]
_VllmArgOpt = Annotated[list[str] | None, typer.Option(
    "--vllm-arg", help="Passed on to `vllm serve`; repeatable.")]


def _fail(message: str) -> typer.Exit:
    Console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {escape(message)}")
    return typer.Exit(1)


def check_suite(suite: str, option: str = "--suite") -> Suite:
    """A suite name from the command line (`option` names the flag in the error)."""
    if suite not in SUITES:
        raise typer.BadParameter(f"{suite!r}: use one of {', '.join(SUITES)}",
                                 param_hint=option)
    return cast(Suite, suite)


@score_app.command("run")
def score_run(
    checkpoint: Annotated[Path, typer.Argument(help="A model directory (config.json) or "
                                                    "LoRA adapter directory.")],
    suite: _SuiteOpt = "quick", serve: _ServeOpt = "hf", limit: _LimitOpt = None,
    log_dir: _LogDirOpt = Path("scores"), max_tokens: _MaxTokensOpt = None,
    model_name: _ModelNameOpt = None, device: _DeviceOpt = "cpu",
    inspect_arg: _InspectArgOpt = None, vllm_arg: _VllmArgOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on "
                                                         "stdout.")] = False,
) -> None:
    """Score one checkpoint directory on a suite.

    A rerun resumes and skips finished tasks. Exits 1 unless every task finished.
    """
    try:
        result = score_checkpoint(checkpoint, suite=check_suite(suite), serve=serve,
                                  limit=limit, log_root=log_dir, max_tokens=max_tokens,
                                  model_name=model_name, device=device,
                                  extra_args=inspect_arg or (), vllm_args=vllm_arg or ())
    except ScoreError as e:
        raise _fail(str(e)) from None
    if as_json:
        print(result.model_dump_json(indent=2))
    if result.status != "scored":
        raise typer.Exit(1)


@score_app.command("watch")
def score_watch(
    run_dir: Annotated[Path, typer.Argument(help="A training output directory "
                                                 "(checkpoint-N subdirectories).")],
    interval: Annotated[float, typer.Option(min=1.0, help="Seconds between looks.")] = 60.0,
    once: Annotated[bool, typer.Option("--once", help="Score what is there, then exit.")]
    = False,
    suite: _SuiteOpt = "quick", serve: _ServeOpt = "hf", limit: _LimitOpt = None,
    log_dir: _LogDirOpt = Path("scores"), max_tokens: _MaxTokensOpt = None,
    model_name: _ModelNameOpt = None, device: _DeviceOpt = "cpu",
    inspect_arg: _InspectArgOpt = None, vllm_arg: _VllmArgOpt = None,
) -> None:
    """Score each new complete checkpoint-* of a training run once.

    What was scored is kept in RUN_DIR/.envfactory_scored.json. Runs beside training until
    Ctrl-C, or one pass with --once (exit 1 if a checkpoint failed in that pass).
    """
    try:
        results = watch(run_dir, interval=interval, once=once, suite=check_suite(suite),
                        limit=limit, serve=serve, log_root=log_dir, max_tokens=max_tokens,
                        model_name=model_name, device=device,
                        extra_args=inspect_arg or (), vllm_args=vllm_arg or ())
    except ScoreError as e:
        raise _fail(str(e)) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    console = Console(stderr=True)
    console.print(f"{len(results)} checkpoint(s) handled: "
                  + (", ".join(f"{Path(r.checkpoint).name} {r.status}" for r in results)
                     or "nothing new"))
    if any(r.status == "failed" for r in results):
        raise typer.Exit(1)
