/* gamerig view: the pages over the viewer's JSON answers (supervisor/view/api.py).
 *
 * Every string from a capture (the game's text, a model's answer, a policy's reason) reaches
 * the document through text nodes (el() below), never as markup: a capture cannot run script
 * here. Live: answers are fetched from the server and the pages poll every second. Bundle
 * (supervisor view --bundle): each answer is a script file in the bundle's folder, named by
 * bundleName(path), that calls gamerigData(path, answer).
 *
 * Which answers there are, their paths, the size of a page of steps and how a bundle names
 * its files come from static/api.js (gamerigApi, written by supervisor/view/routes.py, by
 * which the server routes and the bundle names its files): this file keeps none of those rules.
 */
"use strict";

const MODE = document.documentElement.dataset.mode || "live";
const POLL_MS = 1000;
const API = window.gamerigApi;
const PAGE = API.page;
let pollTimer = null;
let charts = [];
let navigation = 0;   // counted by route(): a page whose answers arrive after it was left draws nothing

// ---- data ------------------------------------------------------------------------------
function apiPath(name, params) {   // route NAME's path with PARAMS, each encoded as one segment
  const r = API.routes[name];
  if (!r) throw new Error("the viewer has no answer " + name);
  const given = Object.keys(params || {}).sort().join(","), wanted = r.params.slice().sort().join(",");
  if (given !== wanted) throw new Error(name + " takes " + (wanted || "nothing") + ", not " + (given || "nothing"));
  return r.path.replace(/\{([a-z_]+)\}/g, (_, p) => enc(params[p]));
}
const KEEP = new RegExp("^[" + API.bundle.keep + "]$");
function bundleName(path) {   // the file a bundle keeps PATH's answer in (API.bundle)
  let out = "";
  for (const c of path) out += KEEP.test(c) ? c : API.bundle.escape.replace("{hex}", c.codePointAt(0).toString(16));
  return out;
}
const waiting = {};
window[API.bundle.callback] = function (path, data) {
  const w = waiting[path];
  if (!w) return;
  delete waiting[path];
  if (data && typeof data.error === "string" && data.code) w.reject(new Error(data.error));   // the server's 4xx answer
  else w.resolve(data);
};
function api(path) {
  if (MODE === "bundle") {
    return new Promise((resolve, reject) => {
      waiting[path] = { resolve, reject };
      const s = document.createElement("script");
      s.src = API.bundle.folder + bundleName(path) + API.bundle.script;
      s.onerror = () => { delete waiting[path]; reject(new Error("not in this bundle: " + path)); };
      document.head.appendChild(s);
      s.remove();
    });
  }
  return fetch(path, { cache: "no-store" }).then(async r => {
    const body = await r.json().catch(() => ({ error: "unreadable answer (" + r.status + ")" }));
    if (!r.ok) throw new Error(body.error || ("HTTP " + r.status));
    return body;
  });
}
function asset(path) {   // an image answer
  return MODE === "bundle" ? API.bundle.folder + bundleName(path) : path;
}
function enc(s) { return encodeURIComponent(String(s)); }

// ---- DOM helpers -----------------------------------------------------------------------
function el(tag, attrs, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") n.className = v;
    else if (k === "on") for (const [ev, f] of Object.entries(v)) n.addEventListener(ev, f);
    else n.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    n.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return n;
}
function badge(text, kind) { return el("span", { class: "badge b-" + (kind || text) }, text); }
function num(x, digits) {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  return typeof x === "number" && digits !== undefined ? x.toFixed(digits) : String(x);
}
function pct(x) { return x === null || x === undefined ? "–" : (100 * x).toFixed(0) + "%"; }
function dur(s) {
  if (s === null || s === undefined) return "–";
  if (s < 120) return s.toFixed(1) + " s";
  if (s < 7200) return (s / 60).toFixed(1) + " min";
  return (s / 3600).toFixed(1) + " h";
}
function short(text, n) { text = String(text ?? ""); return text.length > n ? text.slice(0, n) + "…" : text; }
function json(v) { return JSON.stringify(v, null, 2); }
function main(...kids) {
  const m = document.getElementById("main");
  m.replaceChildren(...kids.flat(Infinity).filter(k => k !== null && k !== undefined && k !== false));
  return m;
}
function status(text) { document.getElementById("status").textContent = text; }
function fail(err) { main(el("p", { class: "error", id: "error" }, String(err.message || err))); }
function verdictBadge(v, live) {
  if (live) return badge("running", "live");
  if (!v) return badge("waiting", "waiting");
  if (v.state === "verifying") return badge("verifying");
  if (v.state === "error") return badge("verifier error", "error");
  return badge(v.verdict || "?", v.verdict);
}

// sortable, filterable table ---------------------------------------------------------------
function table(columns, rows, opts = {}) {
  const state = opts.state || { key: null, dir: 1 };
  const t = el("table", { id: opts.id || null, class: opts.class || null });
  const head = el("tr", {}, columns.map(c => {
    const th = el("th", { class: (c.num ? "num " : "") + (c.sort ? "sortable" : ""), "data-key": c.key }, c.label);
    if (c.sort) {
      if (state.key === c.key) th.classList.add(state.dir > 0 ? "sorted-asc" : "sorted-desc");
      th.addEventListener("click", () => {
        state.dir = state.key === c.key ? -state.dir : 1; state.key = c.key;
        if (opts.onSort) opts.onSort(state);
      });
    }
    return th;
  }));
  let body = rows.slice();
  if (state.key) {
    const col = columns.find(c => c.key === state.key);
    const val = col.sort === true ? (r => r[col.key]) : col.sort;
    body.sort((a, b) => { const x = val(a), y = val(b); return (x > y ? 1 : x < y ? -1 : 0) * state.dir; });
  }
  t.appendChild(el("thead", {}, head));
  t.appendChild(el("tbody", {}, body.map(r => el("tr", { "data-key": r.key || null },
    columns.map(c => el("td", { class: c.num ? "num" : (c.class || null) }, c.cell ? c.cell(r) : num(r[c.key])))))));
  return t;
}

// ---- routing ---------------------------------------------------------------------------
function route() {
  clearTimeout(pollTimer);
  navigation++;
  shownSession = { key: null, sig: null, emu: null };
  charts.forEach(c => c.destroy()); charts = [];
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, query] = hash.split("?");
  const q = new URLSearchParams(query || "");
  const p = path.split("/").filter(Boolean).map(x => { try { return decodeURIComponent(x); } catch (e) { return x; } });
  const go = p[0] === "session" && p[2] === "step" ? () => stepPage(p[1], +p[3])
    : p[0] === "session" && p[2] === "run" ? () => runPage(p[1], +p[3])
    : p[0] === "session" ? () => sessionPage(p[1], +(q.get("page") || 0), q.get("sel"), false, q.get("run"))
    : p[0] === "fleets" ? fleetsPage
    : p[0] === "fleet" && p[2] === "cell" ? () => cellPage(p[1], p.slice(3).join("/"))
    : p[0] === "fleet" ? () => fleetPage(p[1])
    : p[0] === "compare" ? () => comparePage(p.slice(1))
    : p[0] === "pair" ? () => pairPage(p[1], p[2], +(p[3] || 1))
    : sessionsPage;
  go().catch(fail);
}
window.addEventListener("hashchange", route);
function poll(f) {
  if (MODE !== "live") return;
  const nav = navigation;
  pollTimer = setTimeout(() => { if (nav === navigation) f().catch(e => status(String(e.message))); }, POLL_MS);
}

