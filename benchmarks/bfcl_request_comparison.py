"""BFCL multi-turn, request by request: the official OpenAI handlers vs our task on Inspect.

Both harnesses talk to the same recording OpenAI-compatible server
(`testkit.recording_server`), whose scripted model answers each request from the
conversation it carries (which entry, which turn, which step), so both live through the
same conversation:

- official: bfcl-eval's `OpenAICompletionsHandler` (Chat Completions) and
  `OpenAIResponsesHandler` (Responses API; what `bfcl generate` uses for OpenAI `-FC`
  models), model `gpt-4o-2024-11-20-FC`, their own `inference_multi_turn_FC` loop and
  OpenAI client (base URL = the server), then `bfcl evaluate`'s `multi_turn_runner`;
- ours: `inspect eval tasks/bfcl_multiturn --model openai/gpt-4o-2024-11-20
  --model-base-url <server> -M responses_api=false|true`.

Every request pair is diffed field by field (tool-call ids normalised to their order of
appearance, dict key order compared where it reaches the prompt: the tools). On the
Responses API two spellings of the same input item are equated first and counted
(`equivalent encodings`): a message item's `content: "text"` is shorthand for
`[{"type": "input_text", "text": "text"}]` and `type: "message"` is the default type
of an item with a role (OpenAI's `EasyInputMessage`); an `output_text` part's
`logprobs: []` is an empty list of token log-probabilities, which no model reads; a
reasoning item's `content: []` is an empty list of reasoning text (the field is
optional, and OpenAI rejects any other value on input: reasoning goes back in
`encrypted_content`). A difference under `messages` / `input` / `tools` /
`instructions` can change a prompt; the rest (request options such as `tool_choice`,
`store`) is listed apart. Verdicts: ours vs `bfcl evaluate` on the official run.

    python benchmarks/bfcl_request_comparison.py            # 10 gold + 10 perturbed per category
    python benchmarks/bfcl_request_comparison.py --apis responses \
        --model o4-mini-2025-04-16-FC --reasoning   # a reasoning model: reasoning items
    python benchmarks/bfcl_request_comparison.py --gold 2 --perturbed 2 --out report.json
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import random
import re
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envs.bfcl.categories import MULTI_TURN_CATEGORIES  # noqa: E402
from testkit.bfcl_official import (  # noqa: E402
    Script,
    Scripted,
    Turns,
    _bind,
    _forget,
    _official,
    _processed_entry,
    first_user_text,
    gold_turns,
    keyword_form,
    official_evaluate,
    users_per_turn,
)
from testkit.recording_server import Api, RecordedRequest, RecordingServer  # noqa: E402

CATEGORIES = MULTI_TURN_CATEGORIES
OFFICIAL_MODEL = "gpt-4o-2024-11-20-FC"
#: request fields the prompt is made of (what a server renders / the model reads)
PROMPT_KEYS = ("messages", "input", "tools", "instructions")


# -- perturbations (scripted model behaviours beyond the gold answer) -------------------


def _arguments(call: Any) -> tuple[str, dict[str, Any]]:
    name, raw = _bind(call, [])
    return name, json.loads(raw)


def _compact(call: Any) -> tuple[str, str]:
    name, args = _arguments(call)
    return name, json.dumps(args, separators=(",", ":"))


def perturb(kind: str, turns: Turns, rng: random.Random) -> Turns | None:
    """The gold calls (keyword form) changed the way `kind` says, or None if it cannot be."""
    turns = [[list(step) for step in t] for t in turns]
    filled = [i for i, t in enumerate(turns) if t and t[0]]
    if not filled:
        return None
    t = rng.choice(filled)
    calls = turns[t][0]
    if kind == "malformed_json":  # a stray quote after the object: json.loads fails
        name, args = _arguments(calls[0])
        turns[t] = [[(name, json.dumps(args) + '"')]] + [calls[1:]] * bool(calls[1:])
    elif kind == "compact_json":  # raw strings that Inspect's json.dumps would respace
        turns = [[[_compact(c) for c in step] for step in turn] for turn in turns]
    elif kind == "non_ascii_raw":  # raw strings with non-ASCII text, not \\u-escaped
        name, args = _arguments(calls[0])
        strings = [k for k, v in args.items() if isinstance(v, str)]
        if not strings:
            return None
        args[strings[0]] = args[strings[0]] + " café ✓"
        calls[0] = (name, json.dumps(args, ensure_ascii=False))
    elif kind == "unknown_tool":  # an error result from the executor, then the gold
        turns[t] = [["no_such_tool(x=1)"]] + turns[t]
    elif kind == "bad_argument":  # a known tool with an argument it does not take
        name, args = _arguments(calls[0])
        turns[t] = [[(name, json.dumps({**args, "no_such_argument": 1}))]] + turns[t]
    elif kind == "one_call_per_step":
        if len(calls) < 2:
            return None
        turns[t] = [[c] for c in calls] + turns[t][1:]
    elif kind == "step_limit":  # 21 executed steps in a turn: the entry is force-quit
        turns[t] = [[calls[0]]] * 21
    elif kind == "text_turn":  # answers a turn with text only
        turns[t] = []
    elif kind == "dropped_call":
        calls.pop(rng.randrange(len(calls)))
    elif kind == "swapped_calls":
        if len(calls) < 2:
            return None
        i = rng.randrange(len(calls) - 1)
        calls[i], calls[i + 1] = calls[i + 1], calls[i]
    else:
        raise ValueError(kind)
    return turns


PERTURBATIONS = ("malformed_json", "compact_json", "non_ascii_raw", "unknown_tool",
                 "bad_argument", "one_call_per_step", "step_limit", "text_turn",
                 "dropped_call", "swapped_calls")


def select(gold_per_category: int, perturbed_per_category: int,
           seed: int = 2026) -> tuple[dict[str, Turns], dict[str, str]]:
    """Scripts by entry id and what each one is ("gold" or a perturbation)."""
    rng = random.Random(seed)
    o = _official()
    scripts: dict[str, Turns] = {}
    kinds: dict[str, str] = {}
    for category in CATEGORIES:
        file = o.TEST_FILE_MAPPING[f"multi_turn_{category}"]
        ids = [e["id"] for e in o.load_file(o.PROMPT_PATH / file)]
        rng.shuffle(ids)
        wanted = ["gold"] * gold_per_category + [
            PERTURBATIONS[i % len(PERTURBATIONS)] for i in range(perturbed_per_category)]
        for kind in wanted:
            while ids:
                entry_id = ids.pop()
                gold = keyword_form(entry_id, gold_turns(entry_id))
                turns = gold if kind == "gold" else perturb(kind, gold, rng)
                if turns is not None:
                    scripts[entry_id], kinds[entry_id] = turns, kind
                    break
    return scripts, kinds


# -- the two harnesses ----------------------------------------------------------------------


@contextlib.contextmanager
def _api_key() -> Iterator[None]:
    old = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = old or "recording-server"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("OPENAI_API_KEY", None)


def official_run(entry_id: str, api: Api, url: str, model: str = OFFICIAL_MODEL) -> bool:
    """`bfcl generate` (the official handler, its OpenAI client at `url`) and
    `bfcl evaluate` for one entry; whether it is valid."""
    from openai import OpenAI

    o = _official()  # first: it makes bfcl-eval's handler modules importable
    from bfcl_eval.model_handler.api_inference.openai_response import OpenAIResponsesHandler

    handler_class = o.OpenAICompletionsHandler if api == "chat" else OpenAIResponsesHandler
    handler = handler_class(model, temperature=0.001)  # `bfcl generate` default
    handler.client = OpenAI(api_key="recording-server", base_url=url, max_retries=0)
    entry = _processed_entry(entry_id)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the loop prints every step
            result, _ = handler.inference_multi_turn_FC(
                entry, include_input_log=False, exclude_state_log=True)
        valid, _ = official_evaluate(entry_id, result, handler, model)
    finally:
        _forget(model)
    return valid


def our_run(entry_ids: Sequence[str], api: Api, url: str, log_dir: Path,
            model: str = OFFICIAL_MODEL) -> dict[str, bool]:
    """Our task through Inspect's `openai/` provider; verdict per entry."""
    from inspect_ai import eval as inspect_eval

    from tasks.bfcl_multiturn.bfcl_multiturn import bfcl_multiturn

    categories = sorted({i.removeprefix("multi_turn_").rsplit("_", 1)[0] for i in entry_ids})
    (log,) = inspect_eval(
        bfcl_multiturn(category=",".join(categories)),
        model=f"openai/{model.removesuffix('-FC')}", model_base_url=url,
        model_args={"responses_api": api == "responses"}, sample_id=list(entry_ids),
        log_dir=str(log_dir), display="none", max_samples=16, fail_on_error=False)
    out = {}
    for sample in log.samples or []:
        assert sample.error is None, f"{sample.id}: {sample.error}"
        out[str(sample.id)] = next(iter((sample.scores or {}).values())).value == "C"
    return out


