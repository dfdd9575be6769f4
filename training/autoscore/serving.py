"""The model a suite runs against: `--serve hf` (the checkpoint in-process), `--serve URL`
(a running OpenAI-compatible server, its model picked from `GET /models`) or `--serve vllm`
(`vllm serve DIR` started on a free port and always stopped, its whole process group);
and whether a LoRA checkpoint can be served as asked.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from training.autoscore.checkpoints import CheckpointInfo
from training.autoscore.inspect_argv import ModelTarget, checkpoint_hf_target, url_target
from training.autoscore.processes import spawn, stop_process_group
from training.autoscore.suites import ScoreError
from training.reporting import Say, to_stderr


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
def vllm_server(model_dir: Path, served_name: str, *, say: Say = to_stderr,
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
    say(f"starting vLLM: {' '.join(argv)}")
    proc = spawn(argv, new_session=True)  # gone with this process, even after kill -9
    tail: list[str] = []
    reader = threading.Thread(target=_pump, args=(proc, say, "vllm | ", tail), daemon=True)
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
        stop_process_group(proc)
        reader.join(timeout=10)


def _pump(proc: subprocess.Popen[str], say: Say, prefix: str, tail: list[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip("\n")
        tail.append(line)
        del tail[:-50]
        say(f"{prefix}{line}")


def peft_available() -> bool:
    """transformers loads a LoRA directory directly (base + adapter) when peft is here."""
    return importlib.util.find_spec("peft") is not None



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



@contextmanager
def model_target(info: CheckpointInfo, serve: str, name: str, device: str, say: Say,
                 vllm_cmd: Sequence[str] | None, vllm_args: Sequence[str],
                 explicit_name: bool) -> Iterator[ModelTarget]:
    """The target for `--serve` (hf, vllm or a URL) for as long as the block runs; a vLLM
    server started here is stopped after it. `name` is the served model's name; for a URL
    it is only a preference among the server's models unless `explicit_name`."""
    if serve == "hf":
        yield checkpoint_hf_target(info, device)
    elif serve == "vllm":
        with vllm_server(info.path, name, say=say, command=vllm_cmd,
                         args=vllm_args) as url:
            yield url_target(url, name)
    else:
        url = serve.rstrip("/")
        yield url_target(url, name if explicit_name else pick_model_name(url, name))

