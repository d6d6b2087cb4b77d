// Troupe console: a small single-page app over Troupe's REST/SSE API (no build step).
'use strict';

const BASE = location.pathname.replace(/\/console(\/.*)?$/, '');
const USER_KEY = 'troupe.console.user';
const API_KEY = 'troupe.console.apikey';
const POLL_MS = 1500;

// --- helpers ------------------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

// How this server identifies callers (GET /health's `auth`): `dev` trusts the X-User-ID header,
// `keys` wants an API key as a Bearer token.
let authMode = 'dev';
let signInNote = '';
const user = () => localStorage.getItem(USER_KEY) || '';
const apiKey = () => localStorage.getItem(API_KEY) || '';
const signedIn = () => (authMode === 'keys' ? apiKey() : user()) !== '';
const authHeaders = () => (authMode === 'keys'
  ? { Authorization: `Bearer ${apiKey()}` } : { 'X-User-ID': user() });

// Forget the API key and show the sign-in form, saying why (a 401 from the server).
function signOut(note) {
  localStorage.removeItem(API_KEY);
  signInNote = note || '';
  route();
}

// A 401 under --auth keys: the key was revoked or mistyped; ask for one again. `sentKey` is the key
// the request carried: a late refusal of a key already replaced (the user signed in again while
// requests made with the old one were in flight) must not sign the new key out.
function refused(res, message, sentKey) {
  if (res.status !== 401 || authMode !== 'keys') return false;
  if (sentKey === apiKey()) signOut(`The server refused the API key: ${message}. Sign in again.`);
  return true;
}

function flash(message) {
  const box = document.getElementById('flash');
  box.textContent = message;
  box.hidden = !message;
}

async function api(method, path, body) {
  const sentKey = apiKey();
  const headers = authHeaders();
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(BASE + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    let message = res.statusText;
    try {
      const err = await res.json();
      message = (err.error && err.error.message) || JSON.stringify(err.detail);
    } catch (_) { /* not JSON */ }
    refused(res, message, sentKey);
    throw new Error(`${method} ${path}: ${res.status} ${message}`);
  }
  return res.status === 204 ? null : res.json();
}

const badge = (status) => h('span', { class: `badge ${status || 'gone'}` }, status || 'gone');
const short = (id) => (id || '').slice(0, 8);

// Run `fn` now and every POLL_MS until the page changes; errors go to the flash line.
function poll(page, fn) {
  const tick = async () => {
    try { await fn(); } catch (e) { if (signedIn()) flash(e.message); }
  };
  tick();
  page.cleanups.push(clearInterval.bind(null, setInterval(tick, POLL_MS)));
}

// Submit handler: read the form, run `fn(values)`, show errors instead of throwing.
function onSubmit(fn) {
  return async (event) => {
    event.preventDefault();
    const form = event.target;
    const button = form.querySelector('button[type=submit]');
    if (button) button.disabled = true;
    try {
      flash('');
      await fn(Object.fromEntries(new FormData(form).entries()), form);
    } catch (e) {
      flash(e.message);
    } finally {
      if (button) button.disabled = false;
    }
  };
}

// --- SSE over fetch (EventSource cannot send X-User-ID or Authorization) -----------------------

