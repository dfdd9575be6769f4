"""What each model role is sent for sampling, by one precedence rule for every benchmark.

A benchmark fixes defaults (τ²: temperature 0 and a per-trial seed; VitaBench:
temperature 0, no seed); the user may override them. What the user set wins: the role's
own config (`--model-role user='{model: ..., temperature: ...}'`), then Inspect's
`--temperature` / `--seed`, then the benchmark's default. `--max-tokens` likewise reaches
every role (none by default): Inspect applies it to the main model only, and a user or
judge role on its own local model would otherwise run to the provider's default (2,048
tokens a turn for `hf/`).
"""

from __future__ import annotations

from inspect_ai.model import GenerateConfig, Model

from harness.inspect_compat import cli_generate_config

__all__ = ["BFCL_TEMPERATURE", "bfcl_config", "role_config"]

#: `bfcl generate`'s default temperature
BFCL_TEMPERATURE = 0.001


def role_config(model: Model, temperature: float | None, seed: int | None = None
                ) -> GenerateConfig:
    """The sampling config one role's requests carry (None: not sent)."""
    cli = cli_generate_config()
    own = model.config
    return GenerateConfig(
        temperature=next((t for t in (own.temperature, cli.temperature, temperature)
                          if t is not None), None),
        seed=next((s for s in (own.seed, cli.seed, seed) if s is not None), None),
        max_tokens=own.max_tokens if own.max_tokens is not None else cli.max_tokens)


def bfcl_config() -> GenerateConfig:
    """The request options `bfcl generate` sends, for both BFCL tasks.

    Temperature 0.001, and reasoning summaries "auto": bfcl-eval's OpenAI Responses
    handler asks for them on every request, with `store: false` and `include:
    ["reasoning.encrypted_content"]`, and sends the reasoning items it got back (their
    encrypted content included) in every later request, so a reasoning model keeps its
    reasoning across steps and turns. Inspect's `openai/` provider on the Responses API
    sends `store: false` and that `include` for the models it knows reason, and replays
    their reasoning (`ContentReasoning`, the encrypted blob in it) from the history; the
    summary it sends only when asked for, and when `reasoning_summary` is unset it first
    probes the account with a request of its own ("Please say 'hello, world'"), which the
    official handler never sends. Chat Completions requests read neither option.
    """
    return GenerateConfig(temperature=BFCL_TEMPERATURE, reasoning_summary="auto")