// ---- sessions --------------------------------------------------------------------------
function usedModel(s) { return !!(s.model_name || s.model_calls); }
function costTitle(c) {   // why a cost is a lower bound or unknown
  return c.model_cost_unknown_calls ? c.model_cost_unknown_calls + " of " + c.model_calls + " calls without a known cost (no model.price, or no usage reported)" : null;
}
const listState = { key: "started", dir: -1, filter: "", verdict: "" };
async function sessionsPage() {
  const nav = navigation;
  const data = await api(apiPath("sessions"));
  if (nav !== navigation) return;
  const rows = data.sessions.map(s => ({ ...s, verdictText: s.live ? "running" : (s.verdict && s.verdict.verdict) || "" }));
  const f = listState.filter.toLowerCase();
  const shown = rows.filter(s => (!f || [s.id, s.profile, s.policy, s.game, s.reason, s.fleet, s.model_name, s.character].join(" ").toLowerCase().includes(f))
    && (!listState.verdict || s.verdictText === listState.verdict));
  const filter = el("input", { id: "filter", type: "search", placeholder: "filter: id, profile, policy, game, reason, model", value: listState.filter, size: 40 });
  filter.addEventListener("input", () => { listState.filter = filter.value; sessionsPage().then(() => { const n = document.getElementById("filter"); n.focus(); n.setSelectionRange(n.value.length, n.value.length); }); });
  const vsel = el("select", { id: "verdict-filter" }, ["", "running", "intact", "incomplete", "damaged"].map(v =>
    el("option", { value: v, selected: v === listState.verdict }, v || "any verification")));
  vsel.addEventListener("change", () => { listState.verdict = vsel.value; sessionsPage(); });
  const cols = [
    { key: "id", label: "session", sort: true, cell: s => el("a", { href: "#/session/" + enc(s.key), class: "session-link" }, s.id) },
    { key: "game", label: "game", sort: true, cell: s => s.game },
    { key: "profile", label: "profile", sort: true, cell: s => s.profile ?? "–" },
    { key: "policy", label: "policy", sort: true, cell: s => s.policy ?? "–" },
    { key: "started", label: "started (UTC)", sort: true, cell: s => (s.started || "–").replace("T", " ").slice(0, 19) },
    { key: "duration_s", label: "duration", sort: true, num: true, cell: s => dur(s.duration_s) },
    { key: "steps", label: "steps", sort: true, num: true, cell: s => el("span", { class: "steps" }, s.steps) },
    { key: "runs", label: "runs", sort: true, cell: s => s.runs ? [s.runs + " (" + s.wins + " won) ", s.run_outcomes.slice(-5).map(o => badge(o))] : "–" },
    { key: "reason", label: "exit", sort: true, cell: s => s.live ? "–" : (s.reason ?? "no session_end") },
    { key: "verdictText", label: "evidence", sort: true, cell: s => [verdictBadge(s.verdict, s.live),
        s.verdict && s.verdict.first ? el("div", { class: "muted kv" }, short(s.verdict.first.where, 60)) : null] },
    { key: "restarts", label: "restarts", sort: true, num: true },
    { key: "model_errors", label: "model errors", sort: true, num: true, cell: s => s.model_errors ? el("span", { class: "error" }, s.model_errors) : (s.model_answers ? "0" : "–") },
    { key: "model_name", label: "model", sort: true, cell: s => s.model_name ?? "–" },
    { key: "model_tokens", label: "tokens", sort: true, num: true, cell: s => el("span", { class: "tokens", "data-tokens": s.model_tokens }, usedModel(s) ? s.tokens_text : "–") },
    { key: "model_cost_usd", label: "cost", sort: true, num: true, cell: s => el("span", { class: "cost", "data-usd": s.model_cost_usd, title: costTitle(s) }, usedModel(s) ? s.cost_text : "–") },
  ];
  main(
    el("h1", {}, "Sessions ", el("span", { class: "muted", id: "session-count" }, String(rows.length))),
    el("div", { class: "controls" }, filter, vsel, el("span", { class: "muted" }, shown.length + " shown")),
    table(cols, shown, { id: "sessions", state: listState, onSort: () => sessionsPage() }));
  status(MODE === "live" ? "live · updated " + new Date().toLocaleTimeString() : "bundle");
  poll(sessionsPage);
}

// ---- one session -----------------------------------------------------------------------
const OUT_COLORS = { hp: "#c0392b", max_hp: "#e6a0a0", gold: "#b7950b", floor: "#2457a6", act: "#7d3c98", deck: "#138d75", frame: "#555" };
function markerLines(markers) {
  return u => {
    const ctx = u.ctx; ctx.save();
    for (const m of markers) {
      const x = u.valToPos(m.step + 1, "x", true);
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
      ctx.strokeStyle = m.kind === "run_start" ? "#2457a6" : m.kind === "session_end" ? "#555" : "#d35400";
      ctx.setLineDash([4, 3]); ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
    }
    ctx.restore();
  };
}
function chart(target, title, xs, series, markers, onPick) {
  const width = Math.max(400, target.clientWidth || 900);
  const scales = {}; const axes = [{ label: "step" }];
  series.forEach((s, i) => {
    if (!scales[s.scale]) { scales[s.scale] = {}; axes.push({ scale: s.scale, side: Object.keys(scales).length > 1 ? 1 : 3, label: s.axis || s.label, grid: { show: i === 0 } }); }
  });
  const box = el("div", { class: "chart" }, el("h3", {}, title));
  target.appendChild(box);
  const u = new uPlot({
    width, height: 190, scales: { x: { time: false }, ...scales }, axes,
    series: [{ label: "step" }, ...series.map(s => ({ label: s.label, stroke: s.color, scale: s.scale, width: 1.5, spanGaps: false, points: { show: false } }))],
    hooks: { draw: [markerLines(markers)] }, cursor: { drag: { x: true, y: false } },
  }, [xs, ...series.map(s => s.values)], box);
  u.over.addEventListener("click", () => { const i = u.cursor.idx; if (i !== null && i !== undefined) onPick(i); });
  charts.push(u);
}
function drawCharts(target, key, s, markers) {
  target.replaceChildren();
  const c = s.columns; if (!c.step || !c.step.length) { target.appendChild(el("p", { class: "muted" }, "no steps yet")); return; }
  const pick = i => { const idx = c.index[i]; location.hash = "#/session/" + enc(key) + "?page=" + Math.floor(idx / PAGE) + "&sel=" + idx; };
  const has = n => s.shown.includes(n);
  const mk = (n, scale, axis) => ({ label: s.labels[n], values: c[n], color: OUT_COLORS[n], scale, axis });
  if (has("hp") || has("gold")) chart(target, "HP, max HP and gold", c.step,
    [has("hp") && mk("hp", "hp", "HP"), has("max_hp") && mk("max_hp", "hp", "HP"), has("gold") && mk("gold", "gold", "gold")].filter(Boolean), markers, pick);
  if (has("floor") || has("deck")) chart(target, "floor, act and combat deck", c.step,
    [has("floor") && mk("floor", "floor", "floor / act"), has("act") && mk("act", "floor", "floor / act"), has("deck") && mk("deck", "deck", "cards")].filter(Boolean), markers, pick);
  if (has("frame")) chart(target, "emulator frame", c.step, [mk("frame", "frame", "frame")], markers, pick);
  chart(target, "latency (ms): decision, request, whole step", c.step, [
    { label: "decision", values: c.decide_ms, color: "#7d3c98", scale: "ms", axis: "ms" },
    { label: "request", values: c.request_ms, color: "#2457a6", scale: "ms", axis: "ms" },
    { label: "step", values: c.step_ms, color: "#999", scale: "ms", axis: "ms" }], markers, pick);
  if (s.stride > 1) target.appendChild(el("p", { class: "muted kv" }, "charts show every " + s.stride + "th step of " + s.total + " (each bucket's last); zoom by dragging"));
}

