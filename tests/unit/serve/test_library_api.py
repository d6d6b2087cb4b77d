"""`/mcp`, `/skill` and the workspace routes that fill a workspace from the library or an upload."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from actors.client import MAX_UPLOAD_REQUEST_BYTES
from agent_core.mcp import MCPClientConfig, StdioMCPConfig
from tests.support import COMPAT_DIR
from tests.support.mcp_servers import DEMO_SERVER
from tests.unit.serve._workspace_api import ALICE, BOB, WorkspaceAPI, make_session, serve_api

pytestmark = [pytest.mark.redis, pytest.mark.integration]

RECORDED = json.loads((COMPAT_DIR / "agentscope-openapi.json").read_text())
SECRET = "sk-do-not-show"
DEMO: dict[str, Any] = {
    "name": "demo",
    "is_stateful": True,
    "mcp_config": {
        "type": "stdio_mcp",
        "command": sys.executable,
        "args": [str(DEMO_SERVER)],
        "env": {"DEMO_API_KEY": SECRET},
    },
    "execution_timeout": 20,
}
SKILL_MD = b"---\nname: pdf\ndescription: Extract text from PDFs.\n---\n\n# pdf\n\nDo it well.\n"
SKILL = {"pdf/SKILL.md": SKILL_MD, "pdf/scripts/run.sh": b"echo run\n"}


@pytest.fixture
async def service(redis_url: str, tmp_path: Path) -> AsyncIterator[WorkspaceAPI]:
    async with serve_api(redis_url, tmp_path / "root", workspace_backend="local") as service:
        yield service


@pytest.fixture
def raw_redis(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def upload_form(
    files: dict[str, bytes], entries: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The multipart form of a folder upload (the manifest lists `files` unless given)."""
    listed = (
        entries
        if entries is not None
        else [{"path": path, "size": len(data)} for path, data in files.items()]
    )
    parts = [("files", (path.rsplit("/", 1)[-1], data)) for path, data in files.items()]
    return {"data": {"manifest": json.dumps({"entries": listed})}, "files": parts}


async def upload(
    api: httpx.AsyncClient, scope: dict[str, str], form: dict[str, Any]
) -> httpx.Response:
    return await api.post("/workspace/skill/upload", params=scope, headers=ALICE, **form)


def assert_shape(value: dict[str, Any], schema: str) -> None:
    recorded = RECORDED["components"]["schemas"][schema]
    assert set(recorded.get("required", [])) <= set(value) <= set(recorded["properties"]), schema


async def test_mcps_added_by_hand_are_kept_in_the_library(
    service: WorkspaceAPI, raw_redis: redis.Redis
) -> None:
    api = service.api
    first, second = await make_session(api), await make_session(api)
    assert (await api.get("/mcp", headers=ALICE)).json() == []
    added = await api.post("/workspace/mcp", params=first, json=DEMO, headers=ALICE)
    assert added.status_code == 201, added.text
    again = await api.post("/workspace/mcp", params=second, json=DEMO, headers=ALICE)
    assert again.status_code == 201

    library = await api.get("/mcp", headers=ALICE)
    assert library.status_code == 200
    (view,) = library.json()
    assert_shape(view, "MCPView")
    assert view["name"] == "demo"
    assert view["is_stateful"] is True
    assert view["enabled"] is True
    assert view["hub_id"] is None
    assert SECRET not in library.text
    assert (await api.get("/mcp", headers=BOB)).json() == []
    stored = raw_redis.get(service.runtime.library.keys.library_mcp(view["id"]))
    assert stored is not None
    assert SECRET.encode() not in stored  # the config is encrypted at rest
    record = await service.runtime.library.get_mcp("alice", view["id"])
    assert record.config.mcp_config == StdioMCPConfig(
        command=sys.executable, args=[str(DEMO_SERVER)], env={"DEMO_API_KEY": SECRET}
    )


