"""The spec's workspace examples (building-blocks.md, "Workspace" and "Offload Context"), run.

As in `test_spec_examples.py`, each example keeps the spec's code with `agentscope.` renamed:
`agentscope.workspace` and `agentscope.app._manager` / `agentscope.app.workspace_manager` are
Troupe's `workspaces`. A `# Port:` comment marks each change an example needed; the usual one
moves the spec's absolute directories (`/data/...`) under the test's temporary directory.
Provider models become `ScriptedChatModel`, and `asyncio.run(main())` becomes `await main()`.

Spec text the tests rely on:

    {workdir}/
    ├── .mcp           # registered MCP client configs (JSON array)
    ├── data/          # offloaded multimodal payloads (deduped by SHA-256)
    ├── skills/        # skill subdirectories, each with SKILL.md
    │   └── .skills    # name/hash index for de-duplication
    └── sessions/      # per-session context.jsonl and tool-result files

    default_mcps and skill_paths are seed-time inputs — they populate a brand-new workspace on
    first initialize(). On restart the workspace restores its MCP list from the persisted .mcp
    file, so re-passing the seeds is a no-op.

    The gateway exposes a small REST surface — GET /health, GET/POST/DELETE /mcps,
    GET /mcps/{name}/tools, POST /mcps/{name}/tools/{tool} — protected by a per-workspace
    bearer token minted at each initialize().

Elsewhere: the Agent Service examples run in `tests/integration/test_spec_examples_service.py`.

Run elsewhere: `DockerWorkspace(base_image=..., node_version=..., extra_pip=...)` in
`tests/unit/workspaces/test_docker_image.py` (its Dockerfile) and
`tests/integration/docker/test_docker_base_image.py` (a derived image built offline);
`E2BWorkspace(...)` in `tests/integration/e2b/test_e2b_spec_example.py` (the local E2B server).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from agent_core.agent import Agent, ContextConfig
from agent_core.mcp import MCPClient, MCPTool
from agent_core.message import ToolCallBlock, UserMsg
from agent_core.state import AgentState
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall
from agent_core.tool import ToolBase, ToolGroup, Toolkit
from tests.support.mcp_servers import collect, text_of
from tests.support.tool_calls import eventually
from tests.unit.workspaces._helpers import demo_mcp, write_skill
from workspaces import LocalWorkspace, LocalWorkspaceManager, WorkspaceBase, WorkspaceManagerBase
from workspaces.gateway import GatewayConnection, GatewayMCPClient, GatewayMCPTool

REPO = Path(__file__).resolve().parents[3]
BUILT_INS = {"Bash", "Edit", "Glob", "Grep", "Read", "Write"}


# Message (agent-zh.md) ------------------------------------------------------------------------


def test_get_text_is_get_text_content() -> None:
    # agent-zh.md prints `result.get_text()` where the English page prints get_text_content().
    msg = UserMsg(name="user", content="当前目录有哪些文件？")  # noqa: RUF001
    assert msg.get_text() == msg.get_text_content() == "当前目录有哪些文件？"  # noqa: RUF001
    assert msg.get_text(separator=" ") == msg.get_text_content(separator=" ")


# Create a Workspace ---------------------------------------------------------------------------


async def test_create_a_local_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_skill(tmp_path / "skills" / "web-search", "web-search", "Search the web.")
    workdir = tmp_path / "data" / "my-workspace"  # Port: "/data/my-workspace"

    workspace = LocalWorkspace(
        workdir=workdir,
        default_mcps=[],
        skill_paths=["./skills/web-search"],
    )
    await workspace.initialize()

    assert json.loads((workdir / ".mcp").read_text()) == []
    assert (workdir / "data").is_dir()
    assert (workdir / "sessions").is_dir()
    assert (workdir / "skills" / "web-search" / "SKILL.md").is_file()
    assert "web-search" in (workdir / "skills" / ".skills").read_text()
    assert [skill.name for skill in await workspace.list_skills()] == ["web-search"]
    await workspace.remove_skill("web-search")
    await workspace.close()

    # Restarts re-open the same directory; re-passing the seeds is a no-op.
    async with LocalWorkspace(
        workdir=workdir, default_mcps=[demo_mcp()], skill_paths=["./skills/web-search"]
    ) as reopened:
        assert await reopened.list_skills() == []
        assert await reopened.list_mcps() == []


async def test_the_four_roles_of_the_workspace_interface(tmp_path: Path) -> None:
    source = write_skill(tmp_path / "pdf", "pdf", "Extract text from PDFs.")
    # Provision, release and the `async with` protocol.
    async with LocalWorkspace(tmp_path / "ws") as workspace:
        assert isinstance(workspace, WorkspaceBase)
        # Register MCP servers and skills at runtime, persisted to `.mcp` and `skills/`.
        client = await workspace.add_mcp(demo_mcp())
        await workspace.add_skill(source)
        # Enumerate tools, MCP clients, skills and the system prompt fragment.
        assert {tool.name for tool in await workspace.list_tools()} == BUILT_INS
        assert await workspace.list_mcps() == [client]
        assert [skill.name for skill in await workspace.list_skills()] == ["pdf"]
        fragment = await workspace.system_prompt_fragment()
        assert "- demo: " in fragment
        assert "pdf" in fragment
        # Offload into `sessions/<id>/` and return a reference path.
        path = await workspace.offload_context("s-1", [UserMsg("user", "old turn")])
        assert Path(path) == workspace.workdir / "sessions" / "s-1" / "context.jsonl"
        # Clear per-session state for pool reuse.
        await workspace.clear_session("s-1")
        assert not await asyncio.to_thread(Path(path).exists)
        await workspace.remove_mcp("demo")
        await workspace.remove_skill("pdf")
    assert json.loads((tmp_path / "ws" / ".mcp").read_text()) == []


# Integrate with Agent -------------------------------------------------------------------------


def summary_call() -> ScriptedResponse:
    summary = {
        "task_overview": "Reading a long file.",
        "current_state": "Read it.",
        "important_discoveries": "",
        "next_steps": "",
        "context_to_preserve": "",
    }
    return ScriptedResponse(tool_calls=[ScriptedToolCall("generate_summary", summary)])


async def test_integrate_with_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    model = ScriptedChatModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("Bash", {"command": "cat big.txt"})]),
            "The file repeats one line.",
            summary_call(),
        ],
        context_size=6_000,
    )

    workspace = LocalWorkspace(workdir="./my-workspace")
    await workspace.initialize()
    # Port: what the workspace holds before the agent is built (a spec reader's earlier
    # `add_mcp` / `add_skill`), so that every axis of the wiring carries something.
    await workspace.add_mcp(demo_mcp())
    await workspace.add_skill(write_skill(tmp_path / "src" / "review", "review", "Review code."))
    (tmp_path / "my-workspace" / "big.txt").write_text("a line of the big file\n" * 600)

    agent = Agent(
        name="coder",
        system_prompt="You are a coding assistant.",
        model=model,
        toolkit=Toolkit(
            tools=await workspace.list_tools(),
            mcps=await workspace.list_mcps(),
            skills_or_loaders=await workspace.list_skills(),
        ),
        offloader=workspace,
        # Port: a small limit, so that a test-sized file overflows it.
        context_config=ContextConfig(tool_result_limit=1000),
    )

    await agent.toolkit.prepare()
    names = [schema.name for schema in agent.toolkit.schemas()]
    assert BUILT_INS | {"Skill", "mcp__demo__echo", "mcp__demo__add"} <= set(names)
    assert len(names) == len(set(names))  # each tool once: built-ins, MCP tools, the viewer
    assert agent.toolkit.mcp_errors == {}
    assert "- review: Review code." in agent.toolkit.skills_prompt()

    # Offloading: an oversized tool result goes to the workspace, a path stays in context.
    reply = await agent.reply(UserMsg("user", "What is in big.txt?"))
    assert reply.get_text_content() == "The file repeats one line."
    (result,) = [
        block for msg in agent.state.context for block in msg.get_content_blocks("tool_result")
    ]
    (saved,) = (tmp_path / "my-workspace" / "sessions").glob("*/tool_result-*.txt")
    assert f"You can refer to the file in '{saved}'" in result.output_text()
    assert saved.read_text().count("a line of the big file") == 600

    # Compression: the older messages are appended to the session's context.jsonl.
    await agent.compress_context(ContextConfig(trigger_ratio=0.3, reserve_ratio=0.05))
    assert "Read it." in str(agent.state.summary)
    (context_file,) = (tmp_path / "my-workspace" / "sessions").glob("*/context.jsonl")
    assert "What is in big.txt?" in context_file.read_text()
    await workspace.close()


async def test_partition_workspace_resources_into_tool_groups(tmp_path: Path) -> None:
    workspace = LocalWorkspace(workdir=tmp_path / "ws")
    await workspace.initialize()
    # Port: a workspace holding a search MCP server, another server and a skill.
    await workspace.add_mcp(demo_mcp("search_web"))
    await workspace.add_mcp(demo_mcp("files"))
    await workspace.add_skill(write_skill(tmp_path / "src" / "refactor", "refactor", "Refactor."))

    mcps = await workspace.list_mcps()
    skills = await workspace.list_skills()

    toolkit = Toolkit(
        tools=await workspace.list_tools(),  # always active (basic group)
        tool_groups=[
            ToolGroup(
                name="search",
                description="Web search and retrieval.",
                mcps=[m for m in mcps if m.name.startswith("search")],
            ),
            ToolGroup(name="coding", description="Code editing skills.", skills_or_loaders=skills),
        ],
    )

    await toolkit.prepare()
    state = AgentState()

    def exposed() -> set[str]:
        return {schema.name for schema in toolkit.schemas(state)}

    def mcp_tools() -> set[str]:
        return {name for name in exposed() if name.startswith("mcp__")}

    assert BUILT_INS | {"reset_tools"} <= exposed()
    assert mcp_tools() == set()
    assert toolkit.skills_prompt(state) == ""
    call = ToolCallBlock(id="c1", name="reset_tools", input='{"search": true}')
    _ = [chunk async for chunk in toolkit.call(call, state)]
    assert "mcp__search_web__echo" in mcp_tools()
    assert not any(name.startswith("mcp__files__") for name in mcp_tools())
    call = ToolCallBlock(id="c2", name="reset_tools", input='{"coding": true}')
    _ = [chunk async for chunk in toolkit.call(call, state)]
    assert mcp_tools() == set()
    assert "- refactor: Refactor." in toolkit.skills_prompt(state)
    await workspace.close()


# Workspace Manager ----------------------------------------------------------------------------


async def test_local_workspace_manager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_skill(tmp_path / "skills" / "coding", "coding", "Write code.")

    manager = LocalWorkspaceManager(
        basedir=tmp_path / "data" / "workspaces",  # Port: "/data/workspaces"
        skill_paths=["./skills/coding"],
        ttl=3600.0,
    )

    ws = await manager.create_workspace(
        user_id="user-1",
        agent_id="agent-42",
        session_id="session-abc",
    )

    # Later, on a follow-up request for the same workspace:
    ws = await manager.get_workspace(
        user_id="user-1",
        agent_id="agent-42",
        session_id="session-abc",
        workspace_id=ws.workspace_id,
    )

    assert ws.workspace_id == "agent-42"  # isolated per agent
    # Troupe is stricter than the spec's `<basedir>/<agent_id>`: one user's agent ids never
    # reach another user's files.
    assert isinstance(ws, LocalWorkspace)
    assert ws.host_workdir == tmp_path / "data" / "workspaces" / "user-1" / "agent-42"
    assert [skill.name for skill in await ws.list_skills()] == ["coding"]
    other_session = await manager.get_workspace("user-1", "agent-42", "session-def")
    assert other_session is ws  # sessions of the same agent share one workspace
    other_agent = await manager.create_workspace("user-1", "agent-7", "session-abc")
    assert other_agent is not ws

    # close(workspace_id) evicts a single entry; close_all() drains the cache.
    await manager.close(manager.key("user-1", "agent-42", "session-abc"))
    assert not ws.is_open
    await manager.close_all()
    assert not other_agent.is_open


class PerSessionWorkspaceManager(WorkspaceManagerBase):
    # Port: the spec leaves the bodies as `...`; these key one LocalWorkspace per session.
    def __init__(self, basedir: Path) -> None:
        self.basedir = basedir
        self.cache: dict[str, LocalWorkspace] = {}

    async def get_workspace(  # type: ignore[override]
        self,
        user_id: str,
        agent_id: str,
        session_id: str,
        workspace_id: str,
    ) -> WorkspaceBase:
        # Resolve an initialized workspace; key by session_id for per-session isolation.
        workspace = self.cache.get(workspace_id)
        if workspace is None:
            workspace = LocalWorkspace(self.basedir / user_id / session_id, session_id)
            await workspace.initialize()
            self.cache[workspace.workspace_id] = workspace
        return workspace

    async def create_workspace(
        self,
        user_id: str,
        agent_id: str,
        session_id: str,
    ) -> WorkspaceBase:
        # Allocate a fresh workspace and register it in the cache.
        return await self.get_workspace(user_id, agent_id, session_id, session_id)

    async def close(self, workspace_id: str) -> None:  # type: ignore[override]
        # Close and evict a single workspace.
        workspace = self.cache.pop(workspace_id, None)
        if workspace is not None:
            await workspace.close()

    async def close_all(self) -> None:
        # Close every cached workspace; called on app shutdown.
        for workspace_id in list(self.cache):
            await self.close(workspace_id)


async def test_a_per_session_workspace_manager(tmp_path: Path) -> None:
    async with PerSessionWorkspaceManager(tmp_path) as manager:
        first = await manager.create_workspace("user-1", "agent-42", "session-abc")
        second = await manager.create_workspace("user-1", "agent-42", "session-def")
        assert first is not second
        again = await manager.get_workspace("user-1", "agent-42", "session-abc", "session-abc")
        assert again is first
        # What Troupe's runtime asks of any manager: a leased workspace for a request.
        async with manager.lease("user-1", "agent-42", "session-abc", "session-abc") as leased:
            assert leased is first
        await manager.close("session-def")
        assert not second.is_open  # type: ignore[attr-defined]
    assert not first.is_open  # type: ignore[attr-defined]


# MCP Gateway ----------------------------------------------------------------------------------

TOKEN = "minted-at-initialize"


@pytest_asyncio.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[Path]:
    """The gateway app as a workspace runs it, on a unix socket; yields the socket."""
    socket = tmp_path / "gateway.sock"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "workspaces.gateway.app",
        "--socket",
        str(socket),
        stdin=asyncio.subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    assert process.stdin is not None
    process.stdin.write(TOKEN.encode() + b"\n")
    connection = GatewayConnection(socket, TOKEN)
    try:
        assert await eventually(connection.health, within=60)
        yield socket
    finally:
        await connection.aclose()
        process.stdin.close()  # the gateway exits when its stdin ends
        async with asyncio.timeout(30):
            await process.wait()


def http(socket: Path, token: str | None) -> httpx.AsyncClient:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    transport = httpx.AsyncHTTPTransport(uds=str(socket))
    return httpx.AsyncClient(transport=transport, base_url="http://gw", headers=headers)


@pytest.mark.integration
async def test_the_gateway_rest_surface(gateway: Path) -> None:
    config: dict[str, Any] = demo_mcp().model_dump(mode="json")
    async with http(gateway, None) as anonymous, http(gateway, TOKEN) as client:
        assert (await anonymous.get("/health")).status_code == 200
        assert (await anonymous.get("/mcps")).status_code == 401
        assert (await http(gateway, "wrong").get("/mcps")).status_code == 401

        assert (await client.post("/mcps", json=config)).status_code == 201
        assert [m["config"]["name"] for m in (await client.get("/mcps")).json()] == ["demo"]
        tools = (await client.get("/mcps/demo/tools")).json()
        assert {"echo", "add"} <= {tool["name"] for tool in tools}
        called = await client.post("/mcps/demo/tools/add", json={"arguments": {"a": 2, "b": 3}})
        assert called.status_code == 200
        assert '"5"' in called.text or "5" in called.text
        assert (await client.delete("/mcps/demo")).status_code == 204
        assert (await client.get("/mcps")).json() == []


@pytest.mark.integration
async def test_the_host_side_adapters_keep_the_standard_interfaces(gateway: Path) -> None:
    connection = GatewayConnection(gateway, TOKEN)
    client = GatewayMCPClient(demo_mcp(), connection)
    assert isinstance(client, MCPClient)
    await client.connect()
    try:
        tools = {tool.mcp_tool.name: tool for tool in await client.list_tools()}
        assert isinstance(tools["add"], GatewayMCPTool)
        assert isinstance(tools["add"], MCPTool)
        assert isinstance(tools["add"], ToolBase)
        assert tools["add"].name == "mcp__demo__add"
        (chunk,) = await collect(tools["add"](a=2, b=3))
        assert text_of(chunk) == "5"
        async with Toolkit(mcps=[client]) as toolkit:
            assert "mcp__demo__add" in {schema.name for schema in toolkit.schemas()}
    finally:
        await client.close()
        await connection.aclose()
