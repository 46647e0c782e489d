// The web view's page: the agents, one agent's pane, answers. Everything an
// agent says (pane text, titles, handles, branches) is put in as text
// (textContent), never as markup: an agent prints what it likes.
'use strict';

const ICONS = { working: '●', waiting: '◆', done: '✓', failed: '✗', interrupted: '◌', missing: '?' };
const $ = (id) => document.getElementById(id);
let ws = null, agents = [], shown = null, lastStatus = {}, nextId = 1, readOnly = false, asksHere = false;
let lastAsks = [];
const asking = {}; // request id -> what it was, for what the page says when it is done
const DONE = { send: 'sent', key: 'sent', comment: 'comment added', 'review-send': 'comments sent to the agent', merge: 'merged' };
let screen = { rows: 0, cols: 0, lines: [] };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function age(since) {
  if (!since) return '';
  const s = Math.max(0, (Date.now() - since) / 1000);
  return s < 60 ? Math.floor(s) + 's' : s < 3600 ? Math.floor(s / 60) + 'm' :
    s < 86400 ? Math.floor(s / 3600) + 'h' : Math.floor(s / 86400) + 'd';
}

function say(text) {
  $('message').textContent = text;
  $('message').classList.toggle('hidden', !text);
}

function notifyChanges(list) {
  for (const a of list) {
    const before = lastStatus[a.handle];
    if (before !== undefined && before !== a.status && (a.status === 'waiting' || a.status === 'done'))
      if ('Notification' in window && Notification.permission === 'granted')
        new Notification(a.handle + ' is ' + a.status, { body: a.title || '', tag: 'wrx-' + a.handle });
    lastStatus[a.handle] = a.status;
  }
}

function drawAgents() {
  const ul = $('agents');
  ul.replaceChildren();
  for (const a of agents) {
    const st = a.status || 'none';
    const li = el('li', 'st-' + st);
    li.dataset.handle = a.handle;
    li.append(el('span', 'num', a.number || ''), el('span', 'icon', ICONS[st] || '·'));
    li.append(el('span', 'handle', a.handle + (a.sandboxed ? ' ⛨' : '')));
    li.append(el('span', 'word', (a.status || '-') + (a.since ? ' ' + age(a.since) : '')));
    const more = [a.title, a.group && '[' + a.group + ']', a.comments ? a.comments + ' comments' : '',
      a.failure].filter(Boolean).join('  ');
    li.append(el('span', 'line2', more || a.branch || ''));
    li.addEventListener('click', () => open(a.handle));
    ul.append(li);
  }
  if (shown) drawMeta();
}

// workrex's own questions (an agent's merge, a clipboard write), as C-b a asks them.
function drawAsks(list) {
  const ul = $('asks');
  ul.replaceChildren();
  for (const q of list) {
    const li = el('li');
    li.append(el('span', 'who', q.agent), el('span', 'q', q.question), el('br'));
    for (const [word, yes] of [['yes', true], ['no', false]]) {
      const b = el('button', '', word);
      b.type = 'button';
      b.dataset.answer = word;
      b.addEventListener('click', () => { send({ t: 'answer', id: nextId++, ask: q.id, yes }); li.remove(); });
      li.append(b);
    }
    ul.append(li);
    if (lastAsks.indexOf(q.id) < 0 && 'Notification' in window && Notification.permission === 'granted')
      new Notification(q.agent + ' asks', { body: q.question, tag: 'wrx-ask-' + q.id });
  }
  lastAsks = list.map((q) => q.id);
  ul.classList.toggle('hidden', !list.length);
}

function agentOf(handle) { return agents.find((a) => a.handle === handle); }

function drawMeta() {
  const a = agentOf(shown);
  const m = $('meta');
  m.replaceChildren();
  if (!a) { m.append(el('span', '', shown + ' is gone')); return; }
  m.append(el('strong', '', a.handle), el('span', '', '  ' + (ICONS[a.status] || '') + ' ' +
    (a.status || '-') + '  ' + (a.branch || '') + (a.title ? '  ' + a.title : '')));
}

