"""AgentScope's own web UI, unmodified, driven in headless Chromium against `troupe serve`.

The flow: setup page (API URL and user name) -> create an agent in its dialog -> "New Session"
-> type a message -> the streamed reply renders (with its "System - Runtime State" hint) ->
reload -> the history renders again, and the session is listed under its generated title.
`troupe serve` runs for real (embedded Redis, local Ray) with `--cors-origin` set to the UI's
origin, and talks to a scripted OpenAI-protocol model server.

Building the UI (outside this repository: none of it is checked in)
--------------------------------------------------------------------
The UI is `examples/web_ui/frontend` in the public `agentscope-ai/agentscope` repository (a
snapshot of 2026-08-22, commit `da00849f2`, is known to work). Copy that directory somewhere
outside this checkout. It depends on the TypeScript SDK `@agentscope-ai/agentscope@^0.0.15`,
which is not in the npm registry; assemble that package from the public sources of
`agentscope-ai/agentscope-typescript` (`packages/agentscope`): at least its `message` (the
version with `appendEvent`, `HintBlock` and block timestamps), `event` (with `CUSTOM`,
`HINT_BLOCK` and `ReplyFinishedReason`), `type`, `permission` and `state` modules, with a
`package.json` exporting `./message`, `./event`, `./type`, `./permission` and `./state` and a
`tsup` config building those entries to `dist/`. Build it with `tsup`, then change the one line
of the UI's `package.json` that names the SDK into a `file:` dependency on that directory, run
`npm install` and the UI's own `npm run build` (`tsc -b` and vite). The result is a `dist/`
directory holding `index.html` and `assets/`.

Running this test
-----------------
Install Chromium from the distribution (Debian: `apt-get install chromium`) and `playwright-core`
from npm into any directory (no browser download needed). Then set:

- `TROUPE_WEBUI_DIST`: the UI's built `dist/` directory (required; the test skips without it);
- `TROUPE_WEBUI_PLAYWRIGHT`: the `playwright-core` package directory (its `node_modules/...`);
- `TROUPE_WEBUI_NODE`: the `node` binary (default: `node` on PATH);
- `TROUPE_WEBUI_CHROMIUM`: the Chromium binary (default: `/usr/bin/chromium`);
- `TROUPE_WEBUI_ARTIFACTS` (optional): a directory that keeps the screenshots taken.

The test serves `dist/` itself (a static server with the single-page-app fallback), so no vite
process is needed.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_core.agent import RUNTIME_STATE_SOURCE
from tests.support.browser import (
    DRIVER_END,
    DRIVER_PRELUDE,
    Browser,
    artifacts_dir,
    find_browser,
    troupe_serve,
)
from tests.support.openai_server import OpenAIWireServer, ScriptedReply

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

USER = "ada"
AGENT_NAME = "Friday"
QUESTION = "Hi there, who are you?"
REPLY = "Hello from Troupe! I am Friday, a scripted assistant streaming this reply to you."
TITLE = "Greeting Friday"
FLOW_TIMEOUT = 300.0


@dataclass(frozen=True)
class Toolchain:
    """The built UI and the browser that drives it."""

    dist: Path
    browser: Browser


@pytest.fixture(scope="module")
def toolchain() -> Toolchain:
    dist = os.environ.get("TROUPE_WEBUI_DIST")
    if not dist or not (Path(dist) / "index.html").is_file():
        pytest.skip(
            "TROUPE_WEBUI_DIST does not name a built AgentScope web UI (a dist/ directory with "
            "index.html); see this module's docstring for how to build one"
        )
    return Toolchain(Path(dist), find_browser())


class _SinglePageApp(SimpleHTTPRequestHandler):
    """Static files of the built UI; any other path is the app's index.html (client routes)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_head(self) -> Any:
        if not Path(self.translate_path(self.path)).is_file():
            self.path = "/index.html"
        return super().send_head()


