"""EnvGen's two LLM agents: the code agent (role `coder`) and the test agent (`tester`).

Each call goes through Inspect's model API. A reply must carry exactly one fenced
```python block (the whole file); a reply without one (or, from the tester, one that is
not valid Python or defines no test) is answered once with what was wrong, and a second
bad reply is an `AgentFailure` the pipeline records. A revising coder may also argue that
some tests are wrong, in one fenced ```json block `{"wrong_tests": [{"test", "reason"}]}`.
The tester sees the description and the interface (tool schemas, the state schema and
default data when the module could be probed), never the implementation.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from inspect_ai.model import ChatMessageUser, Model
from pydantic import BaseModel, Field

from harness.reask import ask_until_valid
from synthesis.envgen.description import ApiDescription
from synthesis.envgen.validate import FailureGroup

__all__ = ["AgentFailure", "AgentReply", "WrongTest", "extract_python", "regenerate_tests",
           "revise_code", "write_code", "write_tests"]

ROLES = ("coder", "tester")
_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_OPEN_FENCE = re.compile(r"```(?:python|py)[^\n]*\n", re.IGNORECASE)


class AgentFailure(Exception):
    """No usable reply after the retry; `tokens` is what the attempts cost."""

    def __init__(self, role: str, problem: str, tokens: int) -> None:
        super().__init__(f"{role}: {problem}")
        self.role, self.problem, self.tokens = role, problem, tokens


class WrongTest(BaseModel):
    test: str
    reason: str


class AgentReply(BaseModel):
    code: str
    wrong_tests: list[WrongTest] = Field(default_factory=list)
    tokens: int = 0
    attempts: int = 1


def extract_python(text: str) -> str:
    """The one fenced python block of a reply; ValueError says what is wrong."""
    blocks = [body for lang, body in _FENCE.findall(text) if lang.lower() in ("python", "py")]
    if not blocks:
        # a reply cut off by the token limit: the open block runs to the end (validation
        # then reports what is missing, worst first)
        cut = _OPEN_FENCE.search(text)
        if cut is None or "```" in text[cut.end():]:
            raise ValueError("the reply has no fenced ```python code block")
        blocks = [text[cut.end():]]
    if len(blocks) > 1:
        raise ValueError(f"the reply has {len(blocks)} ```python blocks; send the whole file "
                         "in exactly one")
    return blocks[0].strip() + "\n"


def _wrong_tests(text: str) -> list[WrongTest]:
    for lang, body in _FENCE.findall(text):
        if lang.lower() != "json":
            continue
        try:
            data = json.loads(body)
        except json.JSONDecodeError as e:
            raise ValueError(f"the ```json block is not JSON ({e})") from None
        claims = data.get("wrong_tests") if isinstance(data, dict) else None
        if not isinstance(claims, list):
            raise ValueError('the ```json block must be {"wrong_tests": [{"test": ..., '
                             '"reason": ...}]}')
        try:
            return [WrongTest.model_validate(c) for c in claims]
        except ValueError as e:
            raise ValueError(f"wrong_tests entries need 'test' and 'reason' ({e})") from None
    return []


async def _ask(model: Model, role: str, prompt: str,
               check: Callable[[str], AgentReply]) -> AgentReply:
    asked = await ask_until_valid(
        model, [ChatMessageUser(content=prompt)], check, attempts=2,
        again="That reply cannot be used: {problem}. Answer again with the whole file in one "
              "```python block.")
    if asked.value is None:
        raise AgentFailure(role, asked.problem or "", asked.tokens)
    return asked.value.model_copy(update={"tokens": asked.tokens, "attempts": asked.attempts})


def _code_reply(text: str) -> AgentReply:
    return AgentReply(code=extract_python(text), wrong_tests=_wrong_tests(text))


def _tests_reply(text: str) -> AgentReply:
    code = extract_python(text)
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise ValueError(f"the test file is not valid Python (line {e.lineno}: {e.msg})") \
            from None
    if not any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
               and n.name.startswith("test_") for n in ast.walk(tree)):
        raise ValueError("the test file defines no test_* function")
    return AgentReply(code=code)


CONTRACT = '''Write the environment in this contract (the `envs` package is importable):

```python
from pydantic import BaseModel, Field
from envs.base import Environment, ToolError, tool

class Item(BaseModel):
    id: str
    name: str
    quantity: int = 0

class ShopState(BaseModel):
    now: str = "2026-03-09T09:00"          # time comes from the state, never the clock
    seed: int = 0                          # randomness too
    items: dict[str, Item] = Field(default_factory=dict)
    next_id: int = 1

class Shop(Environment):
    name = "shop"
    description = "A small shop inventory."
    State = ShopState

    @classmethod
    def default_state(cls) -> ShopState:   # seeded, realistic data (10-20 records)
        return ShopState(items={"I1": Item(id="I1", name="pen", quantity=3)}, next_id=2)

    @tool
    def get_item(self, item_id: str) -> dict:
        """Look up one item.

        Args:
            item_id: The item's id.
        """
        item = self.state.items.get(item_id)
        if item is None:
            raise ToolError(f"no item {item_id!r}")
        return item.model_dump()

    @tool(write=True)
    def add_item(self, name: str, quantity: int = 1) -> dict:
        """Add an item.

        Args:
            name: Item name.
            quantity: How many.
        """
        if quantity < 1:
            raise ToolError("quantity must be at least 1")
        item = Item(id=f"I{self.state.next_id}", name=name, quantity=quantity)
        self.state.items[item.id] = item
        self.state.next_id += 1
        return {"item_id": item.id}
```

Rules: one module, exactly one `Environment` subclass; every tool of the description is a
method of the same name with the same parameter names, types (str/int/float/bool/list/dict,
`Literal[...]` for enums) and required/optional split, marked `@tool` (`@tool(write=True)` if
it may change state); results are JSON-serialisable (dicts shaped like the described return
schema); refusals raise `ToolError` with a clear message; no network, files, clock or
randomness outside the state; no module-level mutable state.'''

CODER = """You are an expert Python engineer writing a stateful, simulated tool environment
for evaluating tool-using agents. Implement this API:

