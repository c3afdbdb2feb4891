/* gamerig view, shared by every page: the page's state, answers by path, DOM building and
 * formatting, the sortable table, polling (supervisor/view/api.py gives the JSON answers).
 *
 * The page is plain scripts loaded in order by index.html: api.js, common.js (this file),
 * sessions.js (the session list, one session's timeline, one step), fleets.js (fleets, a
 * cell, comparisons, two runs side by side), app.js (the router; it starts the page). Their
 * top-level names are the page's globals, shared between them.
 *
 * Every string from a capture (the game's text, a model's answer, a policy's reason) reaches
 * the document through text nodes (el() below), never as markup: a capture cannot run script
 * here. Live: answers are fetched from the server and the pages poll every second. Bundle
 * (supervisor view --bundle): each answer is a script file in the bundle's folder, named by
 * bundleName(path), that calls gamerigData(path, answer).
 *
 * Which answers there are, their paths, the size of a page of steps and how a bundle names
 * its files come from static/api.js (gamerigApi, written by supervisor/view/routes.py, by
 * which the server routes and the bundle names its files): no page script keeps those rules.
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

function poll(f) {
  if (MODE !== "live") return;
  const nav = navigation;
  pollTimer = setTimeout(() => { if (nav === navigation) f().catch(e => status(String(e.message))); }, POLL_MS);
}

// ---- formatting shared by the session and fleet pages ------------------------------------
function costTitle(c) {   // why a cost is a lower bound or unknown
  return c.model_cost_unknown_calls ? c.model_cost_unknown_calls + " of " + c.model_calls + " calls without a known cost (no model.price, or no usage reported)" : null;
}
function score3(x) { return x === null || x === undefined ? "–" : x.toFixed(3); }
function hpEnd(r) { return r.hp_end === null || r.hp_end === undefined ? "–" : r.hp_end + (r.max_hp ? " / " + r.max_hp : ""); }
function ci3(c) { return c ? score3(c[0]) + " – " + score3(c[1]) : "–"; }
