"""`/agent/`: create and list agents."""

from __future__ import annotations

from fastapi import APIRouter

from serve.deps import Runtime, UserId
from serve.schemas import AgentView, CreateAgentRequest, CreateAgentResponse, ListAgentsResponse

router = APIRouter(prefix="/agent", tags=["agent"])


@router.post("/", status_code=201)
async def create_agent(
    body: CreateAgentRequest, user: UserId, runtime: Runtime
) -> CreateAgentResponse:
    """Create an agent."""
    record = await runtime.create_agent(user, body.to_data())
    return CreateAgentResponse(agent_id=record.id)


@router.get("/")
async def list_agents(user: UserId, runtime: Runtime) -> ListAgentsResponse:
    """List the caller's agents."""
    agents = [AgentView(**a.model_dump()) for a in await runtime.list_agents(user)]
    return ListAgentsResponse(agents=agents, total=len(agents))