async def test_library_mcps_are_renamed_toggled_and_deleted(service: WorkspaceAPI) -> None:
    api = service.api
    scope = await make_session(api)
    assert (await api.post("/workspace/mcp", params=scope, json=DEMO, headers=ALICE)).is_success
    other = MCPClientConfig(
        name="other", is_stateful=True, mcp_config=StdioMCPConfig(command="/bin/true")
    )
    await service.runtime.library.remember_mcp("alice", other)
    views = {v["name"]: v for v in (await api.get("/mcp", headers=ALICE)).json()}
    assert list(views) == ["demo", "other"]
    mcp_id = views["demo"]["id"]

    async def patch(body: dict[str, Any], mcp: str = mcp_id, **kw: Any) -> httpx.Response:
        return await api.patch(f"/mcp/{mcp}", json=body, headers=kw.get("headers", ALICE))

    renamed = await patch({"name": "zdemo", "enabled": False})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json() == {**views["demo"], "name": "zdemo", "enabled": False}
    assert [v["name"] for v in (await api.get("/mcp", headers=ALICE)).json()] == ["other", "zdemo"]
    record = await service.runtime.library.get_mcp("alice", mcp_id)
    assert record.config.name == "zdemo"

    taken = await patch({"name": "other"})
    assert taken.status_code == 409
    assert "'other'" in taken.json()["detail"]
    bad = await patch({"name": "has space"})
    assert bad.status_code == 422
    assert ["body", "name"] in [e["loc"] for e in bad.json()["detail"]]
    values = await patch({"values": {"api_key": "x"}})
    assert values.status_code == 400
    assert "no card" in values.json()["detail"]
    assert (await patch({"enabled": True}, headers=BOB)).status_code == 404
    assert (await patch({"enabled": True}, mcp="nope")).status_code == 404

    # The freed name can be taken again; the old one is no longer held.
    assert (await patch({"name": "demo"}, mcp=views["other"]["id"])).status_code == 200

    assert (await api.delete(f"/mcp/{mcp_id}", headers=BOB)).status_code == 404
    assert (await api.delete(f"/mcp/{mcp_id}", headers=ALICE)).status_code == 204
    gone = await api.delete(f"/mcp/{mcp_id}", headers=ALICE)
    assert gone.status_code == 404
    assert "installed MCP" in gone.json()["detail"]
    # The workspace keeps the MCP server the library no longer holds.
    listed = (await api.get("/workspace/mcp", params=scope, headers=ALICE)).json()
    assert [m["name"] for m in listed] == ["demo"]


async def test_library_mcps_are_added_to_a_workspace_one_by_one(service: WorkspaceAPI) -> None:
    api = service.api
    first = await make_session(api)
    assert (await api.post("/workspace/mcp", params=first, json=DEMO, headers=ALICE)).is_success
    broken = MCPClientConfig(
        name="broken",
        is_stateful=True,
        mcp_config=StdioMCPConfig(command="/nonexistent/mcp-server"),
        timeout=5,
    )
    await service.runtime.library.remember_mcp("alice", broken)
    ids = {v["name"]: v["id"] for v in (await api.get("/mcp", headers=ALICE)).json()}
    elsewhere = await make_session(api, workspace_id="elsewhere")
    assert elsewhere["agent_id"] != first["agent_id"]

    body = {"mcp_ids": [ids["demo"], ids["broken"], "unknown"]}
    added = await api.post(
        "/workspace/mcp/from-library", params=elsewhere, json=body, headers=ALICE
    )
    assert added.status_code == 201, added.text
    result = added.json()
    assert_shape(result, "AddFromLibraryResponse")
    assert result["added"] == ["demo"]
    assert set(result["failed"]) == {"broken", "unknown"}
    assert result["failed"]["unknown"] == "Not in your library."
    assert "broken" in result["failed"]["broken"]
    listed = (await api.get("/workspace/mcp", params=elsewhere, headers=ALICE)).json()
    assert [(m["name"], m["is_healthy"]) for m in listed] == [("demo", True)]

    again = await api.post(
        "/workspace/mcp/from-library",
        params=elsewhere,
        json={"mcp_ids": [ids["demo"]]},
        headers=ALICE,
    )
    assert again.json() == {"added": [], "failed": {}}  # already there: skipped
    foreign = await api.post(
        "/workspace/mcp/from-library", params=elsewhere, json={"mcp_ids": []}, headers=BOB
    )
    assert foreign.status_code == 404
    bob = await make_session(api, BOB)
    stolen = await api.post(
        "/workspace/mcp/from-library", params=bob, json={"mcp_ids": [ids["demo"]]}, headers=BOB
    )
    assert stolen.json() == {"added": [], "failed": {ids["demo"]: "Not in your library."}}
    too_many = {"mcp_ids": ["x"] * 101}
    refused = await api.post(
        "/workspace/mcp/from-library", params=elsewhere, json=too_many, headers=ALICE
    )
    assert refused.status_code == 422


