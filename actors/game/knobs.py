"""Hostile knobs of the built-in game.

Every knob defaults to "off" (0 or False). They are profile keys under ``game.`` and
command-line flags of ``python -m actors.game`` (``--effect-delay-reads 2`` etc.).

    effect_delay_reads      an accepted action's effect shows only after N extra state
                            reads (0: on the next read). While effects are pending, a POST
                            is validated against the stale visible state.
    slow_confirm_reads      confirmations (confirm_selection, confirm_bundle_selection,
                            combat_confirm_selection, select_relic, select_card_reward)
                            take N extra reads on top of effect_delay_reads.
    reject_every_nth        every Nth otherwise valid POST is refused with
                            ``status: error`` ("the game is busy") and has no effect.
    identity_outage_every   every Nth compendium read fails with a 500.
    identity_parse_error_every  every Nth compendium read during a run reports
                            ``parse_error`` instead of ``run_id``.
    identity_lag_reads      save metadata trails the live run by N compendium reads
                            (a new run shows ``limitation`` or the previous run's id).
    replace_run_after_actions  once, after N accepted actions in a run, the run is replaced
                            by a new run with the same seed (a new ``start_time``).
    overlay_linger_reads    a closed overlay keeps being shown for N reads.
    waiting_reads           N transient ``unknown`` ("transition") reads between screens.
    enemy_turn_reads        the enemy turn is visible (turn "enemy", not play phase) for
                            N reads before the next player turn.
    state_error_every       every Nth state read fails with a 500 state-building error.
    acts                    acts in a run (default 2, not a hostile knob): each act's boss
                            leads to rewards and the next act; the last act's boss ends the
                            run in victory.
    popup_every_reads       every Nth state read inside a run opens a popup (``menu_screen``
                            ``popup``) that blocks every action until dismissed.
    ftue_unready_reads      a first-time tutorial's advance/proceed buttons are disabled for
                            its first N reads.
    sticky_overlay_reads    an unhandled ``overlay`` stays N reads (default: clears after 2);
                            ``POST /__gamerig/manual`` clears it at once.
    pending_epochs          N timeline epochs are obtained but not revealed: the main menu
                            lists ``timeline`` under ``blocked_options``.
    start_in_run            (0/1) the server starts inside a run (joining a game in progress).
    start_saved_run         (0/1) the server starts on the main menu with a saved run.
    start_floor             with a start knob: the run has travelled to floor N (0: its
                            opening event); character and path are drawn from the seed.
    first_run_warning       (0/1) a fresh profile's first character select opens a popup.
    multiplayer_run         (0/1) every run is a multiplayer run: /api/v1/singleplayer
                            answers 409 during it; /api/v1/multiplayer serves it.
    char_select_lobby       (0/1/2) what a seeded embark meets on the character select
                            (McpMod.Actions.cs ``ExecuteCharacterSelectMenuOption``): 0 no
                            lobby, the mod's own refusal; 1 a standard-mode lobby whose
                            ``SetSeed`` throws (the real game's answer); 2 a lobby that takes
                            the seed: the run is generated from it (docs/game.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Knobs:
    """The hostile knobs; the defaults make an honest, prompt game."""

    effect_delay_reads: int = field(
        default=0, metadata={"help": "an accepted action's effect shows only after N extra reads"}
    )
    slow_confirm_reads: int = field(default=0, metadata={"help": "confirmations take N extra reads"})
    reject_every_nth: int = field(
        default=0, metadata={"help": "refuse every Nth otherwise valid action ('the game is busy')"}
    )
    identity_outage_every: int = field(default=0, metadata={"help": "every Nth compendium read fails with a 500"})
    identity_parse_error_every: int = field(
        default=0, metadata={"help": "every Nth in-run compendium read reports parse_error"}
    )
    identity_lag_reads: int = field(
        default=0, metadata={"help": "save metadata (run identity) trails the run by N compendium reads"}
    )
    replace_run_after_actions: int = field(
        default=0, metadata={"help": "once, after N actions, replace the run by a new one with the same seed"}
    )
    overlay_linger_reads: int = field(default=0, metadata={"help": "a closed overlay stays visible for N reads"})
    waiting_reads: int = field(default=0, metadata={"help": "N transient 'unknown' reads between screens"})
    enemy_turn_reads: int = field(default=0, metadata={"help": "the enemy turn stays visible for N reads"})
    state_error_every: int = field(
        default=0, metadata={"help": "every Nth state read fails with a 500 state-building error"}
    )
    acts: int = field(default=2, metadata={"help": "acts in a run (>= 1); the last act's boss ends the run"})
    popup_every_reads: int = field(default=0, metadata={"help": "every Nth in-run state read opens a blocking popup"})
    ftue_unready_reads: int = field(
        default=0, metadata={"help": "a tutorial's advance/proceed stay disabled for N reads"}
    )
    sticky_overlay_reads: int = field(default=0, metadata={"help": "an unhandled overlay stays N reads (default 2)"})
    pending_epochs: int = field(default=0, metadata={"help": "N epochs wait for a manual reveal (timeline blocked)"})
    start_in_run: int = field(default=0, metadata={"help": "1: start inside a run", "flag": True})
    start_saved_run: int = field(
        default=0, metadata={"help": "1: start on the main menu with a saved run", "flag": True}
    )
    start_floor: int = field(default=0, metadata={"help": "with a start knob: the run starts on floor N"})
    first_run_warning: int = field(
        default=0, metadata={"help": "1: a popup over a fresh profile's first character select", "flag": True}
    )
    multiplayer_run: int = field(
        default=0, metadata={"help": "1: runs are multiplayer runs (singleplayer route 409)", "flag": True}
    )
    char_select_lobby: int = field(
        default=0,
        metadata={
            "help": (
                "a seeded embark meets 0: no lobby (refused), 1: a standard-mode lobby (refused), "
                "2: a lobby that takes the seed"
            ),
            "choices": (0, 1, 2),
        },
    )

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"game knob {f.name!r} must be an integer, got {value!r}")
            if value < 0:
                raise ValueError(f"game knob {f.name!r} must be >= 0, got {value}")
            if f.metadata.get("flag") and value not in (0, 1):
                raise ValueError(f"game knob {f.name!r} must be 0 or 1, got {value}")
            choices = f.metadata.get("choices")
            if choices and value not in choices:
                raise ValueError(f"game knob {f.name!r} must be one of {', '.join(map(str, choices))}, got {value}")
        if self.acts < 1:
            raise ValueError(f"game knob 'acts' must be >= 1, got {self.acts}")
        if self.start_in_run and self.start_saved_run:
            raise ValueError(
                "game knobs 'start_in_run' and 'start_saved_run' exclude each "
                "other: start inside a run, or on the main menu with it saved"
            )
        if self.start_floor and not (self.start_in_run or self.start_saved_run):
            raise ValueError("game knob 'start_floor' needs 'start_in_run' or 'start_saved_run'")

    @classmethod
    def names(cls) -> list[str]:
        """All knob names, in declaration order."""
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any] | None) -> Knobs:
        """Build knobs from a mapping (e.g. a profile's ``game.knobs``).

        Raises ValueError naming an unknown or ill-typed knob.
        """
        mapping = dict(mapping or {})
        known = set(cls.names())
        unknown = sorted(k for k in mapping if k not in known)
        if unknown:
            raise ValueError(
                f"unknown game knob(s): {', '.join(map(repr, unknown))}; known knobs: {', '.join(cls.names())}"
            )
        return cls(**mapping)

    @classmethod
    def help(cls, name: str) -> str:
        """One line describing knob ``name``."""
        return next(f.metadata["help"] for f in dataclasses.fields(cls) if f.name == name)

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)
