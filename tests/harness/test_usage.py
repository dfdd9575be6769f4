"""`counting_tokens` sums the usage of the calls made inside it, through Inspect's hook."""

from __future__ import annotations

import anyio
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from harness.usage import counting_tokens


def _output(total: int) -> ModelOutput:
    output = ModelOutput.from_content("mockllm/model", "ok")
    output.usage = ModelUsage(input_tokens=total - 1, output_tokens=1, total_tokens=total)
    return output


async def test_counts_the_calls_inside_the_block_only() -> None:
    model = get_model("mockllm/model", custom_outputs=[_output(5), _output(7), _output(11)])
    await model.generate("before")
    with counting_tokens() as count:
        await model.generate("one")
        async with anyio.create_task_group() as tg:  # calls in child tasks count too
            tg.start_soon(model.generate, "two")
    assert count.total == 7 + 11
