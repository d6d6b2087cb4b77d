"""Session hosts and workspace actors import only what they use.

Each module is imported in a fresh interpreter, as a Ray worker does when it starts an actor,
and the modules it loaded are checked: no HTTP layer, no command-line toolkits, no model
provider, no SDK of a workspace backend or of MCP, no scheduler, no tracing SDK and no runtime
client until something uses it. A session host also leaves the agent loop, the built-in tools,
the toolkit, the middleware interface, the permission engine, the schedule service and the
workspace host to its first session (it reaches workspaces through workspace actors), and the
cipher to its first secret. No module they import builds a pydantic validator: models and
module-level adapters are built on first use.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cryptography.fernet import Fernet

FORBIDDEN = (
    "serve",
    "click",
    "rich",
    "typer",
    "fastapi",
    "uvicorn",
    "mcp",
    "e2b",
    "aiodocker",
    "pypdf",
    "agent_core.model.openai",
    "agent_core.model.openai_response",
    "agent_core.model.anthropic",
    "agent_core.model.gemini",
    "agent_core.model.ollama",
    "agent_core.model.dashscope",
    "agent_core.model.deepseek",
    "agent_core.model.moonshot",
    "agent_core.model.xai",
    "apscheduler",
    "opentelemetry.sdk.trace",
    "actors.client",
)


def loaded_after_import(module: str, watched: tuple[str, ...] = FORBIDDEN) -> set[str]:
    """The `watched` modules a fresh interpreter holds after importing `module`."""
    code = (
        "import json, sys\n"
        f"import {module}\n"
        f"print(json.dumps(sorted(m for m in {watched!r} if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=300
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "module",
    [
        "actors.sessions.runtime",
        "actors._remote.session_actor",
        "actors._remote.workspace_actor",
        "actors.workspaces.host",
        "agent_core.agent",
    ],
)
def test_an_actor_module_loads_no_cli_provider_or_backend_sdk(module: str) -> None:
    assert loaded_after_import(module) == set()


FIRST_SESSION = (
    "actors.sessions.runtime",
    "actors.schedules.service",
    "actors.inprocess",
    "agent_core.agent._agent",
    "agent_core.tool.builtin",
    "agent_core.tool.toolkit",
    "agent_core.skill.viewer",
    "agent_core.permission.bash",
    "agent_core.permission.engine",
    "agent_core.middleware",
    "actors.workspaces.host",
    "actors.workspaces.backends",
    "workspaces.local",
)


def test_a_session_host_loads_the_agent_loop_and_tools_with_its_first_session() -> None:
    assert loaded_after_import("actors._remote.session_actor", FIRST_SESSION) == set()


def test_messages_and_records_load_no_shell_analysis_or_tools() -> None:
    assert loaded_after_import("actors.storage.records", FIRST_SESSION) == set()


def test_a_session_host_loads_the_cipher_with_its_first_secret() -> None:
    assert loaded_after_import("actors._remote.session_actor", ("cryptography.fernet",)) == set()
    key = Fernet.generate_key()
    token = Fernet(key).encrypt(b"sk-secret").decode()
    code = (
        "import asyncio, sys\n"
        "from actors.storage.redis_storage import RedisStorage\n"
        f"storage = RedisStorage(secret_key={key.decode()!r})\n"
        "box = asyncio.run(storage.secrets())\n"
        "box.verify('download', b'message', box.sign('download', b'message'))\n"
        "before = 'cryptography.fernet' in sys.modules\n"
        f"opened = box.decrypt({token!r})\n"
        "print(before, 'cryptography.fernet' in sys.modules, opened)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=300
    ).stdout
    assert out.split() == ["False", "True", "sk-secret"]


def test_a_provider_loads_on_first_use() -> None:
    code = (
        "import sys\n"
        "import agent_core.model as model\n"
        "before = 'agent_core.model.openai' in sys.modules\n"
        "model.OpenAIChatModel\n"
        "print(before, 'agent_core.model.openai' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=300
    ).stdout
    assert out.split() == ["False", "True"]


def test_a_workspace_actor_loads_no_redis_client() -> None:
    assert loaded_after_import("actors.workspaces.host", ("redis",)) == set()


def test_the_agent_loads_no_json_schema_validator_before_a_tool_call() -> None:
    # Ray loads jsonschema itself: only a process without Ray shows the difference.
    assert loaded_after_import("agent_core.agent", ("jsonschema",)) == set()


_BUILT = """
import json, sys
from pydantic import BaseModel, TypeAdapter
import {module}
ours = ("agent_core.", "workspaces.", "actors.")
def models(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from models(sub)
built = [
    m.__qualname__
    for m in models(BaseModel)
    if m.__module__.startswith(ours) and m.__pydantic_complete__
]
built += [
    f"{{name}}.{{attr}}"
    for name, mod in list(sys.modules.items())
    if name.startswith(ours)
    for attr, value in vars(mod).items()
    if isinstance(value, TypeAdapter) and value.pydantic_complete
]
print(json.dumps(sorted(built)))
"""


# The workspace host is left out: built-in tools publish their input schema as a class
# attribute, which builds their input models as they are defined.
@pytest.mark.parametrize("module", ["actors._remote.session_actor", "agent_core.agent"])
def test_a_module_builds_no_model_validator_at_import(module: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _BUILT.format(module=module)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []
