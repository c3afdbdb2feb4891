/* gamerig view: the session pages. The session list (#/), one session's timeline with its
 * charts, runs and steps (#/session/KEY, #/session/KEY/run/N), an emulator session's
 * recording, and one step's evidence (#/session/KEY/step/I). Uses common.js.
 */
"use strict";

// ---- sessions --------------------------------------------------------------------------
function usedModel(s) { return !!(s.model_name || s.model_calls); }
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
function scoreFact(s) {   // a session's score: STS2 progress score, or a Game Boy cartridge's
  if (s.score_final !== null && s.score_final !== undefined)
    return el("span", { id: "score" }, "final " + s.score_final + " · best " + num(s.score_best) + " · milestones " + num(s.milestones_reached) +
      (s.game_over_frame !== null && s.game_over_frame !== undefined ? " · game over at frame " + s.game_over_frame : ""));
  if (s.progress_score === null || s.progress_score === undefined) return "–";
  return el("span", { id: "score" }, "progress " + score3(s.progress_score) + (s.scored_runs === "unfinished" ? " (the run being played)" : " (mean of the ended runs)") +
    " · floor " + num(s.floor) + " · bosses " + num(s.bosses) + " · elites " + num(s.elites));
}
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
