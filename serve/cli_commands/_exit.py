"""Exit codes and error reporting of the API commands (a script may rely on both).

| code | meaning |
| --- | --- |
| 0 | done |
| 1 | the server refused the request (its message is printed) |
| 2 | bad usage: unknown option, missing argument, unreadable config file |
| 3 | the server could not be reached |
| 4 | the agent, session or credential does not exist |
| 5 | what the command checked failed: the reply ended in an error, the server is |
|   | degraded, the provider rejected the credential |

Errors go to stderr as one line, `Error: <message>`.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec

import click

from serve.client import APIError, NotFoundError, ServerUnreachableError

P = ParamSpec("P")


class Refused(click.ClickException):
    """The server refused the request."""

    exit_code = 1


class BadUsage(click.ClickException):
    """The command was called wrongly (click's own usage errors exit 2 as well)."""

    exit_code = 2


class Unreachable(click.ClickException):
    """The server could not be reached."""

    exit_code = 3


class NotFound(click.ClickException):
    """The agent, session or credential does not exist."""

    exit_code = 4


class Failed(click.ClickException):
    """What the command checked failed (a reply, the server's health, a credential)."""

    exit_code = 5


def run(coroutine: Callable[P, Coroutine[Any, Any, None]]) -> Callable[P, None]:
    """Run an async command body; turn the client's errors into messages and exit codes."""

    @functools.wraps(coroutine)
    def command(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            asyncio.run(coroutine(*args, **kwargs))
        except ServerUnreachableError as exc:
            raise Unreachable(str(exc)) from exc
        except NotFoundError as exc:
            raise NotFound(exc.message) from exc
        except APIError as exc:
            raise Refused(str(exc)) from exc

    return command
