"""`/credential/`: update and delete, masking round trips, and secrets encrypted at rest."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet

from actors.client import InProcessDispatcher, RuntimeClient
from actors.errors import SecretKeyError
from actors.settings import RuntimeSettings
from agent_core.credential import OpenAICredential
from tests.unit.serve._service import SECRET_KEY, Service

pytestmark = [pytest.mark.redis]

ALICE = {"X-User-ID": "alice"}
BOB = {"X-User-ID": "bob"}
SECRET = "sk-live-0123456789abcdef"
MASK = "********"


def openai(api_key: str = SECRET, base_url: str = "http://one/v1") -> dict[str, Any]:
    return {"data": {"type": "openai_credential", "api_key": api_key, "base_url": base_url}}


async def create_credential(api: httpx.AsyncClient, body: dict[str, Any] | None = None) -> str:
    response = await api.post("/credential/", json=body or openai(), headers=ALICE)
    assert response.status_code == 201, response.text
    return str(response.json()["credential_id"])


async def stored_secret(service: Service, credential_id: str) -> str:
    record = await service.runtime.credentials.get("alice", credential_id)
    return record.data.secret("api_key")


async def test_secrets_are_encrypted_at_rest(service: Service) -> None:
    credential_id = await create_credential(service.api)

    raw = await service.runtime.redis.get(f"troupe:credential:{credential_id}")

    assert raw is not None
    assert SECRET.encode() not in raw
    assert b"http://one/v1" in raw  # only the secret fields are encrypted
    assert await stored_secret(service, credential_id) == SECRET


async def test_patch_with_the_masked_secret_keeps_the_stored_one(service: Service) -> None:
    api = service.api
    credential_id = await create_credential(api)
    view = (await api.get("/credential/", headers=ALICE)).json()["credentials"][0]
    view["data"]["base_url"] = "http://two/v1"

    response = await api.patch(
        f"/credential/{credential_id}", json={"data": view["data"]}, headers=ALICE
    )

    assert response.status_code == 200, response.text
    updated = response.json()
    assert updated["id"] == credential_id
    assert updated["editable"] is True
    assert updated["data"]["api_key"] == MASK
    assert updated["data"]["base_url"] == "http://two/v1"
    assert SECRET not in response.text
    assert await stored_secret(service, credential_id) == SECRET
    raw = await service.runtime.redis.get(f"troupe:credential:{credential_id}")
    assert SECRET.encode() not in raw
    assert MASK.encode() not in raw


async def test_patch_with_a_new_secret_replaces_it(service: Service) -> None:
    api = service.api
    credential_id = await create_credential(api)

    response = await api.patch(
        f"/credential/{credential_id}", json=openai("sk-rotated"), headers=ALICE
    )

    assert response.status_code == 200, response.text
    assert "sk-rotated" not in response.text
    assert await stored_secret(service, credential_id) == "sk-rotated"
    listed = (await api.get("/credential/", headers=ALICE)).json()
    assert listed["total"] == 1
    assert listed["credentials"][0]["data"]["api_key"] == MASK


async def test_the_mask_is_not_a_secret_on_create(service: Service) -> None:
    response = await service.api.post("/credential/", json=openai(MASK), headers=ALICE)

    assert response.status_code == 422
    error = response.json()["detail"][0]
    assert error["loc"] == ["body", "data"]
    assert "api_key" in error["msg"]


async def test_patch_validation_names_the_field_and_hides_the_secret(service: Service) -> None:
    api = service.api
    credential_id = await create_credential(api)
    path = f"/credential/{credential_id}"

    no_key = {"data": {"type": "openai_credential"}}
    response = await api.patch(path, json=no_key, headers=ALICE)
    assert response.status_code == 422
    assert any(e["loc"][-1] == "api_key" for e in response.json()["detail"])
    bad_url = await api.patch(path, json=openai("sk-other-secret", base_url=""), headers=ALICE)
    assert bad_url.status_code == 422
    assert any(e["loc"][-1] == "base_url" for e in bad_url.json()["detail"])
    assert "sk-other-secret" not in bad_url.text
    assert (await api.patch(path, json={}, headers=ALICE)).status_code == 422
    assert await stored_secret(service, credential_id) == SECRET


async def test_unknown_and_foreign_credentials_are_404(service: Service) -> None:
    api = service.api
    credential_id = await create_credential(api)

    responses = [
        await api.patch(f"/credential/{credential_id}", json=openai("sk-bob"), headers=BOB),
        await api.delete(f"/credential/{credential_id}", headers=BOB),
        await api.patch("/credential/nope", json=openai(), headers=ALICE),
        await api.delete("/credential/nope", headers=ALICE),
    ]

    for response in responses:
        assert response.status_code == 404, response.text
        assert response.json()["error"]["type"] == "CredentialNotFound"
    assert await stored_secret(service, credential_id) == SECRET


async def test_delete_removes_the_credential(service: Service) -> None:
    api = service.api
    credential_id = await create_credential(api)

    response = await api.delete(f"/credential/{credential_id}", headers=ALICE)

    assert response.status_code == 204
    assert response.content == b""
    assert (await api.get("/credential/", headers=ALICE)).json() == {"credentials": [], "total": 0}
    assert (await api.delete(f"/credential/{credential_id}", headers=ALICE)).status_code == 404
    patch = await api.patch(f"/credential/{credential_id}", json=openai(), headers=ALICE)
    assert patch.status_code == 404
    assert await service.runtime.redis.keys(f"*{credential_id}*") == []


def runtime(redis_url: str, secret_key: str | None) -> RuntimeClient:
    settings = RuntimeSettings(redis_url=redis_url, secret_key=secret_key)
    return RuntimeClient(settings, InProcessDispatcher(settings))


async def test_another_key_cannot_read_secrets_and_rotation_keeps_old_ones(
    service: Service, redis_url: str
) -> None:
    credential_id = await create_credential(service.api)
    new_key = Fernet.generate_key().decode()
    stranger, rotated = runtime(redis_url, new_key), runtime(redis_url, f"{new_key},{SECRET_KEY}")
    try:
        with pytest.raises(SecretKeyError, match="cannot be decrypted"):
            await stranger.credentials.list_credentials("alice")
        record = await rotated.credentials.get("alice", credential_id)
        assert record.data.secret("api_key") == SECRET
        await rotated.credentials.update("alice", credential_id, record.data)
        assert (await stranger.credentials.get("alice", credential_id)).data.secret(
            "api_key"
        ) == SECRET
    finally:
        await stranger.aclose()
        await rotated.aclose()


async def test_without_a_configured_key_replicas_share_a_generated_one(redis_url: str) -> None:
    first, second = runtime(redis_url, None), runtime(redis_url, None)
    try:
        created = await first.credentials.create("alice", OpenAICredential(api_key=SECRET))
        record = await second.credentials.get("alice", created.id)
        assert record.data.secret("api_key") == SECRET
        raw = await first.redis.get(f"troupe:credential:{created.id}")
        assert SECRET.encode() not in raw
        assert await first.redis.exists("troupe:secret_key")
    finally:
        await first.aclose()
        await second.aclose()


def test_a_malformed_key_fails_at_startup(redis_url: str) -> None:
    with pytest.raises(SecretKeyError, match="Fernet") as caught:
        runtime(redis_url, "not-a-key")
    assert "not-a-key" not in str(caught.value)
