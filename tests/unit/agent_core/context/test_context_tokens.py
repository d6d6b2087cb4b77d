import json

import pytest
from pydantic import ValidationError

from agent_core.agent._config import ContextConfig
from agent_core.agent._meter import PromptMeter
from agent_core.agent._tokens import (
    DATA_BLOCK_TOKENS,
    DEFAULT_COUNTER,
    ByteTokenCounter,
    CachedTokenCounter,
    count_content,
    count_messages,
    count_text,
    count_tools,
    measure_context,
    needs_compression,
)
from agent_core.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    HintBlock,
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UserMsg,
)
from agent_core.model.base import ToolSchema
from tests.support import COMPAT_DIR

RECORDED_SCHEMA = COMPAT_DIR / "agentscope-openapi.json"


def _image() -> DataBlock:
    return DataBlock(source=Base64Source(data="iVBORw0KGgo=" * 1000, media_type="image/png"))


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("a", 0),  # 0.25
        ("ab", 1),  # 0.5 rounds half up
        ("abcde", 1),  # 1.25
        ("abcdef", 2),  # 1.5
        ("é", 1),  # 2 UTF-8 bytes
        ("中文", 2),  # 6 UTF-8 bytes
        ("x" * 4000, 1000),
    ],
)
def test_text_is_utf8_bytes_over_four_rounded_half_up(text: str, tokens: int) -> None:
    assert count_text(text) == tokens


def test_a_data_block_costs_a_flat_2000_tokens_whatever_its_size() -> None:
    msg = UserMsg("user", [TextBlock(text="x" * 40), _image()])
    assert count_messages([msg]) == 10 + DATA_BLOCK_TOKENS
    assert DATA_BLOCK_TOKENS == 2_000


def test_every_block_kind_counts_its_text() -> None:
    reply = AssistantMsg(
        "agent",
        [
            ToolCallBlock(id="c1", name="Bash", input='{"cmd": "ls"}'),
            ToolResultBlock(id="c1", name="Bash", output=[TextBlock(text="y" * 80), _image()]),
            HintBlock(hint="z" * 40),
        ],
    )
    call = count_text('Bash{"cmd": "ls"}')
    result = count_text("Bash") + 20 + DATA_BLOCK_TOKENS
    assert count_messages([reply]) == call + result + 10


def test_message_tokens_are_the_sum_of_their_blocks() -> None:
    counter = ByteTokenCounter()
    msgs = [UserMsg("user", "hello there"), AssistantMsg("agent", "general kenobi")]
    per_block = sum(counter.count_blocks([b]) for m in msgs for b in m.content)
    assert counter.count_messages(msgs) == per_block


def test_tool_schemas_count_as_their_json() -> None:
    tools = [
        ToolSchema(
            name="Read",
            description="Read a file.",
            parameters={"type": "object", "properties": {"path": {"type": "string"}}},
        )
    ]
    expected = count_text(json.dumps([t.model_dump() for t in tools], ensure_ascii=False))
    assert count_tools(tools) == expected > 0
    assert count_tools([]) == 0


def test_summary_text_or_blocks() -> None:
    assert count_content("x" * 400) == 100
    assert count_content([TextBlock(text="x" * 400), _image()]) == 100 + DATA_BLOCK_TOKENS


def test_usage_adds_the_four_layers_and_compares_with_the_thresholds() -> None:
    config = ContextConfig(trigger_ratio=0.8, context_buffer_ratio=0.2)
    tools = [ToolSchema(name="T", description="d", parameters={})]
    context: list[Msg] = [UserMsg("user", "x" * 2800)]  # 700 tokens
    usage = measure_context("s" * 400, "m" * 200, context, tools, 1000, config)
    assert (usage.system_prompt_tokens, usage.summary_tokens, usage.context_tokens) == (
        100,
        50,
        700,
    )
    assert usage.total == 850 + count_tools(tools)
    assert usage.threshold == pytest.approx(800)
    assert usage.needs_compression
    assert needs_compression("s" * 400, "m" * 200, context, tools, 1000, config)
    assert not needs_compression("s" * 400, "", context, [], 1000, config)
    small = measure_context("", "", [UserMsg("user", "x" * 2600)], [], 1000, config)  # 650
    assert small.near_compression
    assert not small.needs_compression


