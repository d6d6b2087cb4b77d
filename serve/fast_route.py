"""A route that serves its well-formed requests without FastAPI's per-request dependency solving.

FastAPI resolves a route's parameters by walking its dependency tree on every request: header
lookups, sub-dependency caches, generic validation wrappers. On a hot route that walk costs more
than the route's own work. `fast_path_route(resolve)` gives the route a second way in: `resolve`
reads the request directly and returns the endpoint's arguments, or `None` for anything it does
not take on (a malformed body, a missing or bad header). Declined requests, and every request
while one of the route's dependencies is overridden (`app.dependency_overrides`), take FastAPI's
own path, so errors, their shapes and overrides behave exactly as on any other route.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic import BaseModel

FastResolver = Callable[[Request], Awaitable[dict[str, Any] | None]]
"""Reads a request and returns the endpoint's keyword arguments, or `None` to decline it."""


def fast_path_route(resolve: FastResolver) -> type[APIRoute]:
    """An `APIRoute` class whose requests try `resolve` before FastAPI's dependency solving.

    The endpoint must be a coroutine function returning the route's response model (a pydantic
    model), answered as JSON with the route's status code. The fast path knows only the
    dependencies declared on the endpoint: include its router without router-level ones.
    """

    class FastPathRoute(APIRoute):
        def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
            standard = super().get_route_handler()
            endpoint = self.endpoint
            status_code = self.status_code or 200
            overridable = _dependency_calls(self.dependant)

            async def handler(request: Request) -> Response:
                overrides = getattr(request.app, "dependency_overrides", None)
                if overrides and not overridable.isdisjoint(overrides):
                    return await standard(request)
                values = await resolve(request)
                if values is None:
                    return await standard(request)
                result: BaseModel = await endpoint(**values)
                return Response(
                    content=result.model_dump_json(by_alias=True),
                    status_code=status_code,
                    media_type="application/json",
                )

            return handler

    return FastPathRoute


def _dependency_calls(dependant: Dependant) -> set[Callable[..., Any]]:
    """Every dependency callable under `dependant`; overriding one disables the fast path."""
    calls: set[Callable[..., Any]] = set()
    for sub in dependant.dependencies:
        if sub.call is not None:
            calls.add(sub.call)
        calls |= _dependency_calls(sub)
    return calls