// Read the session's events after `after`, calling onEvent(id, event) for each; reconnects with
// Last-Event-ID after a dropped connection. Stops when `signal` aborts.
async function streamEvents(sessionId, after, onEvent, signal, onOpen) {
  let cursor = after;
  let first = true;
  while (!signal.aborted) {
    try {
      const sentKey = apiKey();
      const headers = authHeaders();
      let url = `${BASE}/sessions/${sessionId}/stream`;
      if (first) url += `?after=${encodeURIComponent(cursor)}`;
      else headers['Last-Event-ID'] = cursor;
      const res = await fetch(url, { headers, signal });
      if (refused(res, 'the event stream needs a valid key', sentKey)) return;
      if (!res.ok) throw new Error(`stream: ${res.status}`);
      first = false;
      if (onOpen) onOpen();
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let id = null;
          let data = '';
          for (const line of frame.split('\n')) {
            if (line.startsWith('id:')) id = line.slice(3).trim();
            else if (line.startsWith('data:')) data += line.slice(5).trim();
          }
          if (!data) continue;
          if (id) cursor = id;
          onEvent(id, JSON.parse(data));
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      flash(`event stream: ${e.message}; reconnecting`);
    }
    if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// --- pages --------------------------------------------------------------------------------------

async function agentsPage(page) {
  const agentsBody = h('tbody');
  const credsBody = h('tbody');
  const credSelect = () => h('select', { name: 'credential_id', required: true },
    page.credentials.map((c) => h('option', { value: c.id }, `${c.data.type} ${short(c.id)}`)));

  const newSession = (agent) => {
    const model = h('input', { name: 'model', required: true, value: 'gpt-4o-mini' });
    return h('form', { class: 'row', onsubmit: onSubmit(async (v) => {
      const cred = page.credentials.find((c) => c.id === v.credential_id);
      const created = await api('POST', '/sessions/', {
        agent_id: agent.id,
        name: v.name || undefined,
        chat_model_config: {
          type: cred.data.type, credential_id: cred.id, model: v.model, parameters: {},
        },
      });
      location.hash = `#/chat/${created.session_id}`;
    }) },
    h('label', {}, 'Credential', credSelect()),
    h('label', {}, 'Model', model),
    h('label', {}, 'Session name', h('input', { name: 'name', placeholder: '(titled by the server)' })),
    h('button', { type: 'submit' }, 'Start session'));
  };

  const render = async () => {
    const [{ agents }, { credentials }] = await Promise.all([
      api('GET', '/agent/'), api('GET', '/credential/'),
    ]);
    page.credentials = credentials;
    agentsBody.replaceChildren(...(agents.length ? agents.map((a) => h('tr', { dataset: { agent: a.data.name } },
      h('td', {}, h('strong', {}, a.data.name), h('div', { class: 'muted mono' }, a.id)),
      h('td', {}, h('div', { class: 'muted' }, (a.data.system_prompt || '').slice(0, 160))),
      h('td', {}, credentials.length ? newSession(a)
        : h('span', { class: 'empty' }, 'add a credential to start a session')),
      h('td', {}, h('button', { class: 'danger', onclick: async () => {
        if (!confirm(`Delete agent ${a.data.name} and its sessions?`)) return;
        await api('DELETE', `/agent/${a.id}`).catch((e) => flash(e.message));
        render();
      } }, 'Delete')))) : [h('tr', {}, h('td', { class: 'empty', colspan: 4 }, 'No agents yet.'))]));
    credsBody.replaceChildren(...(credentials.length ? credentials.map((c) => h('tr', {},
      h('td', {}, c.data.type), h('td', { class: 'mono' }, c.id),
      h('td', { class: 'mono' }, c.data.base_url || ''))) : [h('tr', {}, h('td', { class: 'empty', colspan: 3 }, 'No credentials yet.'))]));
  };

  page.main.append(
    h('div', { class: 'panel' }, h('h2', {}, 'Agents'),
      h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'Agent'), h('th', {}, 'System prompt'),
        h('th', {}, 'New session'), h('th', {}))), agentsBody)),
    h('div', { class: 'grid' },
      h('div', { class: 'panel' }, h('h3', {}, 'Create an agent'),
        h('form', { class: 'stack', id: 'create-agent', onsubmit: onSubmit(async (v, form) => {
          await api('POST', '/agent/', { name: v.name, system_prompt: v.system_prompt || undefined });
          form.reset();
          await render();
        }) },
        h('label', {}, 'Name', h('input', { name: 'name', required: true })),
        h('label', {}, 'System prompt', h('textarea', { name: 'system_prompt', rows: 3 })),
        h('button', { type: 'submit' }, 'Create agent'))),
      h('div', { class: 'panel' }, h('h3', {}, 'Model credentials'),
        h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'Type'), h('th', {}, 'Id'), h('th', {}, 'Base URL'))), credsBody),
        h('form', { class: 'stack', id: 'create-credential', onsubmit: onSubmit(async (v, form) => {
          const data = { type: v.type, api_key: v.api_key };
          if (v.base_url) data.base_url = v.base_url;
          await api('POST', '/credential/', { data });
          form.reset();
          await render();
        }) },
        h('label', {}, 'Type', h('input', { name: 'type', value: 'openai_credential', required: true })),
        h('label', {}, 'API key', h('input', { name: 'api_key', type: 'password', required: true })),
        h('label', {}, 'Base URL (OpenAI-compatible endpoints)', h('input', { name: 'base_url' })),
        h('button', { type: 'submit' }, 'Add credential')))));
  await render();
}

