"""A small fleet that crosses two models and two characters, built once per test run and read
by ``tests/fleet/test_models.py`` and ``tests/view/test_costs.py``.

Both "models" are names served by the stand-in model server (``actors.model_client.standin``),
run here on a free port. The server keeps what it answered (each reply's model and usage), so
the tests can count what was spent from the server's side too. ``standin-a`` is priced by the
fleet file's ``prices``; ``standin-b`` is not, so its cost is unknown.

``journal_spend(session_dir)`` counts what a session's model calls spent from its journal
rows, with no gamerig code: every ``model_evidence`` entry of a proposal, every
``model_error`` and ``model_late_answer`` row that carries ``usage``.
"""

from __future__ import annotations

import json
import os
import pathlib
import threading

from actors.model_client.standin import Handler, StandinServer
from tests.fleet.helpers import finish, start_fleet, write_fleet
from tests.harness import REPO, built_once

AGENT = os.path.join(REPO, "run", "profiles", "agent-demo.yaml")
MODELS = ["standin-a", "standin-b"]
CHARACTERS = ["ironbound", "wanderer"]
PRICE_A = {"input_per_mtok": 0.15, "output_per_mtok": 0.6, "cached_input_per_mtok": 0.075}
MAX_STEPS = 50


class RecordingHandler(Handler):
    """The stand-in's handler, keeping each reply's model and usage on the server."""

    def _send(self, status: int, data: dict) -> None:
        super()._send(status, data)
        if status == 200 and isinstance(data.get("usage"), dict):
            with self.server.lock:
                self.server.served.append({"model": data.get("model"), "usage": data["usage"]})


def _build(directory: str) -> dict:
    tmp = pathlib.Path(directory)
    server = StandinServer(port=0)
    server.RequestHandlerClass = RecordingHandler
    server.lock, server.served = threading.Lock(), []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        fleet = write_fleet(
            tmp,
            profile=AGENT,
            set={"model.base_url": server.base_url, "session.max_steps": MAX_STEPS},
            matrix={"model.model": MODELS, "policy.settings.character": CHARACTERS},
            prices={"standin-a": PRICE_A},
        )
        root = str(tmp / "root")
        code, out = finish(start_fleet(fleet, root, "--concurrency", "2"), timeout=150)
        assert code == 0, out
    finally:
        server.shutdown()
        server.server_close()
    served = str(tmp / "served.json")
    with open(served, "w", encoding="utf-8") as fh:
        json.dump(server.served, fh)
    return {"root": root, "served": served, "report": out}


def model_fleet(tmp_path_factory) -> dict:
    """``{"root", "served", "report"}``: the fleet root, the server's replies (a JSON file), and
    what ``fleet start`` printed. Shared by every worker: read only."""
    return built_once(tmp_path_factory, "model-fleet", _build)


def results(root: str) -> list[dict]:
    with open(os.path.join(root, "results.jsonl"), encoding="utf-8") as fh:
        return sorted((json.loads(line) for line in fh), key=lambda r: r["index"])


def journal_rows(session_dir: str) -> list[dict]:
    with open(os.path.join(session_dir, "events.jsonl"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.endswith("\n")]


def journal_spend(session_dir: str) -> dict:
    """``{"calls", "tokens", "cached", "cost", "priced", "unknown"}`` from the journal's rows."""
    usages = []
    for row in journal_rows(session_dir):
        if row["event"] == "proposal":
            usages += [e.get("usage") or {} for e in row.get("model_evidence") or ()]
        elif row["event"] in ("model_error", "model_late_answer") and isinstance(row.get("usage"), dict):
            usages.append(row["usage"])
    priced = [u["cost_usd"] for u in usages if isinstance(u.get("cost_usd"), (int, float))]
    return {
        "calls": len(usages),
        "tokens": sum(u.get("total_tokens") or 0 for u in usages),
        "cached": sum(u.get("cached_tokens") or 0 for u in usages),
        "cost": sum(priced),
        "priced": len(priced),
        "unknown": len(usages) - len(priced),
    }


def character_picked(root: str, session_dir: str) -> str | None:
    """The character id of the last accepted ``menu_select`` sent on a character-select
    screen, read from the observation file the attempt was made on."""
    rows = journal_rows(session_dir)
    observations = {r["observation_id"]: r for r in rows if r["event"] == "observation"}
    accepted = {r["attempt_id"] for r in rows if r["event"] == "action_result" and r["outcome"] == "accepted"}
    capture = os.path.dirname(os.path.dirname(session_dir))
    picked = None
    for r in rows:
        if r["event"] != "action_attempt" or r["action"] != "menu_select" or r["attempt_id"] not in accepted:
            continue
        with open(os.path.join(capture, observations[r["observation_id"]]["path"]), encoding="utf-8") as fh:
            screen = json.load(fh)
        if screen.get("menu_screen") == "character_select":
            ids = [c["id"] for c in screen["characters"] if c["id"].lower() == r["parameters"]["option"].lower()]
            picked = ids[0] if ids else picked  # (embark is sent on that screen too)
    return picked