function groupFor(groups, idx) {
  let lo = 0, hi = groups.length - 1;
  while (lo <= hi) { const m = (lo + hi) >> 1; if (groups[m].last < idx) lo = m + 1; else if (groups[m].first > idx) hi = m - 1; else return groups[m]; }
  return null;
}
function groupLabel(g) {
  if (!g) return "";
  const parts = [g.run ? "run " + g.run : "before the first run"];
  if (g.act !== null) parts.push("act " + g.act);
  if (g.floor !== null) parts.push("floor " + g.floor);
  return parts.join(" · ");
}
function outcomeCell(p) {
  if (!p) return "–";
  const r = p.result;
  if (r) return [badge(r.outcome), r.rejection ? el("div", { class: "rejection" }, r.rejection) : null, r.error ? el("div", { class: "rejection" }, r.error) : null];
  return p.status ? badge(p.status, p.status === "execute" ? "waiting" : "stopped") : "–";
}
function stepRows(key, pageData, groups, sel, emu) {
  const out = []; let lastGroup = null;
  for (const s of pageData.steps) {
    const g = groupFor(groups, s.index);
    if (g && g !== lastGroup) {
      out.push(el("tr", { class: "group" }, el("td", { colspan: 9 }, groupLabel(g),
        g.hp_start !== null ? el("span", { class: "muted" }, "  HP " + g.hp_start + " → " + g.hp_end + (g.damage ? " (−" + g.damage + " taken)" : "")) : null)));
      lastGroup = g;
    }
    for (const m of s.markers || []) out.push(el("tr", { class: "marker" }, el("td", { colspan: 9 }, "⚑ " + m.kind + " ", el("span", { class: "muted" }, short(JSON.stringify(m.detail), 200)))));
    const p = (s.proposals || [])[0];
    const inputs = emu && p && p.parameters ? [(p.parameters.buttons || []).join("+") || "no buttons", " × ", p.parameters.frames ?? "?", " frames"] : null;
    out.push(el("tr", { class: "step" + (String(s.index) === String(sel) ? " sel" : ""), id: "step-" + s.index },
      el("td", { class: "num" }, el("a", { href: "#/session/" + enc(key) + "/step/" + s.index, class: "step-link" }, s.step)),
      el("td", {}, s.state_type ?? "–", emu && s.frame ? el("div", {}, el("img", { class: "thumb", alt: "frame " + s.frame.frame, src: asset(apiPath("frame", { key, name: s.frame.name })) })) : null),
      el("td", {}, p ? (p.action ?? el("span", { class: "muted" }, "(none)")) : "–"),
      el("td", { class: "params" }, inputs || (p && p.parameters && Object.keys(p.parameters).length ? JSON.stringify(p.parameters) : "")),
      el("td", { class: "reason" }, p ? p.reason : "", p && p.model_evidence && p.model_evidence.length ? el("div", {}, badge("model ×" + p.model_evidence.length, "waiting")) : null),
      el("td", {}, p ? p.source : ""),
      el("td", {}, outcomeCell(p)),
      el("td", { class: "num" }, p && p.result ? num(p.result.request_ms, 1) : "–"),
      el("td", { class: "num" }, p ? num(p.decide_ms, 2) : "–")));
  }
  return out;
}