async function sessionsPage(page) {
  const body = h('tbody');
  page.main.append(h('div', { class: 'panel' }, h('h2', {}, 'Sessions'),
    h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'Session'), h('th', {}, 'Agent'),
      h('th', {}, 'Status'), h('th', {}, 'Team'), h('th', {}))), body)));
  poll(page, async () => {
    const [{ sessions }, { agents }] = await Promise.all([api('GET', '/sessions/'), api('GET', '/agent/')]);
    const names = Object.fromEntries(agents.map((a) => [a.id, a.data.name]));
    body.replaceChildren(...(sessions.length ? sessions.map((v) => {
      const s = v.session;
      const member = s.membership;
      return h('tr', { dataset: { session: s.id } },
        h('td', {}, h('a', { href: `#/chat/${s.id}` }, s.config.name || short(s.id)),
          h('div', { class: 'muted mono' }, s.id)),
        h('td', {}, names[s.agent_id] || short(s.agent_id)),
        h('td', {}, badge(v.status)),
        h('td', {}, v.team || s.team_id ? h('a', { href: `#/team/${s.id}` },
          `${v.team ? v.team.team.data.name : 'team'}${member ? ` (${member.role}: ${member.member_name})` : ''}`) : ''),
        h('td', {}, h('button', { class: 'danger', onclick: async () => {
          if (!confirm('Delete this session?')) return;
          await api('DELETE', `/sessions/${s.id}`).catch((e) => flash(e.message));
        } }, 'Delete')));
    }) : [h('tr', {}, h('td', { class: 'empty', colspan: 5 }, 'No sessions yet: start one from an agent.'))]));
  });
}

// The team panel of a session: leader and members with status and inbox depth, kept live.
function teamPanel(page, sessionId) {
  const box = h('div', { class: 'panel team', id: 'team' }, h('h3', {}, 'Team'), h('p', { class: 'empty' }, 'Not in a team.'));
  const row = (m, role) => h('li', { dataset: { member: m.name } },
    h('span', {}, h('a', { href: `#/chat/${m.session_id}` }, m.name), ' ', h('span', { class: 'muted' }, role)),
    h('span', {}, badge(m.status), ' ', h('span', { class: 'depth' }, `inbox ${m.inbox_depth}`)));
  const refresh = async () => {
    const sentKey = apiKey();
    const res = await fetch(`${BASE}/sessions/${sessionId}/team`, { headers: authHeaders() });
    if (res.status === 404) {
      box.replaceChildren(h('h3', {}, 'Team'), h('p', { class: 'empty' }, 'Not in a team.'));
      return;
    }
    if (refused(res, 'the team panel needs a valid key', sentKey)) return;
    if (!res.ok) throw new Error(`team: ${res.status}`);
    const team = await res.json();
    box.replaceChildren(h('h3', {}, `Team ${team.name}`),
      team.description ? h('p', { class: 'muted' }, team.description) : '',
      h('ul', { class: 'team-list' }, row(team.leader, 'leader'), team.members.map((m) => row(m, 'member'))),
      h('p', { class: 'muted' }, `${team.members.length} member(s)`));
  };
  poll(page, refresh);
  return { box, refresh };
}

async function teamPage(page, sessionId) {
  const { box } = teamPanel(page, sessionId);
  page.main.append(h('p', {}, h('a', { href: `#/chat/${sessionId}` }, '← chat')), box);
}

// Renders a session's transcript and live events into `root`.
class Transcript {
  constructor(root, onConfirm) {
    this.root = root;
    this.onConfirm = onConfirm;
    this.replies = new Map();
    this.blocks = new Map();
    this.tools = new Map();
    this.confirms = new Map();
  }

  scroll() { this.root.scrollTop = this.root.scrollHeight; }

  addUser(text) {
    this.root.append(h('div', { class: 'msg user' }, h('div', { class: 'who' }, 'you'), h('div', { class: 'block text' }, text)));
    this.scroll();
  }

