"""The server and identity every API command talks to (set by the root group's options)."""

from __future__ import annotations

from dataclasses import dataclass

import click

from serve.client import TroupeClient


@dataclass(frozen=True)
class Target:
    """Where to send requests, and as whom."""

    server: str
    user: str
    api_key: str | None = None

    def client(self) -> TroupeClient:
        """A client for this server and user (close it: `async with`)."""
        return TroupeClient(self.server, user=self.user, api_key=self.api_key)


pass_target = click.make_pass_decorator(Target)
