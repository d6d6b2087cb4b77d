"""A delivery that reaches a session after its deletion leaves nothing behind it."""

from __future__ import annotations

import asyncio

import pytest

from actors.bus.items import ChatItem
from agent_core.message import UserMsg
from tests.support.api import USER, make_session
from tests.unit.serve._service import Service

pytestmark = pytest.mark.redis


async def test_a_message_to_a_deleted_session_is_dropped_with_what_it_wrote(
    service: Service,
) -> None:
    _, session_id = await make_session(service.api, "http://127.0.0.1:9/v1")
    redis = service.runtime.storage.redis
    deleted = await service.api.delete(f"/sessions/{session_id}", headers=USER)
    assert deleted.status_code == 204

    # A team message, a schedule's fire or a tool's completion racing the deletion.
    await service.runtime.mailbox.deliver(session_id, ChatItem(input=[UserMsg("user", "late")]))
    await asyncio.wait_for(service.dispatcher.runtime(session_id).wait_idle(), 15)

    assert [key async for key in redis.scan_iter(match=f"*{session_id}*")] == []
    assert not await redis.sismember(service.runtime.bus.keys.inboxes(), session_id)
    missing = await service.api.get(f"/sessions/{session_id}/messages", headers=USER)
    assert missing.status_code == 404