  reply(replyId, name) {
    let el = this.replies.get(replyId);
    if (!el) {
      el = h('div', { class: 'msg assistant', dataset: { reply: replyId } }, h('div', { class: 'who' }, name || 'assistant'));
      this.replies.set(replyId, el);
      this.root.append(el);
    }
    return el;
  }

  hint(parent, hint, source) {
    let label = source || 'hint';
    try { label = JSON.parse(source).label || label; } catch (_) { /* a plain label */ }
    const text = typeof hint === 'string' ? hint : hint.map((b) => b.text || '').join('');
    parent.append(h('div', { class: 'block hint' }, h('div', { class: 'label' }, label), text));
  }

  tool(parent, id, name) {
    let box = this.tools.get(id);
    if (!box) {
      box = h('div', { class: 'block tool', dataset: { tool: name } },
        h('span', { class: 'name' }, name), ' ', h('span', { class: 'state muted' }),
        h('pre', { class: 'args' }));
      this.tools.set(id, box);
      parent.append(box);
    }
    return box;
  }

  result(box) {
    let el = box.querySelector('.result');
    if (!el) { el = h('pre', { class: 'result' }); box.append(el); }
    return el;
  }

  // A stored Msg (from GET /sessions/{id}/messages).
  addMessage(msg) {
    const text = (blocks) => (typeof blocks === 'string' ? blocks : blocks.map((b) => b.text || '').join(''));
    if (msg.role === 'user') {
      this.addUser(msg.content.filter((b) => b.type === 'text').map((b) => b.text).join(''));
      return;
    }
    const el = this.reply(msg.id, msg.name);
    for (const block of msg.content) {
      if (block.type === 'text') el.append(h('div', { class: 'block text' }, block.text));
      else if (block.type === 'thinking') el.append(h('div', { class: 'block thinking' }, block.thinking));
      else if (block.type === 'hint') this.hint(el, block.hint, block.source);
      else if (block.type === 'tool_call') this.tool(el, block.id, block.name).querySelector('.args').textContent = block.input;
      else if (block.type === 'tool_result') {
        const box = this.tool(el, block.id, block.name);
        this.result(box).textContent = text(block.output);
        box.querySelector('.state').textContent = block.state;
      }
    }
    this.scroll();
  }

  // A live event from the session's stream.
  addEvent(ev) {
    const el = ev.reply_id ? this.reply(ev.reply_id, ev.name) : null;
    switch (ev.type) {
      case 'TEXT_BLOCK_START':
      case 'THINKING_BLOCK_START': {
        const block = h('div', { class: `block ${ev.type.startsWith('TEXT') ? 'text' : 'thinking'}` });
        this.blocks.set(ev.block_id, block);
        el.append(block);
        break;
      }
      case 'TEXT_BLOCK_DELTA':
      case 'THINKING_BLOCK_DELTA':
        this.blocks.get(ev.block_id)?.append(ev.delta);
        break;
      case 'TEXT_BLOCK_END':
        if (ev.text && this.blocks.get(ev.block_id)) this.blocks.get(ev.block_id).textContent = ev.text;
        break;
      case 'TOOL_CALL_START':
        this.tool(el, ev.tool_call_id, ev.tool_call_name);
        break;
      case 'TOOL_CALL_DELTA':
        this.tools.get(ev.tool_call_id)?.querySelector('.args').append(ev.delta);
        break;
      case 'TOOL_RESULT_START':
        this.result(this.tool(el, ev.tool_call_id, ev.tool_call_name)).textContent = '';
        this.tools.get(ev.tool_call_id).querySelector('.state').textContent = 'running';
        break;
      case 'TOOL_RESULT_TEXT_DELTA':
        this.result(this.tools.get(ev.tool_call_id)).append(ev.delta);
        break;
      case 'TOOL_RESULT_END':
        this.tools.get(ev.tool_call_id).querySelector('.state').textContent = ev.state;
        break;
      case 'HINT_BLOCK':
        this.hint(el, ev.hint, ev.source);
        break;
      case 'REQUIRE_USER_CONFIRM':
        this.confirm(el, ev);
        break;
      case 'USER_CONFIRM_RESULT': {
        const card = this.confirms.get(ev.reply_id);
        if (card) {
          card.classList.add('answered');
          card.querySelectorAll('button').forEach((b) => { b.disabled = true; });
          card.querySelector('.outcome').textContent = ev.confirm_results
            .map((r) => `${r.tool_call.name}: ${r.confirmed ? 'allowed' : 'denied'}`).join(', ');
        }
        break;
      }
      case 'REQUIRE_EXTERNAL_EXECUTION':
        el.append(h('div', { class: 'block note' }, 'waiting for an external tool result'));
        break;
      case 'USER_INTERRUPT':
        el.append(h('div', { class: 'block note' }, 'interrupted'));
        break;
      case 'EXCEED_MAX_ITERS':
        el.append(h('div', { class: 'block note' }, 'stopped: too many iterations'));
        break;
      case 'REPLY_END':
        el.dataset.finished = ev.finished_reason;
        if (ev.finished_reason === 'error') {
          el.classList.add('finished-error');
          el.append(h('div', { class: 'block note' }, `error: ${ev.error || 'the reply failed'}`));
        }
        break;
      default:
        break;
    }
    this.scroll();
  }

  // A permission request: one Allow / Deny choice per tool call, posted once all are chosen.
  confirm(el, ev) {
    const decisions = new Map();
    const card = h('div', { class: 'confirm', dataset: { confirm: ev.reply_id } },
      h('strong', {}, 'Permission needed'), h('div', { class: 'outcome muted' }));
    const decide = async (call, confirmed, rules) => {
      decisions.set(call.id, { confirmed, tool_call: call, rules });
      if (decisions.size < ev.tool_calls.length) return;
      card.querySelectorAll('button').forEach((b) => { b.disabled = true; });
      try {
        await this.onConfirm({
          type: 'USER_CONFIRM_RESULT', reply_id: ev.reply_id,
          confirm_results: ev.tool_calls.map((c) => decisions.get(c.id)),
        });
      } catch (e) {
        flash(e.message);
        decisions.clear();
        card.querySelectorAll('button').forEach((b) => { b.disabled = false; });
      }
    };
    for (const call of ev.tool_calls) {
      const rules = call.suggested_rules || [];
      card.append(h('div', { class: 'call' },
        h('div', {}, h('span', { class: 'name' }, call.name), h('pre', {}, call.input)),
        rules.length ? h('div', { class: 'muted' }, 'Suggested rule: ',
          rules.map((r) => `${r.behavior} ${r.tool_name}(${r.rule_content || ''})`).join('; ')) : '',
        h('div', { class: 'actions' },
          h('button', { onclick: () => decide(call, true, null) }, 'Allow'),
          rules.length ? h('button', { class: 'secondary', onclick: () => decide(call, true, rules) }, 'Always allow') : '',
          h('button', { class: 'danger', onclick: () => decide(call, false, null) }, 'Deny'))));
    }
    this.confirms.set(ev.reply_id, card);
    el.append(card);
  }
}

