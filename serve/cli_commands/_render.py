"""How events and messages look in a terminal: reply text on stdout, the rest on stderr.

Keeping only the reply's text on stdout lets a script capture it (`out=$(troupe chat ...)`)
while a person still sees thinking, tool calls and tool results as they happen.
"""

from __future__ import annotations

import json
from typing import Any

import click

from serve.client import Event

_RESULT_PREVIEW = 400  # characters of a tool result shown


def _side(text: str, **style: Any) -> None:
    click.echo(click.style(text, **style), err=True)


def tool_call_line(name: str, arguments: str) -> str:
    """`→ name {arguments}`, as a tool call is shown."""
    return f"→ {name} {arguments}".rstrip()


class EventPrinter:
    """Prints a stream's events as they come (`as_json`: one JSON object a line on stdout)."""

    def __init__(self, as_json: bool = False) -> None:
        self.as_json = as_json
        self._calls: dict[str, tuple[str, list[str]]] = {}
        self._results: dict[str, tuple[str, list[str]]] = {}
        self._midline = False

    def show(self, event: Event) -> None:
        """Print one event."""
        if self.as_json:
            click.echo(json.dumps({"cursor": event.cursor, **event.data}))
            return
        data = event.data
        match event.type:
            case "TEXT_BLOCK_DELTA":
                click.echo(data.get("delta", ""), nl=False)
                self._midline = True
            case "TEXT_BLOCK_END":
                self._end_line()
            case "THINKING_BLOCK_DELTA":
                click.echo(click.style(data.get("delta", ""), dim=True), nl=False, err=True)
            case "THINKING_BLOCK_END":
                click.echo("", err=True)
            case "TOOL_CALL_START":
                self._calls[data["tool_call_id"]] = (data.get("tool_call_name", "?"), [])
            case "TOOL_CALL_DELTA":
                self._calls.get(data["tool_call_id"], ("?", []))[1].append(data.get("delta", ""))
            case "TOOL_CALL_END":
                name, parts = self._calls.pop(data["tool_call_id"], ("?", []))
                self._end_line()
                _side(tool_call_line(name, "".join(parts)), fg="cyan")
            case "TOOL_RESULT_START":
                self._results[data["tool_call_id"]] = (data.get("tool_call_name", "?"), [])
            case "TOOL_RESULT_TEXT_DELTA":
                self._results.get(data["tool_call_id"], ("?", []))[1].append(data["delta"])
            case "TOOL_RESULT_END":
                name, parts = self._results.pop(data["tool_call_id"], ("?", []))
                text = "".join(parts).strip()
                if len(text) > _RESULT_PREVIEW:
                    text = text[:_RESULT_PREVIEW] + " …"
                _side(f"← {name} [{data.get('state', '')}] {text}".rstrip(), fg="cyan")
            case "REPLY_END":
                self._end_line()
                error = data.get("error")
                if error:
                    _side(f"reply failed: {error.get('message', error)}", fg="red")
            case _:
                pass

    def _end_line(self) -> None:
        if self._midline:
            click.echo()
            self._midline = False


def _block_text(block: dict[str, Any]) -> str | None:
    match block.get("type"):
        case "text":
            return str(block.get("text", ""))
        case "tool_call":
            return click.style(
                tool_call_line(block.get("name", "?"), block.get("input", "")), fg="cyan"
            )
        case "tool_result":
            output = block.get("output")
            texts = (
                [output]
                if isinstance(output, str)
                else [p.get("text", "") for p in output or [] if isinstance(p, dict)]
            )
            text = "".join(texts).strip()[:_RESULT_PREVIEW]
            return click.style(f"← {block.get('name', '?')} {text}".rstrip(), fg="cyan")
        case _:
            return None


def print_message(message: dict[str, Any]) -> None:
    """Print one transcript message: `role (name):` then its blocks."""
    click.echo(click.style(f"{message.get('role')} ({message.get('name')}):", bold=True))
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    for block in blocks:
        text = _block_text(block)
        if text:
            click.echo(text)
