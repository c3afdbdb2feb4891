"""Run identity, as the compendium's ``current_run`` reports it from "save metadata".

The game "writes its save" when a run starts and whenever a room is entered; the
compendium reads that metadata, not the live state, so it can lag (knob
``identity_lag_reads``: a written save becomes visible only after N compendium reads).
Before the first save of the current run is visible, ``current_run`` carries
``limitation`` ("Run is in progress, but current_run.save was not found yet.") instead of
``run_id`` — unless an older save is still visible, in which
case the stale identity of the previous run is reported (the hostile, realistic case).

``run_id = "{save_scope}:profile{profile_id}:{start_time}"``; ``start_time`` is derived from the
seed and the number of runs started, never from the wall clock.
"""

from __future__ import annotations

from typing import Any

from .world import World

SAVE_SCOPE = "modded"
ID_FORMAT = "{save_scope}:profile{profile_id}:{start_time}"
PARSE_ERROR = "'0x00' is an invalid start of a value. LineNumber: 0 | BytePositionInLine: 0."
EPOCH = 1_750_000_000


def start_time_for(seed: int | str, runs_started: int) -> int:
    """A deterministic 'wall clock' start time for the ``runs_started``-th run."""
    base = seed if isinstance(seed, int) else sum(map(ord, str(seed)))
    return EPOCH + (base % 100_000) * 1_000 + runs_started * 60


class SaveMeta:
    """The save metadata the compendium reads; written by the game, read lazily."""

    def __init__(self, game: World) -> None:
        self.game = game
        self.visible: dict[str, Any] | None = None
        self.queue: list[list[Any]] = []  # [reads_left, snapshot]
        self.reads = 0
        self.compendium_reads = 0

    def write(self) -> None:
        """The game saves: snapshot the run's metadata (visible after the lag)."""
        run = self.game.run
        if run is None:
            return
        profile = self.game.profile.profile_id
        snap = {  # the save's scalars, in BuildCurrentRunContext's order
            "start_time": run.start_time,
            "save_time": run.start_time + 30 + run.actions * 7,
            "run_time": 30 + run.actions * 7,
            "game_mode": "standard",
            "ascension": run.ascension,
            "current_act_index": run.act - 1,
            "schema_version": 1,
            "platform_type": "none",
            "seed": str(run.seed),
            "run_id": f"{SAVE_SCOPE}:profile{profile}:{run.start_time}",
        }
        lag = self.game.knobs.identity_lag_reads
        if lag:
            self.queue.append([lag, snap])
        else:
            self.visible = snap

    def current_run(self) -> dict | None:
        """``current_run`` for one compendium read (advances the lag), shaped as
        McpMod.Compendium.cs ``BuildCurrentRunContext`` shapes it."""
        self.reads += 1
        for item in self.queue:
            item[0] -= 1
        while self.queue and self.queue[0][0] <= 0:
            self.visible = self.queue.pop(0)[1]
        if self.game.run is None:
            return None
        profile = self.game.profile.profile_id
        out: dict[str, Any] = {
            "is_in_progress": True,
            "profile_id": profile,
            "save_scope": SAVE_SCOPE,
            "id_format": ID_FORMAT,
        }
        if self.visible is None:
            out["limitation"] = "Run is in progress, but current_run.save was not found yet."
            return out
        out["save_path"] = save_path(profile)
        n = self.game.knobs.identity_parse_error_every
        if n and self.reads % n == 0:
            out["parse_error"] = PARSE_ERROR
            return out
        out.update({k: v for k, v in self.visible.items() if k not in out})
        return out


def save_path(profile: int) -> str:
    return f"/saves/{SAVE_SCOPE}/profile{profile}/saves/current_run.save"
