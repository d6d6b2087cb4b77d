"""The web console (`/console`) driven in headless Chromium against `troupe serve`.

The flow: enter the user id -> add a model credential and create an agent -> start a session ->
chat and watch the reply stream in -> a Write call asks for permission, which survives a reload and
is approved in the page ->
a leader (scripted to call TeamCreate and AgentCreate) assembles a team whose five members appear
live in the team panel with their status and inbox depth -> the session list shows every session
with its status -> `/docs` renders Swagger UI. Every request the pages make must stay on the
server (no CDN). Needs node, playwright-core and Chromium (see tests/support/browser.py); skipped
without them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.test_team import LEADER_PROMPT, WORKERS, scripted_team
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

USER = "grace"
REPLY = "Hello from Troupe! This reply streams into the console piece by piece."
FLOW_TIMEOUT = 420.0


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body["messages"]):
        if message["role"] == "user" and "<current-time>" not in str(message["content"]):
            content = message["content"]
            return content if isinstance(content, str) else content[0].get("text", "")
    return ""


def scripted_model(body: dict[str, Any]) -> ScriptedReply:
    """The team's leader and workers as in test_team; a greeting; a note that needs a Write."""
    system = str(body["messages"][0]["content"])
    if LEADER_PROMPT in system or "a member of the team" in system:
        return scripted_team(body)
    if body["messages"][-1]["role"] == "tool":
        return ScriptedReply(text="Written.")
    if _last_user_text(body) == "write a note":
        call = ("w1", "Write", {"file_path": "notes.txt", "content": "hello"})
        return ScriptedReply(text="Writing. ", tool_calls=[call])
    return ScriptedReply(text=REPLY, chunk_delay=0.05)


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(reply_func=scripted_model) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Browser:
    return find_browser()


