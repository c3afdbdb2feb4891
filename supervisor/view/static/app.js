/* gamerig view: the router (the location's hash names the page) and the start. Loaded last,
 * after common.js, sessions.js and fleets.js, whose pages it calls.
 */
"use strict";

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

// ---- start -------------------------------------------------------------------------------
api(apiPath("meta")).then(m => {
  document.getElementById("given").textContent = m.given.map(g => g.path).join("  ·  ");
}).catch(() => {});
route();
