"""`serve.client.TroupeClient` against the app in-process (sessions in this process, uvicorn on
127.0.0.1, a scripted OpenAI-protocol model server), and the `troupe` commands through click's
runner against the same app."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from actors.client import InProcessDispatcher
from serve import create_app
from serve.cli_commands import cli
from serve.client import (
    APIError,
    Event,
    ModelChoice,
    NotFoundError,
    ServerUnreachableError,
    TroupeClient,
)
from tests.support.asgi_server import served
from tests.support.openai_server import OpenAIWireServer, ScriptedReply

pytestmark = [pytest.mark.redis]


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as server:
        yield server


@pytest.fixture
async def server(redis_url: str) -> AsyncIterator[str]:
    app = create_app(storage=redis_url, dispatcher=InProcessDispatcher)
    async with served(app) as base_url:
        yield base_url


@pytest.fixture
async def troupe(server: str) -> AsyncIterator[TroupeClient]:
    async with TroupeClient(server, user=f"user-{uuid.uuid4().hex[:8]}") as client:
        yield client


async def new_session(troupe: TroupeClient, model: OpenAIWireServer) -> tuple[str, str]:
    agent_id = await troupe.create_agent("Friday")
    credential_id = await troupe.add_credential(
        {"type": "openai_credential", "api_key": "sk-test", "base_url": model.base_url}
    )
    choice = ModelChoice(credential_id=credential_id, model="gpt-test")
    return agent_id, await troupe.create_session(agent_id, choice, name="test")


async def test_resources_round_trip(troupe: TroupeClient, model: OpenAIWireServer) -> None:
    health = await troupe.health()
    assert health.status == "ok"
    assert health.components["redis"] == "ok"
    agent_id, session_id = await new_session(troupe, model)

    (agent,) = await troupe.list_agents()
    assert (agent.id, agent.name) == (agent_id, "Friday")
    (credential,) = await troupe.list_credentials()
    assert credential.base_url == model.base_url
    assert credential.type == "openai_credential"
    (session,) = await troupe.list_sessions()
    assert (session.id, session.agent_id, session.name) == (session_id, agent_id, "test")
    assert [s.id for s in await troupe.list_sessions(agent_id=agent_id)] == [session_id]
    with pytest.raises(NotFoundError, match="other"):
        await troupe.list_sessions(agent_id="other")
    assert (await troupe.session_status(session_id)).status == "idle"


async def test_chat_streams_the_reply_as_it_is_generated(
    troupe: TroupeClient, model: OpenAIWireServer
) -> None:
    agent_id, session_id = await new_session(troupe, model)
    model.push(ScriptedReply(text="Hello from the scripted model."))

    events = [e async for e in troupe.chat(agent_id, session_id, "hi")]

    types = [e.type for e in events]
    assert types[0] == "REPLY_START"
    assert types[-1] == "REPLY_END"
    assert types.count("TEXT_BLOCK_DELTA") > 1  # streamed in pieces, not one final answer
    text = "".join(e.data["delta"] for e in events if e.type == "TEXT_BLOCK_DELTA")
    assert text == "Hello from the scripted model."
    assert events[-1].data["finished_reason"] == "completed"
    transcript = await troupe.transcript(session_id)
    assert [m["role"] for m in transcript.messages] == ["user", "assistant"]
    # Following from the transcript's cursor misses nothing and repeats nothing.
    model.push(ScriptedReply(text="Second."))
    follower = troupe.events(session_id, after=transcript.event_cursor)
    await troupe.send(agent_id, session_id, "again")
    seen = []
    async for event in follower:
        seen.append(event)
        if event.type == "REPLY_END":
            break
    await follower.aclose()  # type: ignore[attr-defined]
    assert "".join(e.data["delta"] for e in seen if e.type == "TEXT_BLOCK_DELTA") == "Second."


async def test_a_permission_request_is_answered_on_the_same_stream(
    troupe: TroupeClient, model: OpenAIWireServer
) -> None:
    agent_id, session_id = await new_session(troupe, model)
    write = {"file_path": "note.txt", "content": "hello"}
    model.push(ScriptedReply(tool_calls=[("w1", "Write", write)]), ScriptedReply(text="Written."))

    events: list[Event] = []
    async for event in troupe.chat(agent_id, session_id, "write a note"):
        events.append(event)
        if event.type == "REQUIRE_USER_CONFIRM":
            await troupe.confirm(agent_id, session_id, event, approved=True)

    types = [e.type for e in events]
    assert types.index("REQUIRE_USER_CONFIRM") < types.index("TOOL_RESULT_END")
    (end,) = [e for e in events if e.type == "TOOL_RESULT_END"]
    assert end.data["state"] == "success"
    assert events[-1].data["finished_reason"] == "completed"


async def test_errors_are_typed_and_name_what_failed(troupe: TroupeClient) -> None:
    with pytest.raises(NotFoundError) as missing:
        await troupe.session_status("nope")
    assert missing.value.status == 404
    assert "nope" in missing.value.message
    with pytest.raises(APIError) as invalid:
        await troupe.add_credential(
            {"type": "openai_credential", "api_key": "sk-secret", "base_url": "localhost:1/v1"}
        )
    assert invalid.value.status == 422
    assert "base_url" in invalid.value.message
    assert "sk-secret" not in str(invalid.value)
    async with TroupeClient("http://127.0.0.1:9", user="x") as nowhere:
        with pytest.raises(ServerUnreachableError, match=r"127\.0\.0\.1:9"):
            await nowhere.health()


@pytest.mark.parametrize(
    ("base_url", "message"),
    [
        ("ftp://models.example/v1", "http:// or https://"),
        ("http:///v1", "has no host"),
        ("http://h:port/v1", "not a URL"),
    ],
)
async def test_a_credential_base_url_is_checked_on_input(
    server: str, base_url: str, message: str
) -> None:
    import httpx

    body = {"data": {"type": "openai_credential", "api_key": "k", "base_url": base_url}}
    async with httpx.AsyncClient(base_url=server) as http:
        response = await http.post("/credential/", json=body, headers={"X-User-ID": "a"})
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"][-1] == "base_url"
    assert message in error["msg"]


async def test_a_credential_check_reports_the_provider_status(
    troupe: TroupeClient, model: OpenAIWireServer
) -> None:
    def credential(base_url: str) -> dict[str, Any]:
        return {"type": "openai_credential", "api_key": "sk-check", "base_url": base_url}

    good = await troupe.check_credential(await troupe.add_credential(credential(model.base_url)))
    assert (good.ok, good.status, good.url) == (True, 200, f"{model.base_url}/models")
    (request,) = model.requests
    assert request.headers["authorization"] == "Bearer sk-check"
    wrong = f"http://127.0.0.1:{model.port}/wrong"
    bad = await troupe.check_credential(await troupe.add_credential(credential(wrong)))
    assert (bad.ok, bad.status, bad.provider) == (False, 404, "openai_credential")
    assert "Not found" in bad.message
    gone = await troupe.check_credential(
        await troupe.add_credential(credential("http://127.0.0.1:9/v1"))
    )
    assert (gone.ok, gone.status) == (False, None)
    with pytest.raises(NotFoundError):
        await troupe.check_credential("nope")


async def test_a_failed_model_call_names_provider_url_and_status(
    troupe: TroupeClient, model: OpenAIWireServer, caplog: pytest.LogCaptureFixture
) -> None:
    agent_id, session_id = await new_session(troupe, model)
    model.push(ScriptedReply(status=401))

    events = [e async for e in troupe.chat(agent_id, session_id, "hi")]

    end = events[-1]
    assert end.data["finished_reason"] == "error"
    message = end.data["error"]["message"]
    assert "HTTP 401" in message
    assert "openai_chat" in message
    assert f"{model.base_url}/chat/completions" in message
    types = [e.type for e in events]
    assert types.count("MODEL_CALL_START") == types.count("MODEL_CALL_END") == 1
    (call_end,) = [e for e in events if e.type == "MODEL_CALL_END"]
    assert call_end.data["finished_reason"] == "interrupted"
    logged = [r.getMessage() for r in caplog.records if r.name == "agent_core.agent._reasoning"]
    assert any("HTTP 401" in line for line in logged), logged


async def test_a_stream_cut_mid_answer_names_provider_and_url(
    troupe: TroupeClient, model: OpenAIWireServer
) -> None:
    agent_id, session_id = await new_session(troupe, model)
    model.push(ScriptedReply(text="this answer will not finish", truncate=True))

    events = [e async for e in troupe.chat(agent_id, session_id, "hi")]

    end = events[-1]
    assert end.data["finished_reason"] == "error"
    message = end.data["error"]["message"]
    assert f"(openai_chat POST {model.base_url}/chat/completions)" in message
    types = [e.type for e in events]
    assert types.count("MODEL_CALL_START") == types.count("MODEL_CALL_END") == 1


# The commands, through click's runner (in a thread: they run their own event loop).


async def invoke(server: str, user: str, *args: str, input: str | None = None) -> Result:
    runner = CliRunner()
    argv = ["--server", server, "--user", user, *args]
    return await asyncio.to_thread(runner.invoke, cli, argv, input=input)


async def test_the_commands_drive_a_chat_with_a_permission_prompt(
    server: str, model: OpenAIWireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = f"cli-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("MODEL_KEY", "sk-from-env")
    agent = await invoke(server, user, "agent", "create", "Friday")
    assert agent.exit_code == 0, agent.output
    agent_id = agent.stdout.strip()
    cred = await invoke(
        server,
        user,
        "credential",
        "add",
        "--base-url",
        model.base_url,
        "--api-key-env",
        "MODEL_KEY",
    )
    assert cred.exit_code == 0, cred.output
    credential_id = cred.stdout.strip()
    listed = await invoke(server, user, "credential", "list", "--json")
    assert "sk-from-env" not in listed.output
    assert json.loads(listed.stdout)[0]["id"] == credential_id
    # The unnamed session is titled by a model call of its own: the default answer serves both.
    model.default_text = "Done."
    write = {"file_path": "a.txt", "content": "x"}
    model.push(ScriptedReply(text="Writing. ", tool_calls=[("w1", "Write", write)]))

    chat = await invoke(
        server,
        user,
        "chat",
        agent_id,
        "write a.txt",
        "--credential",
        credential_id,
        "--model",
        "gpt-test",
        input="y\n",
    )

    assert chat.exit_code == 0, chat.output
    assert chat.stdout == "Writing. \nDone.\n"
    assert "Allow → Write" in chat.stderr
    assert "← Write [success]" in chat.stderr
    session_id = chat.stderr.split("session: ")[1].split()[0]
    status = await invoke(server, user, "session", "status", session_id)
    assert status.stdout == "idle\n"
    logs = await invoke(server, user, "logs", session_id)
    assert logs.exit_code == 0, logs.output
    assert "Done." in logs.stdout
    assert "user (" in logs.stdout


async def test_exit_codes(server: str, model: OpenAIWireServer) -> None:
    user = f"cli-{uuid.uuid4().hex[:8]}"
    missing = await invoke(server, user, "session", "status", "nope")
    assert missing.exit_code == 4
    assert "nope" in missing.stderr
    nowhere = await invoke("http://127.0.0.1:9", user, "status")
    assert nowhere.exit_code == 3
    bad = await invoke(server, user, "credential", "add", "--base-url", "nowhere", input="k\n")
    assert bad.exit_code == 1
    assert "base_url" in bad.stderr
    assert (await invoke(server, user, "chat", "a", "text")).exit_code == 2
    version = await invoke(server, user, "--version")
    assert version.exit_code == 0
    assert version.stdout.startswith("troupe, version ")
    healthy = await invoke(server, user, "status")
    assert healthy.exit_code == 0, healthy.output
    assert "redis: ok" in healthy.stdout
    gone = await invoke(
        server, user, "credential", "add", "--base-url", "http://127.0.0.1:9/v1", input="k\n"
    )
    check = await invoke(server, user, "credential", "check", gone.stdout.strip())
    assert check.exit_code == 5
    assert check.stdout.startswith("error: openai_credential http://127.0.0.1:9/v1/models")