let shownSession = { key: null, sig: null, emu: null };
function signature(s) {
  const v = s.verdict || {};
  return [s.steps, s.figures_read, s.journal_bytes, s.live, v.state, v.verdict, v.count].join("|");
}
function score3(x) { return x === null || x === undefined ? "–" : x.toFixed(3); }
function scoreFact(s) {   // a session's score: STS2 progress score, or a Game Boy cartridge's
  if (s.score_final !== null && s.score_final !== undefined)
    return el("span", { id: "score" }, "final " + s.score_final + " · best " + num(s.score_best) + " · milestones " + num(s.milestones_reached) +
      (s.game_over_frame !== null && s.game_over_frame !== undefined ? " · game over at frame " + s.game_over_frame : ""));
  if (s.progress_score === null || s.progress_score === undefined) return "–";
  return el("span", { id: "score" }, "progress " + score3(s.progress_score) + (s.scored_runs === "unfinished" ? " (the run being played)" : " (mean of the ended runs)") +
    " · floor " + num(s.floor) + " · bosses " + num(s.bosses) + " · elites " + num(s.elites));
}
function hpEnd(r) { return r.hp_end === null || r.hp_end === undefined ? "–" : r.hp_end + (r.max_hp ? " / " + r.max_hp : ""); }
function seededText(r) { return r.seeded === true ? "yes" : r.seeded === false ? "no" : "–"; }
function runRows(s) {   // the ended runs, numbered, and the one being played
  const rows = s.runs_detail.map((r, i) => ({ ...r, n: i + 1 }));
  if (s.run_in_progress) rows.push({ ...s.run_in_progress, n: rows.length + 1, outcome: "unfinished", step: null });
  return rows;
}
async function runPage(key, n) {   // #/session/KEY/run/N: the session page at run N's first step, its row marked
  const s = await api(apiPath("session", { key }));
  const start = (s.run_starts || [])[n - 1];
  const idx = start ? start.index : null;
  return sessionPage(key, idx === null ? 0 : Math.floor(idx / PAGE), idx, false, n);
}
async function sessionPage(key, pageNo, sel, polled, runSel) {
  const here = navigation;
  const s0 = await api(apiPath("session", { key }));
  if (polled && shownSession.key === key && shownSession.sig === signature(s0)) {   // nothing new
    poll(() => sessionPage(key, pageNo, sel, true, runSel));
    return;
  }
  const s = s0;
  const series = await api(apiPath("series", { key }));
  const total = s.steps === undefined ? 0 : Math.max(s.steps, series.total);
  const pages = Math.max(1, Math.ceil(series.total / PAGE));
  pageNo = Math.min(Math.max(0, pageNo), pages - 1);
  const pageData = await api(apiPath("page", { key, offset: pageNo * PAGE }));
  if (here !== navigation) return;
  const emu = s.backend === "pyboy" || !!s.emulator;
  const v = s.verdict;
  const summaryJson = s.session_json || {};
  const facts = el("div", { class: "facts" },
    [["game", s.game], ["profile", s.profile ?? "–"], ["policy", s.policy ?? "–"], ["started (UTC)", (s.started || "–").replace("T", " ").slice(0, 19)],
     ["duration", dur(s.duration_s)], ["steps", el("b", { id: "step-count" }, String(series.total))], ["actions", s.accepted + " accepted · " + s.rejected + " rejected · " + s.unknown + " unknown"],
     ["exit", s.live ? "running" : (s.reason ?? "no session_end")], ["restarts", s.restarts],
     ["runs", s.runs ? s.runs + " ended, " + s.wins + " won" + (s.runs_inferred ? " (" + s.runs_inferred + " inferred from HP)" : "") : (s.runs_entered ? s.runs_entered + " entered, none ended" : "–")],
     ["model", usedModel(s) || s.model.errors ? [s.model_name ?? "", " · ", s.model.calls + " answers · " + s.model.errors + " errors · " + s.model.fallbacks + " heuristic fallbacks"] : "–"],
     ["model tokens", usedModel(s) ? [el("span", { id: "model-tokens", "data-tokens": s.model_tokens }, s.tokens_text), s.model_cached_tokens ? " (" + s.model_cached_tokens + " cached)" : ""] : "–"],
     ["model cost", usedModel(s) ? [el("span", { id: "model-cost", "data-usd": s.model_cost_usd, title: costTitle(s) }, s.cost_text), " · ", el("span", { id: "model-cost-run" }, s.cost_per_run_text), " per run · ", el("span", { id: "model-cost-win" }, s.cost_per_win_text), " per win",
       s.model_cost_unknown_calls ? el("div", { class: "muted" }, costTitle(s)) : null] : "–"],
     ["character", s.character ?? "–"], ["score", scoreFact(s)],
     ["journal", s.journal_lines + " lines, " + (s.journal_bytes / 1e6).toFixed(1) + " MB"]].map(([k, val]) => el("div", {}, el("span", {}, k), val)));
  const evidence = el("div", { class: "panel", id: "evidence" }, el("b", {}, "Evidence: "), verdictBadge(v, s.live),
    v && v.first ? el("span", { id: "verdict-where" }, " at " + v.first.where + ": " + v.first.message) : null,
    v && v.state === "done" && v.verdict === "intact" ? el("span", { class: "muted" }, " hash chain, sequences, join keys and observation files check out (capture verify)") : null,
    s.torn_tail ? el("div", { class: "error" }, "the journal ends in a row still being written (or torn)") : null,
    s.problem ? el("div", { class: "error" }, s.problem) : null,
    v && v.count > 1 ? el("div", {}, el("a", { href: "#/session/" + enc(key) + "/step/0?verify=1", id: "findings-link" }, v.count + " findings")) : null);
  const chartBox = el("div", { class: "charts", id: "charts" });
  const fig = s.figures_read < series.total ? el("p", { class: "muted kv" }, "reading observation figures: " + s.figures_read + " of " + series.total) : null;
  const groupTable = table([
    { key: "run", label: "run", num: true }, { key: "act", label: "act", num: true }, { key: "floor", label: "floor", num: true },
    { key: "first_step", label: "steps", cell: g => el("a", { href: "#/session/" + enc(key) + "?page=" + Math.floor(g.first / PAGE) + "&sel=" + g.first }, (g.first + 1) + "–" + (g.last + 1)) },
    { key: "hp", label: "HP", cell: g => g.hp_start === null ? "–" : g.hp_start + " → " + g.hp_end + " / " + num(g.max_hp) },
    { key: "damage", label: "HP lost", num: true, class: "damage", cell: g => el("span", { class: "hp-lost" }, String(g.damage || 0)) },
    { key: "hp_min", label: "lowest HP", num: true }, { key: "gold", label: "gold", cell: g => g.gold_start === null ? "–" : g.gold_start + " → " + g.gold_end },
  ], s.groups.filter(g => g.floor !== null || g.act !== null), { id: "groups" });
  const markers = s.markers.filter(m => m.kind !== "session_end");
  const nav = el("div", { class: "controls" },
    el("a", { href: pageNo > 0 ? "#/session/" + enc(key) + "?page=" + (pageNo - 1) : null, id: "prev" }, "← previous"),
    el("span", { id: "page-of" }, "page " + (pageNo + 1) + " of " + pages + " (steps " + (pageNo * PAGE + 1) + "–" + Math.min(series.total, (pageNo + 1) * PAGE) + ")"),
    el("a", { href: pageNo + 1 < pages ? "#/session/" + enc(key) + "?page=" + (pageNo + 1) : null, id: "next" }, "next →"),
    (() => { const i = el("input", { type: "number", min: 1, max: series.total, placeholder: "go to step", id: "goto" });
      i.addEventListener("change", () => { const idx = Math.max(0, +i.value - 1); location.hash = "#/session/" + enc(key) + "?page=" + Math.floor(idx / PAGE) + "&sel=" + idx; }); return i; })());
  const steps = el("table", { id: "timeline" },
    el("thead", {}, el("tr", {}, ["step", "screen", "action", emu ? "inputs" : "parameters", "reason", "source", "outcome", "request ms", "decide ms"].map(h => el("th", {}, h)))),
    el("tbody", {}, stepRows(key, pageData, s.groups, sel, emu)));
  main(
    el("h1", {}, s.id, " ", s.live ? badge("running", "live") : null),
    s.fleet ? el("p", {}, "fleet ", el("a", { href: "#/fleet/" + enc(s.fleet) }, s.fleet)) : null,
    el("div", { class: "panel" }, facts), evidence,
    el("h2", {}, "Charts"), fig, chartBox,
    emu ? (shownSession.key === key && shownSession.emu ? shownSession.emu : el("div", { id: "emulator" })) : null,
    groupTable.querySelector("tbody").children.length ? [el("h2", {}, "Runs, acts and floors"), groupTable] : null,
    markers.length ? [el("h2", {}, "Supervision and run events (" + s.marker_count + ")"), table([
      { key: "kind", label: "event", cell: m => badge(m.kind, ["killed", "give_up", "model_error", "read_error"].includes(m.kind) ? "error" : "waiting") },
      { key: "step", label: "at step", num: true, cell: m => el("a", { href: "#/session/" + enc(key) + "?page=" + Math.floor(Math.max(0, m.step) / PAGE) + "&sel=" + m.step }, m.step + 1) },
      { key: "line", label: "journal line", num: true }, { key: "detail", label: "detail", cell: m => short(JSON.stringify(m.detail), 300) }], markers.slice(0, 500), { id: "markers" })] : null,
    runRows(s).length ? [el("h2", {}, "Runs"), table([
      { key: "n", label: "run", num: true, cell: r => el("a", { href: "#/session/" + enc(key) + "/run/" + r.n, class: "run-link" }, r.n) },
      { key: "step", label: "ended at step", num: true, cell: r => num(r.step) }, { key: "outcome", label: "outcome", cell: r => badge(r.outcome, r.outcome === "unfinished" ? "waiting" : r.outcome) },
      { key: "inferred_from", label: "how known", cell: r => r.outcome === "unfinished" ? "still being played" : r.inferred_from ? "inferred from " + r.inferred_from : "stated" },
      { key: "floor", label: "floor", num: true, cell: r => el("span", { class: "run-floor" }, num(r.floor)) }, { key: "act", label: "act", num: true },
      { key: "bosses", label: "bosses", num: true, cell: r => el("span", { class: "run-bosses" }, num(r.bosses)) },
      { key: "elites", label: "elites", num: true, cell: r => el("span", { class: "run-elites" }, num(r.elites)) },
      { key: "hp_end", label: "HP at the end", num: true, cell: r => el("span", { class: "run-hp" }, hpEnd(r)) },
      { key: "progress_score", label: "progress score", num: true, cell: r => el("span", { class: "run-score" }, score3(r.progress_score)) },
      { key: "seeded", label: "seeded", cell: r => seededText(r) }], runRows(s), { id: "runs" }),
      el("p", { class: "muted kv" }, "Progress score: 0.5 × min(floor, 50) / 50 + 0.5 × min(bosses, 3) / 3 (the Orak benchmark's Slay the Spire score). Seeded: the policy's run_seed applied to the run (– without a mark).")] : null,
    el("h2", {}, "Steps"), nav, steps);
  drawCharts(chartBox, key, series, markers);
  if (emu && !(shownSession.key === key && shownSession.emu)) {
    shownSession.emu = document.getElementById("emulator");
    emulatorPanel(key, shownSession.emu).catch(e => shownSession.emu.appendChild(el("p", { class: "error" }, e.message)));
  }
  if (shownSession.key !== key) shownSession.emu = emu ? document.getElementById("emulator") : null;
  shownSession.key = key; shownSession.sig = signature(s);
  if (runSel) { const row = document.querySelectorAll("#runs tbody tr")[+runSel - 1]; if (row) { row.classList.add("sel"); row.id = "run-sel"; row.scrollIntoView({ block: "center" }); } }
  else if (sel !== null && sel !== undefined) { const row = document.getElementById("step-" + sel); if (row) row.scrollIntoView({ block: "center" }); }
  status(MODE === "live" ? (s.live ? "live · following the journal" : "finished") : "bundle");
  if (s.live || !v || v.state !== "done" || s.figures_read < series.total) poll(() => sessionPage(key, pageNo === pages - 1 && s.live ? 1e9 : pageNo, sel, true, runSel));
}

