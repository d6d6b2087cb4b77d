"""`AGUIProtocolMiddleware`: the session stream as AG-UI events (https://docs.ag-ui.com).

Install it with `create_app(extra_middlewares=[Middleware(AGUIProtocolMiddleware)])`. A reply
is an AG-UI run (thread = session, run = reply):

=============================  =====================================================
Troupe event                   AG-UI event(s)
=============================  =====================================================
REPLY_START                    RUN_STARTED (a resumed reply starts its run again)
REPLY_END                      RUN_FINISHED; cancelled outcome when interrupted;
                               RUN_ERROR when it failed or ran out of iterations
REQUIRE_USER_CONFIRM /         RUN_FINISHED with an interrupt outcome, one interrupt per
REQUIRE_EXTERNAL_EXECUTION     parked tool call (`rawEvent` holds Troupe's event to answer)
MODEL_CALL_START / _END        STEP_STARTED / STEP_FINISHED (step = model name)
TEXT_BLOCK_*                   TEXT_MESSAGE_START / _CONTENT / _END (message = block)
THINKING_BLOCK_*               REASONING_START + REASONING_MESSAGE_START, _CONTENT,
                               REASONING_MESSAGE_END + REASONING_END
TOOL_CALL_*                    TOOL_CALL_START / _ARGS / _END
TOOL_RESULT_START / TEXT_DELTA (gathered) then TOOL_RESULT_END: TOOL_CALL_RESULT
anything else                  CUSTOM (name: the CUSTOM event's name, else the type)
=============================  =====================================================

Empty deltas are dropped. The field names are AG-UI's camelCase wire names.
"""

from __future__ import annotations

from typing import Any

from agent_core.event import (
    AgentEvent,
    CustomEvent,
    ModelCallEndEvent,
    ModelCallStartEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ThinkingBlockDeltaEvent,
    ThinkingBlockEndEvent,
    ThinkingBlockStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
)
from agent_core.message import ReplyFinishedReason
from serve.protocol import Converter, Frames, ProtocolMiddlewareBase

Payload = dict[str, Any]


class AGUIProtocolMiddleware(ProtocolMiddlewareBase):
    """Rewrites the session stream into AG-UI events (see the module docstring)."""

    def _convert_to_protocol(self, event: AgentEvent) -> Frames:
        """Convert one event on its own (without the stream's earlier events)."""
        return _AGUIStream().convert(event)

    def _open_stream(self) -> Converter:
        """A converter remembering what one stream needs: threads, model names, tool output."""
        return _AGUIStream().convert


