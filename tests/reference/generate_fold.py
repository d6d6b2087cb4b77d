"""Record how AgentScope 2.0.11 folds event streams into a Msg (`Msg.append_event`).

Usage (from the repository root, with the venv that has AgentScope installed)::

    .bench-venv/bin/python tests/reference/generate_fold.py [--cases N] [--seed S]

Writes `tests/reference/data/fold.json.gz` (gzip without a timestamp, so runs are identical):
a header (`envelope`, `msg`, `generated`, `seed`) and `cases`, each with

- `case`: a name (`<number>-<scenarios>`),
- `initial`: the content blocks the assistant Msg (`msg` in the header) holds before the first
  event (JSON),
- `events`: the events in their JSON wire form (what the SSE stream carries), less the envelope
  fields that equal the header's `envelope` defaults (`{index}` is the event's position): a
  reader restores them before parsing,
- `expected`: `{"msg": <the folded Msg as JSON>}`, or `{"raises": {"at": <index of the event
  that raised>, "type": <exception class>}}` when AgentScope raised.

Sequences are random but seeded (the output is byte-for-byte reproducible): realistic replies
(model calls streaming text, thinking, data blocks and tool calls; tools streaming text and
base64/URL data results), permission round trips (confirm, reject, stale and unknown verdicts),
external execution (results with or without a running placeholder, duplicates), and chaos
(every event type in any order, duplicate and unknown ids, events of foreign replies, odd data).

Where AgentScope stamps a fresh id or timestamp on a block the fold creates, the value is
recorded as `"<generated>"`: those are the only fields a comparison may ignore.
`tests/unit/agent_core/test_fold_reference.py` replays every case through Troupe.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import itertools
import json
import logging
import random
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import agentscope
from agentscope import event as as_event
from agentscope.message import Msg

GENERATED = "<generated>"
_SENTINEL = "@generated-"
REPLY_ID = "reply-main"
MSG_CREATED = "2026-03-01T09:59:59.000000"
FOREIGN_REPLY_ID = "reply-other"
OUT = Path(__file__).parent / "data" / "fold.json.gz"

Event = dict[str, Any]


# Envelope fields every recorded event has unless it says otherwise (the file omits them).
ENVELOPE = {
    "id": "ev-{index}",
    "created_at": "2026-03-01T10:00:00.{index:06d}",
    "metadata": {},
    "reply_id": REPLY_ID,
}


def event_id(index: int) -> str:
    """The id of the event at `index` in its sequence."""
    return ENVELOPE["id"].format(index=index)


def event_stamp(index: int) -> str:
    """The `created_at` of the event at `index` in its sequence."""
    return ENVELOPE["created_at"].format(index=index)


def _compact(index: int, event: Event) -> Event:
    """`event` without the envelope fields that equal their defaults."""
    defaults = {
        key: value.format(index=index) if isinstance(value, str) else value
        for key, value in ENVELOPE.items()
    }
    return {k: v for k, v in event.items() if k not in defaults or defaults[k] != v}


_EVENT_CLASSES: dict[str, type[Any]] = {
    cls.model_fields["type"].default.value: cls
    for cls in (getattr(as_event, name) for name in dir(as_event))
    if isinstance(cls, type) and hasattr(cls, "model_fields") and "type" in cls.model_fields
}

# What a tool call's input looks like while it streams.
_JSON_INPUTS = ['{"command": "ls -la"}', '{"path": "src/main.py", "limit": 20}', "{}", '{"q": "é"}']
_URLS = [
    "https://cdn.example.test/img/1.png",
    "https://example.test",
    "HTTP://Example.TEST/a b.png",
    "file:///tmp/out.png",
    "data:image/png;base64,iVBORw0KGgo=",
    "https://例子.测试/p?q=1#f",
]
_BAD_URLS = ["not a url", "relative/path.png", "http://", ""]
_MEDIA = ["image/png", "image/jpeg", "audio/wav", "application/pdf", ""]
_TOOLS = ["Bash", "Read", "Write", "Deploy", "WebFetch"]
_TEXT = ["Hello", " world", "", "ünïcode ✓", "\n", "line\nbreak", "{json?}", "  "]


class Seq:
    """Builds one sequence of event dicts, with deterministic ids and timestamps."""

    def __init__(self, rng: random.Random, foreign: float) -> None:
        self.rng = rng
        self.foreign = foreign
        self.events: list[Event] = []
        self._clock = itertools.count(1)
        self._ids = itertools.count(1)

    def fresh(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def stamp(self) -> str:
        """A timestamp for a block carried inside an event."""
        return f"2026-03-01T09:00:00.{next(self._clock):06d}"

    def emit(self, kind: str, **fields: Any) -> None:
        if "reply_id" not in fields:
            foreign = self.rng.random() < self.foreign
            fields["reply_id"] = FOREIGN_REPLY_ID if foreign else REPLY_ID
        metadata = {"seq": len(self.events)} if self.rng.random() < 0.05 else {}
        index = len(self.events)
        self.events.append(
            {
                "type": kind,
                "id": event_id(index),
                "created_at": event_stamp(index),
                "metadata": metadata,
                **fields,
            }
        )

    # Small pieces -----------------------------------------------------------------------------

    def text(self) -> str:
        return self.rng.choice(_TEXT)

    def chunk(self, bad: float = 0.0) -> str:
        """A base64 chunk, encoded on its own (padded), or sometimes one that does not decode."""
        if self.rng.random() < bad:
            return self.rng.choice(["YQ", "A", "é==", "YWJj!", "YQ==YQ=", "====", "Zm9v\n"])
        return base64.b64encode(self.rng.randbytes(self.rng.randint(0, 7))).decode()

    def url(self, bad: float = 0.0) -> str:
        return self.rng.choice(_BAD_URLS if self.rng.random() < bad else _URLS)

    def media(self) -> str:
        return self.rng.choice(_MEDIA)

    def rules(self) -> list[dict[str, Any]]:
        return [
            {
                "tool_name": self.rng.choice(_TOOLS),
                "rule_content": self.rng.choice([None, "ls *", "src/**"]),
                "behavior": self.rng.choice(["allow", "deny", "ask"]),
                "source": self.rng.choice(["userSettings", "session"]),
            }
            for _ in range(self.rng.randint(0, 2))
        ]

    def call_block(self, call_id: str, name: str | None = None) -> dict[str, Any]:
        return {
            "type": "tool_call",
            "id": call_id,
            "name": name or self.rng.choice(_TOOLS),
            "input": self.rng.choice(_JSON_INPUTS),
            "state": self.rng.choice(["pending", "asking", "allowed"]),
            "suggested_rules": self.rules(),
            "created_at": self.stamp(),
            "finished_at": None,
        }

    def output_blocks(self) -> str | list[dict[str, Any]]:
        if self.rng.random() < 0.35:
            return self.text()
        blocks: list[dict[str, Any]] = []
        for _ in range(self.rng.randint(0, 2)):
            if self.rng.random() < 0.6:
                blocks.append(
                    {
                        "type": "text",
                        "text": self.text(),
                        "id": self.fresh("out"),
                        "created_at": self.stamp(),
                        "finished_at": None,
                    }
                )
            else:
                blocks.append(self.data_block())
        return blocks

    def data_block(self) -> dict[str, Any]:
        # Inside an event a URL is validated on arrival, so only a valid one can be sent.
        source: dict[str, Any]
        if self.rng.random() < 0.5:
            source = {"type": "base64", "data": self.chunk(), "media_type": self.media()}
        else:
            source = {"type": "url", "url": self.url(), "media_type": self.media()}
        return {
            "type": "data",
            "id": self.fresh("blob"),
            "source": source,
            "name": self.rng.choice([None, "file.png"]),
            "created_at": self.stamp(),
            "finished_at": self.rng.choice([None, self.stamp()]),
        }

    def result_block(self, call_id: str) -> dict[str, Any]:
        return {
            "type": "tool_result",
            "id": call_id,
            "name": self.rng.choice(_TOOLS),
            "output": self.output_blocks(),
            "state": self.rng.choice(["success", "error", "interrupted", "denied", "running"]),
            "metadata": self.rng.choice([{}, {"exit_code": 0}, {"truncated": True}]),
            "created_at": self.stamp(),
            "finished_at": self.rng.choice([None, self.stamp()]),
        }

    # Streams of one block ---------------------------------------------------------------------

    def text_block(self, block_id: str, kind: str = "TEXT") -> None:
        self.emit(f"{kind}_BLOCK_START", block_id=block_id)
        for _ in range(self.rng.randint(0, 3)):
            self.emit(f"{kind}_BLOCK_DELTA", block_id=block_id, delta=self.text())
        if self.rng.random() < 0.9:
            end: dict[str, Any] = {}
            if kind == "TEXT" and self.rng.random() < 0.2:
                end["text"] = self.text()  # a voice reply cut short
            self.emit(f"{kind}_BLOCK_END", block_id=block_id, **end)

    def data_stream(self, block_id: str, bad: float = 0.0) -> None:
        start: dict[str, Any] = {"block_id": block_id, "media_type": self.media()}
        if self.rng.random() < 0.4:
            start["name"] = self.rng.choice(["chart.png", "voice.wav", ""])
        self.emit("DATA_BLOCK_START", **start)
        for _ in range(self.rng.randint(0, 3)):
            if self.rng.random() < 0.15:
                self.emit(
                    "DATA_BLOCK_DELTA",
                    block_id=block_id,
                    media_type=self.media(),
                    url=self.url(bad),
                )
            else:
                self.emit(
                    "DATA_BLOCK_DELTA",
                    block_id=block_id,
                    media_type=self.media(),
                    data=self.chunk(bad),
                )
        if self.rng.random() < 0.9:
            self.emit("DATA_BLOCK_END", block_id=block_id)

    def tool_call_stream(self, call_id: str, name: str) -> None:
        self.emit("TOOL_CALL_START", tool_call_id=call_id, tool_call_name=name)
        whole = self.rng.choice(_JSON_INPUTS)
        cuts = sorted(self.rng.sample(range(len(whole) + 1), k=self.rng.randint(0, 2)))
        for lo, hi in itertools.pairwise([0, *cuts, len(whole)]):
            self.emit("TOOL_CALL_DELTA", tool_call_id=call_id, delta=whole[lo:hi])
        if self.rng.random() < 0.95:
            self.emit("TOOL_CALL_END", tool_call_id=call_id)

    def tool_result_stream(self, call_id: str, name: str, bad: float = 0.0) -> None:
        self.emit("TOOL_RESULT_START", tool_call_id=call_id, tool_call_name=name)
        blob = self.fresh("blob")
        for _ in range(self.rng.randint(0, 3)):
            roll = self.rng.random()
            if roll < 0.5:
                self.emit("TOOL_RESULT_TEXT_DELTA", tool_call_id=call_id, delta=self.text())
                continue
            if roll < 0.6:
                blob = self.fresh("blob")  # the next chunks make a new block
            source = (
                {"url": self.url(bad)} if self.rng.random() < 0.25 else {"data": self.chunk(bad)}
            )
            self.emit(
                "TOOL_RESULT_DATA_DELTA",
                tool_call_id=call_id,
                block_id=blob,
                media_type=self.media(),
                **source,
            )
        if self.rng.random() < 0.9:
            self.emit(
                "TOOL_RESULT_END",
                tool_call_id=call_id,
                state=self.rng.choice(["success", "error", "interrupted", "denied"]),
            )

    def model_call(self) -> None:
        self.emit("MODEL_CALL_START", model_name=self.rng.choice(["gpt-x", "claude-y"]))

    def model_call_end(self) -> None:
        self.emit(
            "MODEL_CALL_END",
            input_tokens=self.rng.randint(0, 500),
            output_tokens=self.rng.randint(0, 200),
            cache_input_tokens=self.rng.randint(0, 50),
            cache_creation_input_tokens=self.rng.randint(0, 20),
            finished_reason=self.rng.choice(["completed", "completed", "interrupted"]),
        )

    def hint(self) -> None:
        hint: str | list[dict[str, Any]] = self.text()
        if self.rng.random() < 0.4:
            blocks = self.output_blocks()
            hint = (
                blocks
                if isinstance(blocks, list)
                else [
                    {
                        "type": "text",
                        "text": blocks,
                        "id": self.fresh("hint"),
                        "created_at": self.stamp(),
                        "finished_at": None,
                    }
                ]
            )
        self.emit(
            "HINT_BLOCK",
            block_id=self.fresh("hint"),
            hint=hint,
            source=self.rng.choice([None, "alice", "system"]),
        )

    def reply_end(self) -> None:
        reason = self.rng.choice(["completed", "interrupted", "exceed_max_iters", "error"])
        error = {"type": "upstream", "message": "model unavailable"} if reason == "error" else None
        self.emit("REPLY_END", session_id="s1", finished_reason=reason, error=error)


# Scenarios --------------------------------------------------------------------------------------


def realistic(seq: Seq) -> None:
    """A ReAct reply: model calls stream blocks and tool calls, tools stream results."""
    rng = seq.rng
    seq.emit("REPLY_START", session_id="s1", name="assistant", role="assistant")
    for _ in range(rng.choice([1, 1, 2])):
        if rng.random() < 0.3:
            seq.hint()
        seq.model_call()
        calls: list[tuple[str, str]] = []
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            if roll < 0.35:
                seq.text_block(seq.fresh("text"))
            elif roll < 0.5:
                seq.text_block(seq.fresh("think"), kind="THINKING")
            elif roll < 0.6:
                seq.data_stream(seq.fresh("data"), bad=0.03)
            else:
                calls.append((seq.fresh("call"), rng.choice(_TOOLS)))
                seq.tool_call_stream(*calls[-1])
        seq.model_call_end()
        for call_id, name in calls:
            seq.tool_result_stream(call_id, name, bad=0.03)
        if rng.random() < 0.1:
            seq.emit("CUSTOM", name="state_updated", value={"n": 1})
    if rng.random() < 0.1:
        seq.emit("EXCEED_MAX_ITERS", name="assistant")
    if rng.random() < 0.85:
        seq.reply_end()


def confirmation(seq: Seq) -> None:
    """Calls that park for the user's verdict: accepted, rejected, stale, unknown, repeated."""
    rng = seq.rng
    seq.model_call()
    calls = [(seq.fresh("call"), rng.choice(_TOOLS)) for _ in range(rng.randint(1, 2))]
    for call_id, name in calls:
        seq.tool_call_stream(call_id, name)
    seq.model_call_end()
    asked = rng.sample(calls, k=rng.randint(1, len(calls)))
    if rng.random() < 0.2:  # a verdict that comes before the question is stale
        seq.emit(
            "USER_CONFIRM_RESULT",
            confirm_results=[{"confirmed": True, "tool_call": seq.call_block(calls[0][0])}],
        )
    seq.emit(
        "REQUIRE_USER_CONFIRM",
        tool_calls=[{**seq.call_block(cid, name), "state": "asking"} for cid, name in asked]
        + ([seq.call_block("call-unknown")] if rng.random() < 0.1 else []),
    )
    for _ in range(rng.choice([1, 1, 1, 2])):
        answered = rng.sample(asked, k=rng.randint(0, len(asked)))
        verdicts = [
            {
                "confirmed": rng.random() < 0.6,
                "tool_call": seq.call_block(cid, name),
                "rules": rng.choice([None, seq.rules()]),
            }
            for cid, name in answered
        ]
        if rng.random() < 0.15:
            verdicts.append({"confirmed": True, "tool_call": seq.call_block("call-ghost")})
        seq.emit("USER_CONFIRM_RESULT", confirm_results=verdicts)
    if rng.random() < 0.3:  # the user answers a new question about a call asked before
        seq.emit("REQUIRE_USER_CONFIRM", tool_calls=[seq.call_block(asked[0][0])])
    seq.emit("REPLY_START", session_id="s1", name="assistant")
    for call_id, name in calls:
        if rng.random() < 0.7:
            seq.tool_result_stream(call_id, name)
    if rng.random() < 0.5:
        seq.reply_end()


