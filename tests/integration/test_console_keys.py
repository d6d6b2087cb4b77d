"""The web console against a server running `--auth keys`, in headless Chromium.

The app is `create_app(auth="keys")` with every session in-process (no Ray) on uvicorn and a real
redis-server. The flow: the console asks for an API key -> a mistyped key is refused with a clear
message -> the real key (made by `ApiKeyStore`) signs in and is kept -> an agent is created and
listed, a session's chat page opens its event stream -> a reload stays signed in -> a key the
server no longer accepts brings the form back -> sign-out forgets the key. Every API request the
page makes carries the key as a Bearer header. Skipped without node, playwright-core and Chromium
(see tests/support/browser.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from cryptography.fernet import Fernet
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.client import InProcessDispatcher
from actors.settings import RuntimeSettings
from actors.storage.api_keys import ApiKeyStore
from serve import create_app
from tests.support.asgi_server import served
from tests.support.browser import DRIVER_END, DRIVER_PRELUDE, Browser, artifacts_dir, find_browser
from workspaces import LocalWorkspaceManager

pytestmark = [pytest.mark.integration, pytest.mark.redis]

USER = "grace"
FLOW_TIMEOUT = 180.0


@pytest.fixture
def browser() -> Browser:
    return find_browser()


@pytest.fixture
async def api_url(redis_url: str, tmp_path: Path) -> AsyncIterator[str]:
    app = create_app(
        settings=RuntimeSettings(redis_url=redis_url, secret_key=Fernet.generate_key().decode()),
        workspace_manager=LocalWorkspaceManager(tmp_path / "ws", ttl=60),
        dispatcher=InProcessDispatcher,
        auth="keys",
    )
    async with served(app) as url:
        yield url


DRIVER = (
    DRIVER_PRELUDE
    + r"""
const KEY = 'troupe.console.apikey';
const report = { steps: [], httpErrors: [], pageErrors: [], unsigned: [] };