class _AGUIStream:
    def __init__(self) -> None:
        self._threads: dict[str, str] = {}
        self._models: dict[str, str] = {}
        self._tool_output: dict[tuple[str, str], list[str]] = {}

    def convert(self, event: AgentEvent) -> list[Payload]:
        handler = getattr(self, f"_{type(event).__name__}", None)
        if handler is not None:
            return list(handler(event))
        return [_custom(event)]

    def _ReplyStartEvent(self, event: ReplyStartEvent) -> list[Payload]:
        self._threads[event.reply_id] = event.session_id
        return [{"type": "RUN_STARTED", **self._run(event.reply_id)}]

    def _ReplyEndEvent(self, event: ReplyEndEvent) -> list[Payload]:
        self._threads.setdefault(event.reply_id, event.session_id)
        run = self._run(event.reply_id)
        self._forget(event.reply_id)
        reason = event.finished_reason
        if reason is ReplyFinishedReason.COMPLETED:
            return [{"type": "RUN_FINISHED", **run}]
        if reason is ReplyFinishedReason.INTERRUPTED:
            return [{"type": "RUN_FINISHED", **run, "outcome": {"type": "cancelled"}}]
        message = event.error.message if event.error else "the agent ran out of iterations"
        code = event.error.type.value if event.error else reason.value
        return [{"type": "RUN_ERROR", "message": message, "code": code}]

    def _RequireUserConfirmEvent(self, event: RequireUserConfirmEvent) -> list[Payload]:
        return [self._parked(event, "tool_confirmation", "Confirm running")]

    def _RequireExternalExecutionEvent(self, event: RequireExternalExecutionEvent) -> list[Payload]:
        return [self._parked(event, "external_execution", "Run outside the agent")]

    def _ModelCallStartEvent(self, event: ModelCallStartEvent) -> list[Payload]:
        self._models[event.reply_id] = event.model_name
        return [{"type": "STEP_STARTED", "stepName": event.model_name}]

    def _ModelCallEndEvent(self, event: ModelCallEndEvent) -> list[Payload]:
        return [{"type": "STEP_FINISHED", "stepName": self._models.get(event.reply_id, "model")}]

    def _TextBlockStartEvent(self, event: TextBlockStartEvent) -> list[Payload]:
        return [{"type": "TEXT_MESSAGE_START", "messageId": event.block_id, "role": "assistant"}]

    def _TextBlockDeltaEvent(self, event: TextBlockDeltaEvent) -> list[Payload]:
        return _delta("TEXT_MESSAGE_CONTENT", "messageId", event.block_id, event.delta)

    def _TextBlockEndEvent(self, event: TextBlockEndEvent) -> list[Payload]:
        return [{"type": "TEXT_MESSAGE_END", "messageId": event.block_id}]

    def _ThinkingBlockStartEvent(self, event: ThinkingBlockStartEvent) -> list[Payload]:
        return [
            {"type": "REASONING_START", "messageId": event.block_id},
            {"type": "REASONING_MESSAGE_START", "messageId": event.block_id, "role": "reasoning"},
        ]

    def _ThinkingBlockDeltaEvent(self, event: ThinkingBlockDeltaEvent) -> list[Payload]:
        return _delta("REASONING_MESSAGE_CONTENT", "messageId", event.block_id, event.delta)

    def _ThinkingBlockEndEvent(self, event: ThinkingBlockEndEvent) -> list[Payload]:
        return [
            {"type": "REASONING_MESSAGE_END", "messageId": event.block_id},
            {"type": "REASONING_END", "messageId": event.block_id},
        ]

    def _ToolCallStartEvent(self, event: ToolCallStartEvent) -> list[Payload]:
        return [
            {
                "type": "TOOL_CALL_START",
                "toolCallId": event.tool_call_id,
                "toolCallName": event.tool_call_name,
                "parentMessageId": event.reply_id,
            }
        ]

    def _ToolCallDeltaEvent(self, event: ToolCallDeltaEvent) -> list[Payload]:
        return _delta("TOOL_CALL_ARGS", "toolCallId", event.tool_call_id, event.delta)

    def _ToolCallEndEvent(self, event: ToolCallEndEvent) -> list[Payload]:
        return [{"type": "TOOL_CALL_END", "toolCallId": event.tool_call_id}]

    def _ToolResultStartEvent(self, event: ToolResultStartEvent) -> list[Payload]:
        self._tool_output[(event.reply_id, event.tool_call_id)] = []
        return []

    def _ToolResultTextDeltaEvent(self, event: ToolResultTextDeltaEvent) -> list[Payload]:
        self._tool_output.setdefault((event.reply_id, event.tool_call_id), []).append(event.delta)
        return []

    def _ToolResultEndEvent(self, event: ToolResultEndEvent) -> list[Payload]:
        output = "".join(self._tool_output.pop((event.reply_id, event.tool_call_id), []))
        return [
            {
                "type": "TOOL_CALL_RESULT",
                # One reply holds many results: qualify its id so each result is its own message.
                "messageId": f"{event.reply_id}:{event.tool_call_id}",
                "toolCallId": event.tool_call_id,
                "content": output or event.state.value,
                "role": "tool",
            }
        ]

    def _parked(
        self, event: RequireUserConfirmEvent | RequireExternalExecutionEvent, reason: str, verb: str
    ) -> Payload:
        run = self._run(event.reply_id)
        self._forget(event.reply_id)
        interrupts = [
            {
                "id": call.id,
                "reason": reason,
                "message": f"{verb} {call.name}",
                "toolCallId": call.id,
            }
            for call in event.tool_calls
        ]
        return {
            "type": "RUN_FINISHED",
            **run,
            "outcome": {"type": "interrupt", "interrupts": interrupts},
            "rawEvent": event.model_dump(mode="json"),
        }

    def _run(self, reply_id: str) -> Payload:
        return {"threadId": self._threads.get(reply_id, ""), "runId": reply_id}

    def _forget(self, reply_id: str) -> None:
        self._threads.pop(reply_id, None)
        self._models.pop(reply_id, None)
        for key in [k for k in self._tool_output if k[0] == reply_id]:
            del self._tool_output[key]


def _delta(kind: str, id_field: str, target: str, delta: str) -> list[Payload]:
    return [{"type": kind, id_field: target, "delta": delta}] if delta else []


def _custom(event: AgentEvent) -> Payload:
    if isinstance(event, CustomEvent):
        return {"type": "CUSTOM", "name": event.name, "value": event.value}
    return {"type": "CUSTOM", "name": event.type.lower(), "value": event.model_dump(mode="json")}