# -- diffing ------------------------------------------------------------------------------

_ID = re.compile(r"^(call|fc|msg|rs|resp|chatcmpl)-?_?\d+$")


def normalise_ids(body: Any, names: dict[str, str]) -> Any:
    """Server-made ids (`call_12`, `fc_12`, `msg_3`, `rs_4`) as their order of appearance."""
    if isinstance(body, dict):
        return {k: normalise_ids(v, names) for k, v in body.items()}
    if isinstance(body, list):
        return [normalise_ids(v, names) for v in body]
    if isinstance(body, str) and _ID.match(body):
        prefix = body.split("_")[0]
        seen = sum(1 for v in names.values() if v.startswith(prefix))
        return names.setdefault(body, f"{prefix}#{seen + 1}")
    return body


def canonical_input(item: Any) -> tuple[Any, int]:
    """A Responses input item in one spelling (see the module docstring), and how many
    spellings were changed to get there."""
    if isinstance(item, dict) and item.get("type") == "reasoning" and item.get("content") == []:
        return {k: v for k, v in item.items() if k != "content"}, 1
    if not isinstance(item, dict) or "role" not in item:
        return item, 0
    item, changed = dict(item), 0
    if "type" not in item:
        item["type"], changed = "message", changed + 1
    content = item.get("content")
    if isinstance(content, str) and item["role"] != "assistant":
        item["content"], changed = [{"type": "input_text", "text": content}], changed + 1
    elif isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("logprobs") == []:
                part = {k: v for k, v in part.items() if k != "logprobs"}
                changed += 1
            parts.append(part)
        item["content"] = parts
    return item, changed