def test_the_usage_is_measured_only_near_the_threshold() -> None:
    measure_context_if_near = PromptMeter(DEFAULT_COUNTER).measure_if_near
    config = ContextConfig(trigger_ratio=0.8, context_buffer_ratio=0.2)  # buffer from 600
    tools = [ToolSchema(name="T", description="d", parameters={})]
    far = [UserMsg("user", "x" * 400)]
    assert measure_context_if_near("s" * 40, "", far, tools, 1000, config) is None
    near = [UserMsg("user", "x" * 2600)]  # 650 tokens
    usage = measure_context_if_near("s" * 40, "m" * 40, near, tools, 1000, config)
    assert usage == measure_context("s" * 40, "m" * 40, near, tools, 1000, config)
    assert usage is not None
    assert usage.near_compression
    # Exactly at the buffer threshold is not near, as `near_compression` says.
    edge = [UserMsg("user", "x" * 2400)]  # 600 tokens
    assert not measure_context("", "", edge, [], 1000, config).near_compression
    assert measure_context_if_near("", "", edge, [], 1000, config) is None


def test_a_replacement_counter_is_used_everywhere() -> None:
    class CharCounter(ByteTokenCounter):
        def count_text(self, text: str) -> int:
            return len(text)

    usage = measure_context(
        "abc", "de", [UserMsg("user", "fghi")], [], 100, ContextConfig(), CharCounter()
    )
    assert usage.total == 9


def test_context_config_defaults_match_the_recorded_schema() -> None:
    recorded = json.loads(RECORDED_SCHEMA.read_text())["components"]["schemas"]["ContextConfig"]
    config = ContextConfig()
    assert set(recorded["properties"]) == set(ContextConfig.model_fields)
    for name, field in recorded["properties"].items():
        if "default" in field:
            assert getattr(config, name) == field["default"], name


def test_default_summary_schema_asks_for_the_five_fields() -> None:
    schema = ContextConfig().summary_schema
    fields = [
        "task_overview",
        "current_state",
        "important_discoveries",
        "next_steps",
        "context_to_preserve",
    ]
    assert list(schema["properties"]) == fields
    assert schema["required"] == fields
    assert all("{" + f + "}" in ContextConfig().summary_template for f in fields)


def test_the_buffer_must_be_smaller_than_the_trigger_ratio() -> None:
    with pytest.raises(ValidationError, match="context_buffer_ratio"):
        ContextConfig(trigger_ratio=0.2, context_buffer_ratio=0.2)
    with pytest.raises(ValidationError):
        ContextConfig(trigger_ratio=0.95)


def test_the_cached_counter_counts_a_reply_in_progress_as_the_plain_one_does() -> None:
    cached, plain = CachedTokenCounter(), ByteTokenCounter()
    reply = Msg(name="bot", role="assistant", content=[])
    for step in range(6):
        block = TextBlock(text="x" * (step + 1) * 3)
        reply.content.append(block)
        assert cached.count_messages([reply]) == plain.count_messages([reply])
        block.text += "more"  # still streaming: not counted from memory
        assert cached.count_messages([reply]) == plain.count_messages([reply])
        block.finished_at = "2026-01-01T00:00:00+00:00"
        assert cached.count_messages([reply]) == plain.count_messages([reply])
    reply.content.pop(2)  # changed in place: counted afresh
    assert cached.count_messages([reply]) == plain.count_messages([reply])


def test_the_cached_counter_counts_tools_anew_when_a_schema_is_replaced() -> None:
    cached, plain = CachedTokenCounter(), ByteTokenCounter()
    small = ToolSchema(name="t", description="d", parameters={"type": "object"})
    assert cached.count_tools([small]) == plain.count_tools([small])
    assert cached.count_tools([small]) == plain.count_tools([small])
    bigger = small.model_copy(update={"parameters": {"type": "object", "properties": {"x": {}}}})
    assert cached.count_tools([bigger]) == plain.count_tools([bigger]) > plain.count_tools([small])


def test_the_cached_counter_recounts_when_the_offered_tools_change_between_steps() -> None:
    cached, plain = CachedTokenCounter(), ByteTokenCounter()
    first = ToolSchema(name="t", description="d", parameters={"type": "object"})
    renamed = first.model_copy(update={"description": "a longer description"})
    second = ToolSchema(name="u", description="e", parameters={"type": "object"})
    for tools in ([first], [first], [renamed], [first], [first, second], [second], []):
        assert cached.count_tools(tools) == plain.count_tools(tools)