async def test_uploaded_skills_are_installed_and_kept_in_the_library(
    service: WorkspaceAPI,
) -> None:
    api = service.api
    scope = await make_session(api)
    uploaded = await upload(api, scope, upload_form(SKILL))
    assert uploaded.status_code == 201, uploaded.text
    assert uploaded.json()["name"] == "pdf"
    installed = service.workdir("alice", scope) / "skills" / "pdf"
    assert (installed / "scripts" / "run.sh").read_bytes() == b"echo run\n"
    listed = (await api.get("/workspace/skill", params=scope, headers=ALICE)).json()
    assert [s["name"] for s in listed] == ["pdf"]

    (view,) = (await api.get("/skill", headers=ALICE)).json()
    assert_shape(view, "SkillView")
    assert view["name"] == "pdf"
    assert view["description"] == "Extract text from PDFs."
    record = await api.get(f"/skill/{view['id']}", headers=ALICE)
    assert record.status_code == 200
    assert_shape(record.json(), "SkillRecord")
    assert record.json()["markdown"] == SKILL_MD.decode()
    assert (await api.get(f"/skill/{view['id']}", headers=BOB)).status_code == 404
    assert (await api.get("/skill", headers=BOB)).json() == []

    elsewhere = await make_session(api, workspace_id="elsewhere")
    body = {"skill_ids": [view["id"], "unknown"]}
    added = await api.post(
        "/workspace/skill/from-library", params=elsewhere, json=body, headers=ALICE
    )
    assert added.status_code == 201, added.text
    assert added.json() == {"added": ["pdf"], "failed": {"unknown": "Not in your library."}}
    copy = service.root / "alice" / "elsewhere" / "skills" / "pdf"
    assert (copy / "scripts" / "run.sh").read_bytes() == b"echo run\n"

    # An upload under a name the library holds installs, and leaves the library's copy alone.
    changed = {**SKILL, "pdf/scripts/run.sh": b"echo changed\n"}
    assert (await upload(api, elsewhere, upload_form(changed))).status_code == 201
    assert (copy / "scripts" / "run.sh").read_bytes() == b"echo changed\n"
    assert len((await api.get("/skill", headers=ALICE)).json()) == 1

    assert (await api.delete(f"/skill/{view['id']}", headers=BOB)).status_code == 404
    assert (await api.delete(f"/skill/{view['id']}", headers=ALICE)).status_code == 204
    assert (await api.get(f"/skill/{view['id']}", headers=ALICE)).status_code == 404
    assert (installed / "SKILL.md").is_file()  # the workspace keeps its copy


@pytest.mark.parametrize(
    ("files", "entries", "words"),
    [
        ({"../x/SKILL.md": SKILL_MD}, None, "unsafe upload path"),
        ({"/pdf/SKILL.md": SKILL_MD}, None, "unsafe upload path"),
        ({"pdf/../../SKILL.md": SKILL_MD}, None, "unsafe upload path"),
        ({"pdf\\..\\SKILL.md": SKILL_MD}, None, "unsafe upload path"),
        ({"SKILL.md": SKILL_MD}, None, "unsafe upload path"),
        ({"pdf/SKILL.md": SKILL_MD, "other/x": b"x"}, None, "single folder"),
        ({"pdf/README.md": b"no skill"}, None, "no SKILL.md"),
        ({"pdf/SKILL.md": b"# no frontmatter\n"}, None, "frontmatter"),
        ({"pdf/SKILL.md": b"\xff\xfe"}, None, "not UTF-8"),
        ({"pdf/SKILL.md": SKILL_MD}, [], "no files"),
        (SKILL, [{"path": "pdf/SKILL.md", "size": len(SKILL_MD)}], "lists 1 files but 2"),
        ({"pdf/SKILL.md": SKILL_MD}, [{"path": "pdf/SKILL.md", "size": 3}], "declared as 3"),
        (
            {"pdf/SKILL.md": SKILL_MD},
            [{"path": "pdf/SKILL.md", "size": 17 * 1024 * 1024}],
            "byte limit",
        ),
        (
            {f"pdf/f{i}": b"" for i in range(101)},
            None,
            "at most 100 files",
        ),
        (
            {"pdf/SKILL.md": SKILL_MD, "pdf/SKILL.md/x": b"x"},
            None,
            "both a file and a folder",
        ),
        ({"pdf/SKILL.md": SKILL_MD}, [{"path": "pdf/SKILL.md", "size": -1}], "invalid manifest"),
    ],
)
async def test_uploads_are_checked_hard(
    service: WorkspaceAPI, files: dict[str, bytes], entries: list[Any] | None, words: str
) -> None:
    scope = await make_session(service.api)
    refused = await upload(service.api, scope, upload_form(files, entries))
    assert refused.status_code == 422, refused.text
    assert words in refused.json()["detail"]
    assert (await service.api.get("/skill", headers=ALICE)).json() == []
    assert not (service.workdir("alice", scope) / "skills" / "pdf").exists()