async function emulatorPanel(key, box) {
  const e = await api(apiPath("emulator", { key }));
  if (!e.recording) { box.appendChild(el("p", { class: "muted" }, e.problem)); return; }
  const r = e.recording;
  box.appendChild(el("h2", {}, "Recording"));
  box.appendChild(el("div", { class: "panel facts" }, [["status", r.status], ["ROM", (r.rom && r.rom.title) || "–"], ["frames", r.frame], ["actions", r.actionCount],
    ["retained frames", e.samples_total], ["checkpoints", r.checkpointCount], ["branches", r.branchCount], ["lost intervals", r.lostIntervals.length]].map(([k, v]) => el("div", {}, el("span", {}, k), v))));
  box.appendChild(el("h2", {}, "Retained frames along the timeline"));
  box.appendChild(el("div", { class: "strip", id: "strip" }, e.samples.filter(x => x.png).slice(0, 400).map(x =>
    el("figure", {}, el("img", { src: asset(apiPath("frame", { key, name: x.png })), alt: "frame " + x.frame, title: x.branchId + " action " + x.actionIndex }),
      el("figcaption", {}, "frame " + x.frame + " · action " + x.actionIndex)))));
  if (e.checkpoints.length) box.appendChild(table(Object.keys(e.checkpoints[0]).map(k => ({ key: k, label: k, cell: c => num(c[k]) })), e.checkpoints, { id: "checkpoints" }));
  if (e.branches.length) box.appendChild(table(Object.keys(e.branches[0]).map(k => ({ key: k, label: k, cell: c => num(c[k]) })), e.branches, { id: "branches" }));
  if (MODE !== "live") { box.appendChild(el("p", { class: "muted" }, "contact sheets and GIFs of an interval are made by the live viewer (supervisor view)")); return; }
  const branches = [e.current_branch, ...e.branches.map(b => b.branchId)].filter((b, i, a) => b && a.indexOf(b) === i);
  const bsel = el("select", { id: "iv-branch" }, branches.map(b => el("option", { value: b }, b)));
  const from = el("input", { id: "iv-from", type: "number", min: 0, value: 0, size: 6 });
  const to = el("input", { id: "iv-to", type: "number", min: 0, value: Math.min(r.actionIndex, 60), size: 6 });
  const sf = el("input", { id: "iv-start", type: "number", min: 0, value: (e.samples[0] || {}).frame ?? 0, size: 6 });
  const ef = el("input", { id: "iv-end", type: "number", min: 0, value: (e.samples[Math.min(e.samples.length - 1, 5)] || {}).frame ?? 0, size: 6 });
  const out = el("div", { id: "iv-out" });
  async function show(url, alt) {
    out.replaceChildren(el("p", { class: "muted" }, "working…"));
    const resp = await fetch(url, { cache: "no-store" });
    if (!resp.ok) { const b = await resp.json().catch(() => ({})); out.replaceChildren(el("p", { class: "error", id: "iv-error" }, b.error || ("HTTP " + resp.status))); return; }
    const blob = await resp.blob();
    out.replaceChildren(el("img", { class: "sheet", id: "iv-image", alt, src: URL.createObjectURL(blob) }));
  }
  const sheetBtn = el("button", { id: "iv-sheet" }, "contact sheet");
  sheetBtn.addEventListener("click", () => show(apiPath("sheet", { key, branch: bsel.value, first: from.value, last: to.value }), "contact sheet"));
  const gifBtn = el("button", { id: "iv-gif" }, "GIF");
  gifBtn.addEventListener("click", () => show(apiPath("gif", { key, branch: bsel.value, start: sf.value, end: ef.value }), "GIF"));
  box.appendChild(el("h2", {}, "An interval"));
  box.appendChild(el("div", { class: "controls" }, "branch", bsel, "actions (", from, ",", to, "]", sheetBtn, " · retained frames", sf, "to", ef, gifBtn));
  box.appendChild(el("p", { class: "muted kv" }, "The same code, limits and refusals as supervisor capture review --contact-sheet and capture clip; nothing is written."));
  box.appendChild(out);
}

// ---- one step ----------------------------------------------------------------------------
function callCost(u) {   // one call's usage.cost_usd; unknown (with why) is never shown as 0
  if (!u) return "unknown";
  return typeof u.cost_usd === "number" ? "$" + u.cost_usd.toFixed(6) : "unknown" + (u.cost_unknown ? " (" + u.cost_unknown + ")" : "");
}
async function stepPage(key, i) {
  const [d, s] = await Promise.all([api(apiPath("step", { key, index: i })), api(apiPath("session", { key }))]);
  const verify = location.hash.includes("verify=1") ? await api(apiPath("verify", { key })) : null;
  const prevNext = el("div", { class: "controls" },
    el("a", { href: "#/session/" + enc(key) + "?page=" + Math.floor(i / PAGE) + "&sel=" + i }, "↑ timeline"),
    i > 0 ? el("a", { href: "#/session/" + enc(key) + "/step/" + (i - 1), id: "prev-step" }, "← step " + i) : null,
    i + 1 < s.steps ? el("a", { href: "#/session/" + enc(key) + "/step/" + (i + 1), id: "next-step" }, "step " + (i + 2) + " →") : null);
  const evidence = [];
  for (const r of d.rows) for (const e of r.row.model_evidence || []) evidence.push(e);
  main(
    el("h1", {}, "Step " + d.step + " ", el("span", { class: "muted" }, "of " + s.id)), prevNext,
    verify ? [el("h2", {}, "Verifier findings (" + (verify.count ?? 0) + ")"), table([
      { key: "severity", label: "severity", cell: f => badge(f.severity, f.severity === "note" ? "waiting" : f.severity) },
      { key: "where", label: "where" }, { key: "message", label: "finding" }], verify.findings || [], { id: "findings" })] : null,
    el("h2", {}, "Observation ", el("span", { class: "muted" }, d.observation_path || "")),
    el("p", { id: "hash-status", class: d.hash_ok ? "" : "error" }, d.hash_ok ? "✓ sha256 " + d.sha256.slice(0, 16) + "… matches the journal row" : "✗ " + (d.problem || "not checked")),
    d.emulator && d.observation && d.observation.frame_png ? el("img", { class: "sheet", alt: "frame", src: asset(apiPath("frame", { key, name: d.observation.frame_png.split("/").pop() })) }) : null,
    el("pre", { class: "json", id: "observation" }, d.observation === null ? "(not readable)" : json(d.observation)),
    evidence.length ? [el("h2", {}, "Model evidence"), evidence.map(e => el("div", { class: "panel model-evidence" },
      el("div", { class: "kv" }, "model " + ((e.request || {}).model ?? "?") + " · " + ((e.request || {}).question_kind ?? "") + " · tokens " + num((e.usage || {}).total_tokens) + " · cost " + callCost(e.usage) + " · latency " + num((e.usage || {}).latency_ms) + " ms · attempts " + num(e.attempts)),
      el("pre", { class: "json" }, json({ questions: (e.request || {}).questions, answers: e.answers, error: e.message || e.error }))))] : null,
    el("h2", {}, "Journal rows"),
    el("div", { id: "rows" }, d.rows.map(r => el("div", {}, el("div", { class: "kv muted" }, "line " + (r.line ?? "?") + " · seq " + r.row.sequence + " · " + r.row.event),
      el("pre", { class: "json" }, json(r.row))))));
  status(MODE === "live" ? "live" : "bundle");
}

