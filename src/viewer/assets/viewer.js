/* humanoid run viewer: map replay and dashboard of a run.
 *
 * Plain ES2020, no modules, no libraries. Data comes from the inline JSON script element with
 * id "humanoid-data" when the page has a non-empty one (the self-contained report), otherwise
 * from the api/ routes of `humanoid serve` (relative URLs, so any host, port or prefix works).
 * All text from the data is model output: it only ever reaches the page through textContent
 * and setAttribute, never through innerHTML.
 */
(() => {
  'use strict';

  // ---------------------------------------------------------------- constants

  const NEEDS = ['fullness', 'social', 'fun', 'health', 'energy'];
  const NEED_COLORS = { fullness: '#e07b2a', social: '#2f6fd6', fun: '#9a46cf', health: '#23985a', energy: '#c59a00' };
  const EMOTIONS = {
    neutral: '#a3abb5', happy: '#f3c530', sad: '#4a7fd4', angry: '#d8443a',
    afraid: '#8d5bc6', surprised: '#f08a24', disgusted: '#5b9b35',
  };
  const OTHER_EMOTION_COLORS = ['#7a5c48', '#c07a95', '#3f8f8c', '#c9a27e', '#5d5da3', '#b36b3d'];
  const DASHES = ['', '7 4', '2 3', '9 3 2 3', '14 4', '4 2 4 6'];
  const MAP_W = 1000, MAP_H = 680;
  const POLL_MS = 2000;
  const UNKNOWN_PLACE = '(unknown place)';
  const SVGNS = 'http://www.w3.org/2000/svg';

  // ---------------------------------------------------------------- DOM helpers

  const $ = (id) => document.getElementById(id);

  /** An element with attributes and children; strings become text nodes (never parsed). */
  function el(tag, attrs, ...kids) { return build(document.createElement(tag), attrs, kids); }
  /** The same for SVG. */
  function sv(tag, attrs, ...kids) { return build(document.createElementNS(SVGNS, tag), attrs, kids); }
  function build(node, attrs, kids) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === 'text') node.textContent = v;
      else if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
      else if (k === 'style' && typeof v === 'object') Object.assign(node.style, v);
      else node.setAttribute(k, v === true ? '' : String(v));
    }
    for (const kid of kids.flat(Infinity)) if (kid != null && kid !== false) node.append(kid instanceof Node ? kid : String(kid));
    return node;
  }
  /** Sets several attributes of an existing node. */
  const attr = (node, attrs) => { for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v)); return node; };

  // ---------------------------------------------------------------- data helpers

  const str = (v) => (v == null ? '' : String(v));
  const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));
  const agentsOf = (s) => (s && Array.isArray(s.agents) ? s.agents.filter((a) => a && typeof a === 'object') : []);
  const findAgent = (s, name) => agentsOf(s).find((a) => a.name === name) || null;
  const emotionOf = (a) => str(a && a.emotion).trim().toLowerCase() || 'unknown';
  const fmt = (v) => (v == null ? '–' : String(Math.round(v * 10) / 10));

  function locPath(a) {
    const p = a && Array.isArray(a.location) ? a.location.map(str).filter((x) => x !== '') : [];
    return p.length ? p : [UNKNOWN_PLACE];
  }
  const hash = (s) => [...str(s)].reduce((h, c) => (h * 31 + c.codePointAt(0)) >>> 0, 7);
  const emotionColor = (e) => EMOTIONS[e] || OTHER_EMOTION_COLORS[hash(e) % OTHER_EMOTION_COLORS.length];
  /** Distinct colours for up to ~25 agents: golden-angle hues, alternating lightness. */
  const agentColor = (i) => `hsl(${Math.round((i * 137.508 + 205) % 360)} 62% ${i % 2 ? 38 : 47}%)`;
  const stamp = (s) => `${str(s.date)} · ${str(s.time)}`;
  function initials(name) {
    const w = str(name).trim().split(/\s+/).filter(Boolean);
    if (!w.length) return '?';
    if (w.length === 1) return [...w[0]].slice(0, 2).join('');
    return ([...w[0]][0] + [...w[w.length - 1]][0]).toUpperCase();
  }
  function truncate(s, n) {
    const c = [...str(s)];
    return c.length <= n ? c.join('') : c.slice(0, Math.max(1, n - 1)).join('') + '…';
  }
  /** "06:15 am" / "18:30" -> minutes since midnight, or null. */
  function minutesOf(t) {
    const m = /(\d{1,2}):(\d{2})\s*(?:([ap])\.?\s*m\.?)?/i.exec(str(t));
    if (!m) return null;
    let h = Number(m[1]);
    if (m[3]) h = (h % 12) + (m[3].toLowerCase() === 'p' ? 12 : 0);
    return h * 60 + Number(m[2]);
  }
  /** Plan text ("06:00 am: ...\n...") -> [{time, text}]. */
  function parsePlan(text) {
    return str(text).split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
      const m = /^(\d{1,2}:\d{2}\s*(?:[ap]\.?\s*m\.?)?)\s*[:\-–]?\s*(.*)$/i.exec(l);
      return m ? { time: m[1], text: m[2] } : { time: '', text: l };
    });
  }
  /** Index of the plan line in effect at `now` (the latest one not after it), or -1. */
  function currentLine(lines, now) {
    let best = -1, bestM = -1;
    lines.forEach((l, i) => {
      const m = minutesOf(l.time);
      if (now != null && m != null && m <= now && m >= bestM) { best = i; bestM = m; }
    });
    return best;
  }
  /** The world's minutes per step, else the most common gap between states of one day. */
  function stepMinutes(run) {
    const w = run.detail && run.detail.world && num(run.detail.world.step_minutes);
    if (w && w > 0) return w;
    const count = new Map();
    run.states.forEach((s, i) => {
      const p = run.states[i - 1], a = minutesOf(s.time), b = p && minutesOf(p.time);
      if (p && str(p.date) === str(s.date) && a != null && b != null && a > b) count.set(a - b, (count.get(a - b) || 0) + 1);
    });
    return [...count].sort((x, y) => y[1] - x[1] || x[0] - y[0]).map((x) => x[0])[0] || 15;
  }
  /** The conversations of a state as lists of their participants' names (silent ones too). */
  function talksOf(state) {
    const c = state && state.conversations && typeof state.conversations === 'object' ? state.conversations : {};
    const out = [];
    for (const convs of Object.values(c)) for (const conv of Array.isArray(convs) ? convs : []) {
      const names = [...new Set((Array.isArray(conv) ? conv : []).filter((l) => l && l.name != null).map((l) => str(l.name)))];
      if (names.length) out.push(names);
    }
    return out;
  }
  /** "Tuesday Jan 03 2023" -> "Jan 03" for compact axis labels. */
  function shortDate(d) {
    const m = /([A-Za-z]{3,})\s+(\d{1,2})/.exec(str(d).replace(/^\w+day\s+/i, ''));
    return m ? `${m[1].slice(0, 3)} ${m[2]}` : str(d);
  }

  // ---------------------------------------------------------------- application state

  const App = {
    served: true, inline: null, // inline: the embedded {runs, details, states}; served when absent
    runs: [], run: null,        // RunsList.runs and the open run (see openRun)
    gen: 0,                     // bumped when another run opens: late answers for the old one are dropped
    step: 0, playing: false, speed: 1, playTimer: null, pollTimer: null,
    selected: null,             // name of the agent whose status panel is open
    day: 'all',                 // the dashboard's day
    pinnedConv: null,           // place key of the conversation popup pinned by a click
    mapDirty: true,             // the places changed: redraw the map's base
    dashDirty: true,            // the dashboard is out of date (it is drawn only while shown)
    error: null,                // a loading error shown in #message
  };

  // ---------------------------------------------------------------- loading

  function readInline() {
    // The first non-empty data element wins (a template could carry an empty placeholder).
    for (const node of document.querySelectorAll('script[id="humanoid-data"]')) {
      const text = node.textContent.trim();
      if (!text) continue;
      try { return JSON.parse(text); } catch (e) {
        App.error = `The data embedded in this page cannot be read: ${e.message}`;
        return { runs: { runs: [] }, details: {}, states: {} };
      }
    }
    return null;
  }

  async function getJSON(url) {
    const r = await fetch(url, { cache: 'no-store' });
    if (r.ok) return r.json();
    const j = await r.json().catch(() => null); // the server answers errors as {"error": "..."}
    throw new Error(`${url}: ${(j && j.error) || `${r.status} ${r.statusText}`}`);
  }

  async function init() {
    App.inline = readInline();
    App.served = !App.inline;
    try {
      const list = App.served ? await getJSON('api/runs') : App.inline.runs;
      App.runs = (list && Array.isArray(list.runs) ? list.runs : []).filter((r) => r && r.id != null);
    } catch (e) {
      App.error = `Cannot load the list of runs: ${e.message}`;
    }
    bindControls();
    if (App.runs.length) {
      const want = decodeHashRun();
      return openRun(String((App.runs.find((r) => String(r.id) === want) || App.runs[0]).id));
    }
    App.error = App.error || 'No runs found.';
    renderAll();
    document.body.dataset.ready = '1';
  }

  /** A parameter of the page's hash (#run=ID&tab=dashboard&step=N&agent=NAME), or null. */
  function hashParam(name) {
    const m = new RegExp(`(?:^#|&)${name}=([^&]*)`).exec(location.hash);
    try { return m ? decodeURIComponent(m[1]) : null; } catch (_) { return null; }
  }
  const decodeHashRun = () => hashParam('run');

  /** Loads run `id` (detail and states) and shows it. */
  async function openRun(id) {
    const gen = ++App.gen;
    clearTimeout(App.pollTimer);
    setPlaying(false);
    const entry = App.runs.find((r) => String(r.id) === id) || { id };
    const run = { id, detail: null, states: [], next: 0, loaded: false, problems: [],
      status: entry.status, steps_done: entry.steps_done, steps_total: entry.steps_total, message: entry.message };
    Object.assign(App, { run, step: 0, selected: null, pinnedConv: null, day: 'all', error: null });
    hideConversation(true);
    try {
      const base = `api/runs/${encodeURIComponent(id)}`;
      const [detail, states] = App.served ? await Promise.all([getJSON(base), getJSON(`${base}/states?from=0`)])
        : [(App.inline.details || {})[id] || null, (App.inline.states || {})[id] || null];
      if (gen !== App.gen) return;
      if (!states) App.error = 'No states were found for this run.';
      run.detail = detail;
      if (detail) {
        for (const k of ['status', 'steps_done', 'steps_total', 'message']) if (k in detail) run[k] = detail[k];
        run.problems = Array.isArray(detail.problems) ? detail.problems : [];
      }
      if (states) applyStates(run, states);
    } catch (e) {
      if (gen !== App.gen) return;
      App.error = `Cannot load run "${id}": ${e.message}`;
    }
    run.loaded = true;
    prepareRun(run);
    // A live run opens at its newest step (and follows it); a finished one at the start.
    // (A report is a snapshot: it opens at the start even if the run was still going.)
    App.step = run.status === 'running' && App.served ? Math.max(0, run.states.length - 1) : 0;
    // A link may name the step (1-based, as the step label counts), an agent and the tab.
    const step = Number(hashParam('step')), agent = hashParam('agent');
    if (Number.isInteger(step) && step >= 1) App.step = clamp(step - 1, 0, Math.max(0, run.states.length - 1));
    if (agent != null && run.agents.includes(agent)) App.selected = agent;
    showTab(hashParam('tab') === 'dashboard' ? 'dashboard' : 'map');
    renderAll();
    document.body.dataset.ready = '1';
    schedulePoll(gen);
  }

  /** Merges a StatesResponse into `run`; returns whether states were added. */
  function applyStates(run, resp) {
    const from = Number.isInteger(resp.from) ? resp.from : 0;
    const incoming = Array.isArray(resp.states) ? resp.states.filter((s) => s && typeof s === 'object') : [];
    // States are keyed by their step (file index): replace those at or after `from`.
    const keep = run.states.filter((s, i) => (Number.isInteger(s.step) ? s.step : i) < from);
    const before = run.states.length;
    run.states = keep.concat(incoming);
    run.next = Number.isInteger(resp.next) ? resp.next : from + incoming.length;
    for (const k of ['status', 'steps_done', 'steps_total']) if (k in resp) run[k] = resp[k];
    // Problems: the latest list, plus earlier ones about files that still did not load.
    const loaded = new Set(run.states.map((s) => s.file));
    const seen = new Set();
    run.problems = (Array.isArray(resp.problems) ? resp.problems : []).concat(run.problems).filter((p) => {
      const key = p && `${p.file}\u0000${p.message}`;
      if (!p || seen.has(key) || (p.file && loaded.has(p.file))) return false;
      seen.add(key);
      return true;
    });
    return run.states.length !== before || incoming.length > 0;
  }

  /** While the run is being written, asks for new states every POLL_MS. An incomplete run is
   *  asked now and then too: the server calls a run incomplete after a quiet minute (a slow step). */
  function schedulePoll(gen) {
    clearTimeout(App.pollTimer);
    const st = App.run && App.run.status;
    if (App.served && (st === 'running' || st === 'incomplete')) App.pollTimer = setTimeout(() => poll(gen), st === 'running' ? POLL_MS : 5 * POLL_MS);
  }

  async function poll(gen) {
    const run = App.run;
    if (gen !== App.gen || !run) return;
    const base = `api/runs/${encodeURIComponent(run.id)}`;
    try {
      const resp = await getJSON(`${base}/states?from=${run.next}`);
      if (gen !== App.gen) return;
      const atEnd = App.step >= run.states.length - 1, was = run.status;
      const added = applyStates(run, resp);
      App.error = null;
      if (was !== run.status) { // the run ended (or went on): its message may have changed
        const d = await getJSON(base).catch(() => null);
        if (gen !== App.gen) return;
        if (d) Object.assign(run, { detail: d, message: d.message });
      }
      if (added) {
        prepareRun(run);
        if (atEnd) App.step = run.states.length - 1; // at the newest step: follow the run
      }
      if (added || was !== run.status) renderAll();
      else renderMessage();
    } catch (e) {
      if (gen !== App.gen) return;
      App.error = `Lost contact with the server (${e.message}); retrying…`;
      renderMessage();
    }
    schedulePoll(gen);
  }

  // ---------------------------------------------------------------- world model

  /** Agents, colours and the place tree of `run` (the world's, plus places only states name). */
  function prepareRun(run) {
    const world = (run.detail && run.detail.world) || {};
    const names = (Array.isArray(world.agents) ? world.agents.map(str) : []).slice();
    for (const s of run.states) for (const a of agentsOf(s)) if (a.name != null && !names.includes(str(a.name))) names.push(str(a.name));
    run.agents = names;
    run.colors = new Map(names.map((n, i) => [n, agentColor(i)]));
    run.order = new Map(names.map((n, i) => [n, i]));
    run.dates = [...new Set(run.states.map((s) => str(s.date)))];
    run.stepMin = stepMinutes(run);
    run.talks = run.states.map(talksOf);

    const root = { name: '', path: [], children: [], extra: false };
    const add = (parent, name, extra) => {
      let c = parent.children.find((n) => n.name === name);
      if (!c) { c = { name, path: parent.path.concat([name]), children: [], extra }; parent.children.push(c); }
      return c;
    };
    const walk = (parent, list) => {
      for (const n of Array.isArray(list) ? list : []) if (n && n.name != null) walk(add(parent, str(n.name), false), n.children);
    };
    walk(root, world.locations);
    const paths = [];
    for (const s of run.states) for (const a of agentsOf(s)) paths.push(locPath(a));
    for (const p of paths) p.reduce((node, name) => add(node, name, true), root);
    // An agent in a place that has sub-places gets a floor area inside it (path + "").
    for (const p of paths) {
      const node = p.reduce((n, name) => n && n.children.find((c) => c.name === name), root);
      if (node && node.children.length && node.children[0].name !== '') node.children.unshift({ name: '', path: node.path.concat(['']), children: [], extra: true, floor: true });
    }
    // Lookups: by path, and by the path joined with "-" as conversation keys are (rooms first).
    const nodes = new Map(), byJoin = new Map();
    const index = (n) => {
      for (const c of n.children) {
        nodes.set(JSON.stringify(c.path), c);
        const j = c.path.filter((x) => x !== '').join('-');
        if (!byJoin.has(j) || !c.children.length) byJoin.set(j, c);
        index(c);
      }
    };
    index(root);
    if (run.tree && run.nodes.size === nodes.size) return; // same places: keep the layout
    Object.assign(run, { tree: root, nodes, byJoin });
    layoutMap(run);
    App.mapDirty = true;
  }

  /** The node an agent at `path` is drawn in (the floor area of a place with sub-places). */
  function nodeFor(run, path) {
    const n = run.nodes.get(JSON.stringify(path));
    return n && n.children.length && n.children[0].floor ? n.children[0] : n || null;
  }

  // ---------------------------------------------------------------- map layout

  /** Squarified treemap (Bruls et al.): rectangles for `weights` in (x, y, w, h), same order. */
  function squarify(weights, x, y, w, h) {
    const total = weights.reduce((a, b) => a + b, 0) || 1;
    const items = weights.map((v, i) => ({ i, a: (v * w * h) / total })).sort((p, q) => q.a - p.a);
    const out = new Array(weights.length);
    let row = [];
    const worst = (r, side) => {
      const s = r.reduce((t, it) => t + it.a, 0);
      let mx = 0, mn = Infinity;
      for (const it of r) { mx = Math.max(mx, it.a); mn = Math.min(mn, it.a); }
      return Math.max((side * side * mx) / (s * s), (s * s) / (side * side * mn));
    };
    const flush = () => {
      const s = row.reduce((t, it) => t + it.a, 0);
      if (w >= h) { // a column at the left
        const cw = h > 0 ? s / h : 0;
        let cy = y;
        for (const it of row) { const hh = cw > 0 ? it.a / cw : 0; out[it.i] = { x, y: cy, w: cw, h: hh }; cy += hh; }
        x += cw; w -= cw;
      } else { // a row at the top
        const rh = w > 0 ? s / w : 0;
        let cx = x;
        for (const it of row) { const ww = rh > 0 ? it.a / rh : 0; out[it.i] = { x: cx, y, w: ww, h: rh }; cx += ww; }
        y += rh; h -= rh;
      }
      row = [];
    };
    for (const it of items) {
      const side = Math.min(w, h);
      if (!row.length || worst(row.concat([it]), side) <= worst(row, side)) row.push(it);
      else { flush(); row.push(it); }
    }
    if (row.length) flush();
    return out;
  }

  /** Weight of a place: one per room, plus room for the label band of a building. */
  function weigh(n) {
    n.weight = n.children.length ? n.children.reduce((t, c) => t + weigh(c), 0) + 0.35 : 1;
    return n.weight;
  }

  /** Places every node of the tree: top-level places as buildings, sub-places nested inside. */
  function layoutMap(run) {
    weigh(run.tree);
    const place = (node, r, depth) => {
      node.rect = r;
      node.depth = depth;
      if (!node.children.length) return;
      const head = depth === 0 ? 0 : depth === 1 ? 22 : 18;
      const pad = depth === 0 ? 0 : 5;
      const gap = depth === 0 ? 12 : 5;
      const inner = { x: r.x + pad, y: r.y + head, w: Math.max(1, r.w - 2 * pad), h: Math.max(1, r.h - head - pad) };
      const rects = squarify(node.children.map((c) => c.weight), inner.x - gap / 2, inner.y - gap / 2, inner.w + gap, inner.h + gap);
      node.children.forEach((c, i) => {
        const q = rects[i];
        place(c, { x: q.x + gap / 2, y: q.y + gap / 2, w: Math.max(2, q.w - gap), h: Math.max(2, q.h - gap) }, depth + 1);
      });
    };
    place(run.tree, { x: 6, y: 6, w: MAP_W - 12, h: MAP_H - 12 }, 0);
  }

  /** Marker positions for the agents of `state`: a grid per room, sized to fit. */
  function placeAgents(run, state) {
    const groups = new Map();
    for (const a of agentsOf(state)) {
      const node = nodeFor(run, locPath(a));
      if (!node) continue;
      if (!groups.has(node)) groups.set(node, []);
      groups.get(node).push(a);
    }
    const pos = new Map();
    for (const [node, list] of groups) {
      list.sort((p, q) => (run.order.get(str(p.name)) ?? 0) - (run.order.get(str(q.name)) ?? 0));
      const r = node.rect;
      const top = node.floor ? 2 : 17;
      const area = { x: r.x + 3, y: r.y + top, w: Math.max(4, r.w - 6), h: Math.max(4, r.h - top - 3) };
      const n = list.length;
      let best = null;
      for (let cols = 1; cols <= n; cols++) {
        const rows = Math.ceil(n / cols);
        const cw = area.w / cols, ch = area.h / rows;
        const rad = clamp(Math.min(cw * 0.3, (ch - 13) * 0.42, 15), 5, 15);
        const score = rad - 0.8 * Math.abs(Math.log(cw / ch / 1.45)); // big markers, cells a bit wider than tall
        if (!best || score > best.score) best = { cols, rows, cw, ch, rad, score };
      }
      // Under the marker: the name where it fits, then the activity on one or two lines.
      const room = best.ch - 2 * best.rad - 6;
      const lines = best.cw < 34 ? 0 : room >= 36 && best.cw >= 60 ? 3 : room >= 25 && best.cw >= 50 ? 2 : room >= 12 ? 1 : 0;
      // Big rooms: cells of at most 150×(what the labels need), the group centred in the room.
      const cw = Math.min(best.cw, 150), ch = Math.min(best.ch, 2 * best.rad + 12 + 11 * lines);
      const ox = area.x + (area.w - cw * Math.min(n, best.cols)) / 2, oy = area.y + (area.h - ch * best.rows) / 2;
      const textW = best.cols > 1 ? cw : Math.min(best.cw, 190);
      list.forEach((a, i) => {
        const c = i % best.cols, row = Math.floor(i / best.cols);
        const cx = ox + (c + 0.5) * cw;
        const cy = oy + row * ch + best.rad + 6;
        pos.set(str(a.name), { x: cx, y: cy, r: best.rad, lines, chars: Math.max(3, Math.floor(textW / 6.3)), actChars: Math.max(3, Math.floor(textW / 5.2)) });
      });
    }
    return pos;
  }

  // ---------------------------------------------------------------- map drawing

  /** Draws the places (only when the tree changed); markers and bubbles are updated per step. */
  function drawMapBase(run) {
    const svg = $('map');
    svg.replaceChildren();
    svg.setAttribute('viewBox', `0 0 ${MAP_W} ${MAP_H}`);
    const places = sv('g', { class: 'places' });
    const draw = (node) => {
      for (const c of node.children) {
        const r = c.rect;
        const leaf = !c.children.length;
        const cls = ['place', `depth-${Math.min(c.depth, 3)}`, leaf ? 'room' : 'building', c.extra ? 'extra' : '', c.floor ? 'floor' : ''].join(' ').trim();
        const label = c.floor ? '' : truncate(c.name, Math.floor((r.w - 8) / (c.depth === 1 ? 7.2 : 6.2)));
        const full = c.path.filter((x) => x !== '').join(' › ') + (c.extra ? ' (not in the world file)' : '');
        places.append(sv('g', { class: cls, 'data-place': c.path.join('-') },
          sv('title', { text: full }),
          sv('rect', { x: r.x, y: r.y, width: r.w, height: r.h, rx: c.depth === 1 ? 6 : 3 }),
          label && r.h > 12 ? sv('text', { x: r.x + 5, y: r.y + (c.depth === 1 && !leaf ? 15 : 12), class: 'place-label', text: label }) : null));
        draw(c);
      }
    };
    draw(run.tree);
    svg.append(places, sv('g', { id: 'conv-layer' }), sv('g', { id: 'agent-layer' }));
    renderMapLegend(run);
    App.mapDirty = false;
  }

  /** What the map's colours and marks mean: the kinds of place drawn, then the marker's parts. */
  function renderMapLegend(run) {
    const kinds = new Set();
    const visit = (n) => { for (const c of n.children) { kinds.add(c.floor ? 'floor' : c.extra ? 'extra' : c.children.length ? 'building' : c.depth === 1 ? 'open' : 'room'); visit(c); } };
    visit(run.tree);
    const place = (kind, cls, label) => (kinds.has(kind) || kind === 'talking' ? el('span', { class: 'legend-item', 'data-legend': kind },
      sv('svg', { width: 22, height: 14, 'aria-hidden': 'true' }, sv('g', { class: `place ${cls}` }, sv('rect', { x: 1, y: 1, width: 20, height: 12, rx: 2 })))
      , label) : null);
    const emotions = [...new Set(Object.keys(EMOTIONS).concat(run.states.flatMap((s) => agentsOf(s).map(emotionOf))))].filter((e) => e !== 'unknown');
    $('map-legend').replaceChildren(...[
      place('building', 'building depth-1', 'place with rooms'),
      place('room', 'room depth-2', 'room'),
      place('open', 'room depth-1', 'place without rooms'),
      place('floor', 'room floor depth-2', 'in the place, in no room'),
      place('extra', 'room extra depth-2', 'not in the world file'),
      place('talking', 'room talking depth-2', 'conversation here'),
      el('span', { class: 'legend-item legend-break' }, el('strong', { text: 'Marker:' }), ' initials in the agent’s colour, the activity’s emoji, ring = emotion'),
      ...emotions.map((e) => el('span', { class: 'legend-item', 'data-legend': `emotion:${e}` },
        sv('svg', { width: 14, height: 14, 'aria-hidden': 'true' }, sv('circle', { cx: 7, cy: 7, r: 5, fill: 'none', stroke: emotionColor(e), 'stroke-width': 3 })), e))].filter(Boolean));
  }

  /** Moves the markers to their rooms in the current step and redraws conversation bubbles. */
  function renderMap() {
    const run = App.run;
    if (!run || !run.tree) return;
    if (App.mapDirty || !$('agent-layer')) drawMapBase(run);
    const state = run.states[App.step];
    const pos = state ? placeAgents(run, state) : new Map();
    const layer = $('agent-layer');
    const existing = new Map([...layer.children].map((g) => [g.dataset.agent, g]));
    for (const a of agentsOf(state)) {
      const name = str(a.name);
      const p = pos.get(name);
      if (!p) continue;
      let g = existing.get(name);
      existing.delete(name);
      if (!g) {
        g = sv('g', { class: 'agent-marker', 'data-agent': name, tabindex: 0, role: 'button',
          onclick: (e) => { e.stopPropagation(); selectAgent(name); },
          onkeydown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); selectAgent(name); } } },
        sv('title'), sv('circle', { class: 'halo' }), sv('circle', { class: 'ring' }), sv('circle', { class: 'dot', fill: run.colors.get(name) || '#666' }),
        sv('text', { class: 'initials', 'text-anchor': 'middle', 'dominant-baseline': 'central' }),
        sv('text', { class: 'emoji', 'dominant-baseline': 'central' }),
        sv('text', { class: 'name-label', 'text-anchor': 'middle' }),
        sv('text', { class: 'activity-label', 'text-anchor': 'middle' }));
        g.style.transform = `translate(${p.x}px, ${p.y}px)`;
        layer.append(g);
      }
      const [title, halo, ring, dot, ini, emo, lab, act] = g.children;
      const where = locPath(a).join(' › ');
      const e = emotionOf(a);
      title.textContent = `${name}: ${str(a.activity)} (${where}), feeling ${e}`;
      g.setAttribute('aria-label', `${name}, ${where}, ${str(a.activity)}, feeling ${e}`);
      g.setAttribute('data-emotion', e);
      g.classList.toggle('selected', App.selected === name);
      g.style.transform = `translate(${p.x.toFixed(1)}px, ${p.y.toFixed(1)}px)`;
      attr(halo, { r: p.r + 6 });
      attr(ring, { r: p.r + 2, stroke: emotionColor(e) });
      attr(dot, { r: p.r });
      ini.textContent = p.r >= 8 ? initials(name) : '';
      attr(ini, { 'font-size': (p.r * 0.85).toFixed(1) });
      emo.textContent = str(a.activity_emoji);
      attr(emo, { x: (p.r * 0.55).toFixed(1), y: (-p.r * 0.95).toFixed(1), 'font-size': Math.max(9, p.r * 0.8).toFixed(1) });
      lab.textContent = p.lines ? truncate(name, p.chars) : '';
      attr(lab, { y: (p.r + 13).toFixed(1) });
      activityLines(act, p.lines > 1 ? str(a.activity) : '', p.actChars, p.lines - 1, p.r + 24);
    }
    for (const g of existing.values()) g.remove(); // agents absent from this step
    renderBubbles(run, state);
  }

  /** Fills `node` with `text` word-wrapped into at most `max` lines of `chars` characters
   *  (the last one cut with an ellipsis), from y = `y0`. */
  function activityLines(node, text, chars, max, y0) {
    const words = text.trim().split(/\s+/).filter(Boolean);
    const lines = [];
    let cur = '';
    for (const w of words) {
      const next = cur ? `${cur} ${w}` : w;
      if ([...next].length <= chars || !cur) { cur = next; continue; }
      lines.push(cur);
      cur = w;
    }
    if (cur) lines.push(cur);
    const shown = lines.slice(0, Math.max(0, max)).map((l) => truncate(l, chars));
    if (max > 0 && lines.length > max) shown[max - 1] = truncate(`${lines[max - 1]} ${lines[max]}`, chars);
    node.replaceChildren(...shown.map((l, i) => sv('tspan', { x: 0, y: (y0 + i * 11).toFixed(1), text: l })));
  }

  /** Where a conversation key is on the map: the place itself, else a participant's room. */
  function placeOfConversation(run, state, key, convs) {
    const direct = run.byJoin.get(key);
    if (direct) return direct;
    for (const conv of convs) for (const line of Array.isArray(conv) ? conv : []) {
      const a = line && findAgent(state, line.name);
      if (a && locPath(a).join('-') === key) return nodeFor(run, locPath(a));
    }
    return null;
  }

  function conversationsOf(run, state) {
    const c = state && state.conversations && typeof state.conversations === 'object' ? state.conversations : {};
    return Object.entries(c).map(([key, convs]) => {
      const list = (Array.isArray(convs) ? convs : []).filter(Array.isArray);
      return { key, convs: list, node: placeOfConversation(run, state, key, list) };
    }).filter((c) => c.convs.length);
  }

  function renderBubbles(run, state) {
    const layer = $('conv-layer');
    layer.replaceChildren();
    for (const p of $('map').querySelectorAll('.place.talking')) p.classList.remove('talking');
    for (const c of conversationsOf(run, state)) {
      if (!c.node) continue;
      const r = c.node.rect;
      const x = r.x + r.w - 15, y = r.y + 3;
      const label = `Conversation in ${c.key}: ${c.convs.length > 1 ? `${c.convs.length} conversations` : '1 conversation'}`;
      const g = sv('g', { class: 'conv-marker', 'data-place': c.key, tabindex: 0, role: 'button', 'aria-label': label,
        transform: `translate(${x.toFixed(1)} ${y.toFixed(1)})`,
        onmouseenter: () => { if (!App.pinnedConv) showConversation(c, g); },
        onmouseleave: () => { if (!App.pinnedConv) hideConversation(); },
        onclick: (e) => { e.stopPropagation(); togglePinned(c, g); },
        onkeydown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); togglePinned(c, g); } } },
      sv('title', { text: label }),
      sv('path', { d: 'M0 2 Q0 0 2 0 H14 Q16 0 16 2 V10 Q16 12 14 12 H7 L3 16 L4 12 H2 Q0 12 0 10 Z' }),
      sv('text', { x: 8, y: 9, 'text-anchor': 'middle', text: c.convs.length > 1 ? String(c.convs.length) : '…' }));
      layer.append(g);
      const placeEl = [...$('map').querySelectorAll('.place')].find((p) => p.getAttribute('data-place') === c.node.path.join('-'));
      if (placeEl) placeEl.classList.add('talking');
      if (App.pinnedConv === c.key) showConversation(c, g);
    }
    if (App.pinnedConv && !conversationsOf(run, state).some((c) => c.key === App.pinnedConv && c.node)) hideConversation(true);
  }

  function togglePinned(c, g) {
    if (App.pinnedConv === c.key) { hideConversation(true); return; }
    App.pinnedConv = c.key;
    showConversation(c, g);
  }

  /** The dialogue of a place as a list: speaker (in its colour), text, reaction. */
  function dialogue(c) {
    const run = App.run;
    return c.convs.map((conv, i) => el('ol', { class: 'dialogue', 'aria-label': `Conversation ${i + 1}` },
      conv.filter((l) => l && typeof l === 'object').map((l) => el('li', {},
        el('span', { class: 'speaker', style: { color: run.colors.get(str(l.name)) || 'inherit' }, text: `${str(l.name) || '?'}: ` }),
        l.text == null ? el('span', { class: 'said muted', text: '(did not answer)' }) : el('span', { class: 'said', text: str(l.text) }),
        l.reaction ? el('span', { class: `reaction ${/not/.test(str(l.reaction)) ? 'bad' : 'good'}`, text: ` (${str(l.reaction)})` }) : null))));
  }

  function showConversation(c, g) {
    const pop = $('conv-popup');
    pop.replaceChildren(
      el('div', { class: 'popup-head' },
        el('strong', { text: c.key }),
        App.pinnedConv ? el('button', { type: 'button', class: 'close', 'aria-label': 'Close conversation', text: '×', onclick: () => hideConversation(true) }) : null),
      ...dialogue(c));
    pop.hidden = false;
    // Below the bubble, right-aligned with it, kept inside the map.
    const wrap = $('map-wrap').getBoundingClientRect(), b = g.getBoundingClientRect(), w = pop.offsetWidth;
    pop.style.left = `${clamp(b.right - wrap.left - w, 4, Math.max(4, wrap.width - w - 4))}px`;
    pop.style.top = `${b.bottom - wrap.top + 4}px`;
  }

  function hideConversation(unpin) {
    if (unpin) App.pinnedConv = null;
    $('conv-popup').hidden = true;
  }

  // ---------------------------------------------------------------- side panel: agents, conversations

  function renderAgentList() {
    const run = App.run;
    const state = run && run.states[App.step];
    const ul = $('agent-list');
    ul.replaceChildren(...(run ? run.agents : []).map((name) => {
      const a = findAgent(state, name);
      const e = a ? emotionOf(a) : null;
      return el('li', {}, el('button', {
        type: 'button', class: 'agent-item', 'data-agent': name, 'aria-pressed': String(App.selected === name),
        onclick: () => selectAgent(name),
      },
      el('span', { class: 'swatch', style: { background: run.colors.get(name) }, 'aria-hidden': 'true', text: initials(name) }),
      el('span', { class: 'agent-text' },
        el('span', { class: 'agent-name', text: name }),
        el('span', { class: 'agent-where', text: a ? locPath(a).join(' › ') : 'not in this step' })),
      a ? el('span', { class: 'agent-emoji', text: str(a.activity_emoji) }) : null,
      e ? el('span', { class: 'emotion-dot', title: e, style: { background: emotionColor(e) } }) : null));
    }));
  }

  function renderConvList() {
    const run = App.run;
    const state = run && run.states[App.step];
    const box = $('conv-list');
    const list = run ? conversationsOf(run, state) : [];
    if (!list.length) { box.replaceChildren(el('p', { class: 'muted', text: 'No conversation at this step.' })); return; }
    box.replaceChildren(...list.map((c) => el('div', { class: 'conv-item' },
      el('button', { type: 'button', class: 'conv-place', disabled: !c.node,
        onclick: () => {
          const g = [...$('conv-layer').children].find((m) => m.getAttribute('data-place') === c.key);
          if (g) { App.pinnedConv = c.key; showConversation(c, g); }
        } },
      c.key, c.node ? null : el('span', { class: 'muted', text: ' (not on the map)' })),
      dialogue(c))));
  }

  // ---------------------------------------------------------------- status panel

  function selectAgent(name) {
    App.selected = name;
    renderAgentList();
    renderMap();
    renderStatus();
    $('status-panel').scrollIntoView({ block: 'nearest' });
  }

  /** A labelled horizontal bar (role meter) for a value in 0..max. */
  function meterRow(cls, data, label, v, max, color, text) {
    return el('div', Object.assign({ class: cls, role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': max, 'aria-valuenow': v ?? 0 }, data),
      label,
      el('span', { class: 'bar' }, el('span', { class: 'fill', style: { width: `${(clamp(v ?? 0, 0, max) / max) * 100}%`, background: color } })),
      el('span', { class: 'need-val', text }));
  }

  function renderStatus() {
    const panel = $('status-panel');
    const run = App.run;
    const name = App.selected;
    if (!run || name == null) { panel.hidden = true; panel.replaceChildren(); return; }
    const state = run.states[App.step];
    const a = findAgent(state, name);
    const prev = findAgent(run.states[App.step - 1], name);
    const head = el('div', { class: 'status-head' },
      el('span', { class: 'swatch', style: { background: run.colors.get(name) }, 'aria-hidden': 'true', text: initials(name) }),
      el('h2', { class: 'status-name', text: name }),
      el('button', { type: 'button', class: 'close', 'aria-label': 'Close the status panel', text: '×',
        onclick: () => { App.selected = null; renderStatus(); renderAgentList(); renderMap(); } }));
    if (!a) { panel.replaceChildren(head, el('p', { class: 'muted', text: 'Not in this step.' })); panel.hidden = false; return; }
    const e = emotionOf(a);
    const now = minutesOf(state.time);
    const needs = a.basic_needs && typeof a.basic_needs === 'object' ? a.basic_needs : {};
    const rels = a.social_relationships && typeof a.social_relationships === 'object' ? Object.entries(a.social_relationships) : [];
    const planList = (text, label) => {
      const lines = parsePlan(text);
      if (!lines.length) return el('p', { class: 'muted', text: 'none' });
      const cur = currentLine(lines, now);
      return el('ol', { class: 'plan', 'aria-label': label }, lines.map((l, i) => el('li', { class: i === cur ? 'current' : null, 'aria-current': i === cur ? 'true' : null },
        l.time ? el('time', { text: l.time }) : null, el('span', { text: l.text }))));
    };
    panel.replaceChildren(head,
      el('p', { class: 'activity' }, el('span', { class: 'emoji', text: str(a.activity_emoji) }), ' ', str(a.activity) || '(no activity)'),
      el('dl', { class: 'facts' },
        el('dt', { text: 'Location' }), el('dd', { text: locPath(a).join(' › ') }),
        el('dt', { text: 'Emotion' }), el('dd', {}, el('span', { class: 'emotion-badge', style: { background: emotionColor(e) }, text: e }))),
      el('h3', { text: 'Needs' }),
      el('div', { class: 'needs' }, NEEDS.map((k) => meterRow('need-bar', { 'data-need': k, 'aria-label': k }, el('span', { class: 'need-name', text: k }),
        num(needs[k]), 10, NEED_COLORS[k], fmt(num(needs[k]))))),
      el('h3', { text: 'Relationships' }),
      rels.length ? el('div', { class: 'rels' }, rels.map(([other, r]) => {
        const v = num(r && r.closeness);
        const pv = prev && prev.social_relationships && prev.social_relationships[other] ? num(prev.social_relationships[other].closeness) : null;
        const delta = v != null && pv != null && v !== pv ? (v > pv ? ` ▲${fmt(v - pv)}` : ` ▼${fmt(pv - v)}`) : '';
        return meterRow('rel-bar', { 'data-other': other, 'aria-label': `closeness to ${other}` },
          el('span', { class: 'rel-name', title: other }, other, r && r.relationship ? el('span', { class: 'muted', text: ` (${str(r.relationship)})` }) : null),
          v, 30, run.colors.get(other) || '#778', fmt(v) + delta);
      })) : el('p', { class: 'muted', text: 'none' }),
      el('h3', { text: '15-minute plan' }), planList(a.most_recent_15m_plan, '15-minute plan'),
      el('h3', { text: 'Day plan' }), planList(a.most_recent_day_plan, 'Day plan'),
      el('h3', { text: 'Suggested plan change' }),
      a.most_recent_suggested_change ? el('p', { class: 'suggested', text: str(a.most_recent_suggested_change) }) : el('p', { class: 'muted', text: 'none' }));
    panel.hidden = false;
  }

  // ---------------------------------------------------------------- header, message, controls

  function renderPicker() {
    const box = $('run-picker');
    if (App.runs.length <= 1) { box.replaceChildren(); return; }
    let sel = $('run-select');
    if (!sel) {
      sel = el('select', { id: 'run-select', 'aria-label': 'Run', onchange: () => {
        location.hash = `run=${encodeURIComponent(sel.value)}`;
        openRun(sel.value);
      } });
      box.replaceChildren(el('label', { for: 'run-select', class: 'sr-only', text: 'Run' }), sel);
    }
    // Options are updated in place, so that a poll does not close the list while it is open.
    if (sel.options.length !== App.runs.length) sel.replaceChildren(...App.runs.map((r) => el('option', { value: String(r.id) })));
    App.runs.forEach((r, i) => {
      const live = App.run && App.run.id === String(r.id) ? App.run : r;
      sel.options[i].textContent = `${str(r.name) || str(r.id)} (${str(r.id)}) · ${str(live.status)} · ${live.steps_done ?? '?'}/${live.steps_total ?? '?'} steps`;
    });
    if (App.run) sel.value = App.run.id;
  }

  function renderHeader() {
    const run = App.run;
    const world = run && run.detail && run.detail.world;
    const entry = run && App.runs.find((r) => String(r.id) === run.id);
    $('run-name').textContent = run ? `· ${str((world && world.name) || (entry && entry.name) || run.id)}` : '';
    const st = $('run-status');
    const how = run && run.status === 'running' ? (App.served ? ' · following new steps' : ' when this report was made') : '';
    st.textContent = run ? `${str(run.status)}${how}` : '';
    st.className = `run-status status-${str(run && run.status).replace(/[^a-z]/g, '')}`;
    const bits = run && run.detail ? [run.detail.model, run.detail.device, run.detail.seed != null ? `seed ${run.detail.seed}` : null].filter((x) => x != null && x !== '') : [];
    st.title = bits.join(' · ');
    document.title = run ? `${$('run-name').textContent.slice(2)} · humanoid` : 'humanoid run viewer';
  }

  /** #message: loading errors, broken or incomplete runs, problems. Empty when all is well. */
  function renderMessage() {
    const box = $('message');
    const run = App.run;
    const parts = [];
    if (App.error) parts.push(el('p', { class: 'error', text: App.error }));
    if (run && run.loaded) {
      const why = run.message ? `: ${str(run.message)}` : '';
      if (run.status === 'broken') parts.push(el('p', { class: 'error', text: `This run is broken${why || '.'}` }));
      else if (run.status === 'incomplete') parts.push(el('p', { text: `This run is incomplete (${run.steps_done ?? '?'} of ${run.steps_total ?? '?'} steps)${why}.` }));
      else if (run.message) parts.push(el('p', { text: `Note${why}.` }));
      if (run.problems.length) {
        parts.push(el('p', { text: `Problems found in the run folder (${run.problems.length}); the viewer shows the ${run.states.length} state(s) that could be read:` }),
          el('ul', { class: 'problems' }, run.problems.map((p) => el('li', {}, el('code', { text: str(p.file) }), `: ${str(p.message)}`))));
      } else if (!run.states.length && !App.error) {
        parts.push(el('p', { text: 'No state has been written yet: there is nothing to replay.' }));
      }
    }
    box.replaceChildren(...parts);
    box.hidden = !parts.length;
    box.classList.toggle('is-error', parts.some((p) => p.classList && p.classList.contains('error')));
  }

  function renderControls() {
    const run = App.run;
    const n = run ? run.states.length : 0;
    const slider = $('time-slider');
    slider.max = String(Math.max(0, n - 1));
    slider.value = String(App.step);
    slider.disabled = n <= 1;
    const state = run && run.states[App.step];
    $('clock').textContent = state ? `${str(state.date)} · ${str(state.time)}` : '';
    slider.setAttribute('aria-valuetext', state ? `${str(state.date)} ${str(state.time)}` : 'no state');
    const total = run && run.steps_total ? ` (of ${run.steps_total} planned)` : '';
    $('step-label').textContent = n ? `Step ${App.step + 1} / ${n}${total}` : 'No steps';
  }

  function setStep(i) {
    if (!App.run) return;
    App.step = clamp(Math.round(i), 0, Math.max(0, App.run.states.length - 1));
    renderStep();
  }

  /** Everything that depends on the current step. */
  function renderStep() { renderControls(); renderMap(); renderAgentList(); renderConvList(); renderStatus(); updateNowLines(); }
  function renderAll() { renderPicker(); renderHeader(); renderMessage(); renderDaySelect(); renderStep(); renderDashboard(); }

  function setPlaying(on) {
    App.playing = on;
    clearInterval(App.playTimer);
    const b = $('play');
    b.textContent = on ? '⏸ Pause' : '▶ Play';
    b.setAttribute('aria-pressed', String(on));
    if (!on) return;
    const run = App.run;
    const live = run && run.status === 'running' && App.served;
    if (run && App.step >= run.states.length - 1 && !live) setStep(0); // replay from the start
    const ms = 1000 / App.speed;
    document.documentElement.style.setProperty('--move-ms', `${Math.round(Math.min(450, ms * 0.8))}ms`);
    App.playTimer = setInterval(() => {
      const r = App.run;
      if (r && App.step < r.states.length - 1) setStep(App.step + 1);
      else if (!r || r.status !== 'running' || !App.served) setPlaying(false); // a live run: wait for more
    }, ms);
  }

  function showTab(which) {
    const dash = which === 'dashboard';
    $('map-view').hidden = dash;
    $('dashboard').hidden = !dash;
    $('tab-map').setAttribute('aria-selected', String(!dash));
    $('tab-dashboard').setAttribute('aria-selected', String(dash));
    hideTip();
    if (dash && App.dashDirty) renderDashboard();
  }

  function bindControls() {
    $('play').addEventListener('click', () => setPlaying(!App.playing));
    $('speed').addEventListener('change', (e) => { App.speed = Number(e.target.value) || 1; if (App.playing) setPlaying(true); });
    $('time-slider').addEventListener('input', (e) => setStep(Number(e.target.value)));
    $('tab-map').addEventListener('click', () => showTab('map'));
    $('tab-dashboard').addEventListener('click', () => showTab('dashboard'));
    $('day-select').addEventListener('change', (e) => { App.day = e.target.value; renderDashboard(); });
    $('map').addEventListener('click', () => hideConversation(true));
    document.addEventListener('keydown', (e) => {
      const t = e.target;
      if (t && t.closest && t.closest('input, select, textarea, button, [role="button"]')) {
        if (e.key === 'Escape') hideConversation(true);
        return;
      }
      if (e.key === ' ') { e.preventDefault(); setPlaying(!App.playing); }
      else if (e.key === 'ArrowRight') setStep(App.step + 1);
      else if (e.key === 'ArrowLeft') setStep(App.step - 1);
      else if (e.key === 'Escape') hideConversation(true);
    });
    let resizeTimer = null;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => { if (!$('dashboard').hidden) renderDashboard(); else App.dashDirty = true; }, 150);
    });
    window.addEventListener('hashchange', () => {
      const id = decodeHashRun();
      if (id != null && App.run && id !== App.run.id && App.runs.some((r) => String(r.id) === id)) openRun(id);
    });
  }

  // ---------------------------------------------------------------- dashboard: shared chart parts

  const tip = $('tooltip');
  function showTip(e, lines) {
    tip.replaceChildren(...lines.map((l, i) => el('div', { class: i === 0 ? 'tip-head' : null }, l)));
    tip.hidden = false;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    let x = e.clientX + 14, y = e.clientY + 14;
    if (x + w > window.innerWidth - 6) x = e.clientX - w - 14;
    if (y + h > window.innerHeight - 6) y = e.clientY - h - 14;
    tip.style.left = `${Math.max(4, x)}px`;
    tip.style.top = `${Math.max(4, y)}px`;
  }
  function hideTip() { tip.hidden = true; }

  /** State indices the dashboard shows (one day or all). */
  const dayIndices = (run) => run.states.map((s, i) => i).filter((i) => App.day === 'all' || str(run.states[i].date) === App.day);

  function renderDaySelect() {
    const sel = $('day-select');
    const dates = App.run ? App.run.dates || [] : [];
    if (App.day !== 'all' && !dates.includes(App.day)) App.day = 'all';
    sel.replaceChildren(el('option', { value: 'all', text: `All days${dates.length ? ` (${dates.length})` : ''}` }),
      ...dates.map((d) => el('option', { value: d, text: d })));
    sel.value = App.day;
    sel.disabled = dates.length <= 1;
  }

  /**
   * Where the states `idx` sit on a time axis: minutes from the first shown day's start, each
   * day as wide as the waking window shared by the shown days plus one step, so that a missing
   * step leaves a gap and a night does not. `gap(k)` says whether a step is missing before k.
   */
  function timeAxis(run, idx) {
    const step = run.stepMin;
    const mins = idx.map((i) => minutesOf(run.states[i].time));
    const known = mins.filter((m) => m != null);
    const lo = known.length ? Math.min(...known) : 0, hi = known.length ? Math.max(...known) : 0;
    const days = [...new Set(idx.map((i) => str(run.states[i].date)))];
    const dayW = hi - lo + 2 * step;
    const pos = [];
    idx.forEach((i, k) => {
      const d = days.indexOf(str(run.states[i].date)), m = mins[k];
      const p = m == null ? (k ? pos[k - 1] + step : 0) : d * dayW + (m - lo);
      pos.push(k && p <= pos[k - 1] ? pos[k - 1] + step : p); // out-of-order times still advance
    });
    const dayOf = (k) => days.indexOf(str(run.states[idx[k]].date));
    const gap = (k) => k > 0 && (dayOf(k) !== dayOf(k - 1) || pos[k] - pos[k - 1] > 1.5 * step);
    return { pos, step, lo, hi, days, dayW, dayOf, gap, ampm: known.length && /[ap]\.?\s*m/i.test(str(run.states[idx[0]].time)) };
  }

  /** "6 am" / "6:15 am" / "18:00" for minutes since midnight, in the style of the states' times. */
  function tickLabel(t, ampm) {
    const h = Math.floor(t / 60) % 24, mm = t % 60;
    if (!ampm) return `${String(h).padStart(2, '0')}:${String(mm).padStart(2, '0')}`;
    return `${h % 12 || 12}${mm ? `:${String(mm).padStart(2, '0')}` : ''} ${h < 12 ? 'am' : 'pm'}`;
  }

  /**
   * An SVG chart over the states `idx` on a time axis (see timeAxis): axes and their titles,
   * day boundaries, a band above the plot for conversation marks, a cursor for the replay's
   * step, and hover/click by x position. `draw(g, ax)` adds the marks, with `ax.X(k)`, `ax.Y(v)`,
   * `ax.gap(k)`, `ax.half` (half a step in px) and `ax.band` (the y of the conversation band);
   * `tipFor(k, y, Y)` gives the tooltip lines for position k of idx and the pointer's y.
   */
  function chartFrame({ chart, label, W, H, idx, yMax, yTicks, yTitle, left = 46, draw, tipFor, yLabel = true }) {
    const run = App.run;
    const ta = timeAxis(run, idx);
    const multiDay = ta.days.length > 1;
    const m = { l: left, r: 12, t: 20, b: multiDay ? 46 : 34 };
    const pw = W - m.l - m.r, ph = H - m.t - m.b, n = idx.length;
    const span = n ? ta.pos[n - 1] - ta.pos[0] : 0;
    const X = (k) => m.l + (span <= 0 ? pw / 2 : ((ta.pos[k] - ta.pos[0]) * pw) / span);
    const XT = (t) => m.l + (span <= 0 ? pw / 2 : ((t - ta.pos[0]) * pw) / span); // by axis minutes
    const Y = (v) => m.t + ph - (clamp(v, 0, yMax) / yMax) * ph;
    const half = span <= 0 ? pw / 4 : Math.max(0.5, (ta.step * pw) / span / 2);
    const svg = sv('svg', { class: 'chart', 'data-chart': chart, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': label });
    svg.append(sv('title', { text: label }));
    const axis = sv('g', { class: 'axis' });
    if (yLabel) for (const v of yTicks) axis.append(sv('line', { x1: m.l, x2: W - m.r, y1: Y(v), y2: Y(v), class: 'grid' }), sv('text', { x: m.l - 5, y: Y(v) + 4, 'text-anchor': 'end', text: String(v) }));
    if (yTitle) axis.append(sv('text', { class: 'axis-title y-title', 'text-anchor': 'middle', transform: `translate(12 ${m.t + ph / 2}) rotate(-90)`, text: yTitle }));
    // Day boundaries half way between one day's last state and the next one's first.
    idx.forEach((i, k) => {
      if (k > 0 && ta.dayOf(k) !== ta.dayOf(k - 1)) { const x = (X(k - 1) + X(k)) / 2; axis.append(sv('line', { class: 'day-line', x1: x, x2: x, y1: m.t, y2: m.t + ph })); }
    });
    // Ticks at round times, as sparse as needed to keep labels 64 px apart; dates under them.
    if (n && span > 0) {
      const perMin = pw / span;
      const every = [15, 30, 60, 120, 180, 240, 360, 720, 1440].find((e) => e * perMin >= 64) || 1440;
      const taken = [];
      ta.days.forEach((d, di) => {
        const base = di * ta.dayW - ta.lo;
        for (let t = Math.ceil(ta.lo / every) * every; t <= ta.hi; t += every) {
          const x = XT(base + t);
          if (x < m.l - 1 || x > W - m.r + 1 || taken.some((p) => Math.abs(p - x) < 44)) continue;
          taken.push(x);
          axis.append(sv('line', { class: 'tick', x1: x, x2: x, y1: m.t + ph, y2: m.t + ph + 4 }),
            sv('text', { class: 'tick-label', x, y: m.t + ph + 15, 'text-anchor': 'middle', text: tickLabel(t, ta.ampm) }));
        }
        if (multiDay) {
          const ks = idx.map((_, k) => k).filter((k) => ta.dayOf(k) === di);
          const x = (X(ks[0]) + X(ks[ks.length - 1])) / 2;
          axis.append(sv('text', { class: 'date-label', x, y: m.t + ph + 28, 'text-anchor': 'middle', text: shortDate(d) }));
        }
      });
    } else if (n) {
      axis.append(sv('text', { class: 'tick-label', x: X(0), y: m.t + ph + 15, 'text-anchor': 'middle', text: str(run.states[idx[0]].time) }));
    }
    axis.append(sv('text', { class: 'axis-title x-title', x: m.l + pw / 2, y: H - 4, 'text-anchor': 'middle', text: multiDay ? 'time of day, by date' : `time of day (${str(n ? run.states[idx[0]].date : '')})` }));
    const marks = sv('g', { class: 'marks' });
    const cursor = sv('line', { class: 'hover-line', y1: m.t, y2: m.t + ph, visibility: 'hidden' });
    const now = sv('line', { class: 'now-line', y1: m.t, y2: m.t + ph });
    svg.append(axis, now, marks, cursor);
    svg.__nowX = (step) => { const k = idx.indexOf(step); return k < 0 ? null : X(k); };
    draw(marks, { X, Y, gap: ta.gap, half, band: m.t - 10, top: m.t, bottom: m.t + ph });
    if (!n) svg.append(sv('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'muted', text: 'no states' }));
    const at = (e) => {
      const ctm = svg.getScreenCTM();
      if (!ctm || !n) return null;
      const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(ctm.inverse());
      let best = 0;
      for (let k = 1; k < n; k++) if (Math.abs(X(k) - p.x) < Math.abs(X(best) - p.x)) best = k;
      return { k: best, y: p.y };
    };
    svg.addEventListener('mousemove', (e) => {
      const a = at(e);
      if (!a) return;
      attr(cursor, { x1: X(a.k), x2: X(a.k), visibility: 'visible' });
      showTip(e, tipFor(a.k, a.y, Y));
    });
    svg.addEventListener('mouseleave', () => { attr(cursor, { visibility: 'hidden' }); hideTip(); });
    svg.addEventListener('click', (e) => { const a = at(e); if (a) setStep(idx[a.k]); });
    return svg;
  }

  /** A path through values, broken where a value or a step is missing; `off` shifts it a few
   *  units down so that lines with equal values stay visible side by side. */
  function linePath(values, ax, off = 0) {
    let d = '', pen = false;
    values.forEach((v, k) => {
      if (v == null) { pen = false; return; }
      if (ax.gap(k)) pen = false;
      d += `${pen ? 'L' : 'M'}${ax.X(k).toFixed(1)} ${(ax.Y(v) + off).toFixed(1)}`;
      pen = true;
    });
    return d;
  }

  /** A speech-bubble mark centred on (x, y) for a step with a conversation. */
  function convMark(x, y, attrs) {
    return sv('path', Object.assign({ class: 'conv-mark', d: `M${(x - 5).toFixed(1)} ${(y - 4).toFixed(1)}h10v6h-5l-3 3v-3h-2z` }, attrs));
  }

  /** Moves every chart's replay cursor to the current step. */
  function updateNowLines() {
    for (const svg of document.querySelectorAll('#dashboard svg.chart')) {
      const line = svg.querySelector('.now-line'), x = svg.__nowX ? svg.__nowX(App.step) : null;
      if (line) attr(line, x == null ? { visibility: 'hidden' } : { visibility: 'visible', x1: x, x2: x });
    }
  }

  function legendItem(color, label, dash, attrs) {
    return el('span', Object.assign({ class: 'legend-item' }, attrs || {}),
      sv('svg', { width: 26, height: 10, 'aria-hidden': 'true' }, sv('line', { x1: 1, x2: 25, y1: 5, y2: 5, stroke: color, 'stroke-width': 3, 'stroke-dasharray': dash || null })),
      label);
  }
  function swatchItem(color, label) {
    return el('span', { class: 'legend-item' }, el('span', { class: 'legend-swatch', style: { background: color } }), label);
  }

  // ---------------------------------------------------------------- dashboard: the charts

  /** Widths to draw charts at: the boxes' own widths, so that text keeps its size on any screen. */
  function chartWidths() {
    const full = Math.max(280, Math.floor($('closeness-chart').clientWidth || 1100));
    const grid = $('needs-charts').clientWidth || full;
    const cols = Math.max(1, Math.floor((grid + 10) / (Math.min(460, grid) + 10)));
    return { full, card: Math.max(260, Math.floor((grid - 10 * (cols - 1)) / cols) - 14) };
  }

  function renderDashboard() {
    const run = App.run;
    const needsBox = $('needs-charts'), closeBox = $('closeness-chart'), emoBox = $('emotions-chart');
    // Charts are sized to their boxes, which have no size while the tab is hidden.
    App.dashDirty = $('dashboard').hidden;
    if (App.dashDirty) return;
    if (!run) { needsBox.replaceChildren(); closeBox.replaceChildren(); emoBox.replaceChildren(); return; }
    const idx = dayIndices(run);
    const pts = idx.length <= 160;
    const { full, card } = chartWidths();
    const talkers = (k) => run.talks[idx[k]] || [];
    const partners = (k, name) => [...new Set(talkers(k).filter((t) => t.includes(name)).flat().filter((x) => x !== name))];
    const convLegend = () => el('span', { class: 'legend-item' },
      sv('svg', { width: 14, height: 12, 'aria-hidden': 'true' }, convMark(7, 5)), 'conversation at this step');

    // Needs: one chart per agent, one line per need, a mark above the plot when the agent talks.
    $('needs-legend').replaceChildren(...NEEDS.map((k) => legendItem(NEED_COLORS[k], k)), convLegend());
    needsBox.replaceChildren(...run.agents.map((name) => {
      const rows = idx.map((i) => findAgent(run.states[i], name));
      const svg = chartFrame({
        chart: `needs:${name}`, label: `Needs of ${name} over time (0 to 10)`, W: card, H: 200, idx, yMax: 10, yTicks: [0, 2, 4, 6, 8, 10], yTitle: 'need (0–10)',
        draw: (g, ax) => {
          NEEDS.forEach((k, j) => {
            const vals = rows.map((a) => (a && a.basic_needs ? num(a.basic_needs[k]) : null));
            const off = (j - 2) * 1.1;
            g.append(sv('path', { class: 'series', d: linePath(vals, ax, off), stroke: NEED_COLORS[k], 'data-need': k }));
            if (pts) vals.forEach((v, kk) => { if (v != null) g.append(sv('circle', { class: 'pt', cx: ax.X(kk), cy: ax.Y(v) + off, r: 2.4, fill: NEED_COLORS[k], 'data-step': idx[kk] })); });
          });
          idx.forEach((i, k) => { if (partners(k, name).length) g.append(convMark(ax.X(k), ax.band, { 'data-step': i })); });
        },
        tipFor: (k) => {
          const s = run.states[idx[k]], a = rows[k];
          if (!a) return [stamp(s), `${name}: not in this step`];
          const who = partners(k, name);
          return [stamp(s), `${name}: ${str(a.activity_emoji)} ${str(a.activity)}`, `emotion: ${emotionOf(a)}`,
            NEEDS.map((n) => `${n} ${fmt(a.basic_needs ? num(a.basic_needs[n]) : null)}`).join(' · '),
            who.length ? `talked with ${who.join(', ')}` : null].filter(Boolean);
        },
      });
      return el('figure', { class: 'chart-card' },
        el('figcaption', {}, el('span', { class: 'swatch small', style: { background: run.colors.get(name) }, 'aria-hidden': 'true' }), name), svg);
    }));

    // Closeness: one line per directed pair, coloured by who feels it, dashed by whom; on its
    // whole 0-30 scale; a mark above the plot at each step with a conversation.
    const pairs = [];
    for (const s of run.states) for (const a of agentsOf(s)) {
      const rel = a.social_relationships && typeof a.social_relationships === 'object' ? a.social_relationships : {};
      for (const other of Object.keys(rel)) if (!pairs.some((p) => p.from === str(a.name) && p.to === other)) pairs.push({ from: str(a.name), to: other, rel: str(rel[other] && rel[other].relationship) });
    }
    pairs.sort((p, q) => (run.order.get(p.from) ?? 0) - (run.order.get(q.from) ?? 0));
    const perFrom = new Map();
    for (const p of pairs) {
      const k = perFrom.get(p.from) || 0;
      perFrom.set(p.from, k + 1);
      p.color = run.colors.get(p.from) || '#777';
      p.dash = DASHES[k % DASHES.length];
      p.vals = idx.map((i) => { const a = findAgent(run.states[i], p.from); const r = a && a.social_relationships && a.social_relationships[p.to]; return r ? num(r.closeness) : null; });
    }
    const paths = [];
    closeBox.replaceChildren(chartFrame({
      chart: 'closeness', label: 'Closeness between agents over time (0 to 30)', W: full, H: 280, idx, yMax: 30, yTicks: [0, 5, 10, 15, 20, 25, 30], yTitle: 'closeness (0–30)',
      draw: (g, ax) => {
        pairs.forEach((p, i) => {
          const off = (i - (pairs.length - 1) / 2) * Math.min(1.6, 12 / pairs.length);
          const path = sv('path', { class: 'series', d: linePath(p.vals, ax, off), stroke: p.color, 'stroke-dasharray': p.dash || null, 'data-pair': `${p.from}→${p.to}` });
          paths.push(path);
          g.append(path);
          if (pts) p.vals.forEach((v, k) => { if (v != null) g.append(sv('circle', { class: 'pt', cx: ax.X(k), cy: ax.Y(v) + off, r: 2, fill: p.color })); });
        });
        idx.forEach((i, k) => { if (talkers(k).length) g.append(convMark(ax.X(k), ax.band, { 'data-step': i })); });
      },
      tipFor: (k, y, Y) => {
        const s = run.states[idx[k]];
        const near = pairs.filter((p) => p.vals[k] != null).sort((p, q) => Math.abs(Y(p.vals[k]) - y) - Math.abs(Y(q.vals[k]) - y)).slice(0, 4);
        return [stamp(s), ...near.map((p) => `${p.from} → ${p.to}${p.rel ? ` (${p.rel})` : ''}: ${fmt(p.vals[k])}`),
          ...talkers(k).map((t) => `conversation: ${t.join(' ↔ ')}`)];
      },
    }));
    $('closeness-legend').replaceChildren(...(pairs.length ? pairs.map((p, i) => legendItem(p.color, `${p.from} → ${p.to}`, p.dash, {
      onmouseenter: () => paths.forEach((q, j) => q.classList.toggle('dim', j !== i)),
      onmouseleave: () => paths.forEach((q) => q.classList.remove('dim')),
    })) : [el('span', { class: 'muted', text: 'No relationships recorded.' })]), convLegend());

    // Emotions: a strip per agent, one coloured segment per step (runs of equal emotion merged,
    // broken where a step is missing).
    const seen = new Set();
    const rowH = 22, labelW = Math.round(clamp(full * 0.16, 90, 170));
    const H = 20 + rowH * run.agents.length + (run.dates.length > 1 && App.day === 'all' ? 46 : 34);
    emoBox.replaceChildren(chartFrame({
      chart: 'emotions', label: 'Emotion of each agent at each step', W: full, H, idx, yMax: 1, yTicks: [], left: labelW, yLabel: false,
      draw: (g, ax) => {
        const n = idx.length;
        const x0 = (k) => Math.max(labelW, ax.X(k) - ax.half), x1 = (k) => Math.min(full - 12, ax.X(k) + ax.half);
        run.agents.forEach((name, r) => {
          const y = ax.top + r * rowH;
          g.append(sv('text', { x: labelW - 8, y: y + rowH / 2 + 4, 'text-anchor': 'end', class: 'row-label', text: truncate(name, Math.floor(labelW / 7)) }));
          const emos = idx.map((i) => { const a = findAgent(run.states[i], name); return a ? emotionOf(a) : null; });
          let start = 0;
          for (let k = 1; k <= n; k++) {
            if (k < n && emos[k] === emos[start] && !ax.gap(k)) continue;
            const e = emos[start];
            if (e) seen.add(e);
            g.append(sv('rect', { class: 'seg', x: x0(start), y: y + 2, width: Math.max(1, x1(k - 1) - x0(start)), height: rowH - 5,
              fill: e ? emotionColor(e) : 'transparent', 'data-agent': name, 'data-emotion': e || '' }));
            start = k;
          }
        });
      },
      tipFor: (k, y) => {
        const s = run.states[idx[k]];
        const name = run.agents[clamp(Math.floor((y - 20) / rowH), 0, run.agents.length - 1)];
        const a = findAgent(s, name);
        return a ? [stamp(s), `${name}: ${emotionOf(a)}`, `${str(a.activity_emoji)} ${str(a.activity)}`] : [stamp(s), `${name}: not in this step`];
      },
    }));
    const known = Object.keys(EMOTIONS);
    $('emotions-legend').replaceChildren(...known.map((e) => swatchItem(EMOTIONS[e], e)),
      ...[...seen].filter((e) => !EMOTIONS[e]).map((e) => swatchItem(emotionColor(e), `${e} (other)`)));
    updateNowLines();
  }

  // ---------------------------------------------------------------- start

  function start() {
    init().catch((e) => {
      App.error = `The viewer failed: ${e && e.message ? e.message : e}`;
      renderMessage();
      document.body.dataset.ready = '1';
    });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