async function chatPage(page, sessionId) {
  const { sessions } = await api('GET', '/sessions/');
  const view = sessions.find((v) => v.session.id === sessionId);
  if (!view) throw new Error(`session ${sessionId} not found`);
  const session = view.session;
  const post = (input) => api('POST', '/chat/', { agent_id: session.agent_id, session_id: sessionId, input });

  const log = h('div', { class: 'transcript panel', id: 'transcript' });
  const transcript = new Transcript(log, post);
  const status = h('span', { id: 'status' }, badge(view.status));
  const input = h('textarea', { name: 'text', placeholder: 'Message the agent (Enter sends, Shift+Enter: new line)', required: true });
  const composer = h('form', { class: 'composer', onsubmit: onSubmit(async (v, form) => {
    const text = v.text.trim();
    if (!text) return;
    transcript.addUser(text);
    form.reset();
    await post({ name: user() || 'user', role: 'user', content: [{ type: 'text', text }] });
  }) }, input, h('button', { type: 'submit' }, 'Send'));
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); composer.requestSubmit(); }
  });
  const team = teamPanel(page, sessionId);
  page.main.append(h('div', { class: 'chat' },
    h('div', {}, h('h2', {}, session.config.name || sessionId), log, composer),
    h('aside', {},
      h('div', { class: 'panel' }, h('h3', {}, 'Session'),
        h('p', {}, 'Status: ', status),
        h('p', { class: 'muted mono' }, sessionId),
        h('button', { class: 'secondary', onclick: () => api('POST', `/sessions/${sessionId}/interrupt`).catch((e) => flash(e.message)) }, 'Interrupt')),
      team.box)));

  const page1 = await api('GET', `/sessions/${sessionId}/messages?limit=200`);
  page1.messages.forEach((m) => transcript.addMessage(m));
  if (view.status === 'awaiting_permission' && page1.event_cursor && page1.event_cursor !== '0') {
    await replayParked(page, sessionId, page1.event_cursor, transcript);
  }

  poll(page, async () => {
    const s = await api('GET', `/sessions/${sessionId}/status`);
    status.replaceChildren(badge(s.status));
  });
  const controller = new AbortController();
  page.cleanups.push(() => controller.abort());
  streamEvents(sessionId, page1.event_cursor || '0', (id, ev) => {
    if (ev.type === 'CUSTOM') {
      if (ev.name === 'team_updated') team.refresh().catch((e) => flash(e.message));
      return;
    }
    transcript.addEvent(ev);
  }, controller.signal, () => { log.dataset.streaming = 'open'; });
}

// A parked reply is not in the transcript yet: replay its events (up to `cursor`) from the log.
async function replayParked(page, sessionId, cursor, transcript) {
  const controller = new AbortController();
  page.cleanups.push(() => controller.abort());
  const events = [];
  const later = (a, b) => {
    const [am, as] = a.split('-').map(Number);
    const [bm, bs] = b.split('-').map(Number);
    return am > bm || (am === bm && as >= bs);
  };
  await new Promise((resolve) => {
    streamEvents(sessionId, '0', (id, ev) => {
      events.push(ev);
      if (id && later(id, cursor)) { controller.abort(); resolve(); }
    }, controller.signal).then(resolve);
  });
  const start = events.map((e) => e.type).lastIndexOf('REPLY_START');
  if (start >= 0) events.slice(start).forEach((ev) => transcript.addEvent(ev));
}

async function schedulesPage(page) {
  const body = h('tbody');
  const render = async () => {
    const [{ schedules }, { agents }, { credentials }] = await Promise.all([
      api('GET', '/schedule/'), api('GET', '/agent/'), api('GET', '/credential/'),
    ]);
    const names = Object.fromEntries(agents.map((a) => [a.id, a.data.name]));
    body.replaceChildren(...(schedules.length ? schedules.map((s) => h('tr', {},
      h('td', {}, h('strong', {}, s.data.name), h('div', { class: 'muted' }, s.data.description || '')),
      h('td', {}, names[s.agent_id] || short(s.agent_id)),
      h('td', { class: 'mono' }, `${s.data.cron_expression} (${s.data.timezone})`),
      h('td', {}, s.data.enabled ? 'enabled' : 'paused'),
      h('td', {},
        h('button', { class: 'secondary', onclick: async () => {
          await api('PATCH', `/schedule/${s.id}`, { enabled: !s.data.enabled }).catch((e) => flash(e.message));
          render();
        } }, s.data.enabled ? 'Pause' : 'Resume'), ' ',
        h('button', { class: 'danger', onclick: async () => {
          if (!confirm(`Delete schedule ${s.data.name}?`)) return;
          await api('DELETE', `/schedule/${s.id}`).catch((e) => flash(e.message));
          render();
        } }, 'Delete')))) : [h('tr', {}, h('td', { class: 'empty', colspan: 5 }, 'No schedules yet.'))]));
    form.querySelector('[name=agent_id]').replaceChildren(...agents.map((a) => h('option', { value: a.id }, a.data.name)));
    form.querySelector('[name=credential_id]').replaceChildren(...credentials.map((c) => h('option', { value: c.id }, `${c.data.type} ${short(c.id)}`)));
    page.credentials = credentials;
  };
  const form = h('form', { class: 'row', onsubmit: onSubmit(async (v, f) => {
    const cred = page.credentials.find((c) => c.id === v.credential_id);
    await api('POST', '/schedule/', {
      name: v.name, description: v.description, cron_expression: v.cron_expression,
      timezone: v.timezone || 'UTC', agent_id: v.agent_id,
      chat_model_config: { type: cred.data.type, credential_id: cred.id, model: v.model, parameters: {} },
    });
    f.reset();
    await render();
  }) },
  h('label', {}, 'Name', h('input', { name: 'name', required: true })),
  h('label', {}, 'Task', h('input', { name: 'description', required: true })),
  h('label', {}, 'Cron', h('input', { name: 'cron_expression', value: '0 9 * * 1-5', required: true })),
  h('label', {}, 'Time zone', h('input', { name: 'timezone', value: 'UTC' })),
  h('label', {}, 'Agent', h('select', { name: 'agent_id', required: true })),
  h('label', {}, 'Credential', h('select', { name: 'credential_id', required: true })),
  h('label', {}, 'Model', h('input', { name: 'model', value: 'gpt-4o-mini', required: true })),
  h('button', { type: 'submit' }, 'Create schedule'));
  page.main.append(h('div', { class: 'panel' }, h('h2', {}, 'Schedules'),
    h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'Schedule'), h('th', {}, 'Agent'),
      h('th', {}, 'When'), h('th', {}, 'State'), h('th', {}))), body)),
  h('div', { class: 'panel' }, h('h3', {}, 'New schedule'), form));
  await render();
}

