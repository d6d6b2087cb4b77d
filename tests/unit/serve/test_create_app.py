"""`create_app`: AgentScope's parameters mapped onto Troupe's runtime (sessions in-process)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

from actors import SubAgentTemplate
from actors.client import InProcessDispatcher
from actors.settings import RuntimeSettings
from serve import cors_middleware, create_app
from tests.support import agent_extensions
from tests.support.api import USER, make_session, post_chat
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from workspaces import LocalWorkspaceManager

pytestmark = [pytest.mark.redis]


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as server:
        yield server


@pytest.fixture
async def api(redis_url: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(
        storage=redis_url,
        message_bus=redis_url,
        workspace_manager=LocalWorkspaceManager(tmp_path / "ws", ttl=60),
        dispatcher=InProcessDispatcher,
        extra_agent_middlewares=agent_extensions.middlewares,
        extra_agent_tools=agent_extensions.tools,
        extra_middlewares=[cors_middleware(["http://ui.example"])],
        title="Test",
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client


async def finished_reply(api: httpx.AsyncClient, session_id: str) -> dict[str, Any]:
    """The assistant message of the session's first reply, once it is committed."""
    async with asyncio.timeout(30):
        while True:
            page = (await api.get(f"/sessions/{session_id}/messages", headers=USER)).json()
            if len(page["messages"]) == 2 and not page["is_running"]:
                return dict(page["messages"][-1])
            await asyncio.sleep(0.05)


def settings_of(**kwargs: Any) -> RuntimeSettings:
    settings: RuntimeSettings = create_app(dispatcher=InProcessDispatcher, **kwargs).state.settings
    return settings


def test_arguments_become_the_runtime_settings(redis_url: str, tmp_path: Path) -> None:
    template = SubAgentTemplate(type="explorer", description="d", system_prompt_template="p")
    settings = settings_of(
        storage=redis_url,
        workspace_manager=LocalWorkspaceManager(tmp_path, ttl=42),
        extra_agent_tools=agent_extensions.tools,
        extra_agent_middlewares=agent_extensions.middlewares,
        custom_subagent_templates=[template],
        settings=RuntimeSettings(redis_url="redis://elsewhere", key_prefix="tenant-a"),
    )
    assert settings.redis_url == redis_url  # `storage` wins over the settings' URL
    assert settings.key_prefix == "tenant-a"
    assert settings.workspace_root == str(tmp_path)
    assert settings.workspace_ttl == 42
    assert settings.agent_tools == "tests.support.agent_extensions:tools"
    assert settings.agent_middlewares == "tests.support.agent_extensions:middlewares"
    assert settings.sub_agent_templates == [template]
    # Plain data: the settings reach Ray actors and Serve replicas as JSON.
    assert RuntimeSettings.model_validate_json(settings.model_dump_json()) == settings


async def _local_factory(user_id: str, agent_id: str, session_id: str) -> list[Any]:
    return []


def _closure() -> Any:
    async def factory(user_id: str, agent_id: str, session_id: str) -> list[Any]:
        return []

    return factory


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"message_bus": "redis://other:6379/0"}, "storage's Redis"),
        ({"extra_agent_tools": lambda *_: None}, "cannot be imported by another process"),
        ({"extra_agent_tools": _closure()}, "cannot be imported by another process"),
        ({"extra_agent_middlewares": _closure()}, "cannot be imported by another process"),
        (
            {
                "custom_subagent_templates": [
                    SubAgentTemplate(type="x", description="d", system_prompt_template="p"),
                    SubAgentTemplate(type="x", description="e", system_prompt_template="q"),
                ]
            },
            "duplicate sub-agent template type",
        ),
        (
            {"workspace_manager": LocalWorkspaceManager("/tmp/w", skill_paths=["/tmp/s"])},
            "not carried to session processes",
        ),
    ],
    ids=["bus", "lambda", "closure", "middleware-closure", "templates", "workspace-extras"],
)
def test_what_cannot_reach_session_actors_is_refused(
    redis_url: str, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        create_app(storage=redis_url, dispatcher=InProcessDispatcher, **kwargs)


def test_a_module_level_factory_of_this_module_is_accepted(redis_url: str) -> None:
    settings = settings_of(storage=redis_url, extra_agent_tools=_local_factory)
    assert settings.agent_tools == f"{__name__}:_local_factory"


async def test_extra_tools_and_middlewares_join_every_reply(
    api: httpx.AsyncClient, model: OpenAIWireServer, tmp_path: Path
) -> None:
    agent_id, session_id = await make_session(api, model.base_url)
    model.push(
        ScriptedReply(tool_calls=[("call_1", agent_extensions.TOOL_NAME, {})]),
        ScriptedReply(text="You are alice."),
    )
    assert (await post_chat(api, agent_id, session_id, "who am I?")).status_code == 200
    reply = await finished_reply(api, session_id)
    results = [b for b in reply["content"] if b["type"] == "tool_result"]
    assert results, reply
    assert f"user=alice agent={agent_id} session={session_id}" in str(results[0]["output"])

    system_prompt = model.requests[0].body["messages"][0]["content"]
    assert f"{agent_extensions.PROMPT_MARK} alice in {tmp_path / 'ws'}" in system_prompt
    tools = [t["function"]["name"] for t in model.requests[0].body["tools"]]
    assert agent_extensions.TOOL_NAME in tools


async def test_cors_preflight_and_errors_carry_the_allowed_origin(api: httpx.AsyncClient) -> None:
    preflight = {
        "Origin": "http://ui.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x-user-id,content-type",
    }
    allowed = await api.options("/agent/", headers=preflight)
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "http://ui.example"
    assert "POST" in allowed.headers["access-control-allow-methods"]
    assert "x-user-id" in allowed.headers["access-control-allow-headers"].lower()

    refused = await api.options("/agent/", headers={**preflight, "Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in refused.headers

    # The actual request (an error here) is readable by the page too.
    missing = await api.get("/agent/", headers={"Origin": "http://ui.example"})
    assert missing.status_code == 401
    assert missing.headers["access-control-allow-origin"] == "http://ui.example"


def test_cors_middleware_is_a_starlette_cors() -> None:
    middleware = cors_middleware(["http://a", "http://b"])
    assert isinstance(middleware, Middleware)
    assert middleware.cls is CORSMiddleware
    assert middleware.kwargs["allow_origins"] == ["http://a", "http://b"]


async def test_a_clashing_extra_tool_ends_the_reply_with_a_setup_error(
    redis_url: str, model: OpenAIWireServer
) -> None:
    app = create_app(
        storage=redis_url,
        dispatcher=InProcessDispatcher,
        extra_agent_tools=agent_extensions.clashing_tools,
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as api:
            agent_id, session_id = await make_session(api, model.base_url)
            assert (await post_chat(api, agent_id, session_id, "hi")).status_code == 200
            reply = await finished_reply(api, session_id)
    assert reply["error"]["type"] == "setup"
    assert "get_current_time" in reply["error"]["message"]
    assert not model.requests  # the model was never called