function open(handle) {
  shown = handle;
  const a = agentOf(handle);
  const pane = a && a.panes.find((p) => p.agent);
  screen = { rows: 0, cols: 0, lines: [] };
  $('screen').replaceChildren();
  $('said').textContent = '';
  $('review').classList.add('hidden');
  $('ask').classList.add('hidden');
  pendingComments = 0;
  $('review-send').textContent = 'send comments';
  send({ t: 'view', pane: pane ? pane.pane : null });
  if (!pane) $('screen').append(el('div', '', '(no pane: the agent is closed)'));
  $('agents').classList.add('hidden');
  $('view').classList.remove('hidden');
  $('back').classList.remove('hidden');
  drawMeta();
}

// ---- review: the diff by file and hunk, comments, and the merge question ----

let pendingComments = 0;

// A unified diff as files of hunks: [{path, hunks: [{head, lines, line}]}].
function parseDiff(text) {
  const files = [];
  let file = null, hunk = null, newLine = 0;
  for (const l of text.split('\n')) {
    if (l.startsWith('diff --git ')) {
      const m = / b\/(.*)$/.exec(l);
      file = { path: m ? m[1] : l.slice(11), hunks: [] };
      files.push(file);
      hunk = null;
    } else if (file && l.startsWith('@@')) {
      const m = /\+(\d+)/.exec(l);
      newLine = m ? Number(m[1]) : 0;
      hunk = { head: l, lines: [], line: 0 };
      file.hunks.push(hunk);
    } else if (hunk) {
      if (l.startsWith('+') && !hunk.line) hunk.line = newLine;
      if (!l.startsWith('-')) newLine++;
      hunk.lines.push(l);
    }
  }
  return files;
}

function commentForm(file, line) {
  const form = el('form');
  const box = el('textarea');
  box.rows = 2;
  box.placeholder = 'a comment for the agent on ' + file + (line ? ':' + line : '');
  const add = el('button', '', 'add');
  add.type = 'submit';
  form.append(box, add);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!box.value.trim()) return;
    act({ t: 'comment', file, line, text: box.value });
    form.remove();
    pendingComments++;
    $('review-send').textContent = 'send ' + pendingComments + ' comment' + (pendingComments > 1 ? 's' : '');
  });
  return form;
}

function drawDiff(m) {
  const box = $('diff');
  box.replaceChildren();
  $('review-title').textContent = (m.mode === 'wip' ? 'uncommitted' : 'branch') + ' changes of ' + m.handle;
  const files = parseDiff(m.text);
  if (!files.length) box.append(el('p', '', 'no changes'));
  for (const f of files) {
    const div = el('div', 'file');
    const h = el('h3', '', f.path);
    const onFile = el('button', '', 'comment');
    onFile.type = 'button';
    onFile.addEventListener('click', () => div.insertBefore(commentForm(f.path, 0), div.children[1] || null));
    h.append(onFile);
    div.append(h);
    for (const hk of f.hunks) {
      const hd = el('div', 'hunk');
      const pre = el('pre');
      pre.append(el('div', 'at', hk.head));
      for (const l of hk.lines)
        pre.append(el('div', l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : '', l || ' '));
      const b = el('button', '', 'comment on this hunk');
      b.type = 'button';
      b.addEventListener('click', () => hd.append(commentForm(f.path, hk.line)));
      hd.append(pre, b);
      div.append(hd);
    }
    box.append(div);
  }
  if (m.cut) box.append(el('p', '', '(cut: the rest is in the dashboard\'s review view)'));
  $('review').classList.remove('hidden');
}

let asked = null;

function ask(m) {
  asked = m;
  $('question').textContent = m.question;
  $('ask').classList.remove('hidden');
  $('said').textContent = '';
}

function answerAsk(yes) {
  $('ask').classList.add('hidden');
  if (yes && asked) act({ t: 'merge', anyway: asked.anyway });
  asked = null;
}

function back() {
  shown = null;
  send({ t: 'view', pane: null });
  $('view').classList.add('hidden');
  $('back').classList.add('hidden');
  $('agents').classList.remove('hidden');
}