// Under --auth keys: ask for an API key once, keep it in this browser.
function signInPanel() {
  const key = h('input', { id: 'api-key', name: 'key', type: 'password', placeholder: 'trp_...', required: true });
  return h('div', { class: 'panel' }, h('h2', {}, 'Sign in'),
    h('p', {}, 'This server needs an API key (your operator makes one with ',
      h('code', {}, 'troupe apikey create --user YOU'), '). It is kept in this browser until you sign out.'),
    signInNote ? h('p', { class: 'error', id: 'sign-in-note' }, signInNote) : '',
    h('form', { class: 'row', id: 'sign-in', onsubmit: (event) => {
      event.preventDefault();
      const value = key.value.trim();
      if (!value) return;
      localStorage.setItem(API_KEY, value);
      route();
    } }, h('label', {}, 'API key', key), h('button', { type: 'submit' }, 'Sign in')));
}

// --- router -------------------------------------------------------------------------------------

let current = null;

async function route() {
  if (current) current.cleanups.forEach((fn) => fn());
  const main = document.getElementById('main');
  main.replaceChildren();
  flash('');
  const page = { main, cleanups: [] };
  current = page;
  const [name, arg] = location.hash.replace(/^#\/?/, '').split('/');
  document.querySelectorAll('[data-nav]').forEach((a) => {
    a.classList.toggle('active', a.dataset.nav === (name === 'chat' || name === 'team' ? 'sessions' : name || 'agents'));
  });
  document.getElementById('identity').hidden = authMode === 'keys';
  document.getElementById('account').hidden = authMode !== 'keys' || !signedIn();
  if (!signedIn()) {
    main.append(authMode === 'keys' ? signInPanel() : h('div', { class: 'panel' }, h('h2', {}, 'Who are you?'),
      h('p', {}, 'Enter your user id above (sent as the X-User-ID header, kept in this browser).')));
    return;
  }
  signInNote = '';
  try {
    if (name === 'sessions') await sessionsPage(page);
    else if (name === 'chat' && arg) await chatPage(page, arg);
    else if (name === 'team' && arg) await teamPage(page, arg);
    else if (name === 'schedules') await schedulesPage(page);
    else await agentsPage(page);
  } catch (e) {
    if (signedIn()) flash(e.message); // else the sign-in form says why
  }
}

document.getElementById('user-id').value = user();
document.getElementById('identity').addEventListener('submit', (event) => {
  event.preventDefault();
  const value = document.getElementById('user-id').value.trim();
  if (!value) return;
  localStorage.setItem(USER_KEY, value);
  route();
});
document.getElementById('sign-out').addEventListener('click', () => signOut());
window.addEventListener('hashchange', route);

(async () => {
  try {
    authMode = (await (await fetch(`${BASE}/health`)).json()).auth || 'dev';
  } catch (e) {
    flash(`could not reach the server: ${e.message}`);
  }
  route();
})();
