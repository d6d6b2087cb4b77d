"""What `troupe serve` does before the API is up: claim the port, answer `starting`, find Ray."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import httpx
import psutil
import pytest

from actors.local._ports import find_free_port
from serve.cli import main
from serve.startup import StartingListener, StartupError, claim_port, wait_for_ray_address


@pytest.fixture
def listener() -> Iterator[tuple[StartingListener, int]]:
    port = find_free_port()
    starting = StartingListener("127.0.0.1", port)
    try:
        yield starting, port
    finally:
        starting.close()


def test_every_path_answers_503_json_with_the_current_step(
    listener: tuple[StartingListener, int],
) -> None:
    starting, port = listener
    health = httpx.get(f"http://127.0.0.1:{port}/health")
    assert health.status_code == 503
    assert health.json() == {"status": "starting", "step": "starting"}
    starting.step("starting Ray")
    other = httpx.post(f"http://127.0.0.1:{port}/sessions/", json={})
    assert other.status_code == 503
    assert other.headers["retry-after"] == "1"
    assert other.json()["step"] == "starting Ray"


def test_a_client_gone_before_its_answer_is_not_reported(
    listener: tuple[StartingListener, int], capsys: pytest.CaptureFixture[str]
) -> None:
    server = listener[0]._server
    try:
        raise BrokenPipeError(32, "Broken pipe")
    except BrokenPipeError:
        server.handle_error(None, ("127.0.0.1", 1))
    assert capsys.readouterr().err == ""
    try:
        raise ValueError("a bug")
    except ValueError:
        server.handle_error(None, ("127.0.0.1", 1))
    assert "ValueError: a bug" in capsys.readouterr().err


def test_a_taken_port_is_one_line_naming_its_holder() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(StartupError) as caught:
            claim_port("127.0.0.1", port)
    name = psutil.Process(os.getpid()).name()
    assert str(caught.value) == (
        f"port {port} on 127.0.0.1 is already in use by process {os.getpid()} ({name}); "
        "stop it or pick another --port"
    )


def test_ray_addresses_are_checked_and_waited_for_in_bounded_time() -> None:
    with pytest.raises(StartupError, match="is not host:port"):
        wait_for_ray_address("nowhere", timeout=0)
    port = find_free_port()
    with pytest.raises(StartupError) as caught:
        wait_for_ray_address(f"127.0.0.1:{port}", timeout=0)
    assert str(caught.value).startswith(f"no Ray cluster answers at 127.0.0.1:{port} after 0s")
    wait_for_ray_address("auto", timeout=0)


def test_serve_help_shows_every_option_with_its_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["serve", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for option, default in [
        ("--host", "127.0.0.1"),
        ("--port", "8000"),
        ("--data-dir", ".troupe"),
        ("--ray-timeout", "30.0"),
        ("--replicas", "1"),
        ("--log-level", "warning"),
        ("--dashboard", "False"),
    ]:
        assert option in text
        assert f"(default: {default})" in text, option


def test_the_cli_module_does_not_import_ray() -> None:
    """`troupe serve` sets Ray's loopback binding in the environment before `ray` is imported."""
    probe = "import sys, serve.cli; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
