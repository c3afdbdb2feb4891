/* gamerig view: the fleet pages. The fleet list (#/fleets), one fleet (#/fleet/KEY), one of
 * its cells (#/fleet/KEY/cell/CELL), a comparison of two fleets or of two groups of one fleet
 * (#/compare/...), and one run of two sessions side by side (#/pair/A/B/RUN). Uses common.js.
 */
"use strict";

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

// ---- comparisons and pairs ---------------------------------------------------------------
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
