"""The spec's Agent Service examples (service-and-team.md) and `RedisStorage` examples, run.

Each example keeps the spec's code with `agentscope.app` renamed `serve` (`serve.storage`,
`serve.message_bus`, `serve.workspace_manager`, `serve.deps`) and `agentscope.` renamed
`agent_core.`. A `# Port:` comment marks each change an example needed; the recurring ones:
Redis is the test's embedded server (its host and port), `uvicorn.run(app, ...)` becomes
`served(app)` (the same uvicorn, on a free port, stopped after the test), and provider
credentials point at a local server speaking the provider's wire protocol.

Spec text the tests rely on:

    The endpoint returns immediately with {"status": "started", "session_id": "..."} — events
    are delivered out-of-band on the per-session SSE stream GET /sessions/{id}/stream, which
    any number of clients can subscribe to and which replays buffered history to late joiners.

    update_session_state raises KeyError if the session does not exist yet. Use
    upsert_session to create the session record on the first turn, then switch to
    update_session_state for subsequent turns.

Not run, and why:

- `PostgresStorage(StorageBase)`: Troupe's storage is Redis only (every session actor opens
  it from a URL; DESIGN, "Storage"), so there is no `StorageBase` to subclass.
- The quickstart's shell commands (`git clone`, `python main.py`, `pnpm dev`) start
  AgentScope's bundled example and web UI; Troupe's counterpart, `troupe serve`, is tested in
  `test_cli.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
from fastapi import Depends, Header, HTTPException, status
from fastapi.security import OAuth2PasswordBearer
from starlette.middleware import Middleware

from actors import InProcessDispatcher
from agent_core.agent import Agent
from agent_core.credential import DashScopeCredential
from agent_core.event import AgentEvent
from agent_core.message import UserMsg
from agent_core.model import DashScopeChatModel
from agent_core.permission import PermissionContext, PermissionMode
from agent_core.state import AgentState
from serve import AGUIProtocolMiddleware, ProtocolMiddlewareBase, SubAgentTemplate, create_app
from serve.message_bus import RedisMessageBus
from serve.storage import RedisStorage
from serve.workspace_manager import (
    DockerWorkspaceManager,
    E2BWorkspaceManager,
    LocalWorkspaceManager,
)
from tests.support.api import make_session
from tests.support.asgi_server import served
from tests.support.mcp_servers import serve_demo_http
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.schedules import create_schedule, schedule_body
from tests.support.sse import Frame, is_reply_end, read_frames
from tests.unit.workspaces._helpers import write_skill

pytestmark = [pytest.mark.integration, pytest.mark.redis]

ALICE = {"X-User-ID": "alice"}


@pytest.fixture
def redis_at(redis_url: str) -> tuple[str, int]:
    """Host and port of the test's (emptied) Redis."""
    parsed = urlparse(redis_url)
    assert parsed.hostname is not None
    assert parsed.port is not None
    return parsed.hostname, parsed.port


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as server:
        yield server


# From your own code: create_app, then the typical operation flow ------------------------------


