"""`TroupeClient`: the HTTP API as typed async methods (httpx + pydantic, nothing else)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Self

import httpx

from serve.client._sse import sse_frames
from serve.client.errors import APIError, NotFoundError, ServerUnreachableError
from serve.client.models import (
    Agent,
    ClusterStatus,
    Credential,
    CredentialCheck,
    Event,
    Health,
    ModelChoice,
    Session,
    SessionStatus,
    Transcript,
)

DEFAULT_SERVER = "http://127.0.0.1:8000"
USER_HEADER = "X-User-ID"
# A reply ends here; a parked reply waits for an answer the caller gives (see `chat`).
_REPLY_END = "REPLY_END"


def _error(response: httpx.Response) -> APIError:
    """The typed error of a failed response, with the server's own message when it sent one."""
    error_type, message = "HTTPError", response.reason_phrase or "error"
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            error_type = str(error.get("type") or error_type)
            message = str(error.get("message") or message)
        elif isinstance(body.get("detail"), str):
            message = body["detail"]
    cls = NotFoundError if response.status_code == 404 else APIError
    return cls(response.status_code, error_type, message)


class TroupeClient:
    """A Troupe server's HTTP API, as one user.

    Use it as an async context manager (or call `aclose`)::

        async with TroupeClient("http://127.0.0.1:8000", user="me") as troupe:
            agent_id = await troupe.create_agent("Friday")

    Args:
        server: The API root.
        user: The identity sent as `X-User-ID` (servers running `--auth dev`).
        api_key: An API key, sent as `Authorization: Bearer` (servers running `--auth keys`,
            where it decides who you are).
        timeout: Seconds allowed per request (streams wait for events without limit).
        transport: An httpx transport to use instead of the network (e.g. an in-process app).

    Raises (from every method):
        ServerUnreachableError: the server could not be reached.
        NotFoundError: the agent, session or credential does not exist.
        APIError: the server refused the request (the message says why).
    """

    def __init__(
        self,
        server: str = DEFAULT_SERVER,
        user: str = "me",
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        api_key: str | None = None,
    ) -> None:
        self.server = server.rstrip("/")
        self.user = user
        headers = {USER_HEADER: user}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.AsyncClient(
            base_url=self.server,
            headers=headers,
            timeout=timeout,
            transport=transport,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise ServerUnreachableError(f"cannot reach {self.server}: {exc}") from exc
        if not response.is_success:
            raise _error(response)
        return response.json() if response.content else None

    async def health(self) -> Health:
        """The service's version and the status of each component."""
        return Health.model_validate(await self._call("GET", "/health"))

    async def cluster_status(self) -> ClusterStatus:
        """Ray nodes, session hosts and their sessions, non-empty inboxes (an admin key's view).

        Raises:
            APIError: 403 without an admin key.
        """
        return ClusterStatus.model_validate(await self._call("GET", "/admin/status"))

    async def create_agent(
        self, name: str, system_prompt: str | None = None, **settings: Any
    ) -> str:
        """Create an agent and return its id.

        Args:
            name: Its name.
            system_prompt: Its system prompt (the server's default when None).
            **settings: Further `POST /agent/` fields (e.g. `chat_config`).
        """
        body: dict[str, Any] = {"name": name, **settings}
        if system_prompt is not None:
            body["system_prompt"] = system_prompt
        answer = await self._call("POST", "/agent/", json=body)
        return str(answer["agent_id"])

    async def list_agents(self) -> list[Agent]:
        """The user's agents."""
        answer = await self._call("GET", "/agent/")
        return [
            Agent(
                id=a["id"],
                name=a["data"]["name"],
                system_prompt=a["data"]["system_prompt"],
                created_at=a["created_at"],
            )
            for a in answer["agents"]
        ]

    async def add_credential(self, data: dict[str, Any]) -> str:
        """Store a credential and return its id.

        Args:
            data: The credential tagged by `type`, e.g. `{"type": "openai_credential",
                "api_key": "...", "base_url": "http://127.0.0.1:11434/v1"}`.
        """
        answer = await self._call("POST", "/credential/", json={"data": data})
        return str(answer["credential_id"])

    async def list_credentials(self) -> list[Credential]:
        """The user's credentials (secrets masked)."""
        answer = await self._call("GET", "/credential/")
        return [
            Credential(
                id=c["id"],
                type=c["data"]["type"],
                name=c["data"].get("name", ""),
                base_url=c["data"].get("base_url"),
                created_at=c["created_at"],
            )
            for c in answer["credentials"]
        ]

    async def check_credential(self, credential_id: str) -> CredentialCheck:
        """Ask the server to try the credential once against its provider."""
        answer = await self._call("POST", f"/credential/{credential_id}/check")
        return CredentialCheck.model_validate(answer)

    async def create_session(
        self, agent_id: str, model: ModelChoice | None = None, name: str | None = None
    ) -> str:
        """Create a session of `agent_id` talking to `model`; return its id.

        Args:
            agent_id: The agent.
            model: The model and credential (without one, the session cannot reply).
            name: Its display name (the server titles it after its first reply otherwise).
        """
        body: dict[str, Any] = {"agent_id": agent_id}
        if model is not None:
            body["chat_model_config"] = model.model_dump()
        if name is not None:
            body["name"] = name
        answer = await self._call("POST", "/sessions/", json=body)
        return str(answer["session_id"])

    async def list_sessions(self, agent_id: str | None = None) -> list[Session]:
        """The user's sessions (of `agent_id` only, when given)."""
        params = {"agent_id": agent_id} if agent_id else {}
        answer = await self._call("GET", "/sessions/", params=params)
        return [
            Session(
                id=s["session"]["id"],
                agent_id=s["session"]["agent_id"],
                name=s["session"]["config"]["name"],
                status=s["status"],
                created_at=s["session"]["created_at"],
            )
            for s in answer["sessions"]
        ]

    async def session_status(self, session_id: str) -> SessionStatus:
        """What the session is doing now."""
        answer = await self._call("GET", f"/sessions/{session_id}/status")
        return SessionStatus.model_validate(answer)

    async def doctor(self, session_id: str) -> dict[str, Any]:
        """The server's check of the session's durable invariants (`violations`: what broke)."""
        answer: dict[str, Any] = await self._call("GET", f"/sessions/{session_id}/doctor")
        return answer

    async def transcript(self, session_id: str, limit: int = 50) -> Transcript:
        """The newest `limit` messages of the session and the stream cursor behind them."""
        answer = await self._call(
            "GET", f"/sessions/{session_id}/messages", params={"limit": limit}
        )
        return Transcript.model_validate(answer)

    async def send(self, agent_id: str, session_id: str, text: str) -> None:
        """Post a user message to the session; the reply arrives on its stream."""
        message = {"name": self.user, "role": "user", "content": [{"type": "text", "text": text}]}
        await self._post_input(agent_id, session_id, message)

    async def confirm(
        self, agent_id: str, session_id: str, request: Event, approved: bool | list[bool]
    ) -> None:
        """Answer a `REQUIRE_USER_CONFIRM` event: allow or deny its tool calls.

        Args:
            agent_id: The session's agent.
            session_id: The session.
            request: The `REQUIRE_USER_CONFIRM` event.
            approved: One verdict for every tool call, or one per tool call in order.
        """
        calls = request.data.get("tool_calls", [])
        verdicts = approved if isinstance(approved, list) else [approved] * len(calls)
        if len(verdicts) != len(calls):
            raise ValueError(f"{len(calls)} tool calls need as many verdicts, not {len(verdicts)}")
        answer = {
            "type": "USER_CONFIRM_RESULT",
            "reply_id": request.reply_id,
            "confirm_results": [
                {"confirmed": ok, "tool_call": call}
                for ok, call in zip(verdicts, calls, strict=True)
            ],
        }
        await self._post_input(agent_id, session_id, answer)

    async def _post_input(self, agent_id: str, session_id: str, chat_input: Any) -> None:
        body = {"agent_id": agent_id, "session_id": session_id, "input": chat_input}
        await self._call("POST", "/chat/", json=body)

    async def events(self, session_id: str, after: str | None = None) -> AsyncIterator[Event]:
        """Follow the session's event stream (until the caller stops iterating).

        Args:
            session_id: The session.
            after: Replay from behind this cursor ("0": from the start); None starts at the
                reply in progress, or with the next event.
        """
        async for event in self._stream(session_id, after, None):
            yield event

    async def chat(self, agent_id: str, session_id: str, text: str) -> AsyncIterator[Event]:
        """Send `text` and yield the reply's events as they are generated, to its `REPLY_END`.

        The stream is opened before the message is posted, so nothing is missed. A reply that
        asks permission yields `REQUIRE_USER_CONFIRM` and waits: answer with `confirm` while
        iterating, and the same reply resumes on this iterator.
        """
        async for event in self._stream(session_id, None, (agent_id, text)):
            yield event

    async def _stream(
        self, session_id: str, after: str | None, send: tuple[str, str] | None
    ) -> AsyncIterator[Event]:
        params = {"after": after} if after is not None else {}
        mine: set[str] = set()
        request = self._http.build_request(
            "GET",
            f"/sessions/{session_id}/stream",
            params=params,
            timeout=httpx.Timeout(self._http.timeout.connect or 30.0, read=None),
        )
        try:
            response = await self._http.send(request, stream=True)
        except httpx.TransportError as exc:
            raise ServerUnreachableError(f"cannot reach {self.server}: {exc}") from exc
        try:
            if not response.is_success:
                await response.aread()
                raise _error(response)
            if send is not None:
                await self.send(send[0], session_id, send[1])
            async for cursor, data in sse_frames(response.aiter_lines()):
                payload = json.loads(data)
                event = Event(cursor=cursor, type=str(payload.get("type", "")), data=payload)
                if send is not None:
                    # The stream may open inside an earlier reply: only this one ends the chat.
                    if event.type == "REPLY_START" and event.reply_id:
                        mine.add(event.reply_id)
                    elif event.reply_id not in mine:
                        continue
                yield event
                if send is not None and event.type == _REPLY_END:
                    return
        except httpx.TransportError as exc:
            raise ServerUnreachableError(f"the stream from {self.server} broke: {exc}") from exc
        finally:
            await response.aclose()
