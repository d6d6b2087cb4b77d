"""The `troupe` command group of the API client: options shared by every command, and `status`."""

from __future__ import annotations

import asyncio
from importlib.metadata import PackageNotFoundError, version

import click

from serve.cli_commands._cluster import print_cluster
from serve.cli_commands._exit import BadUsage, Failed, run
from serve.cli_commands._settings import (
    API_KEY_ENV,
    SERVER_ENV,
    USER_ENV,
    ConfigFileError,
    resolve,
)
from serve.cli_commands._target import Target, pass_target
from serve.cli_commands.apikey import apikey
from serve.cli_commands.conversation import chat, logs
from serve.cli_commands.doctor import doctor
from serve.cli_commands.resources import agent, credential, session
from serve.client import APIError, ClusterStatus, ServerUnreachableError


def _version() -> str:
    try:
        return version("raytroupe")
    except PackageNotFoundError:  # run from a checkout that was never installed
        import agent_core

        return agent_core.__version__


@click.group(
    epilog="Run the server itself with `troupe serve` (`troupe serve --help`). Exit codes: 0 "
    "done, 1 refused by the server, 2 bad usage, 3 server unreachable, 4 not found, 5 the "
    "reply / check / health failed."
)
@click.version_option(_version(), "--version", prog_name="troupe")
@click.option(
    "--server",
    metavar="URL",
    help=f"The Troupe API (${SERVER_ENV}, else the config file, else http://127.0.0.1:8000).",
)
@click.option(
    "--user",
    metavar="ID",
    help=f"Who you are, sent as X-User-ID (${USER_ENV}, else the config file, else your login); "
    f"a server running --auth keys goes by your API key (${API_KEY_ENV}, else the config file).",
)
@click.pass_context
def cli(ctx: click.Context, server: str | None, user: str | None) -> None:
    """Troupe: talk to a Troupe server from the shell.

    The server and user come from the flags, else $TROUPE_SERVER / $TROUPE_USER, else the
    TOML config file ($TROUPE_CONFIG, default ~/.config/troupe/config.toml); the API key from
    $TROUPE_API_KEY, else that file.
    """
    try:
        ctx.obj = Target(*resolve(server, user))
    except ConfigFileError as exc:
        raise BadUsage(str(exc)) from exc


@cli.command()
@click.option(
    "--wait",
    type=click.FloatRange(min=0),
    default=0,
    metavar="SECONDS",
    help="Wait up to SECONDS for the server to answer (e.g. while `troupe serve` starts).",
)
@pass_target
@run
async def status(target: Target, wait: float) -> None:
    """Print the server's health; for an admin, its nodes, hosts, sessions and inbox depths.

    Exits 5 if the server is degraded.
    """
    deadline = asyncio.get_running_loop().time() + wait
    async with target.client() as troupe:
        while True:
            try:
                health = await troupe.health()
                break
            except (ServerUnreachableError, APIError):  # a starting Serve proxy may say 404/503
                if asyncio.get_running_loop().time() >= deadline:
                    raise
            await asyncio.sleep(0.5)
        try:
            cluster: ClusterStatus | None = await troupe.cluster_status()
        except APIError as exc:
            if exc.status not in (401, 403):
                raise
            cluster = None
    click.echo(f"{target.server}: {health.status} (troupe {health.version})")
    for name, state in sorted(health.components.items()):
        click.echo(f"  {name}: {state}")
    if cluster is None:
        click.echo("cluster: not shown (needs an admin API key: troupe apikey create --admin)")
    else:
        print_cluster(cluster)
    if health.status != "ok":
        raise Failed("the server is degraded")


for command in (agent, credential, session, chat, logs, doctor, apikey):
    cli.add_command(command)
