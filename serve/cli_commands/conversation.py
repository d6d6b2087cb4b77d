"""`troupe chat` and `troupe logs`: talk to a session and watch its events as they happen."""

from __future__ import annotations

import json

import click

from serve.cli_commands._exit import BadUsage, Failed, run
from serve.cli_commands._render import EventPrinter, print_message, tool_call_line
from serve.cli_commands._target import Target, pass_target
from serve.client import Event, ModelChoice, TroupeClient


def _ask(request: Event, answer: str) -> list[bool]:
    """One verdict per tool call of a `REQUIRE_USER_CONFIRM` (prompting unless `answer` says)."""
    verdicts = []
    for call in request.data.get("tool_calls", []):
        line = tool_call_line(call.get("name", "?"), call.get("input", ""))
        if answer == "ask":
            try:
                allowed = click.confirm(f"Allow {line}?", default=False, err=True)
            except click.Abort:  # no one to ask (stdin closed): refusing is the safe answer
                allowed = False
        else:
            allowed = answer == "yes"
            click.echo(f"{'allowed' if allowed else 'denied'}: {line}", err=True)
        verdicts.append(allowed)
    return verdicts


async def _new_session(
    troupe: TroupeClient, agent_id: str, credential_id: str | None, model: str | None
) -> str:
    if not (credential_id and model):
        raise BadUsage("without a SESSION, give --credential and --model to start a new one")
    session_id = await troupe.create_session(
        agent_id, ModelChoice(credential_id=credential_id, model=model)
    )
    click.echo(f"session: {session_id}", err=True)
    return session_id


@click.command()
@click.argument("agent_id")
@click.argument("words", nargs=-1, required=True, metavar="[SESSION] TEXT")
@click.option("--credential", "credential_id", help="For a new session: the credential id.")
@click.option("--model", help="For a new session: the model name.")
@click.option(
    "--approve",
    type=click.Choice(["ask", "yes", "no"]),
    default="ask",
    show_default=True,
    help="Answer to the reply's permission requests: ask on the terminal, allow all, deny all.",
)
@click.option("--json", "as_json", is_flag=True, help="Print each event as a JSON line.")
@pass_target
@run
async def chat(
    target: Target,
    agent_id: str,
    words: tuple[str, ...],
    credential_id: str | None,
    model: str | None,
    approve: str,
    as_json: bool,
) -> None:
    """Send TEXT to AGENT_ID's SESSION and stream the reply as it is generated.

    Without SESSION, a new session is created (with --credential and --model) and its id is
    printed on stderr. The reply's text goes to stdout; thinking, tool calls and results to
    stderr. Permission requests are answered inline (see --approve). Exit 5 if the reply fails.
    """
    if len(words) > 2:
        raise BadUsage("give at most SESSION and TEXT (quote the text)")
    session_id, text = (words[0], words[1]) if len(words) == 2 else (None, words[0])
    printer = EventPrinter(as_json)
    failure = None
    async with target.client() as troupe:
        if session_id is None:
            session_id = await _new_session(troupe, agent_id, credential_id, model)
        async for event in troupe.chat(agent_id, session_id, text):
            printer.show(event)
            if event.type == "REQUIRE_USER_CONFIRM":
                await troupe.confirm(agent_id, session_id, event, _ask(event, approve))
            elif event.type == "REQUIRE_EXTERNAL_EXECUTION":
                failure = "the reply waits for externally executed tool results"
                break
            elif event.type == "REPLY_END" and event.data.get("finished_reason") == "error":
                error = event.data.get("error") or {}
                failure = f"the reply failed: {error.get('message', 'unknown error')}"
    if failure:
        raise Failed(failure)


@click.command()
@click.argument("session_id")
@click.option("-f", "--follow", is_flag=True, help="Then stream new events until interrupted.")
@click.option(
    "--after",
    metavar="CURSOR",
    help="With --follow: start behind this stream cursor (0: every event from the start).",
)
@click.option("-n", "--limit", default=20, show_default=True, help="Messages of history shown.")
@click.option("--json", "as_json", is_flag=True, help="Print each event as a JSON line.")
@pass_target
@run
async def logs(
    target: Target, session_id: str, follow: bool, after: str | None, limit: int, as_json: bool
) -> None:
    """Print SESSION_ID's latest messages; with --follow, then its live events (SSE).

    The live events start right behind the printed messages, so nothing is missed in between.
    """
    async with target.client() as troupe:
        cursor = after
        if after is None:
            transcript = await troupe.transcript(session_id, limit)
            for message in transcript.messages:
                if as_json:
                    click.echo(json.dumps(message))
                else:
                    print_message(message)
            cursor = transcript.event_cursor or "0"
        if not follow:
            return
        printer = EventPrinter(as_json)
        async for event in troupe.events(session_id, after=cursor):
            printer.show(event)
