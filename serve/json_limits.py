"""`JsonLimits`: bounds on every JSON request body, checked before a route sees it.

Whatever the API accepts is stored and read back by other processes (session actors, other
replicas), whose JSON parsers have their own recursion limits. A body nested deeper than they
read, a string too large to be a field's value, or a lone UTF-16 surrogate (valid JSON, not
encodable as UTF-8) would be accepted here and fail later, somewhere the user cannot see or
clean up. So each is refused at the edge, naming the field:

* a body over `max_body` bytes: 413 (no field: it is not read);
* a body of more than `MAX_VALUES` values: 413 naming the container where the count ran over;
* a string (or object key) over its field's limit: 413 naming the field;
* nesting deeper than `max_depth`, or a lone surrogate: 422 naming the field.

A body that is not JSON at all passes through: the route's own validation answers it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from serve.errors import error_response

MAX_BODY = 16 * 1024 * 1024
"""Bytes of one JSON request body."""
MAX_DEPTH = 32
"""Nesting levels of one JSON request body (records add a few more when stored)."""
MAX_STRING = 1024 * 1024
"""Characters of one string value, unless its field has a limit of its own."""
FIELD_LIMITS: Mapping[str, int] = {
    # Inline media is the only large value a request legitimately carries.
    "data": 12 * 1024 * 1024,
    "api_key": 8 * 1024,
    "name": 1024,
    "system_prompt": 256 * 1024,
}
"""Characters of a string value by its field name (the last object key on its path)."""
MAX_VALUES = 100_000
"""Values (array items and object members, all levels) of one JSON request body."""
_MAX_KEY = 1024
"""Characters of an object key."""


class JsonBodyRefused(Exception):
    """A JSON body over one of the bounds: the status, what is wrong, and where."""

    def __init__(self, status: int, kind: str, loc: list[str | int], message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.loc = loc
        self.message = message


def check_json(value: Any, max_depth: int = MAX_DEPTH) -> None:
    """Check a parsed JSON body against the bounds, depth first (iteratively).

    Raises:
        JsonBodyRefused: a value is nested too deep, too long, or holds a lone surrogate.
    """
    # Paths are linked (parent, key) pairs, spelled out only for an error: a body of millions
    # of values must not cost millions of path copies.
    root: _Path = (None, "body")
    if isinstance(value, str):
        _check_string(value, root)
    stack: list[tuple[Any, _Path, int]] = [(value, root, 0)]
    values = 0
    while stack:
        item, path, depth = stack.pop()
        if not isinstance(item, dict | list):
            continue
        if depth >= max_depth:
            raise JsonBodyRefused(
                422, "too_deep", _spelled(path), f"nested deeper than {max_depth} levels"
            )
        values += len(item)
        if values > MAX_VALUES:
            raise JsonBodyRefused(
                413, "too_many_values", _spelled(path), f"the body holds over {MAX_VALUES} values"
            )
        children = enumerate(item) if isinstance(item, list) else item.items()
        for key, child in children:
            child_path: _Path = (path, key)
            if isinstance(key, str):
                _check_string(key, child_path, _MAX_KEY)
            if isinstance(child, str):
                _check_string(child, child_path)
            elif isinstance(child, dict | list):
                stack.append((child, child_path, depth + 1))


_Path = tuple[Any, str | int]
"""A value's place in the body: (its parent's path or None, its key or index)."""


def _spelled(path: _Path) -> list[str | int]:
    """The path as FastAPI's `loc` (`["body", "input", 0, ...]`), its first 8 parts."""
    parts: list[str | int] = []
    node: _Path | None = path
    while node is not None:
        parent, key = node
        parts.append(key)
        node = parent
    return parts[::-1][:8]


def _check_string(text: str, path: _Path, limit: int | None = None) -> None:
    field = _field(path)
    bound = limit if limit is not None else FIELD_LIMITS.get(field, MAX_STRING)
    if len(text) > bound:
        raise JsonBodyRefused(
            413, "too_large", _spelled(path), f"longer than {bound} characters ({len(text)})"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JsonBodyRefused(
            422, "lone_surrogate", _spelled(path), "holds a lone UTF-16 surrogate (not text)"
        ) from exc


def _field(path: _Path) -> str:
    """The last object key on the path (a list item is named by its list's field)."""
    node: _Path | None = path
    while node is not None:
        parent, key = node
        if isinstance(key, str):
            return key
        node = parent
    return "body"


_SHORTEST_BOUND = min(MAX_STRING, _MAX_KEY, MAX_VALUES, *FIELD_LIMITS.values())


def _small_enough(body: bytes, max_depth: int) -> bool:
    r"""Whether `body` is too small to reach any bound: it need not be parsed to be checked.

    A string or count over a bound takes more bytes than the shortest bound; nesting takes a
    bracket per level; a lone surrogate takes a `\u` escape or a raw 0xED lead byte (which
    well-formed text also uses: such a body is simply parsed).
    """
    return (
        len(body) <= _SHORTEST_BOUND
        and body.count(b"[") + body.count(b"{") <= max_depth
        and b"\\u" not in body
        and b"\xed" not in body
    )


def _is_json(headers: Headers) -> bool:
    # FastAPI reads a body without a content type as JSON too.
    media = headers.get("content-type", "application/json").split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


class JsonLimits:
    """ASGI middleware: refuse JSON request bodies over the bounds (module docstring)."""

    def __init__(self, app: ASGIApp, max_body: int = MAX_BODY, max_depth: int = MAX_DEPTH) -> None:
        """Wrap `app`, checking JSON bodies of up to `max_body` bytes, `max_depth` levels."""
        self.app = app
        self.max_body = max_body
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request, or refuse its body when it is over a bound."""
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if not _is_json(headers):
            await self.app(scope, receive, send)
            return
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await self._too_large(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        refusal = self._refusal(body)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _refusal(self, body: bytes) -> Any:
        if _small_enough(body, self.max_depth):
            return None
        try:
            value = json.loads(body) if body else None
        except RecursionError:
            error = JsonBodyRefused(
                422, "too_deep", ["body"], f"nested deeper than {self.max_depth} levels"
            )
        except ValueError:  # not JSON: the route's validation says so
            return None
        else:
            try:
                check_json(value, self.max_depth)
            except JsonBodyRefused as exc:
                error = exc
            else:
                return None
        # A key on the path may itself be the lone surrogate: shown escaped.
        loc = [_printable(part) if isinstance(part, str) else part for part in error.loc]
        where = ".".join(str(part) for part in loc)
        detail = [{"loc": loc, "msg": error.message, "type": error.kind}]
        kind = "RequestTooLarge" if error.status == 413 else "ValidationError"
        return error_response(error.status, kind, f"{where}: {error.message}", detail)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"the request body is over the {self.max_body}-byte limit"
        await error_response(413, "RequestTooLarge", message)(scope, receive, send)


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the app the body already read, then the client's later messages."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
