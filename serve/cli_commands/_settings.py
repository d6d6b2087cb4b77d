"""Where the CLI finds its server and identity: flags, then the environment, then a config file.

The config file is TOML (`$TROUPE_CONFIG`, default `$XDG_CONFIG_HOME/troupe/config.toml`, i.e.
`~/.config/troupe/config.toml`)::

    server = "http://127.0.0.1:8000"
    user = "me"
    api_key = "trp_..."   # a server running --auth keys (keep the file private: chmod 600)
"""

from __future__ import annotations

import getpass
import os
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from serve.client import DEFAULT_SERVER

SERVER_ENV = "TROUPE_SERVER"
USER_ENV = "TROUPE_USER"
API_KEY_ENV = "TROUPE_API_KEY"
CONFIG_ENV = "TROUPE_CONFIG"


class ConfigFileError(Exception):
    """The config file exists but cannot be read."""


class FileSettings(BaseModel):
    """What the config file may set."""

    model_config = ConfigDict(extra="forbid")

    server: str | None = None
    user: str | None = None
    api_key: str | None = None


def config_path() -> Path:
    """The config file's path (it need not exist)."""
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "troupe" / "config.toml"


def _from_file(path: Path) -> FileSettings:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return FileSettings()
    except OSError as exc:
        raise ConfigFileError(f"{path}: {exc.strerror}") from exc
    try:
        return FileSettings.model_validate(tomllib.loads(raw.decode()))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"{path}: not valid TOML: {exc}") from exc
    except ValidationError as exc:
        fields = ", ".join(".".join(map(str, e["loc"])) for e in exc.errors())
        raise ConfigFileError(f"{path}: unknown or invalid setting(s): {fields}") from exc


def resolve(server: str | None, user: str | None) -> tuple[str, str, str | None]:
    """The server, user and API key to use: the flags, else the environment, else the file.

    Defaults: the server on http://127.0.0.1:8000, the login name as the user, no API key.

    Raises:
        ConfigFileError: the config file is unreadable or sets unknown keys.
    """
    server = server or os.environ.get(SERVER_ENV)
    user = user or os.environ.get(USER_ENV)
    api_key = os.environ.get(API_KEY_ENV) or None
    if server is None or user is None or api_key is None:
        saved = _from_file(config_path())
        server = server or saved.server
        user = user or saved.user
        api_key = api_key or saved.api_key
    return server or DEFAULT_SERVER, user or getpass.getuser(), api_key
