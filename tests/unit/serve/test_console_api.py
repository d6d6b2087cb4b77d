"""The web console's files at `/console/`, local Swagger UI at `/docs`, and the team status API."""

from __future__ import annotations

import re

import httpx

from actors.bus.items import ChatItem
from actors.teams.store import TeamMember, TeamRecord
from tests.unit.serve._service import Service

ALICE = {"X-User-ID": "alice"}
BOB = {"X-User-ID": "bob"}
# A URL with a scheme or a protocol-relative one: the page would load it from elsewhere.
_REMOTE = re.compile(r"""(src|href)\s*=\s*["'](https?:)?//|@import\s+url\(\s*["']?(https?:)?//""")


async def test_the_console_is_served_from_local_files(service: Service) -> None:
    api = service.api
    redirect = await api.get("/console")
    assert (redirect.status_code, redirect.headers["location"]) == (307, "/console/")
    index = await api.get("/console/")
    assert index.status_code == 200
    assert index.headers["content-type"].startswith("text/html")
    assert '<script src="app.js">' in index.text
    for name, kind in (("app.js", "javascript"), ("style.css", "text/css")):
        asset = await api.get(f"/console/{name}")
        assert asset.status_code == 200
        assert kind in asset.headers["content-type"]
        assert not _REMOTE.search(asset.text)
    assert not _REMOTE.search(index.text)
    assert (await api.get("/console/missing.js")).status_code == 404


async def test_docs_load_swagger_ui_from_this_server(service: Service) -> None:
    api = service.api
    page = await api.get("/docs")
    assert page.status_code == 200
    assets = re.findall(r"""(?:src|href)=["']?([^"' >]+)""", page.text)
    assert "/docs/assets/swagger-ui-bundle.js" in assets
    assert "/docs/assets/swagger-ui.css" in assets
    assert not [url for url in assets if "//" in url]
    for url in assets:
        assert (await api.get(url)).status_code == 200, url
    assert "'/openapi.json'" in page.text or '"/openapi.json"' in page.text
    assert (await api.get("/docs/oauth2-redirect")).status_code == 200
    assert (await api.get("/redoc")).status_code == 404  # it would need a CDN
    paths = (await api.get("/openapi.json")).json()["paths"]
    assert not [p for p in paths if p.startswith(("/console", "/docs"))]


async def _team(service: Service) -> tuple[str, str, str]:
    api, runtime = service.api, service.runtime
    created = await api.post("/agent/", json={"name": "Lead"}, headers=ALICE)
    agent_id = created.json()["agent_id"]
    sessions = []
    for name in ("lead", "w1"):
        response = await api.post(
            "/sessions/", json={"agent_id": agent_id, "name": name}, headers=ALICE
        )
        sessions.append(response.json()["session_id"])
    leader, worker = sessions
    team = TeamRecord(
        user_id="alice",
        name="crew",
        description="one worker",
        leader_session_id=leader,
        leader_name="Lead",
        members=[TeamMember(name="w1", session_id=worker)],
    )
    await runtime.teams.save(team)
    for session_id in sessions:
        record = await runtime.storage.load_session("alice", session_id)
        await runtime.storage.update_session(record.model_copy(update={"team_id": team.id}))
    return team.id, leader, worker


async def test_a_team_shows_each_sessions_status_and_inbox_depth(service: Service) -> None:
    api, runtime = service.api, service.runtime
    team_id, leader, worker = await _team(service)
    # items waiting in the worker's inbox (delivered without waking it)
    for n in range(2):
        await runtime.bus.put(worker, ChatItem(item_id=f"msg-{n}", input=None))

    for session_id in (leader, worker):  # the leader's and a member's view are the same
        response = await api.get(f"/sessions/{session_id}/team", headers=ALICE)
        assert response.status_code == 200, response.text
        assert response.json() == {
            "team_id": team_id,
            "name": "crew",
            "description": "one worker",
            "leader": {"name": "Lead", "session_id": leader, "status": "idle", "inbox_depth": 0},
            # Its inputs wait for an owner that was never activated.
            "members": [
                {"name": "w1", "session_id": worker, "status": "starting", "inbox_depth": 2}
            ],
        }

    await runtime.storage.delete_session("alice", worker)  # gone, still on the roster
    body = (await api.get(f"/sessions/{leader}/team", headers=ALICE)).json()
    assert body["members"][0]["status"] is None


async def test_no_team_is_a_404_naming_the_session(service: Service) -> None:
    api = service.api
    created = await api.post("/agent/", json={"name": "Solo"}, headers=ALICE)
    agent_id = created.json()["agent_id"]
    session = await api.post("/sessions/", json={"agent_id": agent_id}, headers=ALICE)
    session_id = session.json()["session_id"]
    response = await api.get(f"/sessions/{session_id}/team", headers=ALICE)
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "NotInTeam"
    assert session_id in response.json()["detail"]


async def test_another_users_team_is_not_found(service: Service) -> None:
    _, leader, _ = await _team(service)
    response: httpx.Response = await service.api.get(f"/sessions/{leader}/team", headers=BOB)
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "SessionNotFound"
