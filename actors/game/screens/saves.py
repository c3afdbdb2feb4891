"""Runs seen from the main menu: embark, a saved run (``continue`` / ``abandon_run``),
leaving a run, the timeline's epochs, and the start knobs.

- A run is "saved" while the game stands on the main menu with it: the main menu then
  shows ``continue`` and ``abandon_run`` first (McpMod.StateBuilder.cs ``BuildGameState``
  lists ``_continueButton`` and ``_abandonRunButton`` first). ``continue`` resumes the run
  exactly where it was saved. ``abandon_run`` opens a popup "Abandon Run?" with ``yes`` /
  ``no`` (the source does not show this popup: our assumption, docs/game.md); ``yes``
  deletes the save and counts a defeat. Embarking on a new run discards it.
- Starting or continuing a run shows ``waiting_reads`` reads of ``{"state_type":
  "unknown"}`` (the run is in progress but has no RunState yet: ``BuildGameState``).
- Knobs ``start_in_run`` / ``start_saved_run`` (+ ``start_floor``): the server starts
  inside a run, or on the main menu with a saved run; character and path are drawn from
  the seed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .. import rng
from ..content import CHARACTERS
from ..progress import record_end, record_start
from ..runflow import enter_node, start_run
from ..world import World
from .popups import show_popup, show_tutorial_prompt

if TYPE_CHECKING:
    from ..model import Run

TIMELINE_BLOCKED = (
    "Timeline has obtained epochs that still need to be revealed manually; "
    "not opening Timeline because this game state logs invalid unlock-state "
    "errors when entered through automation"
)
# (id, state) of the invented epochs; knob pending_epochs turns NotObtained into Obtained
EPOCHS = (
    ("Neow1", "Revealed"),
    ("TheIronbound1", "Revealed"),
    ("TheWanderer1", "NotObtained"),
    ("TheHollow1", "NotObtained"),
    ("TheUnderdocks2", "NotObtained"),
)
EPOCH_TIME = 1_750_000_000


# ----- embark, continue, abandon, leave ---------------------------------------------------
def embark(game: World, character: str, seed: str | None = None) -> None:
    """The embark button: a new run (a saved run is discarded), maybe the tutorial prompt.
    The run is generated from ``seed`` (a lobby's seed, ``screens.menu``), else from the
    game's seed."""
    game.saved = None
    game.menu_screen = "main"
    game.selected_character = None
    game.lobby_seed = None
    start_run(game, character, game.seed if seed is None else seed)
    _started(game)
    _loading(game)
    if "tutorial_prompt" not in game.profile.seen:
        show_tutorial_prompt(game)


def continue_run(game: World) -> None:
    if game.saved is None:
        return
    game.run, game.saved = game.saved, None
    _loading(game)


def ask_abandon(game: World) -> None:
    def answer(option: str) -> None:
        if option == "yes" and game.saved is not None:
            record_end(game, game.saved, False)
            game.saved = None

    show_popup(
        game, "Abandon Run?", "Are you sure you want to abandon this run?", (("yes", True), ("no", True)), answer
    )


def _loading(game: World) -> None:
    game.waiting = game.knobs.waiting_reads
    game.loading = game.waiting > 0


def return_to_menu(game: World) -> None:
    """Game over → ``main_menu``: the run and its save are gone."""
    game.run = None
    game.saved = None
    game.menu_screen = "main"
    game.pending.clear()
    game.timers.clear()
    game.waiting = 0


def replace_run(game: World, run: Run) -> None:
    """Knob ``replace_run_after_actions``: a new run with the same seed replaces ``run``."""
    start_run(game, run.character, run.seed)
    _started(game)


def _started(game: World) -> None:
    assert game.run is not None
    record_start(game, game.run)


# ----- timeline -------------------------------------------------------------------------
def _epoch_states(game: World) -> list[tuple[str, str]]:
    pending = game.knobs.pending_epochs
    out = []
    for eid, state in EPOCHS:
        if state == "NotObtained" and pending > 0:
            state, pending = "Obtained", pending - 1
        out.append((eid, state))
    return out


def pending_epoch_ids(game: World) -> list[str]:
    """Epochs obtained but not revealed (they block the timeline button)."""
    return [e for e, s in _epoch_states(game) if s in ("Obtained", "ObtainedNoSlot")]


def timeline_fields(game: World) -> dict:
    """The timeline screen's epoch fields (``BuildGameState``, timeline branch)."""
    epochs = []
    for i, (eid, state) in enumerate(_epoch_states(game)):
        name = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", re.sub(r"(\d+)$", "", eid))
        epochs.append(
            {
                "id": eid,
                "name": name,
                "state": state,
                "obtained": 0 if state == "NotObtained" else EPOCH_TIME + i * 3600,
            }
        )
    count = {s: sum(1 for e in epochs if e["state"] == s) for s in ("Revealed", "Obtained", "NotObtained", "NoSlot")}
    return {
        "epochs": epochs,
        "total_slots": len(epochs),
        "completed_count": count["Revealed"],
        "revealed_count": count["Revealed"],
        "obtained_unrevealed_count": count["Obtained"],
        "locked_count": count["NotObtained"],
        "no_slot_count": count["NoSlot"],
    }


# ----- start knobs ------------------------------------------------------------------------
def apply_start_knobs(game: World) -> None:
    """``start_in_run`` / ``start_saved_run``: begin inside a run on floor ``start_floor``
    (or on the main menu with that run saved). The profile has answered the tutorial
    prompt with yes; the character and the path come from the seed."""
    k = game.knobs
    if not (k.start_in_run or k.start_saved_run):
        return
    r = rng.stream(game.seed, "start")
    character = r.choice(sorted(c.id for c in CHARACTERS.values() if not c.locked))
    game.profile.seen.add("tutorial_prompt")
    game.profile.tutorials = True
    start_run(game, character, game.seed)
    _started(game)
    run = game.run
    assert run is not None
    while run.floor < k.start_floor:
        children = run.act_map.children_of(run.position)
        if not children:
            break
        enter_node(game, r.choice(children))
    game.waiting = 0
    game.pending.clear()
    if k.start_saved_run:
        game.saved, game.run = run, None
