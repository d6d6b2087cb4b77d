"""`--auth keys`: API keys name the caller; without one nothing is served, with another user's
key another user's resources do not exist. `--auth dev` keeps the X-User-ID header.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.client import InProcessDispatcher
from actors.storage.api_keys import ApiKeyStore
from serve import create_app
from serve.auth import AuthMode
from serve.cli_commands import cli
from serve.client import APIError, NotFoundError, TroupeClient
from workspaces import LocalWorkspaceManager

pytestmark = [pytest.mark.redis]


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[ApiKeyStore]:
    redis = Redis.from_url(redis_url)
    yield ApiKeyStore(redis, Keys("troupe"))
    await redis.aclose()


async def _api(redis_url: str, tmp_path: Path, auth: AuthMode) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(
        storage=redis_url,
        workspace_manager=LocalWorkspaceManager(tmp_path / "ws", ttl=60),
        dispatcher=InProcessDispatcher,
        auth=auth,
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client


@pytest.fixture
async def api(redis_url: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async for client in _api(redis_url, tmp_path, "keys"):
        yield client


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_no_key_or_a_bad_key_is_401(api: httpx.AsyncClient, store: ApiKeyStore) -> None:
    token, _ = await store.create("alice")
    key_id = token.removeprefix("trp_").split(".")[0]

    missing = await api.get("/agent/")
    header_only = await api.get("/agent/", headers={"X-User-ID": "alice"})
    wrong_secret = await api.get("/agent/", headers=_bearer(f"trp_{key_id}.not-the-secret"))
    garbage = await api.get("/agent/", headers=_bearer("hello"))

    for response in (missing, header_only, wrong_secret, garbage):
        assert response.status_code == 401, response.text
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["error"]["type"] == "Unauthorized"
    assert (await api.get("/agent/", headers=_bearer(token))).status_code == 200


async def test_a_key_acts_as_its_user_and_foreign_resources_are_404(
    api: httpx.AsyncClient, store: ApiKeyStore
) -> None:
    alice, _ = await store.create("alice")
    bob, _ = await store.create("bob")
    created = await api.post("/agent/", json={"name": "Friday"}, headers=_bearer(alice))
    assert created.status_code == 201, created.text
    agent_id = created.json()["agent_id"]
    session = await api.post("/sessions/", json={"agent_id": agent_id}, headers=_bearer(alice))
    assert session.status_code == 201, session.text
    session_id = session.json()["session_id"]

    # The X-User-ID header cannot borrow alice's identity under bob's key.
    as_bob = {**_bearer(bob), "X-User-ID": "alice"}
    rename = {"name": "Mine now"}
    assert (await api.patch(f"/agent/{agent_id}", json=rename, headers=as_bob)).status_code == 404
    status = f"/sessions/{session_id}/status"
    assert (await api.get(status, headers=as_bob)).status_code == 404
    assert (await api.get(f"/sessions/{session_id}/messages", headers=as_bob)).status_code == 404
    assert (await api.get("/agent/", headers=as_bob)).json()["agents"] == []
    assert (await api.get(status, headers=_bearer(alice))).status_code == 200


async def test_a_revoked_key_stops_working(api: httpx.AsyncClient, store: ApiKeyStore) -> None:
    token, record = await store.create("alice", name="laptop")
    assert [k.key_id for k in await store.list("alice")] == [record.key_id]

    assert await store.revoke(record.key_id)

    assert (await api.get("/agent/", headers=_bearer(token))).status_code == 401
    assert await store.list() == []


async def test_the_store_keeps_only_a_hash(store: ApiKeyStore, redis_url: str) -> None:
    token, record = await store.create("alice")
    secret = token.split(".", 1)[1]

    raw = await Redis.from_url(redis_url).get(Keys("troupe").api_key(record.key_id))

    assert raw is not None
    assert secret.encode() not in raw
    assert (await store.resolve(token)) == record


async def test_admin_routes_need_an_admin_key(api: httpx.AsyncClient, store: ApiKeyStore) -> None:
    user, _ = await store.create("alice")
    operator, _ = await store.create("ops", admin=True)

    assert (await api.get("/admin/status", headers=_bearer(user))).status_code == 403
    assert (await api.get("/admin/status", headers=_bearer(operator))).status_code == 200


async def test_health_says_how_to_sign_in_without_asking_who(
    api: httpx.AsyncClient, redis_url: str, tmp_path: Path
) -> None:
    keyed = await api.get("/health")
    async for dev_api in _api(redis_url, tmp_path, "dev"):
        dev = await dev_api.get("/health")
    assert (keyed.status_code, keyed.json()["auth"]) == (200, "keys")
    assert (dev.status_code, dev.json()["auth"]) == (200, "dev")


async def test_dev_mode_trusts_the_header(redis_url: str, tmp_path: Path) -> None:
    async for api in _api(redis_url, tmp_path, "dev"):
        assert (await api.get("/agent/")).status_code == 401
        assert (await api.get("/agent/", headers={"X-User-ID": " "})).status_code == 401
        assert (await api.get("/agent/", headers={"X-User-ID": "alice"})).status_code == 200


async def test_the_client_sends_its_key(api: httpx.AsyncClient, store: ApiKeyStore) -> None:
    token, _ = await store.create("alice")
    transport = api._transport  # the in-process app

    bob_token, _ = await store.create("bob")

    async with TroupeClient("http://api", user="bob", api_key=token, transport=transport) as me:
        agent_id = await me.create_agent("Friday")
        session_id = await me.create_session(agent_id)
        assert [a.id for a in await me.list_agents()] == [agent_id]
    async with TroupeClient("http://api", user="alice", transport=transport) as keyless:
        with pytest.raises(APIError, match="API key") as refused:
            await keyless.list_agents()
        assert refused.value.status == 401
    async with TroupeClient("http://api", api_key=bob_token, transport=transport) as bob:
        with pytest.raises(NotFoundError):
            await bob.session_status(session_id)


def test_apikey_cli_creates_lists_and_revokes(redis_url: str) -> None:
    runner = CliRunner()
    env = {"TROUPE_REDIS_URL": redis_url}

    created = runner.invoke(cli, ["apikey", "create", "--user", "alice", "--name", "ci"], env=env)
    listed = runner.invoke(cli, ["apikey", "list", "--user", "alice"], env=env)
    token = created.output.strip()
    revoked = runner.invoke(cli, ["apikey", "revoke", token], env=env)
    again = runner.invoke(cli, ["apikey", "revoke", token], env=env)

    assert created.exit_code == 0, created.output
    assert token.startswith("trp_")
    assert '"user_id": "alice"' in listed.output
    assert '"name": "ci"' in listed.output
    assert token.split(".")[1] not in listed.output
    assert revoked.exit_code == 0, revoked.output
    assert again.exit_code == 4