def external(seq: Seq) -> None:
    """Calls executed outside the agent, answered by EXTERNAL_EXECUTION_RESULT."""
    rng = seq.rng
    seq.model_call()
    calls = [(seq.fresh("call"), rng.choice(_TOOLS)) for _ in range(rng.randint(1, 2))]
    for call_id, name in calls:
        seq.tool_call_stream(call_id, name)
    seq.model_call_end()
    submitted = rng.sample(calls, k=rng.randint(1, len(calls)))
    seq.emit(
        "REQUIRE_EXTERNAL_EXECUTION", tool_calls=[seq.call_block(cid, n) for cid, n in submitted]
    )
    for call_id, name in submitted:
        if rng.random() < 0.25:  # a running placeholder already holds the call's result
            seq.emit("TOOL_RESULT_START", tool_call_id=call_id, tool_call_name=name)
            seq.emit("TOOL_RESULT_TEXT_DELTA", tool_call_id=call_id, delta="running…")
    for _ in range(rng.choice([1, 1, 2])):
        answered = rng.sample(submitted, k=rng.randint(0, len(submitted)))
        results = [seq.result_block(cid) for cid, _ in answered]
        if results and rng.random() < 0.15:
            results.append(seq.result_block(results[0]["id"]))  # twice in one event
        if rng.random() < 0.1:
            results.append(seq.result_block("call-unknown"))
        seq.emit("EXTERNAL_EXECUTION_RESULT", execution_results=results)
    seq.emit("REPLY_START", session_id="s1", name="assistant")
    for call_id, _ in submitted:
        roll = rng.random()
        if roll < 0.2:
            seq.emit("TOOL_RESULT_TEXT_DELTA", tool_call_id=call_id, delta=seq.text())
        if roll < 0.3:
            seq.emit(
                "TOOL_RESULT_DATA_DELTA",
                tool_call_id=call_id,
                block_id=seq.fresh("blob"),
                media_type=seq.media(),
                data=seq.chunk(0.1),
            )
        if roll < 0.5:
            seq.emit("TOOL_RESULT_END", tool_call_id=call_id, state="success", metadata={"x": 1})
    if rng.random() < 0.5:
        seq.reply_end()


