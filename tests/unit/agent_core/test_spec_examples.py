"""The code examples of the spec (building-blocks.md), ported and run offline.

Each test keeps its example as the spec writes it, with `agentscope.` renamed `agent_core.` and
provider models (DashScope, ...) replaced by `ScriptedChatModel`. Where our API needs a change,
a comment at the change says so. `asyncio.run(main())` becomes `await main()`: pytest already
runs the event loop.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_core.agent import Agent, ContextConfig
from agent_core.credential import OpenAICredential
from agent_core.errors import ModelConnectionError
from agent_core.event import (
    AgentEvent,
    ConfirmResult,
    ExternalExecutionResultEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    TextBlockDeltaEvent,
    ToolCallStartEvent,
    ToolResultEndEvent,
    UserConfirmResultEvent,
)
from agent_core.mcp import HttpMCPConfig, MCPClient, StdioMCPConfig
from agent_core.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    Msg,
    SystemMsg,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from agent_core.middleware import MiddlewareBase
from agent_core.model import ChatModelBase, OpenAIChatModel
from agent_core.permission import (
    AdditionalWorkingDirectory,
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
)
from agent_core.skill import LocalSkillLoader, Skill
from agent_core.state import AgentState
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall
from agent_core.tool import (
    Bash,
    Edit,
    FunctionTool,
    Grep,
    Read,
    ToolBase,
    ToolChunk,
    ToolGroup,
    Toolkit,
    Write,
)

REVIEW = "---\nname: review\ndescription: Review a pull request.\n---\n\n1. Read the diff.\n"


def scripted(*steps: Any) -> ScriptedChatModel:
    """Stands in for `DashScopeChatModel(credential=..., model="qwen-max")`."""
    return ScriptedChatModel(list(steps))


def make_skills(root: Path) -> Path:
    (root / "review").mkdir(parents=True)
    (root / "review" / "SKILL.md").write_text(REVIEW)
    return root


# Agent ----------------------------------------------------------------------------------------


async def test_minimal_setup_and_reply(capsys: pytest.CaptureFixture[str]) -> None:
    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=scripted("README.md and src/."),
    )

    async def main() -> None:
        msg = UserMsg(name="user", content="What files are in the current directory?")
        result = await agent.reply(msg)
        print(result.get_text_content())

    await main()
    assert capsys.readouterr().out == "README.md and src/.\n"


async def test_reply_stream(capsys: pytest.CaptureFixture[str]) -> None:
    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=scripted("The README explains the project."),
    )

    async def main() -> None:
        msg = UserMsg(name="user", content="Summarize the README.")
        async for event in agent.reply_stream(msg):
            if hasattr(event, "delta"):
                print(event.delta, end="", flush=True)

    await main()
    assert capsys.readouterr().out == "The README explains the project."


async def test_observe_adds_to_the_context_without_replying() -> None:
    model = scripted()
    agent = Agent(name="my_agent", system_prompt="You are a helpful assistant.", model=model)
    other_agent_msg = AssistantMsg(name="critic", content="The plan misses tests.")

    await agent.observe(other_agent_msg)

    assert agent.state.context == [other_agent_msg]
    assert model.calls == []


async def test_context_config_and_manual_compression() -> None:
    model = scripted("Hi.")
    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=model,
        context_config=ContextConfig(
            trigger_ratio=0.7,  # compress when 70% of context is used
            reserve_ratio=0.2,  # keep the most recent 20% after compression
            tool_result_limit=1000,  # truncate tool results at 1000 tokens
        ),
    )
    await agent.reply(UserMsg(name="user", content="Hello"))
    context = list(agent.state.context)

    # Use the agent's default config
    await agent.compress_context()

    # Or pass a custom config for this call only
    await agent.compress_context(ContextConfig(trigger_ratio=0.6, reserve_ratio=0.2))

    # Far below the threshold, both calls are no-ops: nothing summarized, no model call.
    assert agent.state.context == context
    assert agent.state.summary == ""
    assert len(model.calls) == 1


async def test_agent_with_tools_mcp_and_skills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    make_skills(tmp_path / "skills")
    # Port: our built-in tools take their working directory; the amap server (a real network
    # service needing AMAP_API_KEY) becomes a local port where nothing listens.
    cwd = tmp_path
    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=scripted("Done."),
        toolkit=Toolkit(
            tools=[Bash(cwd), Edit(cwd), Grep(cwd), Read(cwd), Write(cwd)],
            mcps=[
                MCPClient(
                    name="amap",
                    is_stateful=False,
                    mcp_config=HttpMCPConfig(url="http://127.0.0.1:9/mcp?key=demo", timeout=2),
                    timeout=5,
                ),
            ],
            skills_or_loaders=["./skills"],
        ),
    )

    await agent.toolkit.prepare()

    names = [schema.name for schema in agent.toolkit.schemas()]
    assert names == ["Bash", "Edit", "Grep", "Read", "Write", "Skill"]
    assert "- review: Review a pull request." in agent.toolkit.skills_prompt()
    assert list(agent.toolkit.mcp_errors) == ["amap"]


# Human-in-the-loop ----------------------------------------------------------------------------


def get_weather(city: str, unit: str = "celsius") -> str:
    """Get the current weather for a city.

    Args:
        city: The city name to look up.
        unit: Temperature unit, either "celsius" or "fahrenheit".
    """
    return f"The weather in {city} is 22°{unit[0].upper()}"


async def test_user_confirmation(capsys: pytest.CaptureFixture[str]) -> None:
    weather_call = ScriptedToolCall("get_weather", {"city": "Paris"})
    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=scripted(ScriptedResponse(tool_calls=[weather_call]), "It is 22°C in Paris."),
        toolkit=Toolkit(tools=[FunctionTool(get_weather)]),
    )
    msg = UserMsg(name="user", content="Weather in Paris?")

    async for event in agent.reply_stream(msg):
        if isinstance(event, RequireUserConfirmEvent):
            for tc in event.tool_calls:
                print(f"Tool: {tc.name}, Input: {tc.input}")
                print(f"Suggested rules: {tc.suggested_rules}")

    assert isinstance(event, RequireUserConfirmEvent)
    printed = capsys.readouterr().out
    assert 'Tool: get_weather, Input: {"city": "Paris"}' in printed
    assert "tool_name='get_weather'" in printed

    confirm_results = []
    for tc in event.tool_calls:
        confirm_results.append(  # noqa: PERF401 (the spec's loop)
            ConfirmResult(
                confirmed=True,  # or False to deny
                tool_call=tc,  # pass back (optionally modified)
                rules=tc.suggested_rules,  # accept rules for future auto-allow
            )
        )

    confirm_event = UserConfirmResultEvent(
        reply_id=event.reply_id,
        confirm_results=confirm_results,
    )
    result = await agent.reply(confirm_event)

    assert result.get_text_content() == "It is 22°C in Paris."
    (tool_result,) = result.get_content_blocks("tool_result")
    assert tool_result.output_text() == "The weather in Paris is 22°C"
    # The accepted rule is persisted: the same call is now allowed without asking.
    engine = PermissionEngine(agent.state.permission_context)
    decision = await engine.decide(FunctionTool(get_weather), {"city": "Paris"})
    assert decision.behavior is PermissionBehavior.ALLOW


class HumanApproval(ToolBase):
    name = "HumanApproval"
    description = "Request human approval for a sensitive operation."
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "action": {"type": "string", "description": "The action requiring approval."},
            "reason": {"type": "string", "description": "Why this action needs approval."},
        },
        "required": ["action", "reason"],
    }
    is_concurrency_safe = True
    is_read_only = False
    is_external_tool = True

    async def check_permissions(
        self,
        tool_input: dict,  # type: ignore[type-arg]
        context: PermissionContext,
    ) -> PermissionDecision:
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW,
            message="External tool dispatch is always allowed.",
        )

    # Port: our ToolBase declares `__call__` abstract, so even an external tool defines one.
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("executed outside the agent")


async def run_external_operation(name: str, tool_input: str) -> str:
    return f"approved: {json.loads(tool_input)['action']}"


async def test_external_tool_execution(capsys: pytest.CaptureFixture[str]) -> None:
    approval = ScriptedToolCall("HumanApproval", {"action": "drop table", "reason": "cleanup"})
    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=scripted(ScriptedResponse(tool_calls=[approval]), "Dropped after approval."),
        toolkit=Toolkit(tools=[HumanApproval()]),
    )
    msg = UserMsg(name="user", content="Clean up the old table.")

    async for event in agent.reply_stream(msg):
        if isinstance(event, RequireExternalExecutionEvent):
            for tc in event.tool_calls:
                print(f"Execute externally: {tc.name}({tc.input})")

    assert isinstance(event, RequireExternalExecutionEvent)
    assert capsys.readouterr().out.startswith("Execute externally: HumanApproval({")

    execution_results = []
    for tc in event.tool_calls:
        # Perform the actual operation (API call, human action, etc.)
        output = await run_external_operation(tc.name, tc.input)

        execution_results.append(
            ToolResultBlock(
                id=tc.id,
                name=tc.name,
                output=[TextBlock(text=output)],
                state=ToolResultState.SUCCESS,
            )
        )

    external_event = ExternalExecutionResultEvent(
        reply_id=event.reply_id,
        execution_results=execution_results,
    )
    result = await agent.reply(external_event)

    assert result.get_text_content() == "Dropped after approval."
    (tool_result,) = result.get_content_blocks("tool_result")
    assert tool_result.output_text() == "approved: drop table"


# Model ----------------------------------------------------------------------------------------


def test_retrieve_model_cards(capsys: pytest.CaptureFixture[str]) -> None:
    # Port: OpenAI is our only provider (the spec uses DashScope and Anthropic).
    # Via credential class
    cards = OpenAICredential.list_models()

    # Or directly on the model class
    assert OpenAIChatModel.list_models() == cards

    for card in cards:
        print(f"{card.name}: context={card.context_size}, inputs={card.input_types}")

    model_cls = OpenAICredential.get_chat_model_class()  # -> OpenAIChatModel
    assert model_cls is OpenAIChatModel
    assert model_cls.list_models() == cards
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(cards) > 0
    assert any(line.startswith("gpt-4.1: context=") for line in printed)


# Message & Event ------------------------------------------------------------------------------


def test_create_messages() -> None:
    # User message — text and optional images
    user_msg = UserMsg(name="user", content="What's in this image?")
    assert user_msg.role == "user"
    assert user_msg.content[0] == TextBlock(text="What's in this image?", **ids(user_msg))

    # User message with multimodal content
    user_msg = UserMsg(
        name="user",
        content=[
            TextBlock(text="Describe this image:"),
            DataBlock(source=Base64Source(data="...", media_type="image/png")),
        ],
    )
    assert [block.type for block in user_msg.content] == ["text", "data"]

    # System message — text only
    system_msg = SystemMsg(name="system", content="You are a helpful assistant.")
    assert system_msg.role == "system"

    # Assistant message — all block types allowed
    assistant_msg = AssistantMsg(name="agent", content="Here is the result...")
    assert assistant_msg.get_text_content() == "Here is the result..."

    # Role constraints are enforced at construction.
    with pytest.raises(ValueError, match="cannot contain tool_call"):
        UserMsg(name="user", content=[ToolCallBlock(id="c1", name="Bash", input="{}")])


def ids(msg: Msg) -> dict[str, Any]:
    block = msg.content[0]
    return {"id": block.id, "created_at": block.created_at}


def test_access_content() -> None:
    msg = AssistantMsg(
        name="agent",
        content=[
            TextBlock(text="Listing."),
            ToolCallBlock(id="c1", name="Bash", input='{"command": "ls"}'),
            TextBlock(text="Done."),
        ],
    )

    # Get all text content
    text = msg.get_text_content()

    # Get all tool calls
    tool_calls = msg.get_content_blocks("tool_call")

    # Check if message has tool results
    has_results = msg.has_content_blocks("tool_result")

    assert text == "Listing.\nDone."
    assert [call.name for call in tool_calls] == ["Bash"]
    assert not has_results


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def adding_agent() -> Agent:
    model = scripted(
        ScriptedResponse(text="Adding.", tool_calls=[ScriptedToolCall("add", {"a": 2, "b": 3})]),
        "It is 5.",
    )
    return Agent(
        name="my_agent",
        system_prompt="You add.",
        model=model,
        toolkit=Toolkit(tools=[add]),
        state=AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS)),
    )


async def test_reconstruct_messages_from_events() -> None:
    agent = adding_agent()
    user_msg = UserMsg(name="user", content="2+3?")
    msg = None

    # Accumulate events into the message
    async for event in agent.reply_stream(user_msg):
        if isinstance(event, ReplyStartEvent):
            # Create a new message when the reply starts
            msg = AssistantMsg(name=event.name, content=[], id=event.reply_id)

        else:
            # For all other events, append to the message to reconstruct its state
            assert msg is not None
            msg.append_event(event)

    reply = agent.state.context[-1]
    assert msg is not None
    assert msg.content == reply.content
    assert msg.finished_at == reply.finished_at
    assert msg.get_text_content() == "Adding.\nIt is 5."


async def test_streaming_ui(capsys: pytest.CaptureFixture[str]) -> None:
    agent = adding_agent()
    msg = None

    event: AgentEvent
    async for event in agent.reply_stream(UserMsg("user", "Fix the bug")):
        if isinstance(event, ReplyStartEvent):
            msg = AssistantMsg(name=event.name, content=[], id=event.reply_id)

        elif isinstance(event, TextBlockDeltaEvent):
            print(event.delta, end="", flush=True)

        elif isinstance(event, ToolCallStartEvent):
            print(f"\n[Calling {event.tool_call_name}...]")

        elif isinstance(event, ToolResultEndEvent):
            print(f"[Tool finished: {event.state}]")

        elif isinstance(event, ReplyEndEvent):
            print("\n[Done]")

        # Always accumulate into the message
        if msg is not None:
            msg.append_event(event)

    # msg now contains the complete reply
    assert capsys.readouterr().out == (
        "Adding.\n[Calling add...]\n[Tool finished: success]\nIt is 5.\n[Done]\n"
    )
    assert msg is not None
    assert msg.content == agent.state.context[-1].content


# Tool -----------------------------------------------------------------------------------------


def test_toolkit_with_built_in_tools(tmp_path: Path) -> None:
    # Port: our built-in tools take their working directory.
    toolkit = Toolkit(
        tools=[Bash(tmp_path), Read(tmp_path), Write(tmp_path), Edit(tmp_path)],
    )
    # Only the basic group: no meta tool, no Skill viewer.
    assert [schema.name for schema in toolkit.schemas()] == ["Bash", "Read", "Write", "Edit"]


async def test_bash_with_extra_dangerous_paths(tmp_path: Path) -> None:
    # Port: our Bash takes its working directory.
    bash = Bash(
        tmp_path,
        additional_dangerous_files=[".secrets"],
        additional_dangerous_directories=[".credentials"],
    )
    for command in ("echo x > .secrets", "touch .credentials/key"):
        decision = await bash.check_permissions({"command": command}, PermissionContext())
        assert decision.behavior is PermissionBehavior.ASK, command
        assert decision.bypass_immune, command


async def do_search(query: str) -> str:
    return f"3 results for {query!r}"


class WebSearch(ToolBase):
    name = "WebSearch"
    description = "Search the web for information on a given query."
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "The search query.",
            },
        },
        "required": ["query"],
    }
    is_concurrency_safe = True
    is_read_only = True

    async def check_permissions(
        self,
        tool_input: dict,  # type: ignore[type-arg]
        context: PermissionContext,
    ) -> PermissionDecision:
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW,
            message="Web search is read-only.",
        )

    async def __call__(self, query: str) -> ToolChunk:  # type: ignore[override]
        results = await do_search(query)
        return ToolChunk(content=[TextBlock(text=results)])


async def test_custom_tool() -> None:
    agent = Agent(
        name="my_agent",
        system_prompt="You search.",
        model=scripted(
            ScriptedResponse(tool_calls=[ScriptedToolCall("WebSearch", {"query": "ray"})]),
            "Found it.",
        ),
        toolkit=Toolkit(tools=[WebSearch()]),
    )
    # DEFAULT mode: the tool's own ALLOW runs it without asking.
    reply = await agent.reply(UserMsg(name="user", content="Search ray"))
    (result,) = reply.get_content_blocks("tool_result")
    assert result.state is ToolResultState.SUCCESS
    assert result.output_text() == "3 results for 'ray'"


async def test_wrap_function_as_tool() -> None:
    toolkit = Toolkit(tools=[FunctionTool(get_weather)])

    (schema,) = toolkit.schemas()
    assert schema.name == "get_weather"
    assert schema.description.startswith("Get the current weather for a city.")
    assert schema.parameters["required"] == ["city"]
    assert schema.parameters["properties"]["city"]["description"] == "The city name to look up."
    call = ToolCallBlock(id="c1", name="get_weather", input='{"city": "Paris"}')
    (chunk,) = [chunk async for chunk in toolkit.call(call)]
    assert chunk.content[0] == TextBlock(
        text="The weather in Paris is 22°C", id=chunk.content[0].id, **created(chunk)
    )
    # Wrapped functions default to ASK.
    decision = await PermissionEngine(PermissionContext()).decide(
        FunctionTool(get_weather), {"city": "Paris"}
    )
    assert decision.behavior is PermissionBehavior.ASK


def created(chunk: ToolChunk) -> dict[str, Any]:
    return {"created_at": chunk.content[0].created_at}


def test_mcp_client_with_enabled_tools() -> None:
    client = MCPClient(
        name="search",
        is_stateful=False,
        mcp_config=HttpMCPConfig(url="https://api.search.com/mcp"),
        enable_tools=["web_search", "image_search"],
    )
    toolkit = Toolkit(mcps=[client])
    assert client.config.enable_tools == ["web_search", "image_search"]
    assert toolkit.tools == []  # nothing is contacted before prepare()


@pytest.mark.integration
async def test_register_a_stateful_stdio_mcp_client() -> None:
    # Port: mcp-server-filesystem is an npm package; the pip-installed time server stands in.
    client = MCPClient(
        name="time",
        is_stateful=True,
        mcp_config=StdioMCPConfig(
            command=sys.executable,
            args=["-m", "mcp_server_time", "--local-timezone", "UTC"],
        ),
    )

    await client.connect()

    toolkit = Toolkit(mcps=[client])
    try:
        await toolkit.prepare()
        assert "mcp__time__get_current_time" in [tool.name for tool in toolkit.tools]
        assert all(tool.is_mcp and tool.mcp_name == "time" for tool in toolkit.tools)
    finally:
        await toolkit.aclose()
        assert client.is_connected  # the toolkit closes only what it connected
        await client.close()


async def test_register_skills(tmp_path: Path) -> None:
    skills = make_skills(tmp_path / "skills")

    toolkit = Toolkit(
        skills_or_loaders=[str(skills)],
    )

    loader = LocalSkillLoader(
        directory=skills,
        scan_subdir=True,
    )

    toolkit_with_loader = Toolkit(skills_or_loaders=[loader])

    for kit in (toolkit, toolkit_with_loader):
        await kit.prepare()
        assert [skill.name for skill in kit.skills] == ["review"]
        assert "Skill" in [schema.name for schema in kit.schemas()]


def db_query(sql: str) -> str:
    """Run a read-only query.

    Args:
        sql: The query.
    """
    return f"rows for {sql}"


def db_migrate() -> str:
    """Apply pending migrations."""
    return "migrated"


def deploy(service: str) -> str:
    """Deploy a service.

    Args:
        service: The service name.
    """
    return f"deployed {service}"


def rollback(service: str) -> str:
    """Roll a service back.

    Args:
        service: The service name.
    """
    return f"rolled back {service}"


async def test_define_tool_groups_and_use_the_meta_tool(tmp_path: Path) -> None:
    db_query_tool, db_migrate_tool = FunctionTool(db_query), FunctionTool(db_migrate)
    deploy_tool, rollback_tool = FunctionTool(deploy), FunctionTool(rollback)
    # Port: our built-in tools take their working directory.
    toolkit = Toolkit(
        tools=[Bash(tmp_path), Read(tmp_path), Write(tmp_path), Edit(tmp_path)],
        tool_groups=[
            ToolGroup(
                name="database",
                description="Tools for database operations.",
                instructions="Always wrap mutations in a transaction.",
                tools=[db_query_tool, db_migrate_tool],
            ),
            ToolGroup(
                name="deployment",
                description="Tools for deploying services.",
                instructions="Confirm the target environment before deploying.",
                tools=[deploy_tool, rollback_tool],
            ),
        ],
    )
    state = AgentState()

    def exposed() -> set[str]:
        return {schema.name for schema in toolkit.schemas(state)}

    basic = {"Bash", "Read", "Write", "Edit", "reset_tools"}
    assert exposed() == basic
    meta = toolkit.get("reset_tools")
    assert meta is not None
    assert set(meta.input_schema["properties"]) == {"database", "deployment"}

    call = ToolCallBlock(id="c1", name="reset_tools", input='{"database": true}')
    (chunk,) = [chunk async for chunk in toolkit.call(call, state)]
    assert "Always wrap mutations in a transaction." in chunk.content[0].text  # type: ignore[union-attr]
    assert exposed() == basic | {"db_query", "db_migrate"}

    # The input is the final state: activating deployment alone deactivates database.
    call = ToolCallBlock(id="c2", name="reset_tools", input='{"deployment": true}')
    _ = [chunk async for chunk in toolkit.call(call, state)]
    assert exposed() == basic | {"deploy", "rollback"}


async def test_partition_workspace_resources_into_groups(tmp_path: Path) -> None:
    # Port: the workspace's lists are built by hand (workspaces are not part of agent_core).
    mcps = [
        MCPClient("search_web", False, HttpMCPConfig(url="http://127.0.0.1:9/mcp", timeout=2)),
        MCPClient("files", False, HttpMCPConfig(url="http://127.0.0.1:9/mcp", timeout=2)),
    ]
    skills = [Skill.parse(REVIEW, str(tmp_path / "review"))]

    toolkit = Toolkit(
        tools=[Read(tmp_path)],  # always active (basic group)
        tool_groups=[
            ToolGroup(
                name="search",
                description="Web search and retrieval.",
                mcps=[m for m in mcps if m.name.startswith("search")],
            ),
            ToolGroup(name="coding", description="Code editing skills.", skills_or_loaders=skills),
        ],
    )

    state = AgentState()
    await toolkit.prepare()
    assert list(toolkit.mcp_errors) == ["search_web"]  # nothing listens on that port
    assert toolkit.skills_prompt(state) == ""
    state.tool_context.activated_groups = ["coding"]
    assert "- review: Review a pull request." in toolkit.skills_prompt(state)


# Middleware -----------------------------------------------------------------------------------


class FullObservabilityMiddleware(MiddlewareBase):
    """Observe every middleware position at once, plus contribute a tool."""

    async def on_reply(  # type: ignore[override]
        self,
        agent: Agent,
        # {"inputs": Msg | list[Msg] | UserConfirmResultEvent | ExternalExecutionResultEvent | None}
        input_kwargs: dict,  # type: ignore[type-arg]
        next_handler: Callable[..., AsyncGenerator[AgentEvent | Msg, None]],
    ) -> AsyncGenerator[AgentEvent | Msg, None]:
        print(f"[reply] start for {agent.name}")
        async for item in next_handler(**input_kwargs):
            yield item
        print(f"[reply] end for {agent.name}")

    async def on_reasoning(  # type: ignore[override]
        self,
        agent: Agent,
        # {"tool_choice": ToolChoice | None}
        input_kwargs: dict,  # type: ignore[type-arg]
        next_handler: Callable[..., AsyncGenerator[AgentEvent, None]],
    ) -> AsyncGenerator[AgentEvent, None]:
        print("[reasoning] start")
        async for event in next_handler(**input_kwargs):
            yield event
        print("[reasoning] end")

    async def on_model_call(
        self,
        agent: Agent,
        # {"messages": list[Msg], "tools": list[dict], "tool_choice": ToolChoice | None,
        #  "current_model": ChatModelBase}
        input_kwargs: dict,  # type: ignore[type-arg]
        next_handler: Callable[..., Awaitable[Any]],
    ) -> Any:
        print(f"[model_call] {input_kwargs['current_model'].model}")
        result = await next_handler(**input_kwargs)
        print("[model_call] done")
        return result

    async def on_compress_context(
        self,
        agent: Agent,
        # {"context_config": ContextConfig | None}
        input_kwargs: dict,  # type: ignore[type-arg]
        next_handler: Callable[..., Awaitable[None]],
    ) -> None:
        print(f"[compress_context] checking context for {agent.name}")
        await next_handler(**input_kwargs)
        print("[compress_context] done")

    async def on_system_prompt(
        self,
        agent: Agent,
        current_prompt: str,
    ) -> str:
        print(f"[system_prompt] length={len(current_prompt)}")
        return current_prompt

    async def list_tools(self) -> list[ToolBase]:
        # Optional hook. Not invoked automatically by ``Agent.__init__``;
        # if you want these tools available to the agent, collect them
        # from your middlewares yourself and pass them into the toolkit.
        return []


async def test_full_observability_middleware(capsys: pytest.CaptureFixture[str]) -> None:
    agent = Agent(
        name="assistant",
        system_prompt="You are a helpful assistant.",
        model=scripted("Hi."),
        middlewares=[FullObservabilityMiddleware()],
    )
    await agent.reply(UserMsg(name="user", content="Hello"))
    assert capsys.readouterr().out.splitlines() == [
        "[reply] start for assistant",
        "[compress_context] checking context for assistant",
        "[system_prompt] length=28",
        "[compress_context] done",
        "[reasoning] start",
        "[system_prompt] length=28",
        "[model_call] scripted",
        "[model_call] done",
        "[reasoning] end",
        "[reply] end for assistant",
    ]


class TimingMiddleware(MiddlewareBase):
    async def on_model_call(self, agent, input_kwargs, next_handler):  # type: ignore[no-untyped-def]
        model_name = input_kwargs["current_model"].model
        start = time.time()

        result = await next_handler()

        elapsed = time.time() - start
        print(f"[timing] {agent.name} → {model_name}: {elapsed:.2f}s")
        return result


class RateLimitMiddleware(MiddlewareBase):
    def __init__(self, min_interval: float = 1.0):
        self._last_call = 0.0
        self._min_interval = min_interval

    async def on_model_call(self, agent, input_kwargs, next_handler):  # type: ignore[no-untyped-def]
        now = time.time()
        wait = self._min_interval - (now - self._last_call)
        if wait > 0:
            await asyncio.sleep(wait)
        self._last_call = time.time()
        return await next_handler()


async def test_timing_and_rate_limiting_middlewares(capsys: pytest.CaptureFixture[str]) -> None:
    agent = Agent(
        name="assistant",
        system_prompt="You add.",
        model=adding_agent().model,
        toolkit=Toolkit(tools=[add]),
        state=AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS)),
        middlewares=[TimingMiddleware(), RateLimitMiddleware(min_interval=0.2)],
    )
    started = time.monotonic()
    await agent.reply(UserMsg(name="user", content="2+3?"))
    # Two model calls, the second one held back until the interval passed.
    assert time.monotonic() - started >= 0.2
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert all(line.startswith("[timing] assistant → scripted: ") for line in lines)


class DynamicContextMiddleware(MiddlewareBase):
    def __init__(self, context_fn):  # type: ignore[no-untyped-def]
        self._context_fn = context_fn

    async def on_system_prompt(self, agent, current_prompt):  # type: ignore[no-untyped-def]
        context = self._context_fn()
        return f"{current_prompt}\n\n## Current Context\n{context}"


async def test_dynamic_system_prompt_middleware() -> None:
    model = scripted("Noted.")
    agent = Agent(
        name="assistant",
        system_prompt="You are a helpful assistant.",
        model=model,
        middlewares=[
            DynamicContextMiddleware(  # type: ignore[no-untyped-call]
                # Port: an aware datetime (the house lint forbids naive ones).
                lambda: f"Time: {datetime.now(UTC).isoformat()}"
            ),
        ],
    )
    await agent.reply(UserMsg(name="user", content="Hello"))
    system = model.calls[0][0].get_text_content()
    assert system is not None
    assert system.startswith("You are a helpful assistant.\n\n## Current Context\nTime: ")


class ModelFallbackMiddleware(MiddlewareBase):
    def __init__(self, fallback_model):  # type: ignore[no-untyped-def]
        self._fallback = fallback_model

    async def on_model_call(self, agent, input_kwargs, next_handler):  # type: ignore[no-untyped-def]
        try:
            return await next_handler()
        except Exception as e:
            print(f"Primary model failed: {e}, switching to fallback")
            return await next_handler(
                current_model=self._fallback,
            )


async def test_model_fallback_middleware(capsys: pytest.CaptureFixture[str]) -> None:
    primary = scripted(ScriptedResponse(error=ModelConnectionError("primary is down")))
    fallback: ChatModelBase = ScriptedChatModel(["From the fallback."], model="backup")
    agent = Agent(
        name="assistant",
        system_prompt="You are a helpful assistant.",
        model=primary,
        middlewares=[ModelFallbackMiddleware(fallback)],  # type: ignore[no-untyped-call]
    )
    reply = await agent.reply(UserMsg(name="user", content="Hello"))
    assert reply.get_text_content() == "From the fallback."
    out = capsys.readouterr().out
    assert out == "Primary model failed: primary is down, switching to fallback\n"


# Permission -----------------------------------------------------------------------------------


async def test_permission_mode_at_initialization_and_at_runtime(tmp_path: Path) -> None:
    agent = Agent(
        name="my_agent",
        system_prompt="...",
        model=scripted(),
        state=AgentState(
            permission_context=PermissionContext(
                mode=PermissionMode.DEFAULT,
            )
        ),
    )
    write = Write(tmp_path)
    engine = PermissionEngine(agent.state.permission_context)
    target = {"file_path": str(tmp_path / "a.txt"), "content": "x"}
    assert (await engine.decide(write, target)).behavior is PermissionBehavior.ASK

    # Switch to read-only mode on the fly
    agent.state.permission_context.mode = PermissionMode.EXPLORE
    assert (await engine.decide(write, target)).behavior is PermissionBehavior.DENY

    # Switch to unattended mode for batch execution
    agent.state.permission_context.mode = PermissionMode.DONT_ASK
    assert (await engine.decide(write, target)).behavior is PermissionBehavior.DENY


async def test_accept_edits_with_working_directories(tmp_path: Path) -> None:
    project = str(tmp_path / "project")
    agent = Agent(
        name="my_agent",
        system_prompt="...",
        model=scripted(),
        state=AgentState(
            permission_context=PermissionContext(
                mode=PermissionMode.ACCEPT_EDITS,
                working_directories={
                    project: AdditionalWorkingDirectory(
                        path=project,
                        source="userSettings",
                    )
                },
            )
        ),
    )
    engine = PermissionEngine(agent.state.permission_context)
    write = Write(tmp_path)
    inside = {"file_path": f"{project}/main.py", "content": "x"}
    outside = {"file_path": str(tmp_path / "elsewhere.py"), "content": "x"}
    assert (await engine.decide(write, inside)).behavior is PermissionBehavior.ALLOW
    assert (await engine.decide(write, outside)).behavior is PermissionBehavior.ASK


async def test_configuring_rules(tmp_path: Path) -> None:
    agent = Agent(
        name="my_agent",
        system_prompt="...",
        model=scripted(),
        state=AgentState(
            permission_context=PermissionContext(
                mode=PermissionMode.DEFAULT,
                allow_rules={
                    "Bash": [
                        PermissionRule(
                            tool_name="Bash",
                            rule_content="npm run:*",
                            behavior=PermissionBehavior.ALLOW,
                            source="userSettings",
                        )
                    ],
                    "Write": [
                        PermissionRule(
                            tool_name="Write",
                            rule_content="src/**",
                            behavior=PermissionBehavior.ALLOW,
                            source="userSettings",
                        )
                    ],
                },
                deny_rules={
                    "Bash": [
                        PermissionRule(
                            tool_name="Bash",
                            rule_content="rm:*",
                            behavior=PermissionBehavior.DENY,
                            source="userSettings",
                        )
                    ],
                },
            )
        ),
    )
    engine = PermissionEngine(agent.state.permission_context)
    bash = Bash(tmp_path)

    async def verdict(tool: ToolBase, tool_input: dict[str, Any]) -> PermissionBehavior:
        return (await engine.decide(tool, tool_input)).behavior

    assert await verdict(bash, {"command": "npm run build"}) is PermissionBehavior.ALLOW
    assert await verdict(bash, {"command": "npm install"}) is PermissionBehavior.ASK
    assert await verdict(bash, {"command": "rm file.txt"}) is PermissionBehavior.DENY
    write = Write(tmp_path)
    in_src = {"file_path": "src/app.py", "content": "x"}
    assert await verdict(write, in_src) is PermissionBehavior.ALLOW


class MyTool(ToolBase):
    name = "MyTool"
    # Port: our ToolBase needs a description, an input schema and a `__call__`.
    description = "Operate on a resource."
    input_schema = {"type": "object", "properties": {}}  # noqa: RUF012
    # Static default. For tools whose answer depends on input, leave
    # this as the conservative default and override check_read_only().
    is_read_only = False

    async def check_read_only(self, tool_input: dict) -> bool:  # type: ignore[type-arg]
        """Optional: dynamic read-only check.

        Defaults to returning self.is_read_only. Override when whether
        an invocation modifies state depends on the input. The engine
        calls this to decide auto-allow in EXPLORE and ACCEPT_EDITS.
        """
        return tool_input.get("operation") in {"list", "describe", "get"}

    async def check_permissions(
        self,
        tool_input: dict,  # type: ignore[type-arg]
        context: PermissionContext,
    ) -> PermissionDecision:
        target = tool_input.get("target")

        # Custom safety check: block operations on production resources.
        # Setting bypass_immune=True makes this ASK survive allow rules
        # in DEFAULT/ACCEPT_EDITS/DONT_ASK; BYPASS still skips it.
        if target and target.startswith("prod-"):
            return PermissionDecision(
                behavior=PermissionBehavior.ASK,
                message=f"Operation targets production resource: {target}",
                # Port: our decision calls the spec's `decision_reason` `reason`.
                reason="Safety check: production resource",
                bypass_immune=True,
            )

        # Return PASSTHROUGH to let the engine continue with rules/mode
        return PermissionDecision(behavior=PermissionBehavior.PASSTHROUGH)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@pytest.mark.parametrize(
    ("mode", "tool_input", "expected"),
    [
        (PermissionMode.DEFAULT, {"target": "staging-db"}, PermissionBehavior.ALLOW),
        (PermissionMode.DEFAULT, {"target": "prod-db"}, PermissionBehavior.ASK),
        (PermissionMode.ACCEPT_EDITS, {"target": "prod-db"}, PermissionBehavior.ASK),
        (PermissionMode.DONT_ASK, {"target": "prod-db"}, PermissionBehavior.DENY),
        (PermissionMode.BYPASS, {"target": "prod-db"}, PermissionBehavior.ALLOW),
        (PermissionMode.EXPLORE, {"operation": "list"}, PermissionBehavior.ALLOW),
        (PermissionMode.EXPLORE, {"operation": "delete"}, PermissionBehavior.DENY),
    ],
)
async def test_custom_tool_safety_check(
    mode: PermissionMode, tool_input: dict[str, str], expected: PermissionBehavior
) -> None:
    # A blanket allow rule (the spec's `allow_rules["DeployTool"] = ["*"]`) cannot authorize prod.
    blanket = PermissionRule(tool_name="MyTool", behavior=PermissionBehavior.ALLOW)
    context = PermissionContext(mode=mode, allow_rules={"MyTool": [blanket]})
    decision = await PermissionEngine(context).decide(MyTool(), tool_input)
    assert decision.behavior is expected


async def test_unattended_and_bypass_recipes(tmp_path: Path) -> None:
    bash = Bash(tmp_path)
    ci_agent = Agent(
        name="ci_agent",
        system_prompt="...",
        model=scripted(),
        state=AgentState(
            permission_context=PermissionContext(
                mode=PermissionMode.DONT_ASK,
                allow_rules={
                    "Bash": [
                        PermissionRule(
                            tool_name="Bash",
                            rule_content="npm run:*",
                            behavior=PermissionBehavior.ALLOW,
                            source="project",
                        ),
                        PermissionRule(
                            tool_name="Bash",
                            rule_content="git commit:*",
                            behavior=PermissionBehavior.ALLOW,
                            source="project",
                        ),
                    ],
                },
            )
        ),
    )
    # Only explicitly allowed commands run; everything else (including
    # safety ASKs like `rm -rf /` or writes to ~/.bashrc) is converted
    # to DENY.
    ci = PermissionEngine(ci_agent.state.permission_context)
    assert (await ci.decide(bash, {"command": "npm run test"})).behavior is PermissionBehavior.ALLOW
    assert (await ci.decide(bash, {"command": "rm -rf /"})).behavior is PermissionBehavior.DENY

    agent = Agent(
        name="my_agent",
        system_prompt="...",
        model=scripted(),
        state=AgentState(
            permission_context=PermissionContext(
                mode=PermissionMode.BYPASS,
                deny_rules={
                    "Bash": [
                        PermissionRule(
                            tool_name="Bash",
                            rule_content="rm:*",
                            behavior=PermissionBehavior.DENY,
                            source="userSettings",
                        ),
                        PermissionRule(
                            tool_name="Bash",
                            rule_content="git push:*",
                            behavior=PermissionBehavior.DENY,
                            source="userSettings",
                        ),
                    ],
                    "Write": [
                        PermissionRule(
                            tool_name="Write",
                            rule_content="**/.bashrc",
                            behavior=PermissionBehavior.DENY,
                            source="userSettings",
                        ),
                        PermissionRule(
                            tool_name="Write",
                            rule_content="**/.ssh/**",
                            behavior=PermissionBehavior.DENY,
                            source="userSettings",
                        ),
                    ],
                },
            )
        ),
    )
    # Everything allowed except the deny-listed commands and paths.
    bypass = PermissionEngine(agent.state.permission_context)
    write = Write(tmp_path)
    bashrc = {"file_path": str(tmp_path / "home" / ".bashrc"), "content": "x"}
    assert (await bypass.decide(bash, {"command": "make all"})).behavior is PermissionBehavior.ALLOW
    assert (await bypass.decide(bash, {"command": "git push"})).behavior is PermissionBehavior.DENY
    assert (await bypass.decide(write, bashrc)).behavior is PermissionBehavior.DENY


# Context --------------------------------------------------------------------------------------


class S3Offloader:
    def __init__(self, bucket: str, prefix: str) -> None:
        self.bucket = bucket
        self.prefix = prefix
        # Port: an in-memory stand-in for the bucket the spec's `_upload` writes to.
        self.objects: dict[str, str] = {}

    async def _upload(self, bucket: str, key: str, content: str) -> None:
        self.objects[f"{bucket}/{key}"] = content

    async def offload_context(
        self,
        session_id: str,
        msgs: list[Msg],
        **kwargs: Any,
    ) -> str:
        key = f"{self.prefix}/sessions/{session_id}/context.jsonl"
        content = "\n".join(m.model_dump_json() for m in msgs)
        await self._upload(self.bucket, key, content)
        return f"s3://{self.bucket}/{key}"

    async def offload_tool_result(
        self,
        session_id: str,
        tool_result: ToolResultBlock,
        **kwargs: Any,
    ) -> str:
        key = f"{self.prefix}/sessions/{session_id}/tool_result-{tool_result.id}.txt"
        # Extract text content from the tool result blocks and upload.
        await self._upload(self.bucket, key, tool_result.output_text())
        return f"s3://{self.bucket}/{key}"


def long_output() -> str:
    """Print a long report."""
    return "line of output\n" * 2000


async def test_custom_offloader_receives_truncated_tool_results() -> None:
    offloader = S3Offloader(bucket="agents", prefix="troupe")
    agent = Agent(
        name="my_agent",
        system_prompt="...",
        model=scripted(
            ScriptedResponse(tool_calls=[ScriptedToolCall("long_output", {})]), "Summarized."
        ),
        toolkit=Toolkit(tools=[long_output]),
        offloader=offloader,
        context_config=ContextConfig(tool_result_limit=100),
        state=AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS)),
    )
    reply = await agent.reply(UserMsg(name="user", content="Report."))

    (result,) = reply.get_content_blocks("tool_result")
    (key,) = offloader.objects
    assert offloader.objects[key] == long_output()
    assert "<<<TRUNCATED>>>" in result.output_text()
    assert f"s3://{key}" in result.output_text()
