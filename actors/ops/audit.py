"""Checking a session's durable invariants: what `troupe doctor SESSION` reports.

After any fault: every reply that started ends exactly once (a parked or running reply not yet),
nothing ends that never started, every ended reply is in the transcript, every input and
injected hint is in the conversation once, and no answered input waits in the inbox again.
"""

from __future__ import annotations

from collections import Counter

from pydantic import ConfigDict, Field

from actors.bus.items import ChatItem
from actors.bus.message_bus import RedisMessageBus
from actors.storage.redis_storage import RedisStorage
from agent_core.deferred_model import DeferredModel
from agent_core.event import EventType

_READ_BATCH = 5_000


class SessionAudit(DeferredModel):
    """The invariants of one session, checked against Redis."""

    model_config = ConfigDict(extra="forbid")

    session_id: str
    replies: int = Field(description="Replies that started (in the retained event log).")
    ended: int = Field(description="Replies that ended.")
    errors: int = Field(description="Replies that ended with an error.")
    running: str | None = Field(description="The reply in progress, if any.")
    parked: str | None = Field(description="The reply waiting for outside input, if any.")
    log_trimmed: bool = Field(description="The event log lost its oldest events to its cap.")
    violations: list[str] = Field(description="Broken invariants (empty: healthy).")

    @property
    def ok(self) -> bool:
        """Whether every invariant holds."""
        return not self.violations


async def audit_session(
    storage: RedisStorage, bus: RedisMessageBus, session_id: str
) -> SessionAudit:
    """Check the session's event log, transcript, state and inbox against each other."""
    starts: Counter[str] = Counter()
    ends: Counter[str] = Counter()
    errors = 0
    after = "0"
    while True:
        entries = await bus.read_events(session_id, after, count=_READ_BATCH)
        for _, payload in entries:
            event = _Header.model_validate_json(payload)
            if event.type == EventType.REPLY_START:
                starts[event.reply_id] += 1
            elif event.type == EventType.REPLY_END:
                ends[event.reply_id] += 1
                errors += event.finished_reason == "error"
        if len(entries) < _READ_BATCH:
            break
        after = entries[-1][0]
    trimmed = await _trimmed(bus, session_id)
    marker = await bus.running(session_id)
    state = await storage.load_state(session_id)
    running = marker.reply_id if marker else None
    parked = state.reply_context.reply_id or None if marker is None else None
    open_replies = {running, parked}
    transcript, _ = await storage.list_messages(session_id, None, 1_000_000)
    violations: list[str] = []
    for reply_id, count in ends.items():
        if count > 1:
            violations.append(f"reply {reply_id} ended {count} times")
        if not starts[reply_id] and not trimmed:
            violations.append(f"reply {reply_id} ended without starting")
        if reply_id in open_replies:
            violations.append(f"reply {reply_id} ended but is still open")
    violations += [
        f"reply {reply_id} started and never ended"
        for reply_id in starts
        if not ends[reply_id] and reply_id not in open_replies
    ]
    in_transcript = Counter(m.id for m in transcript)
    violations += [
        f"message {i} is {n} times in the transcript" for i, n in in_transcript.items() if n > 1
    ]
    violations += [
        f"reply {reply_id} ended but is not in the transcript"
        for reply_id in ends
        if reply_id not in in_transcript
    ]
    in_context = Counter(m.id for m in state.context)
    violations += [f"message {i} is {n} times in the state" for i, n in in_context.items() if n > 1]
    hints = Counter(b.id for m in transcript for b in m.get_content_blocks("hint"))
    violations += [f"hint {i} was injected {n} times" for i, n in hints.items() if n > 1]
    for stream_id, item in await bus.pending(session_id):
        inputs = item.input if isinstance(item, ChatItem) else None
        if isinstance(inputs, list) and any(m.id in in_transcript for m in inputs):
            violations.append(f"inbox item {stream_id} waits but was answered already")
    return SessionAudit(
        session_id=session_id,
        replies=len(starts),
        ended=len(ends),
        errors=errors,
        running=running,
        parked=parked,
        log_trimmed=trimmed,
        violations=violations,
    )


class _Header(DeferredModel):
    """The fields of an event the audit reads (the rest is ignored)."""

    type: str
    reply_id: str = ""
    finished_reason: str | None = None


async def _trimmed(bus: RedisMessageBus, session_id: str) -> bool:
    key = bus.keys.events(session_id)
    if not await bus.redis.exists(key):
        return False
    info = await bus.redis.xinfo_stream(key)
    added = info.get("entries-added", info.get(b"entries-added"))
    return added is not None and int(added) > int(info.get("length", 0))