@pytest.fixture(scope="module")
def ui_url(toolchain: Toolchain) -> Iterator[str]:
    handler = partial(_SinglePageApp, directory=str(toolchain.dist))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="webui-static", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def scripted_model(body: dict[str, Any]) -> ScriptedReply:
    """Answers titling requests with a title, everything else with the streamed reply."""
    tools = [tool["function"]["name"] for tool in body.get("tools") or []]
    if "generate_structured_output" in tools:
        return ScriptedReply(
            tool_calls=[("title-1", "generate_structured_output", {"title": TITLE})]
        )
    return ScriptedReply(text=REPLY, chunk_delay=0.05)


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(reply_func=scripted_model) as server:
        yield server


@pytest.fixture(scope="module")
def api_url(
    toolchain: Toolchain, ui_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """`troupe serve` in a subprocess: embedded Redis, local Ray, CORS for the UI's origin."""
    with troupe_serve(tmp_path_factory.mktemp("troupe-serve"), "--cors-origin", ui_url) as url:
        yield url


DRIVER = (
    DRIVER_PRELUDE
    + r"""
const shot = (name) => path.join(cfg.artifacts, name);
const report = { steps: [], httpErrors: [], pageErrors: [], screenshots: [] };

(async () => {
  const browser = await chromium.launch({
    executablePath: cfg.chromium,
    args: cfg.chromiumArgs,
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(cfg.stepTimeoutMs);
  page.on('pageerror', (e) => report.pageErrors.push(e.message));
  page.on('response', (r) => {
    if (r.url().startsWith(cfg.api) && r.status() >= 400) {
      report.httpErrors.push(`${r.request().method()} ${r.url()} -> ${r.status()}`);
    }
  });
  // The UI's first-run tour would cover the page.
  await page.addInitScript(() => localStorage.setItem('chat_tour_done', '1'));
  const body = async () => page.locator('body').innerText();
  const step = async (name) => {
    const file = shot(`${report.steps.length + 1}-${name}.png`);
    await page.screenshot({ path: file });
    report.screenshots.push(file);
    report.steps.push({ name, url: page.url(), text: await body() });
  };
  try {
    await page.goto(cfg.ui);
    await page.fill('#server-url-input', cfg.api);
    await page.fill('#username-input', cfg.user);
    await page.click('button[type=submit]');
    await page.waitForURL('**/chat**');
    await step('setup');

    await page.click('button[title="Create agent"]');
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill(cfg.agent);
    await dialog.getByRole('button', { name: 'Create', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.waitForURL(/\/chat\/[0-9a-f]+$/);
    await step('agent');

    await page.getByRole('button', { name: 'New Session' }).click();
    await page.waitForURL(/\/chat\/[0-9a-f]+\/[0-9a-f]+$/);
    // the UI picks the first model of the user's credential for the new session
    await page.getByText(cfg.modelName, { exact: true }).first().waitFor();
    await step('session');

    // Count renders showing the reply only in part: proof it arrives in pieces.
    await page.evaluate((full) => {
      window.__partial = 0;
      new MutationObserver(() => {
        const text = document.body.innerText;
        if (text.includes(full.slice(0, 12)) && !text.includes(full)) window.__partial += 1;
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    }, cfg.reply);
    const input = page.getByPlaceholder('Type a message...');
    await input.fill(cfg.question);
    await input.press('Enter');
    await page.getByText(cfg.reply).waitFor();
    await page.getByText(cfg.hintLabel).first().waitFor();
    report.partialRenders = await page.evaluate(() => window.__partial);
    await step('reply');

    // The server titles the session once the reply is stored; wait for that before reloading.
    const [agentId] = page.url().split('/').slice(-2);
    const deadline = Date.now() + cfg.stepTimeoutMs;
    const titled = async () => {
      const res = await fetch(`${cfg.api}/sessions/?agent_id=${agentId}`,
                              { headers: { 'X-User-ID': cfg.user } });
      const views = (await res.json()).sessions;
      return views.some((v) => v.session.config.name === cfg.title);
    };
    while (!(await titled())) {
      if (Date.now() > deadline) throw new Error('the session was never titled');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await page.reload();
    await page.getByText(cfg.reply).waitFor();
    await page.getByText(cfg.question).waitFor();
    await page.getByText(cfg.hintLabel).first().waitFor();
    await page.getByText(cfg.title).first().waitFor();
    report.errorToasts = await page.locator('[data-sonner-toast][data-type="error"]').count();
    await step('reloaded');
    report.ok = true;
"""
    + DRIVER_END
)


def _first_model_name(api_url: str, provider: str) -> str:
    models = httpx.get(f"{api_url}/model/", params={"provider": provider}, timeout=10).json()
    return str(models["models"][0]["name"])


def test_the_agentscope_web_ui_runs_a_chat_and_shows_it_again_after_a_reload(
    toolchain: Toolchain,
    ui_url: str,
    api_url: str,
    model: OpenAIWireServer,
    tmp_path: Path,
) -> None:
    headers = {"X-User-ID": USER}
    credential = {
        "data": {"type": "openai_credential", "api_key": "sk-test", "base_url": model.base_url}
    }
    created = httpx.post(f"{api_url}/credential/", json=credential, headers=headers, timeout=10)
    assert created.status_code == 201, created.text
    flow = {
        "ui": ui_url,
        "api": api_url,
        "user": USER,
        "agent": AGENT_NAME,
        "question": QUESTION,
        "reply": REPLY,
        "title": TITLE,
        "hintLabel": "System - Runtime State",
        "modelName": _first_model_name(api_url, "openai_credential"),
        "artifacts": str(artifacts_dir(tmp_path)),
        "stepTimeoutMs": 90_000,
    }
    report = toolchain.browser.run(DRIVER, flow, tmp_path, FLOW_TIMEOUT)
    assert report["ok"], (
        f"{report.get('error')}\nsteps: {[s['name'] for s in report['steps']]}\n"
        f"last page:\n{report['steps'][-1]['text'] if report['steps'] else ''}\n"
        f"HTTP errors: {report['httpErrors']}\npage errors: {report['pageErrors']}"
    )

    assert report["httpErrors"] == []
    assert report["pageErrors"] == []
    assert report["errorToasts"] == 0
    assert report["partialRenders"] > 0  # the reply rendered while it was still streaming
    steps = {s["name"]: s for s in report["steps"]}
    assert AGENT_NAME in steps["agent"]["text"]
    reloaded = steps["reloaded"]["text"]
    # history, in order: the question, the runtime-state hint, the reply
    order = [reloaded.index(QUESTION), reloaded.index("System - Runtime State")]
    assert order == sorted(order)
    assert reloaded.index(REPLY) > order[-1]
    assert TITLE in reloaded  # the session is listed under its title, not its id

    # what the UI showed is what the server stored
    agent_id, session_id = steps["reloaded"]["url"].rstrip("/").split("/")[-2:]
    listed = httpx.get(
        f"{api_url}/sessions/", params={"agent_id": agent_id}, headers=headers, timeout=10
    ).json()
    [view] = listed["sessions"]
    assert set(view) == {"session", "is_running", "status", "team"}
    assert view["session"]["id"] == session_id
    assert view["session"]["config"]["name"] == TITLE
    messages = httpx.get(
        f"{api_url}/sessions/{session_id}/messages", headers=headers, timeout=10
    ).json()["messages"]
    hint = next(b for b in messages[-1]["content"] if b["type"] == "hint")
    assert hint["source"] == RUNTIME_STATE_SOURCE
    titling = [
        r for r in model.requests if "generate_structured_output" in str(r.body.get("tool_choice"))
    ]
    assert len(titling) == 1
    assert QUESTION in json.dumps(titling[0].body["messages"])