{interface}

{contract}

Reply with the whole module in one ```python block."""

REVISER = """You wrote the environment below for this API; its tests failed.
This is revision {revision} of at most {max_revisions}.

{interface}

Your current module:
```python
{code}
```

Failing tests, grouped and ranked by severity (fix the first ones first):
{failures}

{contract}

Fix the module. Reply with the whole corrected module in one ```python block. If you are
sure a test is wrong (it contradicts the API description), you may also add one ```json block
{{"wrong_tests": [{{"test": "<test name>", "reason": "<why it contradicts the description>"}}]}}
and keep your code as the description demands."""

TESTER = """You write executable pytest tests for a simulated tool environment, from its API
description and interface only (you never see the implementation).

{interface}
{state}
The tests run with these fixtures (already provided by conftest.py, do not define them):
- `env`: a fresh environment instance in its default state;
- `make_env`: a function returning another fresh instance.
Use only `env.call(tool_name, arguments_dict)`, which returns a result `r` with `r.ok` (bool),
`r.content` (the tool's JSON result when ok) and `r.error` (the message when not ok), plus
`env.snapshot()` (the state as JSON) and `env.restore(snapshot)`.

Write tests for the four criteria, named by criterion:
- `test_interface_*`: results have the shapes and fields the description's return schemas name;
- `test_exec_*`: every tool can be called with valid arguments;
- `test_behaviour_*`: for each tool a valid case, a boundary case and an error case (an
  invalid or unknown value must give `r.ok == False`);
- `test_state_*`: writes change exactly what they should; a failed write changes nothing
  (compare `env.snapshot()` before and after); snapshot/restore round-trips.
Base expectations only on the description and the data shown. Reply with one ```python block
holding the whole test file (plain functions, `import pytest` if needed)."""

REGENERATE = """A test you wrote for the API below is disputed by the environment's author.

{interface}
{state}
Your test file:
```python
{tests}
```

Disputed tests and the author's reasons:
{claims}

If the author is right (the test contradicts the API description), rewrite those tests so
they follow the description; otherwise keep them. Keep every other test unchanged. Reply
with the whole test file in one ```python block."""


def _state_text(state_schema: dict[str, Any] | None, default_state: Any) -> str:
    if state_schema is None:
        return ""
    data = json.dumps(default_state, ensure_ascii=False)
    if len(data) > 6000:
        data = data[:6000] + " ... (cut)"
    return (f"\nState schema (JSON schema of env.snapshot()):\n"
            f"{json.dumps(state_schema, ensure_ascii=False)}\n"
            f"Default state of a fresh instance:\n{data}\n")


def failures_text(groups: Sequence[FailureGroup], limit: int = 12) -> str:
    lines = []
    for i, g in enumerate(groups[:limit], 1):
        lines.append(f"{i}. [{g.severity}] {g.key}: {len(g.tests)} test(s): "
                     f"{', '.join(g.tests[:6])}\n   {g.message}\n{_indent(g.output, 1500)}")
    if len(groups) > limit:
        lines.append(f"... and {len(groups) - limit} more groups")
    return "\n".join(lines) or "(none)"


def _indent(text: str, limit: int) -> str:
    text = text.strip()
    text = text if len(text) <= limit else "..." + text[-limit:]
    return "\n".join("   " + line for line in text.splitlines())


async def write_code(model: Model, description: ApiDescription) -> AgentReply:
    prompt = CODER.format(interface=description.interface_text(), contract=CONTRACT)
    return await _ask(model, "coder", prompt, _code_reply)


async def revise_code(model: Model, description: ApiDescription, code: str,
                      failures: Sequence[FailureGroup], revision: int,
                      max_revisions: int) -> AgentReply:
    prompt = REVISER.format(interface=description.interface_text(), code=code.rstrip(),
                            failures=failures_text(failures), contract=CONTRACT,
                            revision=revision, max_revisions=max_revisions)
    return await _ask(model, "coder", prompt, _code_reply)


async def write_tests(model: Model, description: ApiDescription,
                      state_schema: dict[str, Any] | None, default_state: Any) -> AgentReply:
    prompt = TESTER.format(interface=description.interface_text(),
                           state=_state_text(state_schema, default_state))
    return await _ask(model, "tester", prompt, _tests_reply)


async def regenerate_tests(model: Model, description: ApiDescription, tests: str,
                           claims: Sequence[WrongTest], state_schema: dict[str, Any] | None,
                           default_state: Any) -> AgentReply:
    shown = "\n".join(f"- {c.test}: {c.reason}" for c in claims)
    prompt = REGENERATE.format(interface=description.interface_text(), tests=tests.rstrip(),
                               claims=shown, state=_state_text(state_schema, default_state))
    return await _ask(model, "tester", prompt, _tests_reply)