@pytest.fixture(scope="module")
def api_url(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with troupe_serve(tmp_path_factory.mktemp("troupe-console")) as url:
        yield url


DRIVER = (
    DRIVER_PRELUDE
    + r"""
const report = { steps: [], httpErrors: [], pageErrors: [], offsite: [], screenshots: [] };

(async () => {
  const browser = await chromium.launch({ executablePath: cfg.chromium, args: cfg.chromiumArgs });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(cfg.stepTimeoutMs);
  page.on('pageerror', (e) => report.pageErrors.push(e.message));
  page.on('request', (r) => {
    if (!r.url().startsWith(cfg.api) && !r.url().startsWith('data:')) report.offsite.push(r.url());
  });
  page.on('response', (r) => {
    // the team panel's probe of a session without a team is an expected 404
    if (r.status() >= 400 && !(r.status() === 404 && r.url().endsWith('/team'))) {
      report.httpErrors.push(`${r.request().method()} ${r.url()} -> ${r.status()}`);
    }
  });
  const step = async (name) => {
    const file = path.join(cfg.artifacts, `console-${report.steps.length + 1}-${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    report.screenshots.push(file);
    report.steps.push({ name, url: page.url(), text: await page.locator('body').innerText() });
  };
  const startSession = async (agent, name) => {
    await page.goto(`${cfg.api}/console/#/agents`);
    const row = page.locator(`tr[data-agent="${agent}"]`);
    await row.locator('input[name=name]').fill(name);
    await row.getByRole('button', { name: 'Start session' }).click();
    await page.waitForURL(/#\/chat\/[0-9a-f]+$/);
    await page.locator('#transcript[data-streaming=open]').waitFor();
  };
  const send = async (text) => {
    await page.locator('.composer textarea').fill(text);
    await page.locator('.composer textarea').press('Enter');
  };
  const createAgent = async (name, prompt) => {
    await page.fill('#create-agent input[name=name]', name);
    await page.fill('#create-agent textarea[name=system_prompt]', prompt);
    await page.click('#create-agent button[type=submit]');
    await page.locator(`tr[data-agent="${name}"]`).waitFor();
  };
  try {
    await page.goto(`${cfg.api}/console`);
    await page.getByText('Who are you?').waitFor();
    await page.fill('#user-id', cfg.user);
    await page.click('#identity button[type=submit]');
    await page.locator('#create-agent').waitFor();
    report.storedUser = await page.evaluate(() => localStorage.getItem('troupe.console.user'));

    await page.fill('#create-credential input[name=api_key]', 'sk-test');
    await page.fill('#create-credential input[name=base_url]', cfg.modelUrl);
    await page.click('#create-credential button[type=submit]');
    await page.getByText(cfg.modelUrl).waitFor();
    await createAgent('Friday', 'You are helpful.');
    await step('agents');

    // chat: the reply streams in
    await startSession('Friday', 'greeting');
    await page.evaluate((full) => {
      window.__partial = 0;
      const log = document.getElementById('transcript');
      new MutationObserver(() => {
        const text = log.innerText;
        if (text.includes(full.slice(0, 12)) && !text.includes(full)) window.__partial += 1;
      }).observe(log, { subtree: true, childList: true, characterData: true });
    }, cfg.reply);
    await send('hello');
    await page.locator('.msg.assistant[data-finished=completed]').getByText(cfg.reply).waitFor();
    await page.locator('.block.hint').first().waitFor();
    report.partialRenders = await page.evaluate(() => window.__partial);
    await page.locator('#status .badge.idle').waitFor();
    await step('chat');

    // a permission confirmation, approved in the page
    await startSession('Friday', 'notes');
    await send('write a note');
    const card = page.locator('.confirm');
    await card.waitFor();
    await page.locator('#status .badge.awaiting_permission').waitFor();
    await step('confirm');
    // the parked reply is not in the transcript yet: a reload replays it from the event log
    await page.reload();
    await card.waitFor();
    await page.locator('#transcript[data-streaming=open]').waitFor();
    await card.getByRole('button', { name: 'Allow', exact: true }).click();
    await page.locator('.confirm.answered').waitFor();
    await page.locator('.block.tool[data-tool=Write] .state').getByText('success').waitFor();
    await page.getByText('Written.').waitFor();
    await page.locator('#status .badge.idle').waitFor();
    await step('confirmed');

    // a team: the leader spawns workers; they appear live in the team panel
    await page.goto(`${cfg.api}/console/#/agents`);
    await createAgent('Lead', cfg.leaderPrompt);
    await startSession('Lead', 'crew');
    await send('assemble a crew');
    for (const w of cfg.workers) await page.locator(`#team li[data-member="${w}"]`).waitFor();
    report.teamEarly = await page.locator('#team').innerText();
    await page.getByText(cfg.teamDone).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#team .badge.idle').length === 6);
    report.teamText = await page.locator('#team').innerText();
    await step('team');

    await page.goto(`${cfg.api}/console/#/sessions`);
    await page.waitForFunction((n) => document.querySelectorAll('tr[data-session]').length === n,
                               2 + 1 + cfg.workers.length);
    await step('sessions');

    await page.goto(`${cfg.api}/docs`);
    await page.locator('.swagger-ui .opblock').first().waitFor();
    report.docsOperations = await page.locator('.swagger-ui .opblock').count();
    await step('docs');
    report.ok = true;
"""
    + DRIVER_END
)


def test_the_console_chats_confirms_and_shows_a_team_live(
    browser: Browser, api_url: str, model: OpenAIWireServer, tmp_path: Path
) -> None:
    flow = {
        "api": api_url,
        "user": USER,
        "modelUrl": model.base_url,
        "reply": REPLY,
        "leaderPrompt": LEADER_PROMPT,
        "workers": WORKERS,
        "teamDone": f"All {len(WORKERS)} workers reported.",
        "artifacts": str(artifacts_dir(tmp_path)),
        "stepTimeoutMs": 120_000,
    }
    report = browser.run(DRIVER, flow, tmp_path, FLOW_TIMEOUT)
    assert report["ok"], (
        f"{report.get('error')}\nsteps: {[s['name'] for s in report['steps']]}\n"
        f"last page:\n{report['steps'][-1]['text'] if report['steps'] else ''}\n"
        f"HTTP errors: {report['httpErrors']}\npage errors: {report['pageErrors']}"
    )
    assert report["httpErrors"] == []
    assert report["pageErrors"] == []
    assert report["offsite"] == []  # no CDN: every request went to troupe serve
    assert report["storedUser"] == USER
    assert report["partialRenders"] > 0  # the reply rendered while it was still streaming
    assert report["docsOperations"] > 20
    for worker in WORKERS:
        assert worker in report["teamText"]
    assert "leader" in report["teamText"]
    assert "inbox 0" in report["teamText"]

    # what the pages showed is what the server holds
    headers = {"X-User-ID": USER}
    views = httpx.get(f"{api_url}/sessions/", headers=headers, timeout=10).json()["sessions"]
    names = sorted(v["session"]["config"]["name"] for v in views)
    assert names == sorted(["greeting", "notes", "crew", *WORKERS])
    assert {v["status"] for v in views} == {"idle"}
    notes = next(v["session"]["id"] for v in views if v["session"]["config"]["name"] == "notes")
    messages = httpx.get(f"{api_url}/sessions/{notes}/messages", headers=headers, timeout=10)
    [write] = [b for b in messages.json()["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert (write["name"], write["state"]) == ("Write", "success")
