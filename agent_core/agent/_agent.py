"""The ReAct `Agent`: reasoning → tool calls → results → reasoning ... → final text."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import NamedTuple

from agent_core._ids import new_id
from agent_core._trusted import trusted_maker, trusted_set
from agent_core.agent._acting import ActingSetup, act, run_tool
from agent_core.agent._config import ContextConfig, ModelConfig, ReActConfig
from agent_core.agent._context import compress_context
from agent_core.agent._errors import error_info
from agent_core.agent._gate import gate_calls
from agent_core.agent._injection import InjectionConfig, runtime_state_text
from agent_core.agent._meter import PromptMeter
from agent_core.agent._reasoning import reason, tool_calls_since
from agent_core.agent._reply import ReplyBuilder
from agent_core.agent._restart import (
    NOT_WRITTEN,
    Restarted,
    close_calls,
    open_calls,
    rerun_if_read_only,
)
from agent_core.agent._resume import ResumeEvent, abandon_parked, denied_results, resume_calls
from agent_core.agent._tokens import CachedTokenCounter, ContextUsage, TokenCounter
from agent_core.event import (
    AgentEvent,
    ExceedMaxItersEvent,
    HintBlockEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    ToolResultEndEvent,
    UserInterruptEvent,
)
from agent_core.message import (
    ErrorInfo,
    Msg,
    ReplyFinishedReason,
    SystemMsg,
    ToolCallBlock,
    ToolCallState,
    ToolResultState,
    UserMsg,
)
from agent_core.middleware import MiddlewareBase, MiddlewareChain, call_model
from agent_core.model.base import ChatModelBase, ToolSchema
from agent_core.permission import PermissionEngine
from agent_core.ports import BackgroundSink, HintSource, Offloader
from agent_core.state import AgentState, ReplyContext
from agent_core.tool import Toolkit

AgentInput = Msg | Sequence[Msg] | ResumeEvent | Restarted | None
_PARKING = (RequireUserConfirmEvent, RequireExternalExecutionEvent)

# Every reply makes these from values it holds already typed: without validation.
_reply_start = trusted_maker(ReplyStartEvent, "reply_id", "session_id", "name")
_reply_end = trusted_maker(ReplyEndEvent, "reply_id", "session_id", "finished_reason", "error")
_reply_context = trusted_maker(ReplyContext, "reply_id")
_no_reply_context = trusted_maker(ReplyContext)
_hint_event = trusted_maker(HintBlockEvent, "reply_id", "block_id", "hint", "source")
_reply_msg = trusted_maker(Msg, "name", "role", "content", "id", "created_at", checked=True)


class _Settled:
    """Whether the loop goes on after a resume or a restart was settled."""

    go_on = True


class _Measured(NamedTuple):
    """A measurement before a reasoning step that left the context as it was."""

    usage: ContextUsage | None
    """The prompt's size; None when far below the compression threshold."""