def data(seq: Seq) -> None:
    """Data blocks and data tool results: base64 chunks (good and bad), URLs, mixtures."""
    rng = seq.rng
    ids = [seq.fresh("data") for _ in range(rng.randint(1, 2))]
    for block_id in ids:
        seq.data_stream(block_id, bad=0.1)
    call_id = seq.fresh("call")
    seq.emit("TOOL_RESULT_START", tool_call_id=call_id, tool_call_name="Read")
    blobs = [seq.fresh("blob") for _ in range(2)]
    for _ in range(rng.randint(1, 4)):
        source = {"url": seq.url(0.2)} if rng.random() < 0.3 else {"data": seq.chunk(0.1)}
        seq.emit(
            "TOOL_RESULT_DATA_DELTA",
            tool_call_id=call_id,
            block_id=rng.choice(blobs),
            media_type=seq.media(),
            **source,
        )
        if rng.random() < 0.3:
            seq.emit("TOOL_RESULT_TEXT_DELTA", tool_call_id=call_id, delta=seq.text())
    seq.emit("TOOL_RESULT_END", tool_call_id=call_id, state="success")


def chaos(seq: Seq) -> None:
    """Any event, any order, ids from a small pool: duplicates, unknown targets, foreign replies."""
    rng = seq.rng
    blocks = ["b1", "b2", "b3"]
    calls = ["c1", "c2", "c3"]

    def block() -> str:
        return rng.choice(blocks)

    def call() -> str:
        return rng.choice(calls)

    makers: list[Callable[[], None]] = [
        lambda: seq.emit("REPLY_START", session_id="s1", name="assistant"),
        seq.reply_end,
        seq.model_call,
        seq.model_call_end,
        lambda: seq.emit("TEXT_BLOCK_START", block_id=block()),
        lambda: seq.emit("TEXT_BLOCK_DELTA", block_id=block(), delta=seq.text()),
        lambda: seq.emit("TEXT_BLOCK_END", block_id=block(), text=rng.choice([None, "final"])),
        lambda: seq.emit("THINKING_BLOCK_START", block_id=block()),
        lambda: seq.emit("THINKING_BLOCK_DELTA", block_id=block(), delta=seq.text()),
        lambda: seq.emit("THINKING_BLOCK_END", block_id=block()),
        lambda: seq.emit(
            "DATA_BLOCK_START",
            block_id=block(),
            media_type=seq.media(),
            name=rng.choice([None, "x.bin"]),
        ),
        lambda: seq.emit(
            "DATA_BLOCK_DELTA", block_id=block(), media_type=seq.media(), data=seq.chunk(0.05)
        ),
        lambda: seq.emit(
            "DATA_BLOCK_DELTA", block_id=block(), media_type=seq.media(), url=seq.url(0.05)
        ),
        lambda: seq.emit("DATA_BLOCK_END", block_id=block()),
        seq.hint,
        lambda: seq.emit("TOOL_CALL_START", tool_call_id=call(), tool_call_name="Bash"),
        lambda: seq.emit("TOOL_CALL_DELTA", tool_call_id=call(), delta='{"a":'),
        lambda: seq.emit("TOOL_CALL_END", tool_call_id=call()),
        lambda: seq.emit("TOOL_RESULT_START", tool_call_id=call(), tool_call_name="Bash"),
        lambda: seq.emit("TOOL_RESULT_TEXT_DELTA", tool_call_id=call(), delta=seq.text()),
        lambda: seq.emit(
            "TOOL_RESULT_DATA_DELTA",
            tool_call_id=call(),
            block_id=block(),
            media_type=seq.media(),
            data=seq.chunk(0.05),
        ),
        lambda: seq.emit(
            "TOOL_RESULT_DATA_DELTA",
            tool_call_id=call(),
            block_id=block(),
            media_type=seq.media(),
            url=seq.url(0.05),
        ),
        lambda: seq.emit(
            "TOOL_RESULT_END",
            tool_call_id=call(),
            state=rng.choice(["success", "error", "running"]),
            metadata=rng.choice([{}, {"k": "v"}]),
        ),
        lambda: seq.emit("REQUIRE_USER_CONFIRM", tool_calls=[seq.call_block(call())]),
        lambda: seq.emit("REQUIRE_EXTERNAL_EXECUTION", tool_calls=[seq.call_block(call())]),
        lambda: seq.emit(
            "USER_CONFIRM_RESULT",
            confirm_results=[
                {"confirmed": rng.random() < 0.5, "tool_call": seq.call_block(call())}
                for _ in range(rng.randint(0, 2))
            ],
        ),
        lambda: seq.emit(
            "EXTERNAL_EXECUTION_RESULT",
            execution_results=[seq.result_block(call()) for _ in range(rng.randint(0, 2))],
        ),
        lambda: seq.emit("USER_INTERRUPT"),
        lambda: seq.emit("EXCEED_MAX_ITERS", name="assistant"),
        lambda: seq.events.append(
            {
                "type": "CUSTOM",
                "id": event_id(len(seq.events)),
                "created_at": event_stamp(len(seq.events)),
                "metadata": {},
                "name": "team_updated",
                "value": {},
            }
        ),
    ]
    for _ in range(rng.randint(1, 10)):
        rng.choice(makers)()


