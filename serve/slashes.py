"""`CollectionRoots`: `POST /chat` reaches the route `POST /chat/`, as the spec's curl expects.

The collection routes are declared with a trailing slash (`/chat/`, `/agent/`, ...), like
AgentScope's, where a request without it gets a 307 redirect. The spec's own examples send
`curl -X POST .../chat`, which does not follow redirects: serving both spellings keeps them
working. Only exact collection roots are rewritten; every other path is left alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send


class CollectionRoots:
    """ASGI middleware: a request for `/x` is served by the route `/x/`."""

    def __init__(self, app: ASGIApp, roots: Iterable[str]) -> None:
        """Wrap `app`; `roots` are the collection paths without their trailing slash."""
        self.app = app
        self.roots = frozenset(roots)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request, at the collection's slashed path when it names a root."""
        if scope["type"] == "http" and scope["path"] in self.roots:
            path = scope["path"] + "/"
            scope = {**scope, "path": path, "raw_path": path.encode()}
        await self.app(scope, receive, send)


def collection_roots(paths: Iterable[str]) -> set[str]:
    """The paths `/x` that only exist as `/x/` among `paths`."""
    known = set(paths)
    return {path[:-1] for path in known if len(path) > 1 and path.endswith("/")} - known
