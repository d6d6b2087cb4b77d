"""`BodyLimit`: refuses request bodies over a size, by path, before any of the body is read.

Form parsing spools a multipart body to disk before a route can look at it, so a route cannot
bound its own upload. The limit is checked on the declared `Content-Length` (the HTTP server
holds the client to it); a body of unknown length is refused on these paths.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from serve.errors import error_response


class BodyLimit:
    """ASGI middleware: 413 for a body over its path's limit, 411 for one of unknown length."""

    def __init__(self, app: ASGIApp, limits: Mapping[str, int]) -> None:
        """Wrap `app`, limiting the bodies sent to the paths of `limits` (bytes)."""
        self.app = app
        self.limits = dict(limits)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request, or refuse it when its body is too large."""
        limit = self.limits.get(scope["path"]) if scope["type"] == "http" else None
        if limit is None:
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is None:
            refusal = error_response(411, "LengthRequired", "a Content-Length header is required")
        elif not declared.isdigit() or int(declared) > limit:
            message = f"the request body is over the {limit}-byte limit of this route"
            refusal = error_response(413, "RequestTooLarge", message)
        else:
            await self.app(scope, receive, send)
            return
        await refusal(scope, receive, send)
