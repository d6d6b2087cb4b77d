from pathlib import Path

from agent_core.agent._context import truncate_tool_result
from agent_core.agent._tokens import DATA_BLOCK_TOKENS, count_content
from agent_core.message import Base64Source, DataBlock, TextBlock, ToolResultBlock
from agent_core.ports import Offloader

# The marker texts exactly as the spec prints them.
MARKER = (
    "<<<TRUNCATED>>>\n"
    "<system-reminder>The remaining content has been omitted for limited context."
    "</system-reminder>"
)
OFFLOADED_MARKER = (
    "<<<TRUNCATED>>>\n"
    "<system-reminder>The remaining content has been omitted for limited context. You can refer "
    "to the file in '{path}' for the truncated content if needed.</system-reminder>"
)


def _result(output: str | list[TextBlock | DataBlock]) -> ToolResultBlock:
    return ToolResultBlock(id="call_1", name="Bash", output=output)


async def test_a_result_within_the_limit_is_left_alone() -> None:
    result = _result("x" * 400)
    assert await truncate_tool_result(result, 100) is result


async def test_an_oversized_result_keeps_its_head_and_ends_with_the_marker() -> None:
    text = "".join(f"line {i}\n" for i in range(2000))
    result = _result(text)
    truncated = await truncate_tool_result(result, 200)

    assert isinstance(truncated.output, str)
    head, marker = truncated.output.rsplit("\n<<<TRUNCATED>>>", 1)
    assert "<<<TRUNCATED>>>" + marker == MARKER
    assert text.startswith(head)
    assert len(head) > 500
    assert count_content(truncated.output) <= 200
    assert (truncated.id, truncated.name) == (result.id, result.name)
    assert result.output == text  # the original is not modified


async def test_with_an_offloader_the_full_output_is_saved_and_referenced(
    offloader: Offloader, tmp_path: Path
) -> None:
    text = "é" * 5000
    truncated = await truncate_tool_result(_result(text), 300, offloader, session_id="s1")

    path = tmp_path / "sessions" / "s1" / "tool_result-call_1.txt"
    assert path.read_text(encoding="utf-8") == text
    assert isinstance(truncated.output, str)
    assert truncated.output.endswith("\n" + OFFLOADED_MARKER.format(path=path))
    assert count_content(truncated.output) <= 300


async def test_block_outputs_keep_the_leading_blocks_and_add_the_marker_block() -> None:
    image = DataBlock(source=Base64Source(data="AAAA", media_type="image/png"))
    blocks: list[TextBlock | DataBlock] = [
        TextBlock(text="a" * 400),
        image,
        TextBlock(text="b" * 40_000),
        DataBlock(source=Base64Source(data="BBBB", media_type="image/png")),
    ]
    truncated = await truncate_tool_result(_result(blocks), DATA_BLOCK_TOKENS + 1000)

    assert isinstance(truncated.output, list)
    first, data, clipped, marker = truncated.output
    assert first == blocks[0]
    assert data == image
    assert isinstance(clipped, TextBlock)
    assert clipped.text
    assert set(clipped.text) == {"b"}
    assert marker == TextBlock(id=marker.id, created_at=marker.created_at, text=MARKER)
    assert count_content(truncated.output) <= DATA_BLOCK_TOKENS + 1000


async def test_a_limit_smaller_than_the_marker_leaves_only_the_marker() -> None:
    truncated = await truncate_tool_result(_result("x" * 1000), 5)
    assert truncated.output == MARKER
