"""`ViewCache` over a real in-process `WorkspaceHost`: views are reused until something changes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from actors.workspaces.host import WorkspaceHost
from actors.workspaces.requests import SkillBundle, WorkspaceRequest, WorkspaceView
from actors.workspaces.views import Changed, ViewCache
from agent_core.tool.execution import ToolInvocation
from tests.support.tool_calls import eventually
from workspaces import LocalWorkspaceManager

REQUEST = WorkspaceRequest(user_id="alice", agent_id="a1", session_id="s1")
KEY = REQUEST.model_dump_json()
SKILL = "---\nname: {name}\ndescription: a skill\n---\n\n# {name}\n"


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[WorkspaceHost]:
    workspace_host = WorkspaceHost(LocalWorkspaceManager(tmp_path / "root"))
    yield workspace_host
    await workspace_host.aclose()


@pytest.fixture
async def cache() -> AsyncIterator[ViewCache]:
    views = ViewCache()
    yield views
    await views.aclose()


async def open_view(
    cache: ViewCache, host: WorkspaceHost, changed: Changed | None = None, cwd: str | None = None
) -> tuple[WorkspaceView, bool]:
    """Open as `RayWorkspaceService.open` does; return the view and whether it was cached."""
    view = cache.get("node", KEY, cwd)
    if view is not None:
        return view, True
    stamp = cache.stamp("node", changed or host.changed)
    view = await host.open(REQUEST, cwd)
    cache.put("node", KEY, cwd, stamp, view)
    return view, False


async def cached_view(cache: ViewCache, host: WorkspaceHost, **kwargs: object) -> WorkspaceView:
    """Open until the view is served from the cache (the host's first answer voids the first)."""
    for _ in range(5):
        view, cached = await open_view(cache, host, **kwargs)  # type: ignore[arg-type]
        if cached:
            return view
    raise AssertionError("the view was never cached")


async def voided(cache: ViewCache) -> bool:
    return cache.get("node", KEY, None) is None


def skill_names(view: WorkspaceView) -> list[str]:
    return [skill.name for skill in view.skills]


async def test_a_view_is_reused_until_a_skill_is_added(
    host: WorkspaceHost, cache: ViewCache
) -> None:
    first = await cached_view(cache, host)
    assert skill_names(first) == []

    await host.add_skill(REQUEST, SkillBundle.pack({"SKILL.md": SKILL.format(name="new").encode()}))
    assert await eventually(lambda: voided(cache), within=5.0)
    view, cached = await open_view(cache, host)
    assert not cached
    assert skill_names(view) == ["new"]


async def test_a_tool_call_in_the_workspace_voids_its_views(
    host: WorkspaceHost, cache: ViewCache
) -> None:
    view = await cached_view(cache, host)
    made = SKILL.format(name="made").replace("\n", "\\n")
    command = f"mkdir -p skills/made && printf -- '{made}' > skills/made/SKILL.md"
    invocation = ToolInvocation(tool="Bash", cwd=view.cwd, arguments={"command": command})
    outputs = [output async for output in host.execute(REQUEST, invocation)]
    assert outputs[-1].chunk is not None
    assert outputs[-1].chunk.is_final

    assert await eventually(lambda: voided(cache), within=5.0)
    view, _ = await open_view(cache, host)
    assert skill_names(view) == ["made"]


async def test_views_are_dropped_when_the_host_stops_answering(
    host: WorkspaceHost, cache: ViewCache
) -> None:
    dead = asyncio.Event()

    async def changed(seen: int) -> int:
        """The host's `changed`, until the host goes away (as a dead actor's call fails)."""
        answer = asyncio.ensure_future(host.changed(seen))
        gone = asyncio.ensure_future(dead.wait())
        await asyncio.wait([answer, gone], return_when=asyncio.FIRST_COMPLETED)
        gone.cancel()
        if dead.is_set():
            answer.cancel()
            raise ConnectionError("the host is gone")
        return answer.result()

    await cached_view(cache, host, changed=changed)
    dead.set()
    assert await eventually(lambda: voided(cache), within=5.0)
    _, cached = await open_view(cache, host, changed=host.changed)
    assert not cached  # opened again, and the host is followed anew
    await cached_view(cache, host)


async def test_a_view_expires_and_each_cwd_has_its_own(host: WorkspaceHost) -> None:
    now = [0.0]
    cache = ViewCache(ttl=30.0, clock=lambda: now[0])
    try:
        await cached_view(cache, host)
        assert cache.get("node", KEY, "sub") is None
        sub = await cached_view(cache, host, cwd="sub")
        assert sub.cwd.endswith("sub")
        assert cache.get("other-node", KEY, None) is None  # the workspace moved
        now[0] = 30.0
        assert cache.get("node", KEY, None) is None
    finally:
        await cache.aclose()


async def test_the_oldest_views_go_beyond_the_bound(host: WorkspaceHost) -> None:
    cache = ViewCache(max_views=1)
    try:
        await cached_view(cache, host)
        await cached_view(cache, host, cwd="sub")
        assert cache.get("node", KEY, None) is None
        assert cache.get("node", KEY, "sub") is not None
    finally:
        await cache.aclose()
