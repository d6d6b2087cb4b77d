"""Download tokens: bound to user, session and path, short-lived, surviving a key rotation."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from actors.errors import InvalidDownloadToken
from actors.storage.crypto import SecretBox
from actors.storage.download_tokens import DownloadTokens

OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()


def tokens(secret_key: str, now: float = 1_000.0) -> DownloadTokens:
    box = SecretBox(secret_key)

    async def secrets() -> SecretBox:
        return box

    return DownloadTokens(secrets, clock=lambda: now)


async def test_a_token_names_its_user_for_one_path_of_one_session() -> None:
    signer = tokens(OLD)
    token, expires_at = await signer.sign("alice", "a-1", "s-1", "notes/a.md")
    assert expires_at == 1_060
    assert await signer.verify(token, "a-1", "s-1", "notes/a.md") == "alice"
    for agent, session, path in (
        ("a-2", "s-1", "notes/a.md"),
        ("a-1", "s-2", "notes/a.md"),
        ("a-1", "s-1", "notes/b.md"),
        ("a-1", "s-1", "notes/a.md "),
    ):
        with pytest.raises(InvalidDownloadToken, match="another session or path"):
            await signer.verify(token, agent, session, path)


async def test_tokens_expire_and_survive_a_key_rotation_only() -> None:
    token, _ = await tokens(OLD).sign("alice", "a-1", "s-1", "f")
    assert await tokens(f"{NEW},{OLD}").verify(token, "a-1", "s-1", "f") == "alice"
    with pytest.raises(InvalidDownloadToken, match="altered"):
        await tokens(NEW).verify(token, "a-1", "s-1", "f")
    with pytest.raises(InvalidDownloadToken, match="expired"):
        await tokens(OLD, now=1_061).verify(token, "a-1", "s-1", "f")
    for garbage in ("", "a.b", "x.YWxpY2U.c2ln", "1.@@@.c2ln"):
        with pytest.raises(InvalidDownloadToken, match=r"malformed|altered"):
            await tokens(OLD).verify(garbage, "a-1", "s-1", "f")


def test_tags_of_one_purpose_never_verify_for_another() -> None:
    box = SecretBox(OLD)
    tag = box.sign("workspace-download", b"message")
    assert box.verify("workspace-download", b"message", tag)
    assert not box.verify("other", b"message", tag)
    assert not box.verify("workspace-download", b"messagE", tag)