@pytest.mark.ray
async def test_create_app_on_the_local_filesystem_and_the_typical_flow(
    ray_local: None,
    redis_at: tuple[str, int],
    model: OpenAIWireServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host, port = redis_at
    # Port: the MCP server below is a test program of this checkout, visible to workspaces
    # running on the host (Troupe's default backend is a bubblewrap sandbox).
    monkeypatch.setenv("TROUPE_WORKSPACE_BACKEND", "local")

    # Persistence layer for agents, sessions, credentials, messages, and schedules.
    storage = RedisStorage(host=host, port=port)
    # Redis-backed message bus.
    message_bus = RedisMessageBus(host=host, port=port)
    # Workspace lifecycle — working directory, MCP clients, skills.
    workspace_manager = LocalWorkspaceManager(
        basedir=tmp_path / "data" / "workspaces",  # Port: "/data/workspaces"
        ttl=3600.0,
    )

    app = create_app(
        storage=storage,
        message_bus=message_bus,
        workspace_manager=workspace_manager,
    )

    with serve_demo_http() as mcp:
        await typical_flow(app, model, mcp.url, tmp_path)


async def typical_flow(app: Any, model: OpenAIWireServer, mcp_url: str, tmp_path: Path) -> None:
    # Port: uvicorn.run(app, host="0.0.0.0", port=8000)
    async with served(app) as base_url, httpx.AsyncClient(base_url=base_url, timeout=60) as api:
        # POST /agent, GET /credential/schemas + POST /credential, POST /sessions.
        schemas = (await api.get("/credential/schemas", headers=ALICE)).json()
        assert "openai_credential" in str(schemas)
        agent_id, session_id = await make_session(api, model.base_url, ALICE)

        # POST /workspace/mcp, POST /workspace/skill
        scope = {"agent_id": agent_id, "session_id": session_id}
        demo = {"name": "demo", "is_stateful": False, "mcp_config": {"type": "http_mcp"}}
        demo["mcp_config"]["url"] = mcp_url  # type: ignore[index]
        added = await api.post("/workspace/mcp", params=scope, json=demo, headers=ALICE)
        assert added.status_code == 201, added.text
        skill = write_skill(tmp_path / "skills" / "review", "review", "Review code.")
        added = await api.post(
            "/workspace/skill", params=scope, json={"skill_path": str(skill)}, headers=ALICE
        )
        assert added.status_code == 201, added.text

        # curl -N -H "X-User-ID: alice" ".../sessions/session-xxx/stream?agent_id=agent-xxx"
        model.push(ScriptedReply(text="Hello, alice."))
        opened = asyncio.Event()
        reader = asyncio.create_task(
            read_frames(
                api,
                f"/sessions/{session_id}/stream",
                ALICE,
                is_reply_end,
                params={"agent_id": agent_id},
                on_open=opened.set,
            )
        )
        await asyncio.wait_for(opened.wait(), 30)

        # curl -X POST http://localhost:8000/chat -H "X-User-ID: alice" ... -d '{...}'
        triggered = await api.post(
            "/chat",
            headers={**ALICE, "Content-Type": "application/json"},
            content=CHAT_BODY.replace("agent-xxx", agent_id).replace("session-xxx", session_id),
        )
        assert triggered.status_code == 200, triggered.text
        assert triggered.json() == {"status": "started", "session_id": session_id}
        frames = await asyncio.wait_for(reader, 120)

        assert frames[-1].type == "REPLY_END"
        text = "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_BLOCK_DELTA")
        assert text == "Hello, alice."
        request = model.requests[0].body
        tool_names = {tool["function"]["name"] for tool in request["tools"]}
        assert "mcp__demo__echo" in tool_names
        assert "review" in request["messages"][0]["content"]

        # POST /schedule
        model_config = {
            "type": "openai_credential",
            "credential_id": (await api.get("/credential", headers=ALICE)).json()["credentials"][0][
                "id"
            ],
            "model": "gpt-4o-mini",
            "parameters": {},
        }
        schedule_id = await create_schedule(api, schedule_body(agent_id, model_config), ALICE)
        listed = (await api.get("/schedule", headers=ALICE)).json()
        assert schedule_id in str(listed)


CHAT_BODY = """{
    "agent_id": "agent-xxx",
    "session_id": "session-xxx",
    "input": {
      "name": "alice",
      "role": "user",
      "content": [{"type": "text", "text": "Hello"}]
    }
  }"""


def test_create_app_with_a_docker_sandbox(redis_at: tuple[str, int], tmp_path: Path) -> None:
    host, port = redis_at
    storage = RedisStorage(host=host, port=port)
    message_bus = RedisMessageBus(host=host, port=port)

    # Each workspace runs inside its own local Docker container for isolation.
    workspace_manager = DockerWorkspaceManager(basedir=tmp_path / "docker-workspaces")

    app = create_app(
        storage=storage,
        message_bus=message_bus,
        workspace_manager=workspace_manager,
    )

    # Workspace actors rebuild the manager from the settings: the Docker backend, same root.
    assert app.state.settings.workspace_backend == "docker"
    assert app.state.settings.workspace_root == str(tmp_path / "docker-workspaces")