function runSpan(run) {
  const [text, fg, bg, attrs] = run;
  const s = el('span', '', text);
  let f = fg, b = bg;
  if (attrs & 16) { f = bg || '#000000'; b = fg || '#cccccc'; }
  if (f) s.style.color = f;
  if (b) s.style.backgroundColor = b;
  const cls = [];
  if (attrs & 1) cls.push('b');
  if (attrs & 2 || attrs & 64) cls.push('u');
  if (attrs & 4) cls.push('i');
  if (attrs & 32) cls.push('s');
  if (attrs & 128) cls.push('d');
  if (attrs & 256) s.style.visibility = 'hidden';
  if (cls.length) s.className = cls.join(' ');
  return s;
}

function drawPane(f) {
  const box = $('screen');
  if (f.full || f.rows !== screen.rows) {
    screen = { rows: f.rows, cols: f.cols, lines: [] };
    box.replaceChildren();
    for (let r = 0; r < f.rows; r++) box.append(el('div'));
  }
  for (const [row, runs] of Object.entries(f.lines)) {
    const div = box.children[Number(row)];
    if (!div) continue;
    div.replaceChildren(...runs.map(runSpan));
  }
}

function send(o) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(o));
}

function act(o) {
  o.id = nextId++;
  asking[o.id] = o.t;
  o.handle = shown;
  $('said').textContent = 'sending…';
  send(o);
}

function connect() {
  ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws');
  ws.onopen = () => { $('state').textContent = 'live'; say(''); };
  ws.onclose = () => {
    $('state').textContent = 'offline';
    if (!agents.length)
      say('Not paired: open the link workrex web printed (it has #token= in it).');
    setTimeout(connect, 3000);
  };
  ws.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    if (m.t === 'hello') {
      readOnly = m.read_only;
      asksHere = m.asks_here;
      document.body.classList.toggle('readonly', readOnly);
      $('project').textContent = m.project;
      document.title = m.project + ' · workrex';
    } else if (m.t === 'agents') {
      notifyChanges(m.agents);
      agents = m.agents;
      drawAgents();
      if (!asksHere)
        drawAsks(agents.flatMap((a) => (a.asks || []).map((q) => ({ id: q.id, agent: a.handle, question: q.question }))));
    } else if (m.t === 'pane') {
      drawPane(m);
    } else if (m.t === 'done') {
      $('said').textContent = m.ok ? DONE[asking[m.id]] || 'done' : 'refused: ' + m.error;
      delete asking[m.id];
    } else if (m.t === 'diff') {
      $('said').textContent = '';
      drawDiff(m);
    } else if (m.t === 'ask') {
      ask(m);
    } else if (m.t === 'asks') {
      drawAsks(m.asks);
    }
  };
}

async function pair() {
  const m = /[#&]token=([0-9a-f]{64})/.exec(location.hash);
  if (!m) return;
  history.replaceState(null, '', location.pathname);
  const r = await fetch('/pair', { headers: { Authorization: 'Bearer ' + m[1] }, credentials: 'same-origin' });
  if (!r.ok) say('The link was refused (' + r.status + '): run workrex web for a new one.');
}

function start() {
  $('back').addEventListener('click', back);
  $('answer').addEventListener('submit', (e) => {
    e.preventDefault();
    act({ t: 'send', text: $('text').value });
    $('text').value = '';
  });
  $('show-branch').addEventListener('click', () => act({ t: 'diff', mode: 'branch' }));
  $('show-wip').addEventListener('click', () => act({ t: 'diff', mode: 'wip' }));
  $('merge-ask').addEventListener('click', () => act({ t: 'merge-ask' }));
  $('yes').addEventListener('click', () => answerAsk(true));
  $('no').addEventListener('click', () => answerAsk(false));
  $('review-send').addEventListener('click', () => {
    act({ t: 'review-send' });
    pendingComments = 0;
    $('review-send').textContent = 'send comments';
  });
  for (const b of document.querySelectorAll('#quick button'))
    b.addEventListener('click', () => act({ t: 'key', key: b.dataset.key }));
  if ('Notification' in window && Notification.permission === 'default') {
    $('notify').classList.remove('hidden');
    $('notify').addEventListener('click', () =>
      Notification.requestPermission().then(() => $('notify').classList.add('hidden')));
  }
  setInterval(() => { if (!shown) drawAgents(); }, 30000);
  pair().finally(connect);
}

start();