// ---- fleets ------------------------------------------------------------------------------
async function fleetsPage() {
  const d = await api(apiPath("fleets"));
  main(el("h1", {}, "Fleets"), d.fleets.length ? table([
    { key: "name", label: "fleet", cell: f => el("a", { href: "#/fleet/" + enc(f.key) }, f.name) },
    { key: "state", label: "state", cell: f => f.state ?? "–" }, { key: "finished", label: "finished", num: true, cell: f => f.finished + " / " + num(f.sessions) },
    { key: "matrix", label: "matrix", cell: f => f.matrix ? Object.keys(f.matrix).join(", ") : "–" }], d.fleets, { id: "fleets" })
    : el("p", { class: "muted" }, "no fleet root among the given paths (give one: supervisor view run/capture/fleets/NAME-...)"),
    d.fleets.length > 1 ? compareFleetsForm(d.fleets) : null);
  status(MODE === "live" ? "live" : "bundle");
}
function compareFleetsForm(fleets, current) {
  const a = el("select", { id: "cmp-a" }, fleets.map(f => el("option", { value: f.key, selected: f.key === current }, f.name)));
  const b = el("select", { id: "cmp-b" }, fleets.map((f, i) => el("option", { value: f.key, selected: i === (fleets[0].key === current ? 1 : 0) }, f.name)));
  const go = el("button", { id: "cmp-fleets" }, "compare fleets");
  go.addEventListener("click", () => { location.hash = "#/compare/fleets/" + enc(a.value) + "/" + enc(b.value); });
  return el("div", { class: "controls" }, "compare", a, "with", b, go);
}
function ciText(c) { return c.win_rate_ci95 ? pct(c.win_rate_ci95[0]) + "–" + pct(c.win_rate_ci95[1]) : "–"; }
function ci3(c) { return c ? score3(c[0]) + " – " + score3(c[1]) : "–"; }
function scoreColumns(rows) {   // the progress score per group (mean, median, 95 % t interval); a Game Boy score
  const out = [];
  if (rows.some(c => c.progress_n)) out.push(
    { key: "progress_mean", label: "progress score mean", num: true, cell: c => el("span", { class: "progress-mean" }, score3(c.progress_mean)) },
    { key: "progress_median", label: "median", num: true, cell: c => el("span", { class: "progress-median" }, score3(c.progress_median)) },
    { key: "progress_ci95", label: "95 % interval (t)", num: true, cell: c => el("span", { class: "progress-ci" }, ci3(c.progress_ci95)) },
    { key: "progress_bosses", label: "bosses", num: true }, { key: "progress_elites", label: "elites", num: true });
  if (rows.some(c => c.scored_sessions)) out.push(
    { key: "score_final_mean", label: "Game Boy final score (mean)", num: true, cell: c => el("span", { class: "gb-final" }, num(c.score_final_mean)) },
    { key: "score_best", label: "best score", num: true, cell: c => el("span", { class: "gb-best" }, num(c.score_best)) },
    { key: "game_over_sessions", label: "game over", num: true });
  return out;
}
function aggTable(rows, key, id, money, fleetKey) {
  const cost = !money ? [] : [
    { key: "model_tokens", label: "model tokens", num: true, cell: c => el("span", { class: "tokens", "data-tokens": c.model_tokens }, c.tokens_text) },
    { key: "model_cost_usd", label: "cost", num: true, cell: c => el("span", { class: "cost", "data-usd": c.model_cost_usd, title: costTitle(c) }, c.cost_text) },
    { key: "cost_per_run", label: "cost per run", num: true, cell: c => el("span", { class: "cost-run", "data-usd": c.cost_per_run }, c.cost_per_run_text) },
    { key: "cost_per_win", label: "cost per win", num: true, cell: c => el("span", { class: "cost-win", "data-usd": c.cost_per_win }, c.cost_per_win_text) }];
  return table([
    { key, label: key === "cell" ? "cell" : key, cell: c => key === "cell" && fleetKey ? el("a", { href: "#/fleet/" + enc(fleetKey) + "/cell/" + enc(c.cell), class: "cell-link" }, c.cell) : c[key] },
    { key: "sessions", label: "sessions", num: true }, { key: "ok", label: "ok", num: true },
    { key: "failed", label: "failed", num: true }, { key: "needs_review", label: "review", num: true },
    { key: "steps", label: "steps", num: true }, { key: "runs", label: "runs", num: true }, { key: "wins", label: "wins", num: true },
    { key: "win_rate", label: "win rate", num: true, cell: c => el("span", { class: "win-rate" }, pct(c.win_rate)) },
    { key: "ci", label: "95 % interval (Wilson)", num: true, cell: c => el("span", { class: "win-ci" }, ciText(c)) },
    { key: "floor_mean", label: "mean floor ± SE", num: true, cell: c => c.floor_mean === null ? "–" : num(c.floor_mean, 2) + " ± " + (c.floor_se === null ? "–" : num(c.floor_se, 2)) },
    ...scoreColumns(rows), ...cost], rows, { id });
}
function pricesText(prices) {
  const names = Object.keys(prices || {});
  if (!names.length) return "none in the fleet file (a session's own model.price, if any, is in its profile)";
  return names.map(n => n + ": $" + prices[n].input_per_mtok + " in / $" + prices[n].output_per_mtok + " out" +
    (prices[n].cached_input_per_mtok !== undefined && prices[n].cached_input_per_mtok !== null ? " / $" + prices[n].cached_input_per_mtok + " cached" : "") + " per million tokens").join(" · ");
}
async function fleetPage(key) {
  const nav = navigation;
  const [d, all] = await Promise.all([api(apiPath("fleet", { key })), api(apiPath("fleets"))]);
  if (nav !== navigation) return;
  const cells = {}; for (const s of d.sessions) (cells[s.cell] = cells[s.cell] || []).push(s);
  const matrix = el("table", { class: "matrix", id: "matrix" }, el("thead", {}, el("tr", {}, el("th", {}, "cell"), el("th", {}, "sessions (by outcome)"))),
    el("tbody", {}, Object.entries(cells).map(([cell, ss]) => el("tr", {}, el("td", {}, el("a", { href: "#/fleet/" + enc(key) + "/cell/" + enc(cell) }, cell)), el("td", { class: "cellbox" },
      ss.map(s => el("a", { class: "o-" + s.outcome, href: s.session ? "#/session/" + enc(s.session) : null, title: s.outcome + (s.reason ? ": " + s.reason : "") + " · " + s.steps + " steps" + (s.calls || s.model ? " · " + s.tokens_text + " tokens · " + s.cost_text : "") }, s.wins ? "W" : (s.runs ? "L" : "·"))))))));
  const groupCompare = d.group_keys.length ? (() => {
    const first = d.policy_key || (d.group_keys.includes("model.model") ? "model.model" : d.group_keys[0]);
    const col = el("select", { id: "grp-col" }, d.group_keys.map(k => el("option", { value: k, selected: k === first }, k)));
    const va = el("select", { id: "grp-a" }); const vb = el("select", { id: "grp-b" });
    const fill = () => {
      const vals = d.group_values[col.value] || [];
      va.replaceChildren(...vals.map((x, i) => el("option", { value: x, selected: i === 0 }, x)));
      vb.replaceChildren(...vals.map((x, i) => el("option", { value: x, selected: i === 1 }, x)));
    };
    col.addEventListener("change", fill); fill();
    const go = el("button", { id: "grp-go" }, "compare");
    go.addEventListener("click", () => { location.hash = "#/compare/group/" + enc(key) + "/" + enc(col.value) + "/" + enc(va.value) + "/" + enc(vb.value); });
    return el("div", { class: "controls" }, "compare", col, va, "with", vb, go);
  })() : null;
  main(
    el("h1", {}, "Fleet " + d.name + " ", d.state ? badge(d.state, d.state === "finished" ? "ok" : "waiting") : null),
    el("div", { class: "panel kv" }, el("div", {}, "profile ", d.info.profile ?? "–"), el("div", {}, "matrix ", JSON.stringify(d.info.matrix || {})),
      el("div", {}, "sessions ", num(d.info.sessions), " · backend ", d.info.backend ?? "–"),
      d.uses_models ? el("div", { id: "prices" }, "model prices: ", pricesText(d.prices)) : null,
      d.floors_pending ? el("div", { class: "muted" }, "reading floors from " + d.floors_pending + " sessions' observations…") : null),
    el("h2", {}, "Matrix"), matrix,
    el("h2", {}, "Per cell"), aggTable(d.cells, "cell", "cells", d.uses_models, key),
    d.policies ? [el("h2", {}, "Per policy"), aggTable(d.policies, d.policy_key, "policies", d.uses_models)] : el("p", { class: "muted" }, "one policy: " + (d.policy ?? "the profile's")),
    d.models ? [el("h2", {}, "Per model"), aggTable(d.models, d.model_key, "models", true),
      el("p", { class: "muted kv" }, "Cost: the sum of the calls' known costs (the prices above); ≥ when some calls' cost is unknown, unknown when none is known. Per run: per run ended; per win: — with no win.")] : null,
    groupCompare, all.fleets.length > 1 ? compareFleetsForm(all.fleets, key) : null,
    el("h2", {}, "Sessions that need a look (" + d.flagged.length + ")"),
    d.flagged.length ? table([{ key: "slot", label: "slot", cell: s => s.session ? el("a", { href: "#/session/" + enc(s.session) }, s.slot) : s.slot },
      { key: "cell", label: "cell" }, { key: "outcome", label: "outcome", cell: s => badge(s.outcome) }, { key: "why", label: "why", cell: s => s.why.join("; ") }], d.flagged, { id: "flagged" })
      : el("p", { class: "muted", id: "flagged" }, "none: every session ended ok and its evidence verified"),
    d.running.length ? [el("h2", {}, "Running"), el("ul", {}, d.running.map(r => el("li", {}, el("a", { href: "#/session/" + enc(r.session) }, r.session), " · " + r.steps + " steps")))] : null);
  status(MODE === "live" ? "live" : "bundle");
  if (d.running.length || d.floors_pending || d.state !== "finished") poll(() => fleetPage(key));
}

