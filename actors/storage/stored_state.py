"""A session's AgentState in Redis: its head (the state without its context) and its context.

The context is a list of Msg JSON (`Keys.state_context`) next to a hash holding the head and a
version (`Keys.state_head`), so that the session's owner writes only what changed at each
commit (`StoredState`): new messages, the running reply in place, the head when it changed.
Older data dirs hold the whole AgentState JSON in one string (`Keys.state`); it is read when
no head is stored, and the next write of the state replaces it.
"""

from __future__ import annotations

from itertools import compress
from operator import attrgetter, is_not, ne

from pydantic import TypeAdapter

from actors.bus.commit import StateWrite
from agent_core.deferred_model import DEFERRED
from agent_core.message import Msg
from agent_core.state import AgentState

_MSGS = TypeAdapter(list[Msg], config=DEFERRED)

# KEYS: state head, state context, state (older layout). Returns head, context as one JSON
# array (one reply to parse, not one per message), version, older state; each may be nil.
LOAD = """
local head = redis.call('HMGET', KEYS[1], 'state', 'version')
if not head[1] then return {false, false, false, redis.call('GET', KEYS[3])} end
local context = '[' .. table.concat(redis.call('LRANGE', KEYS[2], 0, -1), ',') .. ']'
return {head[1], context, head[2], false}
"""


def _head_json(state: AgentState) -> str:
    """The state without its context, as JSON."""
    return state.model_dump_json(exclude={"context"})


def whole(state: AgentState) -> StateWrite:
    """The write replacing a stored state with `state` whole, outside an owner's `StoredState`."""
    return _whole("", _head_json(state), state.context)


def _whole(version: str, head: str, context: list[Msg]) -> StateWrite:
    return StateWrite(version, head, appended=[m.model_dump_json() for m in context])


def assemble(session_id: str, loaded: list[bytes | None]) -> tuple[AgentState, str]:
    """The AgentState `LOAD` read (else a new one) and its version ('' if it has none)."""
    head, context, version, older = loaded
    if head is None or context is None:
        if older is None:
            return AgentState(session_id=session_id), ""
        return AgentState.model_validate_json(older), ""
    state = AgentState.model_validate_json(head)
    state.context = _MSGS.validate_json(context)
    return state, (version or b"").decode()


class StoredState:
    """What the owner of a session last wrote of its AgentState: the changes to write next.

    A message other than the running reply is taken to change only by being replaced by
    another object or by losing blocks (context compression); anything else that changes the
    context (compression, clearing, a reload) leaves it no longer starting with the messages
    written, and the state is written whole. So is the first write (unless the state was
    `loaded` with a version), the first after a write that may have failed, and one changing
    most messages. The comparisons run at C speed: a commit costs what changed.
    """

    def __init__(self, fence: int) -> None:
        self._owner = fence
        self._writes = 0
        self._version = ""
        self._head = ""
        self._msgs: list[Msg] = []
        self._sizes: list[int] = []
        self._next: tuple[str, str, list[Msg], list[int]] | None = None

    def change(self, state: AgentState, running: Msg | None = None) -> StateWrite:
        """The write bringing the stored state to `state` (`running` replacing its namesake).

        Call `written` once it is applied.
        """
        msgs = list(state.context)
        at = -1
        if running is not None:
            at = _position(msgs, running.id)
            if at >= 0:
                msgs[at] = running
        sizes = list(map(len, map(_CONTENT, msgs)))
        head = _head_json(state)
        self._writes += 1
        version = f"{self._owner}.{self._writes}"
        self._next = version, head, msgs, sizes
        known = len(self._msgs)
        if not self._version or len(msgs) < known:
            return _whole(version, head, msgs)
        moved = list(compress(range(known), map(is_not, msgs, self._msgs)))
        if any(msgs[i].id != self._msgs[i].id for i in moved):
            return _whole(version, head, msgs)
        resized = compress(range(known), map(ne, sizes, self._sizes))
        changed = sorted({*moved, *resized, *([at] if 0 <= at < known else [])})
        if len(changed) * 2 > known:
            return _whole(version, head, msgs)
        return StateWrite(
            version,
            "" if head == self._head else head,
            rewrite=False,
            base=self._version,
            replaced=[(i - known, msgs[i].model_dump_json()) for i in changed],
            appended=[m.model_dump_json() for m in msgs[known:]],
        )

    def loaded(self, state: AgentState, version: str) -> None:
        """`state` is what was just read of the stored state at `version` ('': unknown)."""
        self._version, self._head, self._next = version, _head_json(state), None
        self._msgs = list(state.context)
        self._sizes = list(map(len, map(_CONTENT, self._msgs)))

    def written(self) -> None:
        """The last `change` is applied."""
        assert self._next is not None
        self._version, self._head, self._msgs, self._sizes = self._next
        self._next = None

    def forget(self) -> None:
        """What is stored is unknown (a write may have failed): the next change rewrites it."""
        self._version, self._next = "", None


_CONTENT = attrgetter("content")


def _position(msgs: list[Msg], msg_id: str) -> int:
    """Index of the last message `msg_id` in `msgs` (the running reply is near the end), or -1."""
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i].id == msg_id:
            return i
    return -1
