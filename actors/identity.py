"""Run identity as reported by the game's compendium (``current_run``), normalised.

The observer reads it after each *stable in-run* observation (not on menu, game over,
unknown or overlay screens; dry runs too). The result is one dict:

* ``{"status": "ok", "run_id": str, "seed": ..., "act": ..., "floor": ...}`` — usable:
  ``is_in_progress`` is true and ``run_id`` a non-empty string;
* ``{"status": "missing", "reason": ...}`` — the game answered without a usable identity
  (no current run, a ``limitation``, a ``parse_error``, a malformed block);
* ``{"status": "error", "error": ...}`` — the read itself failed (transport, HTTP, JSON).

Identity comes from save metadata: it can lag the live state and is not atomic with the
state read. It is reported, never strengthened: nothing here substitutes a seed, a
character or a floor for a missing identity.
"""

from __future__ import annotations

from typing import Any

UNSTABLE = {"menu", "game_over", "unknown", "overlay"}


def wants_identity(state: dict) -> bool:
    return isinstance(state.get("state_type"), str) and state["state_type"] not in UNSTABLE


def normalise(compendium: Any) -> dict:
    if not isinstance(compendium, dict):
        return {"status": "missing", "reason": "the compendium is not a JSON object"}
    run = compendium.get("current_run")
    if run is None:
        return {"status": "missing", "reason": "no current_run"}
    if not isinstance(run, dict):
        return {"status": "missing", "reason": "current_run is not an object"}
    for key in ("parse_error", "limitation"):
        if run.get(key):
            return {"status": "missing", "reason": f"{key}: {str(run[key])[:200]}"}
    if run.get("is_in_progress") is not True:
        return {"status": "missing", "reason": "is_in_progress is not true"}
    rid = run.get("run_id")
    if not isinstance(rid, str) or not rid:
        return {"status": "missing", "reason": "run_id is absent or not a non-empty string"}
    return {
        "status": "ok",
        "run_id": rid,
        "seed": run.get("seed"),
        "act": run.get("current_act_index"),
        "save_time": run.get("save_time"),
    }