SCENARIOS: dict[str, Callable[[Seq], None]] = {
    "realistic": realistic,
    "confirmation": confirmation,
    "external": external,
    "data": data,
    "chaos": chaos,
}


def initial_content(rng: random.Random) -> list[dict[str, Any]]:
    """Blocks an earlier part of the reply left in the Msg (a resumed reply starts non-empty)."""
    seq = Seq(rng, 0.0)
    content: list[dict[str, Any]] = []
    for call_id in ["c1", "c2"]:
        if rng.random() < 0.5:
            content.append(seq.call_block(call_id, "Bash"))
            if rng.random() < 0.5:
                content.append(seq.result_block(call_id))
    if rng.random() < 0.3:
        content.append(
            {
                "type": "text",
                "text": "earlier",
                "id": "b1",
                "created_at": seq.stamp(),
                "finished_at": None,
            }
        )
    return content


# Recording --------------------------------------------------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _mark_generated(value: Any, known: set[str]) -> Any:
    """Replace the ids/timestamps AgentScope generated during the fold with GENERATED."""
    if isinstance(value, str):
        return GENERATED if value.startswith(_SENTINEL) and value not in known else value
    if isinstance(value, dict):
        return {key: _mark_generated(item, known) for key, item in value.items()}
    if isinstance(value, list):
        return [_mark_generated(item, known) for item in value]
    return value


