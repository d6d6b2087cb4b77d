"""Headless Chromium tests: find node + playwright-core + Chromium, run `troupe serve`, drive it.

The browser is Debian's Chromium (`apt-get install chromium`) driven by `playwright-core` from
npm (no browser download), installed in any directory outside the checkout. Environment:

- `TROUPE_WEBUI_PLAYWRIGHT`: the `playwright-core` package directory (required);
- `TROUPE_WEBUI_NODE`: the `node` binary (default: `node` on PATH);
- `TROUPE_WEBUI_CHROMIUM`: the Chromium binary (default: `/usr/bin/chromium`);
- `TROUPE_WEBUI_ARTIFACTS` (optional): a directory that keeps the screenshots taken.

`.ci/run` installs all three and sets the variables.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.local._ports import find_free_port

REPO = Path(__file__).resolve().parents[2]
SERVE_START_TIMEOUT = 240.0
# Chromium flags for a machine without network, GPU or user namespaces for its own sandbox.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

DRIVER_PRELUDE = r"""
const fs = require('fs');
const path = require('path');
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
const cfg = JSON.parse(process.env.FLOW);"""
"""How a driver script starts: `fs`, `path`, playwright's `chromium` and the flow's `cfg`."""
DRIVER_END = r"""  } catch (e) {
    report.ok = false;
    report.error = String(e && e.stack || e);
    try { await step('failure'); } catch (_) {}
  } finally {
    await browser.close();
    fs.writeFileSync(cfg.reportPath, JSON.stringify(report, null, 1));
  }
})();
"""
"""How a driver script ends: its `try` block's failure (`report.error`, a `step('failure')`
screenshot), then the browser closed and the `report` written to `cfg.reportPath`.
"""


def _requirement(env: str, default: str | None = None) -> str | None:
    value = os.environ.get(env) or default
    return value if value and Path(value).exists() else None


@dataclass(frozen=True)
class Browser:
    """Where node, playwright-core and Chromium are."""

    node: str
    playwright: Path
    chromium: str

    def run(self, script: str, flow: dict[str, Any], workdir: Path, timeout: float) -> Any:
        """Run the node `script` with `FLOW` (JSON of `flow`, plus `chromium`, `chromiumArgs`
        and `reportPath`) and return the JSON report it writes to `reportPath`.
        """
        report_path = workdir / "report.json"
        driver = workdir / "driver.cjs"
        driver.write_text(script)
        config = {
            **flow,
            "chromium": self.chromium,
            "chromiumArgs": CHROMIUM_ARGS,
            "reportPath": str(report_path),
        }
        env = {**os.environ, "FLOW": json.dumps(config), "PLAYWRIGHT_CORE": str(self.playwright)}
        run = subprocess.run(
            [self.node, str(driver)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert report_path.exists(), f"the browser driver failed:\n{run.stdout}\n{run.stderr}"
        return json.loads(report_path.read_text())


def find_browser() -> Browser:
    """The browser toolchain, or skip the test saying which part is missing."""
    node = _requirement("TROUPE_WEBUI_NODE", shutil.which("node"))
    playwright = _requirement("TROUPE_WEBUI_PLAYWRIGHT")
    chromium = _requirement("TROUPE_WEBUI_CHROMIUM", "/usr/bin/chromium")
    missing = [
        name
        for name, found in (
            ("node (TROUPE_WEBUI_NODE)", node),
            ("playwright-core (TROUPE_WEBUI_PLAYWRIGHT)", playwright),
            ("Chromium (TROUPE_WEBUI_CHROMIUM)", chromium),
        )
        if found is None
    ]
    if missing or node is None or playwright is None or chromium is None:
        pytest.skip(f"the browser test needs {', '.join(missing)} (see tests/support/browser.py)")
    return Browser(node, Path(playwright), chromium)


def artifacts_dir(tmp_path: Path) -> Path:
    """Where screenshots go: `TROUPE_WEBUI_ARTIFACTS`, else the test's temporary directory."""
    artifacts = Path(os.environ.get("TROUPE_WEBUI_ARTIFACTS") or tmp_path)
    artifacts.mkdir(parents=True, exist_ok=True)
    return artifacts


@contextlib.contextmanager
def troupe_serve(home: Path, *args: str) -> Iterator[str]:
    """`troupe serve` in a subprocess (embedded Redis, local Ray) on a free port; yield its URL.

    Stopped with Ctrl-C (Serve, Ray and Redis shut down), killed with its process group if it
    does not stop in time.
    """
    port = find_free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "TROUPE_WORKSPACE_ROOT": str(home / "workspaces"),
        "RAY_ADDRESS": "",
    }
    command = [sys.executable, "-m", "serve.cli", "serve", "--port", str(port)]
    command += ["--data-dir", str(home / "data"), *args]
    log_path = home / "serve.log"
    with log_path.open("wb") as log:
        # its own process group: Ray's daemons go down with it if it must be killed
        process = subprocess.Popen(
            command,
            cwd=home,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, process, log_path)
            yield url
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + SERVE_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"troupe serve exited early:\n{log_path.read_text()[-4000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/health", headers={"X-User-ID": "probe"}, timeout=2).is_success:
                return
        time.sleep(0.5)
    pytest.fail(f"troupe serve was not healthy in time:\n{log_path.read_text()[-4000:]}")