(async () => {
  const browser = await chromium.launch({ executablePath: cfg.chromium, args: cfg.chromiumArgs });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(cfg.stepTimeoutMs);
  page.on('pageerror', (e) => report.pageErrors.push(e.message));
  page.on('request', (r) => {
    const url = new URL(r.url());
    const open = url.pathname.startsWith('/console') || url.pathname === '/health';
    const bearer = (r.headers()['authorization'] || '').startsWith('Bearer trp_');
    if (url.origin === cfg.api && !open && !bearer) {
      report.unsigned.push(`${r.method()} ${url.pathname}`);
    }
  });
  page.on('response', (r) => {
    // the team panel's probe of a session without a team is an expected 404
    if (r.status() >= 400 && !(r.status() === 404 && r.url().endsWith('/team'))) {
      const where = new URL(r.url()).pathname;
      report.httpErrors.push(`${r.request().method()} ${where} -> ${r.status()}`);
    }
  });
  const step = async (name) => {
    const file = path.join(cfg.artifacts, `console-keys-${report.steps.length + 1}-${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    report.steps.push({ name, text: await page.locator('body').innerText() });
  };
  const signIn = async (key) => {
    await page.fill('#api-key', key);
    await page.click('#sign-in button[type=submit]');
  };
  try {
    await page.goto(`${cfg.api}/console`);
    await page.locator('#sign-in').waitFor();
    report.userFieldShown = await page.locator('#identity').isVisible();
    await step('sign-in');

    // a mistyped key: the form comes back saying why
    await signIn(cfg.key + 'x');
    await page.locator('#sign-in-note').waitFor();
    report.refusedNote = await page.locator('#sign-in-note').innerText();
    report.keptAfterRefusal = await page.evaluate((k) => localStorage.getItem(k), KEY);
    await step('refused');

    await signIn(cfg.key);
    await page.locator('#create-agent').waitFor();
    report.storedKey = await page.evaluate((k) => localStorage.getItem(k), KEY);
    report.signOutShown = await page.locator('#sign-out').isVisible();
    await page.fill('#create-agent input[name=name]', 'Friday');
    await page.click('#create-agent button[type=submit]');
    await page.locator('tr[data-agent="Friday"]').waitFor();
    await page.fill('#create-credential input[name=api_key]', 'sk-test');
    await page.fill('#create-credential input[name=base_url]', 'http://127.0.0.1:9/v1');
    await page.click('#create-credential button[type=submit]');
    await page.getByText('http://127.0.0.1:9/v1').waitFor();
    await step('agents');

    // the chat page's event stream is fetched with the key too
    const row = page.locator('tr[data-agent="Friday"]');
    await row.locator('input[name=name]').fill('keyed');
    await row.getByRole('button', { name: 'Start session' }).click();
    await page.waitForURL(/#\/chat\/[0-9a-f]+$/);
    await page.locator('#transcript[data-streaming=open]').waitFor();
    await step('chat');

    // still signed in after a reload; the agent is listed again
    await page.goto(`${cfg.api}/console/#/agents`);
    await page.reload();
    await page.locator('tr[data-agent="Friday"]').waitFor();

    // a key the server does not accept (revoked, say): the form comes back
    await page.evaluate((k) => localStorage.setItem(k, 'trp_0000.gone'), KEY);
    await page.reload();
    await page.locator('#sign-in-note').waitFor();
    report.expiredNote = await page.locator('#sign-in-note').innerText();
    report.expiredKey = await page.evaluate((k) => localStorage.getItem(k), KEY);

    await signIn(cfg.key);
    await page.locator('tr[data-agent="Friday"]').waitFor();
    await page.goto(`${cfg.api}/console/#/sessions`);
    await page.locator('tr[data-session]').waitFor();
    await page.click('#sign-out');
    await page.locator('#sign-in').waitFor();
    report.afterSignOut = await page.evaluate((k) => localStorage.getItem(k), KEY);
    report.signInNoteAfterSignOut = await page.locator('#sign-in-note').count();
    await step('signed-out');
    report.ok = true;
"""
    + DRIVER_END
)


async def test_the_console_signs_in_with_an_api_key(
    browser: Browser, api_url: str, redis_url: str, tmp_path: Path
) -> None:
    redis = Redis.from_url(redis_url)
    try:
        token, _ = await ApiKeyStore(redis, Keys("troupe")).create(USER, name="console")
    finally:
        await redis.aclose()
    flow = {
        "api": api_url,
        "key": token,
        "artifacts": str(artifacts_dir(tmp_path)),
        "stepTimeoutMs": 30_000,
    }
    # The driver blocks; the server runs in this event loop.
    report = await asyncio.to_thread(browser.run, DRIVER, flow, tmp_path, FLOW_TIMEOUT)

    assert report["ok"], (
        f"{report.get('error')}\nsteps: {[s['name'] for s in report['steps']]}\n"
        f"last page:\n{report['steps'][-1]['text'] if report['steps'] else ''}\n"
        f"HTTP errors: {report['httpErrors']}\npage errors: {report['pageErrors']}"
    )
    assert report["pageErrors"] == []
    assert report["unsigned"] == []  # every API call carried the key
    assert not report["userFieldShown"]
    assert "the API key is not valid" in report["refusedNote"]
    assert report["keptAfterRefusal"] is None
    assert report["storedKey"] == token
    assert report["signOutShown"]
    assert "the API key is not valid" in report["expiredNote"]
    assert report["expiredKey"] is None
    assert report["afterSignOut"] is None
    assert report["signInNoteAfterSignOut"] == 0
    # the only refusals are the two bad keys' first requests
    assert {error.split(" -> ")[1] for error in report["httpErrors"]} == {"401"}

    # what the page made belongs to the key's user
    async with httpx.AsyncClient(base_url=api_url, timeout=10) as api:
        agents = (await api.get("/agent/", headers={"Authorization": f"Bearer {token}"})).json()
        health = (await api.get("/health")).json()
    assert [a["data"]["name"] for a in agents["agents"]] == ["Friday"]
    assert health["auth"] == "keys"
