"""`troupe doctor SESSION`: check a session's durable invariants on the server."""

from __future__ import annotations

import json

import click

from serve.cli_commands._exit import Failed, run
from serve.cli_commands._target import Target, pass_target


@click.command()
@click.argument("session_id")
@click.option("--json", "as_json", is_flag=True, help="Print the server's audit as JSON.")
@pass_target
@run
async def doctor(target: Target, session_id: str, as_json: bool) -> None:
    """Check SESSION_ID: one end per reply, inputs and hints once, nothing answered twice.

    Exit 5 when an invariant is broken.
    """
    async with target.client() as troupe:
        audit = await troupe.doctor(session_id)
    violations = audit["violations"]
    if as_json:
        click.echo(json.dumps(audit))
    else:
        click.echo(
            f"{session_id}: {audit['replies']} replies, {audit['ended']} ended "
            f"({audit['errors']} with an error)"
        )
        for name in ("running", "parked"):
            if audit[name]:
                click.echo(f"  {name}: {audit[name]}")
        for violation in violations:
            click.echo(f"  broken: {violation}")
        if not violations:
            click.echo("  healthy")
    if violations:
        raise Failed(f"{len(violations)} broken invariant(s)")