async function cellPage(key, cell) {   // #/fleet/KEY/cell/CELL: one cell's aggregates and its sessions with their scores
  const nav = navigation;
  const d = await api(apiPath("fleet", { key }));
  if (nav !== navigation) return;
  const agg = d.cells.filter(c => c.cell === cell);
  if (!agg.length) throw new Error("fleet " + d.name + " has no cell " + JSON.stringify(cell) + " (cells: " + d.cells.map(c => c.cell).join("; ") + ")");
  const ss = d.sessions.filter(s => s.cell === cell);
  main(
    el("h1", {}, "Cell " + cell + " ", el("span", { class: "muted" }, "of fleet "), el("a", { href: "#/fleet/" + enc(key) }, d.name)),
    aggTable(agg, "cell", "cell-agg", d.uses_models, key),
    el("h2", {}, "Sessions (" + ss.length + ")"),
    table([{ key: "slot", label: "slot", cell: s => s.session ? el("a", { href: "#/session/" + enc(s.session) }, s.slot) : s.slot },
      { key: "outcome", label: "outcome", cell: s => badge(s.outcome) }, { key: "steps", label: "steps", num: true },
      { key: "runs", label: "runs", num: true }, { key: "wins", label: "wins", num: true },
      { key: "progress_score", label: "progress score", num: true, cell: s => el("span", { class: "session-score" }, score3(s.progress_score)) },
      { key: "floor", label: "floor", num: true }, { key: "bosses", label: "bosses", num: true }, { key: "elites", label: "elites", num: true },
      { key: "hp_end", label: "HP at the end", num: true, cell: s => num(s.hp_end) },
      { key: "score_final", label: "Game Boy final / best", num: true, cell: s => s.score_final === null || s.score_final === undefined ? "–" : s.score_final + " / " + num(s.score_best) + " (" + num(s.milestones_reached) + " milestones)" }],
      ss, { id: "cell-sessions" }));
  status(MODE === "live" ? "live" : "bundle");
}

function pairLink(run, x, y) { return "#/pair/" + enc(x.session) + "/" + enc(y.session) + "/" + run; }
function signed(x, digits) { return x === null || x === undefined ? "–" : (x > 0 ? "+" : "") + x.toFixed(digits); }
function pairedSection(d) {   // compare.compare: the paired tests and the pairs, or why the arms do not pair
  const a = d.arms;
  if (!a) return null;
  const la = a.a, lb = a.b;
  const armScores = a.unpaired_tests.metrics.filter(m => m.column === "progress_score" || m.column === "score_final");
  const perArm = armScores.length ? [el("h2", {}, "Score per arm"), table([
    { key: "arm", label: "arm", cell: r => r.arm }, { key: "metric", label: "score", cell: r => r.metric },
    { key: "n", label: "sessions", num: true, cell: r => num(r.s && r.s.n) },
    { key: "mean", label: "mean", num: true, cell: r => el("span", { class: "arm-mean" }, r.s ? r.s.mean.toFixed(3) : "–") },
    { key: "median", label: "median", num: true, cell: r => el("span", { class: "arm-median" }, r.s ? r.s.median.toFixed(3) : "–") },
    { key: "interval", label: "95 % interval of the mean (t)", num: true, cell: r => el("span", { class: "arm-ci" }, r.s && r.s.interval ? ci3(r.s.interval) : "–") }],
    armScores.flatMap(m => [{ arm: la, metric: m.metric, s: m.a }, { arm: lb, metric: m.metric, s: m.b }]), { id: "arm-scores" })] : null;
  if (!a.paired) return [el("div", { class: "panel", id: "pairing" }, el("b", {}, "Not paired: "), el("span", { id: "why-unpaired" }, a.why_unpaired),
    el("div", { class: "muted kv" }, "so the tests below are the unpaired ones (runs and sessions taken as independent)")), perArm];
  const t = a.paired_tests;
  const w = t.wins;
  const run = 1;
  return [
    el("div", { class: "panel", id: "pairing" }, el("b", {}, "Paired by seed: "), el("span", { id: "pair-count" }, String(a.pairs)), " pairs of sessions (",
      a.arm_key === "fleet" ? "the same seeds and matrix values in both fleets" : "the same values of every other matrix key, the seed among them", ")"),
    perArm,
    el("h2", {}, "Paired tests"),
    table([{ key: "metric", label: "metric", cell: r => r.metric }, { key: "pairs", label: "pairs", num: true, cell: r => r.pairs },
      { key: "what", label: "figures", cell: r => r.what }, { key: "interval", label: "95 % interval", num: true, cell: r => r.interval },
      { key: "test", label: "test", cell: r => r.test }, { key: "p", label: "p", num: true, cell: r => r.p === null || r.p === undefined ? "–" : el("span", { class: "p" }, r.p.toPrecision(2)) },
      { key: "sentence", label: "in words", cell: r => el("span", { class: "sentence" }, r.sentence) }],
      [{ metric: "sessions won", pairs: w.pairs, what: el("span", { class: "mcnemar" }, "won by " + la + " only: ", el("b", { class: "mcnemar-b" }, String(w.a_only)), " · by " + lb + " only: ", el("b", { class: "mcnemar-c" }, String(w.b_only)), " · by both: " + w.both),
        interval: "–", test: w.test, p: w.p, sentence: w.sentence },
       ...t.metrics.map(m => ({ metric: m.metric, pairs: m.pairs,
        what: el("span", {}, "mean paired difference (A − B) ", el("b", { class: "mean-diff", "data-column": m.column }, signed(m.mean_difference, 3)), " · " + m.zero_differences + " pairs equal"),
        interval: el("span", { class: "diff-ci", "data-column": m.column }, m.interval ? signed(m.interval[0], 3) + " … " + signed(m.interval[1], 3) + " (Student t interval)" : "–"),
        test: m.test + (m.method ? " (" + m.method + ")" : ""), p: m.p, sentence: m.sentence }))], { id: "paired" }),
    el("p", { class: "muted kv" }, "A pair is two sessions, one per arm, on the same seed; a session counts as won when it won a run, and its score is its runs' mean. Wins: the exact McNemar test on the pairs won by one arm only. Scores and floors: Wilcoxon's signed-rank test on the paired differences, and the 95 % Student t interval of their mean."),
    el("h2", {}, "The pairs"),
    table([{ key: "keys", label: "seed and cell", cell: r => Object.entries(r.keys).map(([k, v]) => k + "=" + v).join(" ") + (r.repeat ? " repeat " + r.repeat : "") },
      { key: "a", label: la, cell: r => [r.a.session ? el("a", { href: "#/session/" + enc(r.a.session) }, r.a.slot || r.a.session_id) : (r.a.slot || "–"), " ", r.a.won ? badge("won") : "", " score " + score3(r.a.progress_score ?? null) + " · floor " + num(r.a.floor)] },
      { key: "b", label: lb, cell: r => [r.b.session ? el("a", { href: "#/session/" + enc(r.b.session) }, r.b.slot || r.b.session_id) : (r.b.slot || "–"), " ", r.b.won ? badge("won") : "", " score " + score3(r.b.progress_score ?? null) + " · floor " + num(r.b.floor)] },
      { key: "diff", label: "score A − B", num: true, cell: r => typeof r.a.progress_score === "number" && typeof r.b.progress_score === "number" ? signed(r.a.progress_score - r.b.progress_score, 3) : "–" },
      { key: "side", label: "", cell: r => r.a.session && r.b.session ? el("a", { href: pairLink(run, r.a, r.b), class: "pair-link" }, "run " + run + " side by side") : "–" }],
      a.pair_list, { id: "pairs" })];
}
async function comparePage(parts) {
  const nav = navigation;
  const [kind, ...rest] = parts;   // #/compare/fleets/A/B or #/compare/group/FLEET/COLUMN/A/B
  const path = kind === "fleets" && rest.length === 2 ? apiPath("compare_fleets", { a: rest[0], b: rest[1] })
    : kind === "group" && rest.length === 4 ? apiPath("compare_group", { fleet: rest[0], column: rest[1], a: rest[2], b: rest[3] })
    : null;
  if (path === null) throw new Error("compare what? #/compare/fleets/A/B or #/compare/group/FLEET/KEY/A/B");
  const d = await api(path);
  if (nav !== navigation) return;
  const label = x => typeof x === "number" ? (Math.abs(x) <= 1 && d.metrics && x !== Math.round(x) ? num(x, 3) : num(x, 2)) : "–";
  const paired = d.arms && d.arms.paired;
  main(
    el("h1", {}, "Compare ", d.a.label, " with ", d.b.label),
    el("div", { class: "panel kv" }, [d.a, d.b].map(s => el("div", {}, s.label + ": " + s.sessions + " sessions, " + s.runs + " runs, " + s.wins + " wins, floor " + (s.floor_mean === null ? "–" : num(s.floor_mean, 2) + " ± " + num(s.floor_se, 2)) + " (n = " + s.floor_n + ")"))),
    pairedSection(d),
    el("h2", {}, paired ? "Unpaired tests, for reference" : "Unpaired tests"),
    table([{ key: "metric", label: "metric" }, { key: "a", label: d.a.label, num: true, cell: m => label(m.a) }, { key: "b", label: d.b.label, num: true, cell: m => label(m.b) },
      { key: "difference", label: "difference (A − B)", num: true, cell: m => label(m.difference) },
      { key: "interval", label: "95 % interval", num: true, cell: m => m.interval ? label(m.interval[0]) + " … " + label(m.interval[1]) : "–" },
      { key: "test", label: "test" }, { key: "p", label: "p", num: true, cell: m => m.p === null ? "–" : m.p.toPrecision(2) },
      { key: "sentence", label: "in words", cell: m => el("span", { class: "sentence" }, m.sentence) }], d.metrics, { id: "compare" }),
    el("p", { class: "muted kv" }, "Win rate: Fisher's exact test, the difference's interval by Newcombe's method from the two Wilson intervals; runs are taken as independent trials. Means: Welch's t-test."),
    d.arms ? table([{ key: "metric", label: "score (per session)" }, { key: "a", label: d.a.label, num: true, cell: m => m.a ? m.a.mean.toFixed(3) : "–" }, { key: "b", label: d.b.label, num: true, cell: m => m.b ? m.b.mean.toFixed(3) : "–" },
      { key: "difference", label: "difference (A − B)", num: true, cell: m => m.difference === null ? "–" : signed(m.difference, 3) },
      { key: "interval", label: "95 % interval (Welch)", num: true, cell: m => m.interval ? signed(m.interval[0], 3) + " … " + signed(m.interval[1], 3) : "–" },
      { key: "test", label: "test" }, { key: "p", label: "p", num: true, cell: m => m.p === null ? "–" : m.p.toPrecision(2) },
      { key: "sentence", label: "in words", cell: m => el("span", { class: "sentence" }, m.sentence) }], d.arms.unpaired_tests.metrics, { id: "unpaired-scores" }) : null);
  status(MODE === "live" ? "live" : "bundle");
}

