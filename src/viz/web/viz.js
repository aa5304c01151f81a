'use strict';
// VIZ's page: the kernels of a trace (GET api/kernels), and for the chosen kernel (GET api/kernel/N) its
// graphs, the AST and then each pass's, drawn as SVG with the nodes the pass's rules changed marked,
// the rules, and the generated source (viz/server.h serves all of it).
// The state is in the URL: ?kernel=K&pass=P&view=before|after, where pass 0 is the AST and pass i the
// i-th named pass, so a view can be linked to. When the first graph is drawn, <body> gets data-ready
// (data-error when something failed) and data-load-ms: milliseconds from navigation to drawn.

const MAX_DRAWN = 4000;  // a graph with more nodes shows the MAX_DRAWN nearest its root, and says so
const ARG_LINE = 44, ARG_LINES = 4, CHAR_W = 6.7, LINE_H = 13;

const $ = id => document.getElementById(id);
const state = {kernels: [], k: -1, p: 0, view: 'after', kernel: null, cache: new Map(), graph: null, picked: -1};
const view = {x: 0, y: 0, s: 1};

const esc = s => String(s).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'})[c]);

async function getJSON(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

function notice(text, isError) {
  const el = $('notice');
  el.hidden = !text;
  el.textContent = text || '';
  el.classList.toggle('error', !!isError);
}

// ---- the kernel list ------------------------------------------------------------------------------

function renderKernelList() {
  const n = state.kernels.length;
  $('summary').textContent = `${n} kernel${n === 1 ? '' : 's'}`;
  $('kernels').innerHTML = state.kernels.map((k, i) =>
    `<li data-kernel="${i}"><span class="kname${k.error ? ' error' : ''}" title="${esc(k.error || k.name)}"><span class="ki">${i}</span><span class="nm">${esc(k.name)}</span>` +
    `<span class="meta">${k.passes.length} pass${k.passes.length === 1 ? '' : 'es'}</span></span></li>`).join('');
}

function renderPassList() {
  for (const li of $('kernels').children) {
    const i = +li.dataset.kernel;
    li.classList.toggle('active', i === state.k);
    const old = li.querySelector('.passes');
    if (old) old.remove();
    if (i !== state.k) continue;
    const k = state.kernel;
    const items = [{name: 'AST', n: ''}].concat(k.passes.map(p => ({name: p.name, n: `${p.changes.length} changes`})));
    const ul = document.createElement('ul');
    ul.className = 'passes';
    ul.innerHTML = items.map((it, j) =>
      `<li data-pass="${j}" class="${j === state.p ? 'active' : ''}">${j} ${esc(it.name)} <span class="n">${it.n}</span></li>`).join('');
    li.appendChild(ul);
  }
}

async function loadKernel(i) {
  if (!state.cache.has(i)) state.cache.set(i, await getJSON(`api/kernel/${i}`));
  return state.cache.get(i);
}

async function selectKernel(i, pass) {
  state.k = i;
  state.kernel = await loadKernel(i);
  const k = state.kernel;
  const src = $('source');
  src.textContent = k.src || `(no source: ${k.error || 'the kernel was not rendered'})`;
  selectPass(Number.isInteger(pass) && pass >= 0 && pass <= k.passes.length ? pass : 0);
}

// ---- one graph ------------------------------------------------------------------------------------

// The graph a root reaches, as drawn: constants (and what only constants read) are written into their
// users' labels, as tinygrad's VIZ does, instead of as boxes with an edge to every user.
function reach(nodes, root) {
  const seen = new Uint8Array(nodes.length), stack = [root];
  seen[root] = 1;
  while (stack.length) for (const s of nodes[stack.pop()][3]) if (!seen[s]) { seen[s] = 1; stack.push(s); }
  return seen;
}

function buildGraph(k, root, marks, other) {
  const nodes = k.nodes, seen = reach(nodes, root), inOther = other >= 0 ? reach(nodes, other) : seen;
  const inline = new Uint8Array(nodes.length), usedByDrawn = new Uint8Array(nodes.length);
  for (let u = nodes.length - 1; u >= 0; u--) {  // users have larger ids than their sources
    if (!seen[u]) continue;
    inline[u] = u !== root && (nodes[u][0] === 'CONST' || !usedByDrawn[u]) ? 1 : 0;
    if (!inline[u]) for (const s of nodes[u][3]) usedByDrawn[s] = 1;
  }
  let ids = [];
  for (let u = 0; u < nodes.length; u++) if (seen[u] && !inline[u]) ids.push(u);
  const total = ids.length;
  if (total > MAX_DRAWN) {  // keep the nodes nearest the root (breadth first)
    const keep = new Uint8Array(nodes.length), queue = [root];
    keep[root] = 1;
    for (let qi = 0, kept = 1; qi < queue.length && kept < MAX_DRAWN; qi++)
      for (const s of nodes[queue[qi]][3]) if (!inline[s] && !keep[s] && kept < MAX_DRAWN) { keep[s] = 1; kept++; queue.push(s); }
    ids = ids.filter(u => keep[u]);
  }
  const index = new Map(ids.map((u, i) => [u, i]));
  const boxes = [], srcs = [];
  for (const u of ids) {
    const [op, dtype, arg, src] = nodes[u];
    const lines = [{t: op, c: 'op'}];
    if (dtype && dtype !== 'void') lines.push({t: dtype, c: 'sub'});
    if (arg) {
      const chunks = arg.match(new RegExp(`.{1,${ARG_LINE}}`, 'gs')) || [];
      chunks.slice(0, ARG_LINES).forEach((c, j) => lines.push({t: j === ARG_LINES - 1 && chunks.length > ARG_LINES ? c.slice(0, -1) + '…' : c, c: ''}));
    }
    let cut = 0;
    src.forEach((s, j) => {
      if (inline[s]) lines.push({t: `${j}: ${nodes[s][0]} ${nodes[s][2]}`, c: 'sub'});
      else if (!index.has(s)) cut++;
    });
    if (cut) lines.push({t: `+${cut} source${cut === 1 ? '' : 's'} not drawn`, c: 'sub'});
    const w = Math.max(...lines.map(l => l.t.length)) * CHAR_W + 14, h = lines.length * LINE_H + 8;
    boxes.push({w: Math.max(w, 40), h, lines});
    srcs.push(src.filter(s => index.has(s)).map(s => index.get(s)));
  }
  return {ids, index, boxes, srcs, total, inlined: seen.reduce((a, b) => a + b, 0) - total, marks, inOther};
}

const OP_COLORS = {
  LOAD: '#ffc0c0', STORE: '#a8d8f0', DEFINE_GLOBAL: '#ffe0b0', DEFINE_LOCAL: '#ffe0b0', DEFINE_ACC: '#e8c8a0',
  DEFINE_VAR: '#ffe0b0', VIEW: '#e0e8d0', CONST: '#e8e8e8', SINK: '#f0f0f0', RANGE: '#d8c0f0', ENDRANGE: '#d8c0f0',
  SPECIAL: '#c8c8ff', REDUCE_AXIS: '#ff9c8c', REDUCE: '#ff9c8c', ASSIGN: '#e8c8a0', VECTORIZE: '#d0f0f0', GEP: '#d0f0f0',
  CAST: '#f0f0c0', BITCAST: '#f0f0c0', WHERE: '#fff0a0', IF: '#d8c0f0', ENDIF: '#d8c0f0', BARRIER: '#c8c8c8',
};

function draw(g, lay) {
  const parts = [], edges = [];
  for (let i = 0; i < g.ids.length; i++) {
    const b = g.boxes[i], x = lay.x[i], y = lay.y[i];
    // a box's sources enter along its top edge in order, so x - y reads as two edges, left and right
    g.srcs[i].forEach((s, j) => {
      const tx = x - b.w / 2 + b.w * (j + 1) / (g.srcs[i].length + 1), ty = y - b.h / 2;
      const sx = lay.x[s], sy = lay.y[s] + g.boxes[s].h / 2, dy = Math.max(12, (ty - sy) / 2);
      edges.push(`M${sx.toFixed(1)},${sy.toFixed(1)}C${sx.toFixed(1)},${(sy + dy).toFixed(1)} ${tx.toFixed(1)},${(ty - dy).toFixed(1)} ${tx.toFixed(1)},${ty.toFixed(1)}`);
    });
    const u = g.ids[i], op = b.lines[0].t;
    const cls = 'node' + (g.marks.has(u) ? ' changed' : g.inOther[u] ? '' : ' rebuilt') + (u === state.picked ? ' picked' : '');
    const tspans = b.lines.map((l, j) => `<tspan x="0" y="${(j * LINE_H - (b.lines.length - 1) * LINE_H / 2 + 4).toFixed(1)}"` +
      (l.c ? ` class="${l.c}"` : '') + `>${esc(l.t)}</tspan>`).join('');
    parts.push(`<g class="${cls}" data-id="${u}" transform="translate(${x.toFixed(1)},${y.toFixed(1)})">` +
      `<rect x="${(-b.w / 2).toFixed(1)}" y="${(-b.h / 2).toFixed(1)}" width="${b.w.toFixed(1)}" height="${b.h}" rx="4" fill="${OP_COLORS[op] || '#fffbe0'}"/>` +
      `<text>${tspans}</text></g>`);
  }
  $('viewport').innerHTML = `<path class="edges" d="${edges.join('')}"/>` + parts.join('');
}

function fit() {
  const lay = state.graph && state.graph.lay;
  if (!lay) return;
  const r = $('graph').getBoundingClientRect(), pad = 20;
  const s = Math.min(1.25, (r.width - 2 * pad) / Math.max(lay.width, 1), (r.height - 2 * pad) / Math.max(lay.height, 1));
  if (s >= 0.35) {  // the whole graph, readable enough
    view.s = s;
    view.x = (r.width - lay.width * s) / 2;
    view.y = (r.height - lay.height * s) / 2;
  } else {  // too big to read whole: the bottom, where the root is, at a readable size
    const g = state.graph, root = g.ids.length - 1;
    view.s = 0.8;
    view.x = r.width / 2 - lay.x[root] * view.s;
    view.y = r.height - pad - (lay.y[root] + g.boxes[root].h / 2) * view.s;
  }
  applyView();
}

function applyView() {
  $('viewport').setAttribute('transform', `translate(${view.x.toFixed(1)},${view.y.toFixed(1)}) scale(${view.s.toFixed(4)})`);
}

function centerOn(u) {
  const g = state.graph, i = g && g.index.get(u);
  if (i === undefined) return;
  const r = $('graph').getBoundingClientRect();
  view.x = r.width / 2 - g.lay.x[i] * view.s;
  view.y = r.height / 2 - g.lay.y[i] * view.s;
  applyView();
}

// ---- a pass ----------------------------------------------------------------------------------------

function currentPass() { return state.p === 0 ? null : state.kernel.passes[state.p - 1]; }

function selectPass(p) {
  state.p = p;
  state.picked = -1;
  const k = state.kernel, pass = currentPass();
  const before = state.view === 'before' && pass;
  const root = !pass ? k.ast : before ? pass.before : pass.after;
  // marked: what the rules matched (before) or returned (after); pale: the nodes only one side has
  const marks = new Set(pass ? pass.changes.map(c => before ? c[0] : c[1]) : []);
  const other = !pass ? -1 : before ? pass.after : pass.before;
  const t0 = performance.now();
  const g = buildGraph(k, root, marks, other);
  g.lay = VizLayout.layout(g.boxes, g.srcs);
  draw(g, g.lay);
  state.graph = g;
  const drawMs = performance.now() - t0 - g.lay.ms;
  renderPassList();
  renderRules();
  showNode(-1);
  $('title').textContent = `${k.name} · ${pass ? `${state.p} ${pass.name} (${state.view})` : 'AST'}`;
  $('views').hidden = $('legend').hidden = !pass;
  for (const b of $('views').children) b.classList.toggle('active', b.dataset.view === state.view);
  $('status').textContent = `${g.ids.length} nodes` + (g.inlined ? ` (+${g.inlined} constants in labels)` : '') +
    ` · ${g.lay.engine} layout ${g.lay.ms.toFixed(0)} ms · drawn in ${drawMs.toFixed(0)} ms`;
  notice(g.total > g.ids.length ? `Large graph: showing the ${g.ids.length} nodes nearest the root of ${g.total} ` +
    '(boxes say how many of their sources are not drawn).' : k.error ? `This kernel did not finish: ${k.error}` : '');
  fit();  // after the toolbar and the notice have their text: they take room from the graph
  const q = new URLSearchParams({kernel: state.k, pass: state.p});
  if (pass && state.view === 'before') q.set('view', 'before');
  history.replaceState(null, '', `?${q}`);
  document.body.dataset.nodes = g.ids.length;
  document.body.dataset.layout = g.lay.engine;
}

// The rules of the pass, grouped, with how many times each was applied; picking one marks its nodes.
function renderRules() {
  const pass = currentPass(), ul = $('rules');
  if (!pass || !pass.changes.length) {
    ul.innerHTML = `<li class="none">${pass ? 'no rule applied' : 'the AST: no pass yet'}</li>`;
    return;
  }
  const groups = new Map();
  for (const c of pass.changes) {
    if (!groups.has(c[2])) groups.set(c[2], []);
    groups.get(c[2]).push(c);
  }
  ul.innerHTML = [...groups].map(([rule, cs]) => `<li data-rule="${esc(rule)}" title="${esc(rule)}">${esc(rule)}<span class="count">×${cs.length}</span></li>`).join('');
}

function pickRule(rule) {
  const pass = currentPass(), before = state.view === 'before';
  const ids = pass.changes.filter(c => c[2] === rule).map(c => before ? c[0] : c[1]);
  for (const li of $('rules').children) li.classList.toggle('active', li.dataset.rule === rule);
  const shown = ids.find(u => state.graph.index.has(u));
  if (shown !== undefined) { pickNode(shown); centerOn(shown); }
  else showNode(-1, before ? 'this rule matched only nodes that the pass built (after their sources changed), none of the graph before it'
                            : "this rule's results were rewritten again by later rules: none is in the graph after the pass");
}

function pickNode(u) {
  state.picked = u;
  for (const el of $('viewport').querySelectorAll('.node.picked')) el.classList.remove('picked');
  const el = $('viewport').querySelector(`.node[data-id="${u}"]`);
  if (el) el.classList.add('picked');
  showNode(u);
}

function showNode(u, hint) {
  const box = $('node-info');
  if (u < 0) { box.innerHTML = `<p class="hint">${esc(hint || 'click a node')}</p>`; return; }
  const [op, dtype, arg, src] = state.kernel.nodes[u], pass = currentPass(), before = state.view === 'before';
  const rules = pass ? pass.changes.filter(c => (before ? c[0] : c[1]) === u).map(c => c[2]) : [];
  const link = s => `<a data-node="${s}">${s} ${esc(state.kernel.nodes[s][0])}</a>`;
  box.innerHTML = '<table>' +
    `<tr><td>id</td><td>${u}</td></tr><tr><td>op</td><td>${esc(op)}</td></tr><tr><td>dtype</td><td>${esc(dtype)}</td></tr>` +
    `<tr><td>arg</td><td>${esc(arg)}</td></tr><tr><td>sources</td><td>${src.map(link).join('<br>') || '—'}</td></tr>` +
    (rules.length ? `<tr><td>${before ? 'matched by' : 'made by'}</td><td>${rules.map(esc).join('<br>')}</td></tr>` : '') + '</table>';
}

// ---- events ----------------------------------------------------------------------------------------

function wire() {
  $('kernels').addEventListener('click', e => {
    const passEl = e.target.closest('[data-pass]'), kEl = e.target.closest('[data-kernel]');
    if (passEl) selectPass(+passEl.dataset.pass);
    else if (kEl) selectKernel(+kEl.dataset.kernel, 0).catch(fail);
  });
  $('views').addEventListener('click', e => {
    const b = e.target.closest('button');
    if (b) { state.view = b.dataset.view; selectPass(state.p); }
  });
  $('fit').addEventListener('click', fit);
  $('rules').addEventListener('click', e => { const li = e.target.closest('[data-rule]'); if (li) pickRule(li.dataset.rule); });
  $('node-info').addEventListener('click', e => {
    const a = e.target.closest('[data-node]');
    if (a) { pickNode(+a.dataset.node); centerOn(+a.dataset.node); }
  });
  const svg = $('graph');
  svg.addEventListener('wheel', e => {
    e.preventDefault();
    const r = svg.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top, f = Math.exp(-e.deltaY * 0.0015);
    view.x = px - (px - view.x) * f;
    view.y = py - (py - view.y) * f;
    view.s *= f;
    applyView();
  }, {passive: false});
  let drag = null;
  svg.addEventListener('pointerdown', e => {
    drag = {x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false};
    svg.setPointerCapture(e.pointerId);
  });
  svg.addEventListener('pointermove', e => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; svg.classList.add('dragging'); }
    view.x = drag.vx + dx;
    view.y = drag.vy + dy;
    applyView();
  });
  svg.addEventListener('pointerup', e => {
    // pointer capture sends the click to the svg, so the node under the pointer is looked up here
    if (drag && !drag.moved) {
      const el = document.elementFromPoint(e.clientX, e.clientY), node = el && el.closest('.node');
      if (node) pickNode(+node.dataset.id);
    }
    drag = null;
    svg.classList.remove('dragging');
  });
  window.addEventListener('resize', fit);
}

function fail(e) {
  notice(`VIZ: ${e.message}`, true);
  $('status').textContent = '';
  document.body.dataset.error = e.message;
}

async function main() {
  wire();
  try {
    const q = new URLSearchParams(location.search);
    state.view = q.get('view') === 'before' ? 'before' : 'after';
    state.kernels = (await getJSON('api/kernels')).kernels;
    renderKernelList();
    if (!state.kernels.length) notice('The trace has no kernels: did the run realize anything with VIZ=1?');
    else {
      const k = Math.min(Math.max(parseInt(q.get('kernel'), 10) || 0, 0), state.kernels.length - 1);
      await selectKernel(k, parseInt(q.get('pass'), 10));
    }
  } catch (e) {
    fail(e);
  }
  document.body.dataset.loadMs = performance.now().toFixed(0);
  document.body.dataset.ready = '1';
}

main();
