"""The endpoints AgentScope's web UI calls, in AgentScope's shapes (real Redis, local sessions).

`/tts-model/`, `/knowledge_bases/` (empty but valid), `/workspace/status`, `invite_config` on
agents, `SessionView` items in `GET /sessions/`, and session titles.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.teams.store import TeamMember, TeamRecord
from agent_core.agent import RUNTIME_STATE_SOURCE
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.unit.serve._service import Service

pytestmark = pytest.mark.redis

ALICE = {"X-User-ID": "alice"}
BOB = {"X-User-ID": "bob"}
COMPAT = Path(__file__).parents[2] / "data" / "compat" / "agentscope-openapi.json"
RECORDED = json.loads(COMPAT.read_text())
# What the UI's agent dialog posts: the form's sections, flat, empty when left at defaults.
UI_AGENT_BODY = {
    "name": "Friday",
    "system_prompt": "You're a helpful assistant.",
    "context_config": {},
    "react_config": {},
    "invite_config": {},
}
TITLE = "Planning a trip"


def titling(body: dict[str, Any]) -> ScriptedReply:
    """Titles when asked for structured output, else answers plainly."""
    if "generate_structured_output" in str(body.get("tool_choice")):
        return ScriptedReply(tool_calls=[("t1", "generate_structured_output", {"title": TITLE})])
    return ScriptedReply(text="Sure.")


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(reply_func=titling) as server:
        yield server


async def create_agent(api: httpx.AsyncClient, body: dict[str, Any] | None = None) -> str:
    response = await api.post("/agent/", json=body or UI_AGENT_BODY, headers=ALICE)
    assert response.status_code == 201, response.text
    return str(response.json()["agent_id"])


async def create_session(api: httpx.AsyncClient, agent_id: str, **body: Any) -> str:
    response = await api.post("/sessions/", json={"agent_id": agent_id, **body}, headers=ALICE)
    assert response.status_code == 201, response.text
    return str(response.json()["session_id"])


async def model_config(api: httpx.AsyncClient, base_url: str) -> dict[str, Any]:
    data = {"type": "openai_credential", "api_key": "sk-test", "base_url": base_url}
    created = await api.post("/credential/", json={"data": data}, headers=ALICE)
    credential_id = created.json()["credential_id"]
    return {"type": "openai_credential", "credential_id": credential_id, "model": "gpt-4o-mini"}


async def chat(api: httpx.AsyncClient, agent_id: str, session_id: str, text: str) -> None:
    msg = {"name": "user", "role": "user", "content": [{"type": "text", "text": text}]}
    body = {"agent_id": agent_id, "session_id": session_id, "input": msg}
    assert (await api.post("/chat/", json=body, headers=ALICE)).status_code == 200


async def session_view(api: httpx.AsyncClient, agent_id: str, session_id: str) -> dict[str, Any]:
    listed = (await api.get("/sessions/", params={"agent_id": agent_id}, headers=ALICE)).json()
    return next(v for v in listed["sessions"] if v["session"]["id"] == session_id)


async def until_named(
    api: httpx.AsyncClient, agent_id: str, session_id: str, name: str
) -> dict[str, Any]:
    async with asyncio.timeout(15):
        while True:
            view = await session_view(api, agent_id, session_id)
            if view["session"]["config"]["name"] == name:
                return view
            await asyncio.sleep(0.05)


def recorded_properties(schema: str) -> set[str]:
    return set(RECORDED["components"]["schemas"][schema]["properties"])


# --- the recorded OpenAPI document -------------------------------------------------------------


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("SessionView", "SessionView"),
        ("ListSessionsResponse", "ListSessionsResponse"),
        ("TeamDetailResponse", "TeamDetailResponse"),
        ("TeamMemberView", "TeamMemberView"),
        ("TeamView", "TeamRecord"),
        ("TeamData", "TeamData"),
        ("TeamMemberEntry", "TeamMember"),
        ("WorkspaceStatus", "WorkspaceStatus"),
        ("GitStatus", "GitStatus"),
        ("ListTTSModelsResponse", "ListTTSModelsResponse"),
        ("ListKnowledgeBasesResponse", "ListKnowledgeBasesResponse"),
        ("KbMiddlewareParametersSchemaResponse", "KbMiddlewareParametersSchemaResponse"),
        ("InviteConfig", "InviteConfig"),
        ("SessionNaming", "SessionNaming"),
    ],
)
async def test_bodies_have_agentscopes_fields(service: Service, ours: str, theirs: str) -> None:
    schemas = (await service.api.get("/openapi.json")).json()["components"]["schemas"]
    assert set(schemas[ours]["properties"]) == recorded_properties(theirs)


@pytest.mark.parametrize(
    "path",
    [
        "/tts-model/",
        "/knowledge_bases/",
        "/knowledge_bases/middleware/parameters_schema",
        "/workspace/status",
    ],
)
async def test_routes_take_agentscopes_query_parameters(service: Service, path: str) -> None:
    ours = (await service.api.get("/openapi.json")).json()["paths"][path]["get"]
    theirs = RECORDED["paths"][path]["get"]

    def query(operation: dict[str, Any]) -> set[str]:
        return {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}

    assert query(ours) == query(theirs)


# --- /tts-model/ -------------------------------------------------------------------------------


async def test_tts_models_are_none_for_a_known_provider(service: Service) -> None:
    api = service.api
    known = await api.get("/tts-model/", params={"provider": "openai_credential"})
    assert (known.status_code, known.json()) == (200, {"models": [], "total": 0})
    unknown = await api.get("/tts-model/", params={"provider": "nope_credential"})
    assert unknown.status_code == 404
    assert "nope_credential" in unknown.json()["detail"]
    assert (await api.get("/tts-model/")).status_code == 422


# --- /knowledge_bases/ -------------------------------------------------------------------------


async def test_knowledge_bases_answer_an_empty_page(service: Service) -> None:
    api = service.api
    page = await api.get("/knowledge_bases/", params={"page": 2, "page_size": 128}, headers=ALICE)
    assert page.json() == {"knowledge_bases": [], "total": 0, "page": 2, "page_size": 128}
    default = await api.get("/knowledge_bases/", headers=ALICE)
    assert default.json() == {"knowledge_bases": [], "total": 0, "page": 1, "page_size": 30}
    for bad in ({"page": 0}, {"page_size": 129}, {"orderby": "name"}):
        assert (await api.get("/knowledge_bases/", params=bad, headers=ALICE)).status_code == 422
    assert (await api.get("/knowledge_bases/")).status_code == 401  # no X-User-ID


async def test_the_retrieval_parameters_schema_is_empty(service: Service) -> None:
    api = service.api
    path = "/knowledge_bases/middleware/parameters_schema"
    answer = await api.get(path, headers=ALICE)
    assert answer.json() == {"parameter_schema": {"type": "object", "properties": {}}}
    assert (await api.get(path, headers={"X-User-ID": " "})).status_code == 401


# --- /workspace/status -------------------------------------------------------------------------


def git(directory: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=directory,
        check=True,
        capture_output=True,
    )


async def test_workspace_status_reports_the_directory_and_its_git_state(service: Service) -> None:
    api = service.api
    agent_id = await create_agent(api)
    session_id = await create_session(api, agent_id)
    query = {"agent_id": agent_id, "session_id": session_id}
    plain = (await api.get("/workspace/status", params=query, headers=ALICE)).json()
    workdir = Path(plain["workdir"])
    assert workdir.is_absolute()
    assert plain == {"workdir": str(workdir), "cwd": str(workdir), "git": None}

    repo = workdir / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\ntwo\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "first")
    (repo / "a.txt").write_text("one\nTWO\nthree\n")
    (repo / "new.txt").write_text("x")
    patched = await api.patch(
        f"/sessions/{session_id}",
        params={"agent_id": agent_id},
        json={"cwd": "project"},
        headers=ALICE,
    )
    assert patched.status_code == 200, patched.text

    status = (await api.get("/workspace/status", params=query, headers=ALICE)).json()
    assert status["cwd"] == str(repo)
    state = status["git"]
    assert re.fullmatch(r"[0-9a-f]{40}", state.pop("head"))
    assert state == {
        "branch": "main",
        "ahead": None,
        "behind": None,
        "insertions": 2,
        "deletions": 1,
        "staged": 0,
        "unstaged": 1,
        "untracked": 1,
        "conflicted": 0,
    }


async def test_workspace_status_of_someone_elses_session_is_404(service: Service) -> None:
    api = service.api
    agent_id = await create_agent(api)
    session_id = await create_session(api, agent_id)
    query = {"agent_id": agent_id, "session_id": session_id}
    assert (await api.get("/workspace/status", params=query, headers=BOB)).status_code == 404
    other = {"agent_id": await create_agent(api), "session_id": session_id}
    assert (await api.get("/workspace/status", params=other, headers=ALICE)).status_code == 404
    assert (
        await api.get("/workspace/status", params={"agent_id": agent_id})
    ).status_code == 401  # no identity


# --- agents: invite_config ---------------------------------------------------------------------


async def test_the_agent_dialogs_body_is_accepted(service: Service) -> None:
    api = service.api
    agent_id = await create_agent(api)
    [agent] = (await api.get("/agent/", headers=ALICE)).json()["agents"]
    assert agent["id"] == agent_id
    assert agent["data"]["chat_config"]["invite_config"] == {
        "invitable": False,
        "invite_description": None,
    }


async def test_invite_config_top_level_or_in_chat_config(service: Service) -> None:
    api = service.api
    invite = {"invitable": True, "invite_description": "Knows the calendar."}
    flat = await create_agent(api, {"name": "A", "invite_config": invite})
    nested = await create_agent(api, {"name": "B", "chat_config": {"invite_config": invite}})
    agents = {a["id"]: a for a in (await api.get("/agent/", headers=ALICE)).json()["agents"]}
    for agent_id in (flat, nested):
        assert agents[agent_id]["data"]["chat_config"]["invite_config"] == invite

    off = {"invitable": False, "invite_description": "Knows the calendar."}
    patched = await api.patch(f"/agent/{flat}", json={"invite_config": off}, headers=ALICE)
    assert patched.json()["data"]["chat_config"]["invite_config"] == off
    assert patched.json()["data"]["chat_config"]["react_config"]["max_iters"] == 50


async def test_an_invitable_agent_needs_a_description(service: Service) -> None:
    api = service.api
    for body in (
        {"name": "A", "invite_config": {"invitable": True}},
        {
            "name": "A",
            "chat_config": {"invite_config": {"invitable": True, "invite_description": " "}},
        },
    ):
        response = await api.post("/agent/", json=body, headers=ALICE)
        assert response.status_code == 422
        assert "invite_description" in json.dumps(response.json())


async def test_the_form_schema_has_the_invite_section(service: Service) -> None:
    schema = (await service.api.get("/agent/schema/v2")).json()["schema"]
    invite = schema["properties"]["chat_config"]["properties"]["invite_config"]
    assert set(invite["properties"]) == {"invitable", "invite_description"}
    assert invite["properties"]["invite_description"]["format"] == "textarea"
    assert "$defs" not in json.dumps(schema)


# --- GET /sessions/: SessionView ---------------------------------------------------------------


async def test_sessions_are_listed_as_views_with_a_light_state(
    service: Service, model: OpenAIWireServer
) -> None:
    api = service.api
    agent_id = await create_agent(api)
    config = await model_config(api, model.base_url)
    session_id = await create_session(api, agent_id, name="kept", chat_model_config=config)
    await chat(api, agent_id, session_id, "hello")
    await asyncio.wait_for(service.dispatcher.runtime(session_id).wait_idle(), 15)

    listed = (await api.get("/sessions/", params={"agent_id": agent_id}, headers=ALICE)).json()
    assert listed["total"] == 1
    [view] = listed["sessions"]
    assert set(view) == recorded_properties("SessionView")
    assert (view["is_running"], view["status"], view["team"]) == (False, "idle", None)
    state = view["session"]["state"]
    assert (state["context"], state["summary"]) == ([], "")
    assert state["tool_context"]["read_file_cache"] == []
    assert state["permission_context"]["mode"] == "default"
    assert state["tasks_context"] == {"tasks": []}
    # the transcript is where the conversation is
    messages = (await api.get(f"/sessions/{session_id}/messages", headers=ALICE)).json()
    hints = [b for b in messages["messages"][-1]["content"] if b["type"] == "hint"]
    assert [h["source"] for h in hints] == [RUNTIME_STATE_SOURCE]


async def test_sessions_of_an_unknown_agent_are_404(service: Service) -> None:
    api = service.api
    agent_id = await create_agent(api)
    assert (
        await api.get("/sessions/", params={"agent_id": "nope"}, headers=ALICE)
    ).status_code == 404
    assert (
        await api.get("/sessions/", params={"agent_id": agent_id}, headers=BOB)
    ).status_code == 404


async def test_a_team_session_carries_its_team_detail(service: Service) -> None:
    api, runtime = service.api, service.runtime
    agent_id = await create_agent(api, {"name": "Lead"})
    leader = await create_session(api, agent_id, name="lead")
    worker = await create_session(api, agent_id, name="w1")
    team = TeamRecord(
        user_id="alice",
        name="crew",
        description="one worker",
        leader_session_id=leader,
        leader_name="Lead",
        members=[TeamMember(name="w1", session_id=worker)],
    )
    await runtime.teams.save(team)
    record = await runtime.storage.load_session("alice", leader)
    await runtime.storage.update_session(record.model_copy(update={"team_id": team.id}))

    view = await session_view(api, agent_id, leader)
    detail = view["team"]
    assert detail["team"]["id"] == team.id
    assert detail["team"]["session_id"] == leader
    assert detail["team"]["data"]["name"] == "crew"
    assert detail["team"]["data"]["members"] == [
        {"owner_id": "alice", "agent_id": agent_id, "session_id": worker, "role": "created"}
    ]
    assert detail["leader_agent"]["data"]["name"] == "Lead"
    [member] = detail["members"]
    assert (member["agent"]["id"], member["agent"]["data"]["name"]) == (agent_id, "w1")
    assert member["session_id"] == worker
    assert (await session_view(api, agent_id, worker))["team"] is None


# --- session titles ----------------------------------------------------------------------------


async def test_an_unnamed_session_is_titled_after_its_first_reply(
    service: Service, model: OpenAIWireServer
) -> None:
    api = service.api
    agent_id = await create_agent(api)
    config = await model_config(api, model.base_url)
    session_id = await create_session(api, agent_id, chat_model_config=config)
    created = (await session_view(api, agent_id, session_id))["session"]["config"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", created["name"])
    assert created["naming"] == {"auto": True}

    await chat(api, agent_id, session_id, "Help me plan a trip to Lisbon in May.")
    view = await until_named(api, agent_id, session_id, TITLE)
    assert view["session"]["config"]["naming"] == {"auto": False}
    [asked] = [r for r in model.requests if "generate_structured_output" in str(r.body)]
    assert "Lisbon" in json.dumps(asked.body["messages"])
    # once only: a second turn leaves the name alone
    await chat(api, agent_id, session_id, "And in June?")
    await asyncio.wait_for(service.dispatcher.runtime(session_id).wait_idle(), 15)
    assert len(model.requests) == 3
    assert len([r for r in model.requests if "generate_structured_output" in str(r.body)]) == 1


async def test_a_failed_title_keeps_an_excerpt_of_the_message(
    service: Service, model: OpenAIWireServer
) -> None:
    api = service.api
    model.reply_func = lambda body: ScriptedReply(status=400)
    agent_id = await create_agent(api)
    config = await model_config(api, model.base_url)
    session_id = await create_session(api, agent_id, chat_model_config=config)
    text = "A long opening message " * 5
    await chat(api, agent_id, session_id, text)
    await until_named(api, agent_id, session_id, text.strip()[:60])


async def test_named_and_renamed_sessions_keep_their_names(
    service: Service, model: OpenAIWireServer
) -> None:
    api = service.api
    agent_id = await create_agent(api)
    config = await model_config(api, model.base_url)
    named = await create_session(api, agent_id, name="Mine", chat_model_config=config)
    assert (await session_view(api, agent_id, named))["session"]["config"]["naming"] == {
        "auto": False
    }
    renamed = await create_session(api, agent_id, chat_model_config=config)
    patched = await api.patch(
        f"/sessions/{renamed}",
        params={"agent_id": agent_id},
        json={"name": "Also mine"},
        headers=ALICE,
    )
    assert patched.json()["config"]["naming"] == {"auto": False}
    for session_id in (named, renamed):
        await chat(api, agent_id, session_id, "hello")
        await asyncio.wait_for(service.dispatcher.runtime(session_id).wait_idle(), 15)
    assert len(model.requests) == 2  # the replies, no title
    assert not [r for r in model.requests if "generate_structured_output" in str(r.body)]
    assert (await session_view(api, agent_id, named))["session"]["config"]["name"] == "Mine"
    assert (await session_view(api, agent_id, renamed))["session"]["config"]["name"] == "Also mine"
