from typing import Any

from agent_core.formatter import OpenAIChatFormatter
from agent_core.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    HintBlock,
    SystemMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    URLSource,
    UserMsg,
)

PNG = Base64Source(data="iVBORw0KGgo=", media_type="image/png")


async def fmt(*msgs: Any) -> list[dict[str, Any]]:
    return await OpenAIChatFormatter().format(list(msgs))


def call(call_id: str, name: str = "bash", args: str = '{"cmd": "ls"}') -> ToolCallBlock:
    return ToolCallBlock(id=call_id, name=name, input=args)


def result(call_id: str, output: Any = "done", name: str = "bash") -> ToolResultBlock:
    return ToolResultBlock(id=call_id, name=name, output=output)


def assistant_with_calls(text: str | None, *calls: tuple[str, str]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "name": "bot",
        "content": text,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "bash", "arguments": args}}
            for cid, args in calls
        ],
    }


async def test_system_user_and_assistant_text() -> None:
    out = await fmt(
        SystemMsg("sys", "Be brief."),
        UserMsg("alice", [TextBlock(text="Hi"), TextBlock(text="there")]),
        AssistantMsg("bot", [ThinkingBlock(thinking="hmm"), TextBlock(text="Hello!")]),
    )
    assert out == [
        {"role": "system", "name": "sys", "content": "Be brief."},
        {"role": "user", "name": "alice", "content": "Hi\nthere"},
        {"role": "assistant", "name": "bot", "content": "Hello!"},
    ]


async def test_images_become_image_url_parts() -> None:
    out = await fmt(
        UserMsg(
            "alice",
            [
                TextBlock(text="What is this?"),
                DataBlock(source=PNG),
                DataBlock(source=URLSource(url="https://x.test/a.jpg", media_type="image/jpeg")),
                DataBlock(source=URLSource(url="https://x.test/a.wav", media_type="audio/wav")),
            ],
        )
    )
    assert out[0]["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": "https://x.test/a.jpg"}},
        {"type": "text", "text": "[attachment omitted: https://x.test/a.wav (audio/wav)]"},
    ]


async def test_parallel_calls_are_followed_by_their_results() -> None:
    out = await fmt(
        AssistantMsg(
            "bot",
            [
                TextBlock(text="Checking both."),
                call("c1", args='{"cmd": "ls"}'),
                call("c2", args='{"cmd": "pwd"}'),
                result("c1", "a.txt"),
                result("c2", [TextBlock(text="/home")]),
                TextBlock(text="Done."),
            ],
        )
    )
    assert out == [
        assistant_with_calls("Checking both.", ("c1", '{"cmd": "ls"}'), ("c2", '{"cmd": "pwd"}')),
        {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": "a.txt"},
        {"role": "tool", "tool_call_id": "c2", "name": "bash", "content": "/home"},
        {"role": "assistant", "name": "bot", "content": "Done."},
    ]


async def test_hints_split_a_reply_into_alternating_messages_in_order() -> None:
    reply = AssistantMsg(
        "bot",
        [
            TextBlock(text="Let me look."),
            call("c1", args='{"cmd": "ls"}'),
            result("c1", "a.txt"),
            HintBlock(hint="The user says: also check /tmp", source='{"kind": "team"}'),
            ThinkingBlock(thinking="ok, /tmp too"),
            call("c2", args='{"cmd": "ls /tmp"}'),
            result("c2", "b.txt"),
            TextBlock(text="Found a.txt and b.txt."),
        ],
    )
    out = await fmt(UserMsg("alice", "List files"), reply, UserMsg("alice", "Thanks"))
    assert out == [
        {"role": "user", "name": "alice", "content": "List files"},
        assistant_with_calls("Let me look.", ("c1", '{"cmd": "ls"}')),
        {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": "a.txt"},
        {"role": "user", "content": "The user says: also check /tmp"},
        assistant_with_calls(None, ("c2", '{"cmd": "ls /tmp"}')),
        {"role": "tool", "tool_call_id": "c2", "name": "bash", "content": "b.txt"},
        {"role": "assistant", "name": "bot", "content": "Found a.txt and b.txt."},
        {"role": "user", "name": "alice", "content": "Thanks"},
    ]
    roles = [m["role"] for m in out]
    # Every tool message directly follows the assistant call or another tool message.
    assert all(roles[i - 1] in {"assistant", "tool"} for i, r in enumerate(roles) if r == "tool")


async def test_hint_arriving_before_all_results_waits_for_them() -> None:
    out = await fmt(
        AssistantMsg(
            "bot",
            [call("c1"), call("c2"), result("c1"), HintBlock(hint="hurry"), result("c2")],
        )
    )
    assert [m["role"] for m in out] == ["assistant", "tool", "tool", "user"]
    assert out[-1] == {"role": "user", "content": "hurry"}


async def test_hint_at_start_and_multimodal_hint() -> None:
    out = await fmt(
        AssistantMsg(
            "bot",
            [
                HintBlock(hint=[TextBlock(text="see"), DataBlock(source=PNG)]),
                TextBlock(text="I see a PNG."),
            ],
        )
    )
    assert out == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "see"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        },
        {"role": "assistant", "name": "bot", "content": "I see a PNG."},
    ]


async def test_images_in_tool_results_follow_as_a_user_message() -> None:
    out = await fmt(
        AssistantMsg(
            "bot",
            [
                call("c1", name="read"),
                result("c1", [TextBlock(text="img:"), DataBlock(source=PNG)]),
            ],
        )
    )
    assert out[1]["role"] == "tool"
    assert out[1]["content"].startswith("img:\n")
    assert out[2]["role"] == "user"
    assert out[2]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }
