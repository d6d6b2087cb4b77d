"""`/agent/`: create, list, update and delete agents; the JSON schemas of the agent form."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel

from actors.storage.records import AgentData
from agent_core.agent import ContextConfig, ReActConfig
from serve.deps import Runtime, UserId
from serve.schemas import (
    AgentSchemaResponse,
    AgentSchemaV2Response,
    AgentView,
    CreateAgentRequest,
    CreateAgentResponse,
    ListAgentsResponse,
    UpdateAgentRequest,
)

router = APIRouter(prefix="/agent", tags=["agent"])

# The compression model's structured-output spec, and the process placement of an agent's
# sessions (set through the request bodies): not something the web form edits.
_INTERNAL_FIELDS = {"summary_schema", "dedicated_process"}


@router.post("/", status_code=201)
async def create_agent(
    body: CreateAgentRequest, user: UserId, runtime: Runtime
) -> CreateAgentResponse:
    """Create an agent."""
    record = await runtime.agents.create(user, body.to_data())
    return CreateAgentResponse(agent_id=record.id)


@router.get("/")
async def list_agents(user: UserId, runtime: Runtime) -> ListAgentsResponse:
    """List the caller's agents."""
    agents = [AgentView(**a.model_dump()) for a in await runtime.agents.list_agents(user)]
    return ListAgentsResponse(agents=agents, total=len(agents))


@router.get("/schema", deprecated=True)
async def agent_schema() -> AgentSchemaResponse:
    """The agent form in three sections (superseded by `/agent/schema/v2`)."""
    data = _form_schema(AgentData)
    identity = {
        "type": "object",
        "properties": {k: data["properties"][k] for k in ("name", "system_prompt")},
        "required": ["name"],
    }
    return AgentSchemaResponse(
        identity=identity,
        context_config=_form_schema(ContextConfig),
        react_config=_form_schema(ReActConfig),
    )


@router.get("/schema/v2")
async def agent_schema_v2() -> AgentSchemaV2Response:
    """The JSON schema of AgentData, self-contained, for rendering the agent form."""
    return AgentSchemaV2Response(schema=_form_schema(AgentData))


@router.patch("/{agent_id}")
async def update_agent(
    agent_id: str, body: UpdateAgentRequest, user: UserId, runtime: Runtime
) -> AgentView:
    """Change the fields the body sends; its sessions use the new data from their next reply."""
    record = await runtime.agents.get(user, agent_id)
    updated = await runtime.agents.update(user, agent_id, body.apply_to(record.data))
    return AgentView(**updated.model_dump())


@router.delete("/{agent_id}", status_code=204)
async def delete_agent(agent_id: str, user: UserId, runtime: Runtime) -> Response:
    """Delete the agent and all its sessions (their running replies are stopped)."""
    await runtime.agents.delete(user, agent_id)
    return Response(status_code=204)


def _form_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of `model` with every `$ref` inlined and internal fields dropped."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, list):
            return [resolve(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = definitions[node["$ref"].rsplit("/", 1)[-1]]
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return resolve({**target, **siblings})
        out = {k: resolve(v) for k, v in node.items()}
        if isinstance(out.get("properties"), dict):
            for name in _INTERNAL_FIELDS:
                out["properties"].pop(name, None)
        return out

    resolved: dict[str, Any] = resolve(schema)
    return resolved