def canonical_request(body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    if not isinstance(body.get("input"), list):
        return body, 0
    items = [canonical_input(i) for i in body["input"]]
    return {**body, "input": [i for i, _ in items]}, sum(n for _, n in items)


@dataclass
class Difference:
    path: str
    official: Any
    ours: Any

    @property
    def pattern(self) -> str:
        return re.sub(r"\[\d+\]", "[*]", self.path)

    @property
    def prompt(self) -> bool:
        return self.path.split(".")[0].split("[")[0] in PROMPT_KEYS


def diff(official: Any, ours: Any, path: str = "", order: bool = False) -> list[Difference]:
    """Field differences; `order`: dict key order counts (where it reaches the prompt)."""
    if isinstance(official, dict) and isinstance(ours, dict):
        out: list[Difference] = []
        for key in list(official) + [k for k in ours if k not in official]:
            sub = f"{path}.{key}" if path else key
            if key not in ours:
                out.append(Difference(sub, official[key], "<absent>"))
            elif key not in official:
                out.append(Difference(sub, "<absent>", ours[key]))
            else:
                out.extend(diff(official[key], ours[key], sub,
                                order or sub.split("[")[0] == "tools"))
        if order and not out and list(official) != list(ours):
            out.append(Difference(f"{path}<key order>", list(official), list(ours)))
        return out
    if isinstance(official, list) and isinstance(ours, list):
        out = []
        for i, (a, b) in enumerate(zip(official, ours, strict=False)):
            out.extend(diff(a, b, f"{path}[{i}]", order))
        if len(official) != len(ours):
            out.append(Difference(f"{path}<length>", len(official), len(ours)))
        return out
    if official != ours or type(official) is not type(ours):
        return [Difference(path, official, ours)]
    return []


@dataclass
class Report:
    entries: int = 0
    requests: int = 0
    verdicts_equal: int = 0
    verdict_disagreements: dict[str, Any] = field(default_factory=dict)
    valid: int = 0
    equivalent_encodings: Counter[str] = field(default_factory=Counter)
    #: per side, reasoning input items sent (and how many of them carried encrypted content)
    reasoning_items: Counter[str] = field(default_factory=Counter)
    prompt_differences: Counter[str] = field(default_factory=Counter)
    option_differences: Counter[str] = field(default_factory=Counter)
    examples: dict[str, Any] = field(default_factory=dict)


def by_entry(requests: list[RecordedRequest], scripted: Scripted) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for r in requests:
        script = scripted.script_for(r.api, r.body)
        out.setdefault(script.entry_id, []).append(r.body)
    normalised = {}
    for entry_id, bodies in out.items():
        names: dict[str, str] = {}  # one numbering per conversation
        normalised[entry_id] = [normalise_ids(b, names) for b in bodies]
    return normalised


def _batches(entry_ids: Sequence[str]) -> list[list[str]]:
    """Entries whose first user message is unique within the batch (the scripted model
    tells conversations apart by it)."""
    batches: list[tuple[set[str], list[str]]] = []
    for entry_id in entry_ids:
        key = first_user_text(entry_id)
        for keys, ids in batches:
            if key not in keys:
                keys.add(key)
                ids.append(entry_id)
                break
        else:
            batches.append(({key}, [entry_id]))
    return [ids for _, ids in batches]


def compare(scripts: Mapping[str, Turns], kinds: Mapping[str, str], api: Api,
            log_dir: Path, model: str = OFFICIAL_MODEL, reasoning: bool = False) -> Report:
    """Both harnesses on `scripts` through `api` as `model` (bfcl-eval's name, `-FC`);
    `reasoning`: every scripted reply starts with a reasoning item (Responses API)."""
    report = Report()
    official_requests: dict[str, list[Any]] = {}
    ours_requests: dict[str, list[Any]] = {}
    official_valid: dict[str, bool] = {}
    ours_valid: dict[str, bool] = {}
    with _api_key():
        for batch in _batches(list(scripts)):
            scripted = Scripted(reasoning=reasoning)
            for entry_id in batch:
                scripted.add(Script(entry_id, copy.deepcopy(scripts[entry_id]),
                                    users_per_turn(entry_id)), first_user_text(entry_id))
            for entry_id in batch:
                with RecordingServer(scripted) as server:
                    official_valid[entry_id] = official_run(entry_id, api, server.url, model)
                official_requests.update(by_entry(server.requests, scripted))
            with RecordingServer(scripted) as server:
                ours_valid.update(our_run(batch, api, server.url,
                                          log_dir / f"{api}-{uuid.uuid4().hex[:8]}", model))
            ours_requests.update(by_entry(server.requests, scripted))
    for entry_id in scripts:
        report.entries += 1
        report.valid += official_valid[entry_id]
        if official_valid[entry_id] == ours_valid.get(entry_id):
            report.verdicts_equal += 1
        else:
            report.verdict_disagreements[entry_id] = {
                "kind": kinds[entry_id], "official": official_valid[entry_id],
                "ours": ours_valid.get(entry_id)}
        theirs = list(official_requests.get(entry_id, []))
        mine = list(ours_requests.get(entry_id, []))
        report.requests += len(theirs)
        for side, bodies in (("official", theirs), ("ours", mine)):
            canonical = [canonical_request(b) for b in bodies]
            bodies[:] = [b for b, _ in canonical]
            report.equivalent_encodings[side] += sum(n for _, n in canonical)
            items = [i for b in bodies for i in b.get("input") or []
                     if isinstance(i, dict) and i.get("type") == "reasoning"]
            report.reasoning_items[side] += len(items)
            report.reasoning_items[f"{side} with encrypted content"] += sum(
                1 for i in items if i.get("encrypted_content"))
        differences = diff(theirs, mine, "")
        for d in differences:
            d.path = re.sub(r"^\[\d+\]\.?", "", d.path)
            bucket = report.prompt_differences if d.prompt else report.option_differences
            bucket[d.pattern] += 1
            report.examples.setdefault(d.pattern, {
                "entry": entry_id, "kind": kinds[entry_id],
                "official": _short(d.official), "ours": _short(d.ours)})
    return report


def _short(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= 300 else text[:300] + "..."


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=int, default=10, help="gold entries per category")
    parser.add_argument("--perturbed", type=int, default=10,
                        help="perturbed entries per category")
    parser.add_argument("--apis", default="chat,responses")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--model", default=OFFICIAL_MODEL,
                        help="bfcl-eval model name (-FC); ours runs openai/<name without -FC>")
    parser.add_argument("--reasoning", action="store_true",
                        help="every scripted reply starts with a reasoning item (with "
                             "encrypted content) on the Responses API")
    parser.add_argument("--out", type=Path, help="write the full report as JSON")
    args = parser.parse_args(argv)
    scripts, kinds = select(args.gold, args.perturbed, args.seed)
    print(f"{len(scripts)} entries: {dict(Counter(kinds.values()))}")
    full: dict[str, Any] = {"model": args.model, "reasoning items": args.reasoning,
                            "entries": dict(kinds)}
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for api in args.apis.split(","):
            report = compare(scripts, kinds, api, Path(tmp),  # type: ignore[arg-type]
                             args.model, args.reasoning)
            full[api] = {
                "entries": report.entries, "requests (official)": report.requests,
                "officially valid": report.valid, "verdicts equal": report.verdicts_equal,
                "verdict disagreements": report.verdict_disagreements,
                "equivalent encodings equated": dict(report.equivalent_encodings),
                "reasoning items sent": dict(report.reasoning_items),
                "prompt differences": dict(report.prompt_differences),
                "request-option differences": dict(report.option_differences),
                "examples": report.examples}
            print(f"\n[{api}] {report.entries} entries, {report.requests} official requests, "
                  f"{report.valid} officially valid; verdicts equal "
                  f"{report.verdicts_equal}/{report.entries}")
            if report.equivalent_encodings:
                print(f"  equivalent encodings equated: {dict(report.equivalent_encodings)}")
            if any(report.reasoning_items.values()):
                print(f"  reasoning items sent: {dict(report.reasoning_items)}")
            print(f"  prompt differences: {sum(report.prompt_differences.values())}")
            for pattern, n in report.prompt_differences.most_common():
                print(f"    {n:5d}  {pattern}  e.g. {report.examples[pattern]}")
            print(f"  request-option differences: {sum(report.option_differences.values())}")
            for pattern, n in report.option_differences.most_common():
                print(f"    {n:5d}  {pattern}  e.g. {report.examples[pattern]}")
            failed |= bool(report.prompt_differences or report.verdict_disagreements)
    if args.out:
        args.out.write_text(json.dumps(full, indent=1, ensure_ascii=False, default=str))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
