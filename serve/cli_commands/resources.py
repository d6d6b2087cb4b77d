"""`troupe agent|credential|session ...`: create and list what the API stores."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import click
from pydantic import BaseModel

from serve.cli_commands._exit import BadUsage, Failed, run
from serve.cli_commands._target import Target, pass_target
from serve.client import ModelChoice

_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON (for scripts).")


def _table(rows: Sequence[BaseModel], columns: list[str], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([row.model_dump(mode="json") for row in rows], indent=2))
        return
    values = [[str(getattr(row, c) or "") for c in columns] for row in rows]
    widths = [max(len(c), *(len(v[i]) for v in values)) for i, c in enumerate(columns)]
    for line in [[c.upper() for c in columns], *values]:
        click.echo("  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip())


@click.group()
def agent() -> None:
    """Create and list agents."""


@agent.command("create")
@click.argument("name")
@click.option("--system-prompt", help="The agent's system prompt (the server's default if unset).")
@pass_target
@run
async def agent_create(target: Target, name: str, system_prompt: str | None) -> None:
    """Create an agent called NAME; print its id."""
    async with target.client() as troupe:
        click.echo(await troupe.create_agent(name, system_prompt))


@agent.command("list")
@_JSON
@pass_target
@run
async def agent_list(target: Target, as_json: bool) -> None:
    """List your agents."""
    async with target.client() as troupe:
        _table(await troupe.list_agents(), ["id", "name", "created_at"], as_json)


@click.group()
def credential() -> None:
    """Store, list and check model-provider credentials."""


@credential.command("add")
@click.option(
    "--type", "kind", default="openai_credential", show_default=True, help="Credential type."
)
@click.option(
    "--base-url",
    help="API root of any OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1 "
    "(default: the provider's own).",
)
@click.option("--name", default="", help="A display name.")
@click.option(
    "--api-key-env",
    metavar="VAR",
    help="Read the API key from environment variable VAR (else it is prompted for, hidden).",
)
@pass_target
@run
async def credential_add(
    target: Target, kind: str, base_url: str | None, name: str, api_key_env: str | None
) -> None:
    """Store a credential; print its id. The API key is never echoed."""
    if api_key_env:
        api_key = os.environ.get(api_key_env)
        if api_key is None:
            raise BadUsage(f"environment variable {api_key_env} is not set")
    else:
        api_key = click.prompt("API key", hide_input=True, default="", show_default=False, err=True)
    data: dict[str, Any] = {"type": kind, "api_key": api_key, "name": name}
    if base_url is not None:
        data["base_url"] = base_url
    async with target.client() as troupe:
        click.echo(await troupe.add_credential(data))


@credential.command("list")
@_JSON
@pass_target
@run
async def credential_list(target: Target, as_json: bool) -> None:
    """List your credentials (secrets masked)."""
    async with target.client() as troupe:
        rows = await troupe.list_credentials()
        _table(rows, ["id", "type", "name", "base_url"], as_json)


@credential.command("check")
@click.argument("credential_id")
@pass_target
@run
async def credential_check(target: Target, credential_id: str) -> None:
    """Try CREDENTIAL_ID once against its provider (exit 5 if it is rejected)."""
    async with target.client() as troupe:
        result = await troupe.check_credential(credential_id)
    status = "unreachable" if result.status is None else f"HTTP {result.status}"
    click.echo(f"{'ok' if result.ok else 'error'}: {result.provider} {result.url} {status}")
    if not result.ok:
        raise Failed(result.message)


@click.group()
def session() -> None:
    """Create sessions, list them, and see what they are doing."""


@session.command("create")
@click.argument("agent_id")
@click.option("--credential", "credential_id", required=True, help="Id of the credential to use.")
@click.option("--model", required=True, help="Model name, e.g. gpt-4o-mini.")
@click.option(
    "--type", "kind", default="openai_credential", show_default=True, help="Credential type."
)
@click.option("--name", help="Display name (the server titles the session otherwise).")
@pass_target
@run
async def session_create(
    target: Target, agent_id: str, credential_id: str, model: str, kind: str, name: str | None
) -> None:
    """Create a session of AGENT_ID; print its id."""
    choice = ModelChoice(credential_id=credential_id, model=model, type=kind)
    async with target.client() as troupe:
        click.echo(await troupe.create_session(agent_id, choice, name))


@session.command("list")
@click.option("--agent", "agent_id", help="Only the sessions of this agent.")
@_JSON
@pass_target
@run
async def session_list(target: Target, agent_id: str | None, as_json: bool) -> None:
    """List your sessions."""
    async with target.client() as troupe:
        rows = await troupe.list_sessions(agent_id)
        _table(rows, ["id", "agent_id", "status", "name"], as_json)


@session.command("status")
@click.argument("session_id")
@pass_target
@run
async def session_status(target: Target, session_id: str) -> None:
    """Print what SESSION_ID is doing: running, idle, awaiting_permission, ..."""
    async with target.client() as troupe:
        click.echo((await troupe.session_status(session_id)).status)
