"""`/knowledge_bases/`: Troupe has no knowledge bases; clients polling for them get none.

The answers have AgentScope's shapes, so a client renders an empty list rather than an error.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from serve.deps import UserId
from serve.schemas import KbMiddlewareParametersSchemaResponse, ListKnowledgeBasesResponse

router = APIRouter(prefix="/knowledge_bases", tags=["knowledge_bases"])


@router.get("/")
async def list_knowledge_bases(
    _: UserId,
    page: Annotated[int, Query(ge=1, description="1-based page number.")] = 1,
    page_size: Annotated[int, Query(ge=1, le=128, description="Page size.")] = 30,
    id: Annotated[str | None, Query(description="Filter down to one knowledge base.")] = None,
    name: Annotated[str | None, Query(description="Substring filter on the name.")] = None,
    orderby: Annotated[str, Query(pattern=r"^(create_time|update_time)$")] = "create_time",
    desc: Annotated[bool, Query(description="Sort newest first.")] = True,
) -> ListKnowledgeBasesResponse:
    """The caller's knowledge bases, filtered and paginated: always an empty page."""
    return ListKnowledgeBasesResponse(knowledge_bases=[], total=0, page=page, page_size=page_size)


@router.get("/middleware/parameters_schema")
async def kb_middleware_parameters_schema(_: UserId) -> KbMiddlewareParametersSchemaResponse:
    """The tunable parameters of knowledge-base retrieval: none in Troupe."""
    return KbMiddlewareParametersSchemaResponse(
        parameter_schema={"type": "object", "properties": {}}
    )