async def test_upload_bodies_are_bounded_before_they_are_read(service: WorkspaceAPI) -> None:
    scope = await make_session(service.api)
    url = "/workspace/skill/upload"
    huge = {**ALICE, "Content-Length": str(MAX_UPLOAD_REQUEST_BYTES + 1)}
    too_large = await service.api.post(url, params=scope, headers=huge, content=b"x")
    assert too_large.status_code == 413
    assert "byte limit" in too_large.json()["detail"]

    async def stream() -> AsyncIterator[bytes]:
        yield b"x"

    unknown = await service.api.post(url, params=scope, headers=ALICE, content=stream())
    assert unknown.status_code == 411
    malformed = await service.api.post(url, params=scope, json={}, headers=ALICE)
    assert malformed.status_code == 422


async def test_openapi_matches_agentscopes_library_routes(service: WorkspaceAPI) -> None:
    ours = (await service.api.get("/openapi.json")).json()
    for path, methods in {
        "/mcp": ("get",),
        "/mcp/{mcp_id}": ("patch", "delete"),
        "/skill": ("get",),
        "/skill/{skill_id}": ("get", "delete"),
        "/workspace/mcp/from-library": ("post",),
        "/workspace/skill/from-library": ("post",),
        "/workspace/skill/upload": ("post",),
        "/workspace/directories": ("get",),
        "/workspace/files/download-token": ("post",),
        "/workspace/files": ("get",),
    }.items():
        for method in methods:
            recorded = RECORDED["paths"][path][method]
            mine = ours["paths"][path][method]
            names = {p["name"] for p in recorded.get("parameters", [])}
            assert names == {p["name"] for p in mine.get("parameters", [])}, (path, method)
    for schema in (
        "MCPView",
        "SkillView",
        "SkillRecord",
        "UpdateMCPRequest",
        "AddFromLibraryRequest",
        "AddSkillsFromLibraryRequest",
        "AddFromLibraryResponse",
        "DirectoryListing",
        "DirectoryEntry",
        "DownloadTokenResponse",
        "Body_upload_skill_workspace_skill_upload_post",
    ):
        recorded = RECORDED["components"]["schemas"][schema]
        mine = ours["components"]["schemas"][schema]
        assert set(mine["properties"]) == set(recorded["properties"]), schema
        assert set(mine.get("required", [])) == set(recorded.get("required", [])), schema


async def test_a_name_left_to_a_vanished_record_is_taken_over(
    service: WorkspaceAPI, raw_redis: redis.Redis
) -> None:
    keys = service.runtime.library.keys
    raw_redis.hset(keys.library_names("alice", "mcps"), "demo", "ghost")  # a write cut short
    scope = await make_session(service.api)
    added = await service.api.post("/workspace/mcp", params=scope, json=DEMO, headers=ALICE)
    assert added.status_code == 201, added.text
    (view,) = (await service.api.get("/mcp", headers=ALICE)).json()
    assert view["name"] == "demo"
    assert raw_redis.hget(keys.library_names("alice", "mcps"), "demo") == view["id"].encode()