def test_create_app_with_an_e2b_sandbox(
    redis_at: tuple[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("E2B_API_KEY", "e2b-test-key")  # the spec: or pass `api_key` here
    host, port = redis_at
    storage = RedisStorage(host=host, port=port)
    message_bus = RedisMessageBus(host=host, port=port)

    # Each workspace runs inside a remote E2B cloud sandbox.
    # Provide `api_key` here or set the `E2B_API_KEY` environment variable.
    workspace_manager = E2BWorkspaceManager()

    app = create_app(
        storage=storage,
        message_bus=message_bus,
        workspace_manager=workspace_manager,
    )

    # Workspace actors rebuild the manager from the settings (the key comes from the env).
    assert app.state.settings.workspace_backend == "e2b"
    assert app.state.settings.e2b_api_key == "e2b-test-key"


# Customization --------------------------------------------------------------------------------


class MyProtocolMiddleware(ProtocolMiddlewareBase):
    def _convert_to_protocol(self, event: AgentEvent) -> dict:  # type: ignore[type-arg]
        # Convert AgentEvent to your protocol's frame format.
        return {"type": event.type, "data": event.model_dump()}


async def in_process_app(storage: RedisStorage, **options: Any) -> Any:
    # Port: sessions hosted in the API process (no Ray needed for what these examples show).
    return create_app(storage=storage, dispatcher=InProcessDispatcher, **options)


@pytest.mark.parametrize("protocol", ["agui", "custom"])
async def test_agent_chat_protocols(
    redis_at: tuple[str, int], model: OpenAIWireServer, protocol: str
) -> None:
    host, port = redis_at
    storage = RedisStorage(host=host, port=port)
    middleware = AGUIProtocolMiddleware if protocol == "agui" else MyProtocolMiddleware

    app = await in_process_app(
        storage,
        extra_middlewares=[
            Middleware(middleware),
        ],
    )

    def done(frame: Frame) -> bool:
        if protocol == "agui":
            return frame.type in ("RUN_FINISHED", "RUN_ERROR")
        return frame.type == "REPLY_END"

    async with served(app) as base_url, httpx.AsyncClient(base_url=base_url, timeout=60) as api:
        agent_id, session_id = await make_session(api, model.base_url, ALICE)
        model.push(ScriptedReply(text="Hi."))
        opened = asyncio.Event()
        reader = asyncio.create_task(
            read_frames(
                api,
                f"/sessions/{session_id}/stream",
                ALICE,
                done,
                params={"agent_id": agent_id},
                on_open=opened.set,
            )
        )
        await asyncio.wait_for(opened.wait(), 30)
        body = CHAT_BODY.replace("agent-xxx", agent_id).replace("session-xxx", session_id)
        sent = await api.post(
            "/chat", headers={**ALICE, "Content-Type": "application/json"}, content=body
        )
        assert sent.status_code == 200, sent.text
        frames = await asyncio.wait_for(reader, 20)
    if protocol == "agui":
        assert frames[-1].type == "RUN_FINISHED"
        assert any(f.type == "TEXT_MESSAGE_CONTENT" for f in frames)
    else:
        assert all(set(f.data) == {"type", "data"} for f in frames)
        assert frames[-1].data["data"]["session_id"] == session_id
    await storage.aclose()


class InvalidTokenError(Exception):
    """Port: what the reader's JWT library raises (the spec leaves it to the reader)."""


def decode_jwt(token: str) -> dict[str, str]:
    # Port: a stand-in for the reader's JWT verification.
    if not token.startswith("valid-"):
        raise InvalidTokenError(token)
    return {"sub": token.removeprefix("valid-")}


async def jwt_user_id(
    authorization: str = Header(...),
) -> str:
    try:
        payload = decode_jwt(authorization.removeprefix("Bearer "))
        return payload["sub"]
    except InvalidTokenError:
        raise HTTPException(  # noqa: B904 - the spec's code
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="Invalid authentication token.",
        )


oauth2_scheme = OAuth2PasswordBearer(tokenUrl="token")


class OAuthUser:
    def __init__(self, user_id: str) -> None:
        self.id = user_id


async def verify_oauth_token(token: str) -> OAuthUser | None:
    # Port: a stand-in for the reader's OAuth2 token check.
    return OAuthUser(token.removeprefix("oauth-")) if token.startswith("oauth-") else None


async def oauth_user_id(token: str = Depends(oauth2_scheme)) -> str:
    user = await verify_oauth_token(token)
    if user is None:
        raise HTTPException(status_code=status.HTTP_401_UNAUTHORIZED)
    return user.id


@pytest.mark.parametrize(
    ("get_current_user_id", "good", "bad"),
    [(jwt_user_id, "valid-alice", "forged"), (oauth_user_id, "oauth-alice", "nope")],
)
async def test_user_authentication(
    redis_at: tuple[str, int], get_current_user_id: Any, good: str, bad: str
) -> None:
    host, port = redis_at
    app = await in_process_app(RedisStorage(host=host, port=port))

    from serve.deps import get_current_user_id as default_dependency

    app.dependency_overrides[default_dependency] = get_current_user_id

    async with served(app) as base_url, httpx.AsyncClient(base_url=base_url) as api:
        created = await api.post(
            "/agent", json={"name": "A"}, headers={"Authorization": f"Bearer {good}"}
        )
        assert created.status_code == 201, created.text
        mine = await api.get("/agent", headers={"Authorization": f"Bearer {good}"})
        assert [a["id"] for a in mine.json()["agents"]] == [created.json()["agent_id"]]
        refused = await api.get("/agent", headers={"Authorization": f"Bearer {bad}"})
        assert refused.status_code == 401
        # The X-User-ID header no longer identifies anyone.
        assert (await api.get("/agent", headers=ALICE)).status_code in (401, 403, 422)


def test_redis_storage_options(redis_at: tuple[str, int]) -> None:
    storage = RedisStorage(
        host="localhost",
        port=6379,
        db=0,
        password="your-password",
    )
    assert storage.url == "redis://:your-password@localhost:6379/0"
    host, port = redis_at
    assert RedisStorage(host=host, port=port, db=3).url == f"redis://{host}:{port}/3"


def test_registering_sub_agent_templates(redis_at: tuple[str, int]) -> None:
    host, port = redis_at
    storage = RedisStorage(host=host, port=port)
    message_bus = RedisMessageBus(host=host, port=port)
    workspace_manager = LocalWorkspaceManager(basedir="/tmp/troupe-unused-workspaces")

    app = create_app(
        storage=storage,
        message_bus=message_bus,
        workspace_manager=workspace_manager,
        sub_agent_templates=[
            SubAgentTemplate(
                type="explorer",
                description=(
                    "Read-only agents specialized in exploration tasks. "
                    "Use this type when you need to investigate the "
                    "codebase without making any changes."
                ),
                system_prompt_template="""You are {member_name}, an explorer \
agent in team '{team_name}' led by {leader_name}.

Team purpose: {team_description}

Your role: {member_description}

## Responsibilities
- Complete the exploration tasks assigned by the team leader.
- You are read-only: you may inspect files and the codebase, but \
you must never modify, create, or delete anything.

## Reporting
- Always report the task result back to {leader_name} using the \
TeamSay tool, whether the task succeeds or fails.""",
                permission_context=PermissionContext(
                    mode=PermissionMode.EXPLORE,
                ),
            ),
        ],
    )

    (template,) = app.state.settings.sub_agent_templates
    assert template.type == "explorer"
    assert app.state.settings.redis_url == storage.url
    with pytest.raises(ValueError, match="duplicate"):
        create_app(storage=storage, sub_agent_templates=[template, template])


def test_a_provider_model_card(tmp_path: Path) -> None:
    (tmp_path / "qwen3.6-plus.yaml").write_text(QWEN_CARD)

    (card,) = DashScopeChatModel.list_models(custom_yaml_dir=tmp_path)

    assert card.name == "qwen3.6-plus"
    assert card.label == "Qwen3.6-Plus"
    assert "video/mp4" in card.input_types
    assert card.output_types == ["text/plain", "application/x-thinking"]
    assert (card.context_size, card.output_size) == (1000000, 65536)
    assert card.parameter_schema["properties"]["max_tokens"]["maximum"] == 65536


QWEN_CARD = """\
name: qwen3.6-plus
label: Qwen3.6-Plus
status: active

input_types:
  - text/plain
  - application/x-thinking
  - image/bmp
  - image/jpeg
  - image/png
  - image/tiff
  - image/webp
  - image/heic
  - video/mp4

output_types:
  - text/plain
  - application/x-thinking

context_size: 1000000
output_size: 65536

parameter_overrides:
  max_tokens: {"maximum": 65536}
"""


# Persist Agent State (building-blocks.md and agent-zh.md) -------------------------------------

USER_ID = "user_123"
SESSION_ID = "session_789"


@pytest.fixture
async def agent_456(redis_at: tuple[str, int]) -> AsyncIterator[str]:
    """Port: the spec's AGENT_ID names an agent the storage knows (Troupe checks ownership)."""
    from actors.storage.records import AgentData

    host, port = redis_at
    async with RedisStorage(host=host, port=port) as storage:
        record = await storage.create_agent(USER_ID, AgentData(name="my_agent"))
        yield record.id


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_persist_agent_state(
    redis_at: tuple[str, int],
    model: OpenAIWireServer,
    agent_456: str,
    capsys: pytest.CaptureFixture[str],
    language: str,
) -> None:
    host, port = redis_at
    AGENT_ID = agent_456  # the spec's constant
    model.push(ScriptedReply(text="Picking up from step 2."), ScriptedReply(text="Step 3 done."))

    async def main() -> None:
        async with RedisStorage(host=host, port=port) as storage:
            # Load state from storage, fall back to a fresh state if not found
            record = await storage.get_session(
                user_id=USER_ID,
                agent_id=AGENT_ID,
                session_id=SESSION_ID,
            )
            state = record.state if record else AgentState()

            # Create the agent with the restored state
            agent = Agent(
                name="my_agent",
                system_prompt="You are a helpful assistant.",
                model=DashScopeChatModel(
                    # Port: the local server speaking DashScope's wire protocol.
                    credential=DashScopeCredential(api_key="YOUR_API_KEY", base_url=model.base_url),
                    model="qwen-max",
                ),
                state=state,
            )

            # Run a reply turn
            result = await agent.reply(
                UserMsg(name="user", content="Continue where we left off."),
            )
            print(result.get_text_content() if language == "en" else result.get_text())

            # Persist the updated state back to Redis
            await storage.update_session_state(
                user_id=USER_ID,
                agent_id=AGENT_ID,
                session_id=SESSION_ID,
                state=agent.state,
            )

    # As the spec warns: on the first turn the session does not exist yet.
    with pytest.raises(KeyError):
        await main()
    assert capsys.readouterr().out == "Picking up from step 2.\n"

    # "Use upsert_session to create the session record on the first turn".
    async with RedisStorage(host=host, port=port) as storage:
        created = await storage.upsert_session(USER_ID, AGENT_ID, session_id=SESSION_ID)
        assert created.id == SESSION_ID
    await main()
    assert capsys.readouterr().out == "Step 3 done.\n"

    async with RedisStorage(host=host, port=port) as storage:
        record = await storage.get_session(
            user_id=USER_ID, agent_id=AGENT_ID, session_id=SESSION_ID
        )
        assert record is not None
        assert record.state is not None
        texts = [msg.get_text_content() for msg in record.state.context]
        assert "Step 3 done." in texts
        assert await storage.get_session(USER_ID, "another-agent", SESSION_ID) is None
        assert await storage.get_session("someone-else", AGENT_ID, SESSION_ID) is None
        # Another user cannot take the session id over.
        from actors.errors import InvalidRequest

        with pytest.raises(InvalidRequest):
            await storage.upsert_session("someone-else", AGENT_ID, session_id=SESSION_ID)
