"""The README's quickstart runs as pasted: its shell block, its client script and its library
script, against `troupe serve` (spawned as a user would) and a local scripted model server."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.local._ports import find_free_port
from tests.support.openai_server import OpenAIWireServer

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "Paris is the capital of France."


def readme_block(marker: str) -> str:
    """The fenced block right after `<!-- marker: ... -->` in the README."""
    text = (ROOT / "README.md").read_text()
    found = re.search(rf"<!-- {marker}:[^>]*-->\n```\w+\n(.*?)```", text, re.DOTALL)
    assert found, f"no {marker} block in README.md"
    return found.group(1)


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(default_text=ANSWER) as server:
        yield server


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A user's shell: `troupe` on PATH (this checkout's), no Redis or Ray of the test suite."""
    bin_dir = tmp_path_factory.mktemp("bin")
    shim = bin_dir / "troupe"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m serve.cli "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("TROUPE_REDIS_URL", "RAY_ADDRESS")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = str(ROOT)  # Ray workers import this checkout too
    env["OPENAI_API_KEY"] = "sk-quickstart"
    return env


@pytest.fixture(scope="module")
def server(environment: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = find_free_port()
    data = tmp_path_factory.mktemp("data")
    process = subprocess.Popen(
        ["troupe", "serve", "--port", str(port), "--data-dir", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=environment,
        cwd=data,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def test_the_shell_quickstart(
    server: str, model: OpenAIWireServer, environment: dict[str, str], tmp_path: Path
) -> None:
    script = (
        readme_block("quickstart")
        .replace("http://127.0.0.1:8000", server)
        .replace("https://api.openai.com/v1", model.base_url)
    )

    done = run(["bash", "-euo", "pipefail", "-c", script], environment, tmp_path)

    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{server}: ok (troupe ")
    assert f"ok: openai_credential {model.base_url}/models HTTP 200" in lines
    assert ANSWER in lines  # the chat's reply
    assert "idle" in lines  # the session's status afterwards
    assert lines[-1] == ANSWER  # logs: the transcript ends with the reply
    chats = [r for r in model.requests if r.path.endswith("/chat/completions")]
    assert chats[0].headers["authorization"] == "Bearer sk-quickstart"


@pytest.mark.parametrize("marker", ["client-example", "library-example"])
def test_the_python_examples(
    marker: str,
    server: str,
    model: OpenAIWireServer,
    environment: dict[str, str],
    tmp_path: Path,
) -> None:
    script = tmp_path / "example.py"
    script.write_text(readme_block(marker))
    env = {**environment, "TROUPE_SERVER": server, "MODEL_URL": model.base_url}
    if marker == "client-example":  # the server must be up (the shell quickstart waits)
        run(["troupe", "status", "--wait", "120"], env, tmp_path)

    done = run([sys.executable, str(script)], env, tmp_path)

    assert done.stdout.strip() == ANSWER