def record(name: str, initial: list[dict[str, Any]], events: list[Event]) -> dict[str, Any]:
    """Fold `events` with AgentScope and return the case (events in their wire form)."""
    parsed = [_EVENT_CLASSES[e["type"]].model_validate(e) for e in events]
    # The wire form, taken before folding: the fold adopts (and may mutate) event objects.
    wire = [json.loads(e.model_dump_json()) for e in parsed]
    msg = Msg(
        name="assistant", role="assistant", content=initial, id=REPLY_ID, created_at=MSG_CREATED
    )
    initial_wire = json.loads(msg.model_dump_json())["content"]
    expected: dict[str, Any]
    at = 0
    try:
        for index, event in enumerate(parsed):
            at = index
            msg.append_event(event)
        expected = {"msg": json.loads(msg.model_dump_json())}
    except Exception as exc:  # the reference's own failure is what we record
        kind = type(exc)
        expected = {"raises": {"at": at, "type": f"{kind.__module__}.{kind.__qualname__}"}}
    known = set(_strings(wire)) | set(_strings(initial_wire))
    return {
        "case": name,
        "initial": initial_wire,
        "events": [_compact(index, event) for index, event in enumerate(wire)],
        "expected": _mark_generated(expected, known),
    }


def generate(cases: int, seed: int) -> dict[str, Any]:
    counter = itertools.count()
    agentscope.set_id_factory(lambda: f"{_SENTINEL}id-{next(counter)}")
    agentscope.set_timestamp_factory(lambda: f"{_SENTINEL}ts-{next(counter)}")
    out = []
    names = list(SCENARIOS)
    for number in range(cases):
        rng = random.Random(seed * 1_000_003 + number)
        picked = rng.sample(names, k=rng.choice([1, 1, 1, 1, 1, 2]))
        seq = Seq(rng, foreign=rng.choice([0.0, 0.0, 0.0, 0.1, 0.3]))
        for scenario in picked:
            SCENARIOS[scenario](seq)
        initial = initial_content(rng) if rng.random() < 0.25 else []
        out.append(record(f"{number}-{'+'.join(picked)}", initial, seq.events))
    return {
        "about": "AgentScope 2.0.11 Msg.append_event; written by tests/reference/generate_fold.py",
        "seed": seed,
        "envelope": ENVELOPE,
        "msg": {
            "name": "assistant",
            "role": "assistant",
            "id": REPLY_ID,
            "created_at": MSG_CREATED,
        },
        "generated": GENERATED,
        "cases": out,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20260301)
    args = parser.parse_args()
    logging.getLogger("as").setLevel(logging.ERROR)  # "block not found, skipping" is expected
    warnings.simplefilter("ignore", DeprecationWarning)  # EXCEED_MAX_ITERS is still emitted
    fixture = generate(args.cases, args.seed)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(fixture, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n"
    OUT.write_bytes(gzip.compress(text.encode(), mtime=0))
    cases = fixture["cases"]
    events = sum(len(c["events"]) for c in cases)
    raised = sum("raises" in c["expected"] for c in cases)
    print(
        f"{len(cases)} cases, {events} events ({raised} cases raise) -> {OUT} "
        f"({OUT.stat().st_size / 1e6:.2f} MB)"
    )


if __name__ == "__main__":
    main()
