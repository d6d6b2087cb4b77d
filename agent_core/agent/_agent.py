"""The ReAct `Agent`: reasoning → tool calls → results → reasoning ... → final text."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from agent_core._ids import new_id
from agent_core.agent._acting import act
from agent_core.agent._config import ContextConfig, ModelConfig, ReActConfig
from agent_core.agent._errors import error_info
from agent_core.agent._reasoning import reason, tool_calls_since
from agent_core.agent._reply import ReplyBuilder
from agent_core.event import (
    AgentEvent,
    ExceedMaxItersEvent,
    HintBlockEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    UserInterruptEvent,
)
from agent_core.message import (
    AssistantMsg,
    ErrorInfo,
    Msg,
    ReplyFinishedReason,
    SystemMsg,
    ToolResultState,
)
from agent_core.model.base import ChatModelBase
from agent_core.ports import BackgroundSink, HintSource
from agent_core.state import AgentState, ReplyContext
from agent_core.tool import Toolkit

AgentInput = Msg | Sequence[Msg] | None


class Agent:
    """A reasoning-acting loop over a model, a toolkit and a persistent `AgentState`.

    The agent itself is stateless between calls apart from `state`, so a host can persist the
    state after any event and rebuild the agent from it later.
    """

    def __init__(
        self,
        name: str,
        system_prompt: str,
        model: ChatModelBase,
        toolkit: Toolkit | None = None,
        state: AgentState | None = None,
        model_config: ModelConfig | None = None,
        context_config: ContextConfig | None = None,
        react_config: ReActConfig | None = None,
        hint_source: HintSource | None = None,
        background_sink: BackgroundSink | None = None,
        tool_timeout: float = 10.0,
    ) -> None:
        self.name = name
        self.system_prompt = system_prompt
        self.model = model
        self.toolkit = toolkit or Toolkit()
        self.state = state or AgentState()
        self.model_config = model_config or ModelConfig()
        self.context_config = context_config or ContextConfig()
        self.react_config = react_config or ReActConfig()
        self.hint_source = hint_source
        self.background_sink = background_sink
        self.tool_timeout = tool_timeout

    async def observe(self, msgs: Msg | Sequence[Msg]) -> None:
        """Add messages to the context without replying."""
        self.state.context.extend([msgs] if isinstance(msgs, Msg) else msgs)

    async def reply(self, inputs: AgentInput = None) -> Msg:
        """Run the loop to the end of the reply and return the assistant `Msg`."""
        reply_id = ""
        async for event in self.reply_stream(inputs):
            if isinstance(event, ReplyStartEvent):
                reply_id = event.reply_id
        for msg in reversed(self.state.context):
            if msg.id == reply_id:
                return msg
        raise RuntimeError("the reply produced no message")  # unreachable: REPLY_START is first

    async def reply_stream(self, inputs: AgentInput = None) -> AsyncIterator[AgentEvent]:
        """Run the loop, yielding every event as it happens; the last one is `ReplyEndEvent`.

        Cancelling the task that consumes the stream interrupts the reply: open tool calls get
        `interrupted` results and the stream still ends with `REPLY_END(interrupted)` (then
        re-raises `CancelledError` if `react_config.interruption_raise_cancelled_error`).
        """
        if inputs is not None:
            await self.observe(inputs)
        start = ReplyStartEvent(reply_id=new_id(), session_id=self.state.session_id, name=self.name)
        # The Msg takes its identity from REPLY_START, so a client's fold equals it exactly.
        msg = AssistantMsg(self.name, [], id=start.reply_id, created_at=start.created_at)
        reply = ReplyBuilder(msg, self.state.session_id)
        self.state.context.append(reply.msg)
        self.state.reply_context = ReplyContext(reply_id=reply.reply_id)
        yield reply.emit(start)
        reason_ = ReplyFinishedReason.COMPLETED
        error: ErrorInfo | None = None
        interrupted = False
        try:
            async for event in self._iterate(reply):
                if isinstance(event, ExceedMaxItersEvent):
                    reason_ = ReplyFinishedReason.EXCEED_MAX_ITERS
                yield event
        except asyncio.CancelledError:
            reason_, interrupted = ReplyFinishedReason.INTERRUPTED, True
            for event in self._interrupted(reply):
                yield event
        except Exception as exc:  # the reply ends with a readable error; the agent stays usable
            reason_, error = ReplyFinishedReason.ERROR, error_info(exc)
            failed = f"Not executed: the reply failed ({error.message})."
            for event in reply.close_open_calls(failed):
                yield event
        self.state.reply_context = ReplyContext()
        yield reply.emit(
            ReplyEndEvent(
                reply_id=reply.reply_id,
                session_id=reply.session_id,
                finished_reason=reason_,
                error=error,
            )
        )
        if interrupted and self.react_config.interruption_raise_cancelled_error:
            raise asyncio.CancelledError

    def _interrupted(self, reply: ReplyBuilder) -> list[AgentEvent]:
        rid = reply.reply_id
        events = [
            reply.emit(UserInterruptEvent(reply_id=rid)),
            *reply.close_open_calls("Interrupted by the user.", ToolResultState.INTERRUPTED),
        ]
        block_id = new_id()
        return [
            *events,
            reply.emit(TextBlockStartEvent(reply_id=rid, block_id=block_id)),
            reply.emit(
                TextBlockDeltaEvent(
                    reply_id=rid, block_id=block_id, delta=self.react_config.interruption_message
                )
            ),
            reply.emit(TextBlockEndEvent(reply_id=rid, block_id=block_id)),
        ]

    def _prompt(self) -> list[Msg]:
        return [SystemMsg("system", self.system_prompt), *self.state.context]

    async def _iterate(self, reply: ReplyBuilder) -> AsyncIterator[AgentEvent]:
        tools = self.toolkit.schemas()
        for _ in range(self.react_config.max_iters):
            self.state.reply_context.cur_iter += 1
            async for event in self._inject_hints(reply):
                yield event
            step_start = len(reply.msg.content)
            async for event in reason(reply, self.model, self._prompt(), tools, self.model_config):
                yield event
            calls = tool_calls_since(reply.msg, step_start)
            if not calls:
                return
            async for event in act(
                reply, self.toolkit, calls, self.background_sink, self.tool_timeout
            ):
                yield event
        yield reply.emit(ExceedMaxItersEvent(reply_id=reply.reply_id, name=self.name))
        async for event in reason(
            reply, self.model, self._prompt(), tools, self.model_config, tool_choice="none"
        ):
            yield event

    async def _inject_hints(self, reply: ReplyBuilder) -> AsyncIterator[AgentEvent]:
        if self.hint_source is None:
            return
        for hint in await self.hint_source.drain():
            yield reply.emit(
                HintBlockEvent(
                    reply_id=reply.reply_id, block_id=hint.id, hint=hint.hint, source=hint.source
                )
            )