function decisionBox(x, key) {   // one side of the first difference
  if (!x) return el("p", { class: "muted" }, "–");
  return el("div", { class: "panel decision" },
    el("div", {}, "screen ", el("b", { class: "d-screen" }, x.state_type ?? "–"), " · floor ", el("span", { class: "d-floor" }, num(x.floor)), " · act " + num(x.act) + " · ",
      x.index !== null && x.index !== undefined ? el("a", { href: "#/session/" + enc(key) + "/step/" + x.index, class: "d-step" }, "step " + x.step) : "step " + num(x.step)),
    el("div", {}, "choice ", el("b", { class: "d-action" }, x.action ?? "–"), " ", el("code", { class: "d-params" }, JSON.stringify(x.parameters ?? {}))),
    el("div", {}, "reason ", el("span", { class: "d-reason" }, x.reason ?? "–"), x.source ? el("span", { class: "muted" }, " (" + x.source + ")") : null),
    x.model && x.model.length ? el("div", {}, "model answers", x.model.map(m => el("pre", { class: "json d-model" }, json(m)))) : null,
    x.agent ? el("div", {}, "agent", el("pre", { class: "json d-agent" }, json(x.agent))) : null);
}
async function pairPage(ka, kb, run) {   // #/pair/A/B/RUN: run RUN of two sessions aligned by floor, and their first difference
  const nav = navigation;
  const d = await api(apiPath("pair", { a: ka, b: kb, run }));
  if (nav !== navigation) return;
  const A = d.a, B = d.b, f = d.first_difference;
  const side = (x, k) => x ? [el("span", { class: "f-hp" }, x.hp === null || x.hp === undefined ? "–" : x.hp + (x.max_hp ? "/" + x.max_hp : "")), el("span", { class: "f-gold" }, num(x.gold)), el("span", { class: "f-deck" }, num(x.deck)), el("span", { class: "f-score" }, score3(x.progress_score))].map(n => el("td", { class: "num " + k }, n))
    : [el("td", { class: "muted " + k, colspan: 4 }, "not reached")];
  const runInfo = [["policy", x => x.policy ?? "–"], ["model", x => x.model ?? "–"], ["seed", x => Object.entries(x.seed).map(([k, v]) => k + "=" + v).join(" ") || "–"],
    ["outcome", x => badge(x.outcome, x.outcome === "unfinished" ? "waiting" : x.outcome)], ["floor", x => num(x.floor)], ["act", x => num(x.act)], ["bosses", x => num(x.bosses)],
    ["elites", x => num(x.elites)], ["HP at the end", x => hpEnd(x)], ["progress score", x => el("span", { class: "p-score" }, score3(x.progress_score))]];
  main(
    el("h1", {}, "Run " + run + " side by side"),
    d.warning ? el("p", { class: "error", id: "pair-warning" }, d.warning) : null,
    el("table", { id: "pair-runs" }, el("thead", {}, el("tr", {}, el("th", {}, ""), el("th", {}, "A"), el("th", {}, "B"))),
      el("tbody", {}, el("tr", {}, el("td", {}, "session"), [A, B].map(x => el("td", {}, el("a", { href: "#/session/" + enc(x.session) + "/run/" + run }, x.id)))),
        runInfo.map(([k, g]) => el("tr", {}, el("td", {}, k), el("td", {}, g(A)), el("td", {}, g(B)))),
        el("tr", {}, el("td", {}, "decisions in the run"), el("td", { id: "decisions-a" }, String(d.decisions[0])), el("td", { id: "decisions-b" }, String(d.decisions[1]))))),
    el("h2", {}, "The first decision where they differ"),
    f ? el("div", { id: "first-difference", "data-n": f.n, "data-kind": f.kind },
      el("p", {}, "Decision ", el("b", { id: "fd-n" }, String(f.n)), " of the run, on floor ", el("b", { id: "fd-floor" }, num(f.a.floor)), ": ",
        el("span", { id: "fd-kind" }, f.kind === "screen" ? "the screens differ (the runs reached different states)" : "same screen, different choices")),
      el("div", { class: "pair-grid" }, el("div", { id: "fd-a" }, el("h3", {}, "A"), decisionBox(f.a, A.session)), el("div", { id: "fd-b" }, el("h3", {}, "B"), decisionBox(f.b, B.session))))
      : el("p", { id: "first-difference", class: "muted" }, "none: " + (d.run_found.every(Boolean) ? "the shorter run's " + Math.min(...d.decisions) + " decisions are the same in both" : "run " + run + " is not in both journals")),
    el("p", { class: "muted kv" }, "The runs' executed decisions (each action sent, with its proposal and the screen it was decided on) are walked in order, the k-th of one beside the k-th of the other, from the run's start to its game over; the first pair whose screens (the observation files' SHA-256) or choices (action and parameters) differ is shown."),
    el("h2", {}, "Aligned by floor"),
    el("table", { id: "floors" }, el("thead", {}, el("tr", {}, el("th", {}, "floor"), ["A", "B"].map(x => ["HP", "gold", "deck", "score"].map(h => el("th", { class: "num" }, x + " " + h))))),
      el("tbody", {}, d.floors.map(r => el("tr", { "data-floor": r.floor }, el("td", { class: "num" }, r.floor), side(r.a, "fa"), side(r.b, "fb"))))),
    el("p", { class: "muted kv" }, "Per floor: the HP, gold and deck size (only where a fight showed it) of the last screen read on it, and the progress score on reaching it."));
  status(MODE === "live" ? "live" : "bundle");
}

// ---- start -------------------------------------------------------------------------------
api(apiPath("meta")).then(m => {
  document.getElementById("given").textContent = m.given.map(g => g.path).join("  ·  ");
}).catch(() => {});
route();