class Agent:
    """A reasoning-acting loop over a model, a toolkit and a persistent `AgentState`.

    Everything needed to resume lives in `state`, so a host can persist it after any event
    and rebuild the agent from it later — including a reply parked on a user confirmation or
    an external execution.

    Args:
        name: Agent identifier, used in messages.
        system_prompt: The base system prompt.
        model: The LLM used for reasoning.
        toolkit: Tools, groups, MCP tools and skills.
        state: Context, permissions, tool and task state (auto-created).
        offloader: Where compressed context and truncated tool results go.
        middlewares: Hooks around reply, reasoning, acting, model calls, compression, prompt.
        model_config: Retries and fallback model.
        context_config: Compression thresholds and tool-result limits.
        react_config: Iteration limit and rejection/interruption handling.
        injection_config: Which runtime state (time, open tasks, context usage, repeated tool
            errors) is injected as a hint before reasoning.
        hint_source: Supplies inbox hints before every reasoning step (hosts).
        background_sink: Takes over tool calls that outlive `tool_timeout` (hosts).
        tool_timeout: Seconds before a call moves to the background (with a sink).
        token_counter: How context tokens are counted (default: AgentScope's byte estimate,
            remembering finished messages).
        confine_reads: Auto-allow read-only calls only inside the working directories;
            reads elsewhere ask (hosts serving untrusted agents).
    """

    def __init__(
        self,
        name: str,
        system_prompt: str,
        model: ChatModelBase,
        toolkit: Toolkit | None = None,
        state: AgentState | None = None,
        offloader: Offloader | None = None,
        middlewares: Sequence[MiddlewareBase] | None = None,
        model_config: ModelConfig | None = None,
        context_config: ContextConfig | None = None,
        react_config: ReActConfig | None = None,
        injection_config: InjectionConfig | None = None,
        *,
        hint_source: HintSource | None = None,
        background_sink: BackgroundSink | None = None,
        tool_timeout: float = 10.0,
        token_counter: TokenCounter | None = None,
        confine_reads: bool = False,
    ) -> None:
        self.name = name
        self.system_prompt = system_prompt
        self.model = model
        self.toolkit = toolkit or Toolkit()
        self.state = state or AgentState()
        self.offloader = offloader
        self.model_config = model_config or ModelConfig()
        self.context_config = context_config or ContextConfig()
        self.react_config = react_config or ReActConfig()
        self.injection_config = injection_config or InjectionConfig()
        self.hint_source = hint_source
        self.background_sink = background_sink
        self.tool_timeout = tool_timeout
        self.confine_reads = confine_reads
        self._chain = MiddlewareChain(self, middlewares or [])
        self._meter = PromptMeter(token_counter or CachedTokenCounter())
        self._fresh_counter = token_counter is None
        self._call_model = self._chain.wrap_model_call(call_model)
        self._system: tuple[str, Msg] | None = None

    # public API
    async def observe(self, msgs: Msg | Sequence[Msg]) -> None:
        """Add messages to the context without replying."""
        self.state.context.extend([msgs] if isinstance(msgs, Msg) else msgs)

    async def reply(self, inputs: AgentInput = None) -> Msg:
        """Run the loop until the reply ends or parks, and return the assistant `Msg`."""
        reply_id = ""
        async for event in self.reply_stream(inputs):
            if isinstance(event, ReplyStartEvent):
                reply_id = event.reply_id
        return next(m for m in reversed(self.state.context) if m.id == reply_id)

    def reply_stream(self, inputs: AgentInput = None) -> AsyncGenerator[AgentEvent, None]:
        """Run the loop, yielding every event as it happens.

        `inputs` starts a reply (messages, or None to continue without input) or resumes a
        parked one (`UserConfirmResultEvent`, `ExternalExecutionResultEvent`, or
        `UserInterruptEvent` to close it); `Restarted` continues the reply in progress after
        its host restarted (no new `REPLY_START`: the stream goes on where it was cut). A reply
        ends with `ReplyEndEvent`, or parks after a
        `RequireUserConfirmEvent` / `RequireExternalExecutionEvent` without one.

        Cancelling the task that consumes the stream interrupts the reply: open tool calls get
        `interrupted` results and the stream still ends with `REPLY_END(interrupted)` (then
        re-raises `CancelledError` if `react_config.interruption_raise_cancelled_error`).

        Raises:
            ValueError: a resume event names a reply that is not parked (or, for `Restarted`,
                not in progress).
        """
        if not self._chain.wraps_reply:
            # The loop's own generator is the stream: one layer less for every event.
            return self._reply(inputs)
        return self._wrapped_reply(inputs)

    async def _wrapped_reply(self, inputs: AgentInput) -> AsyncGenerator[AgentEvent, None]:
        async for event in self._chain.wrap_reply(self._reply)(inputs=inputs):
            yield event

    async def compress_context(self, context_config: ContextConfig | None = None) -> None:
        """Compress the context if it exceeds the threshold (`context_config` overrides).

        Raises:
            RuntimeError: the system prompt alone exceeds the compression threshold.
        """
        await self._chain.wrap_compress_context(self._compress)(context_config=context_config)

    # the reply
    async def _reply(self, inputs: AgentInput) -> AsyncGenerator[AgentEvent, None]:
        sid = self.state.session_id
        parked = self.state.current_reply()
        resume = inputs if isinstance(inputs, ResumeEvent) else None
        restarted = isinstance(inputs, Restarted)
        if isinstance(inputs, Restarted):
            if parked is None or parked.id != inputs.reply_id:
                raise ValueError(f"reply {inputs.reply_id!r} is not in progress")
            reply = ReplyBuilder(parked, sid)
        elif resume is not None:
            if parked is None or parked.id != resume.reply_id:
                raise ValueError(f"reply {resume.reply_id!r} is not awaiting outside input")
            reply = ReplyBuilder(parked, sid)
            yield reply.emit(resume)
            yield reply.emit(_reply_start(reply_id=parked.id, session_id=sid, name=self.name))
        else:
            if parked is not None:
                for event in abandon_parked(ReplyBuilder(parked, sid), self.state):
                    yield event
            if inputs is not None:
                await self.observe(inputs)  # type: ignore[arg-type]
            start = _reply_start(reply_id=new_id(), session_id=sid, name=self.name)
            # The Msg takes its identity from REPLY_START, so a client's fold equals it exactly.
            msg = _reply_msg(
                name=self.name,
                role="assistant",
                content=[],
                id=start.reply_id,
                created_at=start.created_at,
            )
            reply = ReplyBuilder(msg, sid)
            self.state.context.append(msg)
            trusted_set(self.state, "reply_context", _reply_context(reply_id=msg.id))
            yield reply.emit(start)
        finished = ReplyFinishedReason.COMPLETED
        error: ErrorInfo | None = None
        interrupted = waits = False
        try:
            if isinstance(resume, UserInterruptEvent):
                raise asyncio.CancelledError
            await self.toolkit.prepare()  # connects MCP servers and loads skills, once
            settled = _Settled()
            if resume is not None or restarted:
                async for event in self._settle(reply, resume, restarted, settled):
                    waits = isinstance(event, _PARKING)
                    yield event
            # The loop runs here, not in a generator of its own: every event passes one layer.
            engine = PermissionEngine(
                self.state.permission_context, confine_reads=self.confine_reads
            )
            for _ in range(self.react_config.max_iters if settled.go_on else 0):
                progress = self.state.reply_context
                trusted_set(progress, "cur_iter", progress.cur_iter + 1)
                if self.hint_source is not None:
                    for event in await self._inbox_hints(reply):
                        yield reply.emit(event)
                measured = self._measure_step()
                if measured is None:
                    await self.compress_context()
                hint = self._runtime_state(reply, progress.cur_iter == 1, measured)
                if hint is not None:
                    reply.emit(hint)
                    if self.injection_config.emit_hint_event:
                        yield hint
                step_start = len(reply.msg.content)
                async for event in self._chain.wrap_reasoning(self._reason_step(reply))(
                    tool_choice=None
                ):
                    yield reply.emit(event)
                calls = tool_calls_since(reply.msg, step_start)
                if not calls:
                    break
                async for event in self._gate_and_act(reply, engine, calls):
                    waits = isinstance(event, _PARKING)
                    yield event
                if waits:
                    break
            else:
                if settled.go_on:
                    finished = ReplyFinishedReason.EXCEED_MAX_ITERS
                    async for event in self._last_step(reply):
                        yield event
        except asyncio.CancelledError:
            finished, interrupted = ReplyFinishedReason.INTERRUPTED, True
            for event in reply.interrupt(self.react_config.interruption_message):
                yield event
        except Exception as exc:  # the reply ends with a readable error; the agent stays usable
            finished, error = ReplyFinishedReason.ERROR, error_info(exc)
            for event in reply.close_open_calls(
                f"Not executed: the reply failed ({error.message})."
            ):
                yield event
        if waits:  # the last event parked the reply: it waits for outside input
            return
        trusted_set(self.state, "reply_context", _no_reply_context())
        yield reply.emit(
            _reply_end(
                reply_id=reply.reply_id,
                session_id=sid,
                finished_reason=finished,
                error=error,
            )
        )
        if interrupted and self.react_config.interruption_raise_cancelled_error:
            raise asyncio.CancelledError

    async def _settle(
        self,
        reply: ReplyBuilder,
        resume: ResumeEvent | None,
        restarted: bool,
        settled: _Settled,
    ) -> AsyncIterator[AgentEvent]:
        """Settle what a restart or a resume left open; `settled` says whether to iterate on."""
        if restarted:
            parks = False
            async for event in self._settle_open_calls(reply):
                parks = isinstance(event, _PARKING)
                yield event
            if parks:
                settled.go_on = False
                return
        if resume is not None:
            rejected = False
            engine = PermissionEngine(
                self.state.permission_context, confine_reads=self.confine_reads
            )
            async for event in resume_calls(reply, resume, engine, self._run_call(reply)):
                rejected = rejected or (
                    isinstance(event, ToolResultEndEvent) and event.state is ToolResultState.DENIED
                )
                yield event
            settled.go_on = not (rejected and self.react_config.stop_on_reject)

    async def _last_step(self, reply: ReplyBuilder) -> AsyncIterator[AgentEvent]:
        """The answer without tools once the iteration limit is reached."""
        yield reply.emit(ExceedMaxItersEvent(reply_id=reply.reply_id, name=self.name))
        async for event in self._chain.wrap_reasoning(self._reason_step(reply))(tool_choice="none"):
            yield reply.emit(event)
        # A provider may still call tools here. Those calls are not run: answer them so, or the
        # model would take them for done and the context would hold calls without results.
        for event in reply.close_open_calls(
            f"Not executed: this reply reached its limit of {self.react_config.max_iters} "
            "reasoning-acting iterations. Call the tool again if it is still needed."
        ):
            yield event

    # steps
    async def _gate_and_act(
        self, reply: ReplyBuilder, engine: PermissionEngine, calls: list[ToolCallBlock]
    ) -> AsyncIterator[AgentEvent]:
        """Run the allowed calls, answer the denied ones; park on the rest (last event)."""
        gate = await gate_calls(self.toolkit, engine, calls)
        for event in denied_results(reply, gate.denied):
            yield event
        async for event in act(self.toolkit, gate.allowed, self._run_call(reply)):
            yield reply.emit(event)
        if gate.asking:
            asking = [c.model_copy(update={"state": ToolCallState.ASKING}) for c in gate.asking]
            yield reply.emit(RequireUserConfirmEvent(reply_id=reply.reply_id, tool_calls=asking))
        if gate.external:
            yield reply.emit(
                RequireExternalExecutionEvent(reply_id=reply.reply_id, tool_calls=gate.external)
            )

    async def _settle_open_calls(self, reply: ReplyBuilder) -> AsyncIterator[AgentEvent]:
        """After a restart: end, re-run or run the calls the crash left open (`_restart`)."""
        calls = open_calls(reply)
        for event in close_calls(reply, calls.unwritten + calls.unanswered, NOT_WRITTEN):
            yield event
        run_call = self._run_call(reply)
        async for event in rerun_if_read_only(reply, self.toolkit, calls.running, run_call):
            yield event
        async for event in act(self.toolkit, calls.confirmed, run_call):
            yield reply.emit(event)
        engine = PermissionEngine(self.state.permission_context, confine_reads=self.confine_reads)
        async for event in self._gate_and_act(reply, engine, calls.unstarted):
            yield event

    def _tools(self) -> list[ToolSchema]:
        return self.toolkit.schemas(self.state)

    def _base_prompt(self) -> str:
        """The base system prompt plus the skills the active tool groups offer."""
        skills = self.toolkit.skills_prompt(self.state)
        return f"{self.system_prompt}\n\n{skills}" if skills else self.system_prompt

    async def _prompt(self) -> list[Msg]:
        prompt = self._base_prompt()
        if self._chain.rewrites_system_prompt:  # else no coroutine to make and await
            prompt = await self._chain.system_prompt(prompt)
        if self._system is None or self._system[0] != prompt:
            # One message per distinct prompt: models and formatters only read the prompt.
            self._system = (prompt, SystemMsg("system", prompt))
        system = self._system[1]
        summary = [UserMsg("user", self.state.summary)] if self.state.summary else []
        return [system, *summary, *self.state.context]

    def _reason_step(self, reply: ReplyBuilder):  # type: ignore[no-untyped-def]
        def step(tool_choice: str | None = None) -> AsyncIterator[AgentEvent]:
            return reason(
                reply.reply_id,
                self.model,
                self._prompt,
                self._tools,
                self.model_config,
                tool_choice,
                self._call_model,
            )

        return step

    def _run_call(self, reply: ReplyBuilder):  # type: ignore[no-untyped-def]
        setup = ActingSetup(
            toolkit=self.toolkit,
            state=self.state,
            sink=self.background_sink,
            tool_timeout=self.tool_timeout,
            result_limit=self.context_config.tool_result_limit,
            offloader=self.offloader,
        )
        return self._chain.wrap_acting(
            functools.partial(run_tool, reply.reply_id, self.state.session_id, setup)
        )

    async def _compress(self, context_config: ContextConfig | None = None) -> None:
        result = await compress_context(
            self.model,
            await self._chain.system_prompt(self._base_prompt()),
            self.state,
            self._tools(),
            context_config or self.context_config,
            self.offloader,
            counter=self._meter.counter,
        )
        if result.compressed and self._fresh_counter:
            self._meter.counter = CachedTokenCounter()  # compression may trim messages in place

    def _measure_step(self) -> _Measured | None:
        """The prompt's size before a reasoning step, or None when `compress_context` must run.

        Below the threshold `compress_context` is a no-op, so when no middleware and no
        subclass can observe the call, one measurement decides and the call is skipped; the
        measurement then also serves the runtime-state injection.
        """
        overridden = type(self).compress_context is not _COMPRESS or "compress_context" in vars(
            self
        )
        if self._chain.sees_compression or overridden:
            return None
        usage = self._measure_if_near()
        if usage is not None and usage.needs_compression:
            return None
        return _Measured(usage)

    def _measure_if_near(self) -> ContextUsage | None:
        """The prompt's size when it is near the compression threshold, else None."""
        return self._meter.measure_if_near(
            self._base_prompt(),
            self.state.summary,
            self.state.context,
            self._tools(),
            self.model.context_length,
            self.context_config,
        )

    async def _inbox_hints(self, reply: ReplyBuilder) -> list[AgentEvent]:
        """The hint source's pending hints as events, not yet folded."""
        assert self.hint_source is not None  # the caller checks
        return [
            HintBlockEvent(
                reply_id=reply.reply_id, block_id=hint.id, hint=hint.hint, source=hint.source
            )
            for hint in await self.hint_source.drain()
        ]

    def _runtime_state(
        self, reply: ReplyBuilder, first_step: bool, measured: _Measured | None
    ) -> HintBlockEvent | None:
        """The runtime-state hint to inject before this step, if any, not yet folded."""
        config = self.injection_config
        if not config.inject_runtime_state:
            return None
        usage = None
        if first_step:  # the context length is only reported as a reply starts
            # The base prompt, not the middleware-transformed one: running the system-prompt
            # hooks an extra time per reply would be visible to them, for a mere estimate.
            # Far below the threshold there is no context length to report.
            usage = measured.usage if measured is not None else self._measure_if_near()
        text = runtime_state_text(
            config, self.state, usage, self.context_config.compression_tool_enabled
        )
        if text is None:
            return None
        return _hint_event(
            reply_id=reply.reply_id,
            block_id=new_id(),
            hint=text,
            source=config.injection_source,
        )


_COMPRESS = Agent.compress_context
