"""The `troupe` commands that talk to a running server over its HTTP API (click).

`agent`, `credential`, `session`, `chat`, `logs`, `doctor`, `status`, and `apikey` (which talks
to the server's Redis instead); `serve/cli.py` routes every `troupe` invocation but `troupe serve`
here. Exit codes are listed in `_exit`.
"""

from serve.cli_commands._group import cli

__all__ = ["cli"]
