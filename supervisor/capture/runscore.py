"""A Slay the Spire 2 run's score, from its observation rows (the game's own evidence), for
every policy.

``RunScore.add(row)`` takes a session's ``observation`` rows in order (each carries the run's
``progress`` as the recorder read it from the state: ``act``, ``floor``, ``hp``, ``max_hp``,
``gold``, ``deck`` in combat; ``actors.progress``); ``result(won)`` is the run's score when it
ends, and ``reset()`` starts the next run. The score:

* ``floor`` and ``act``: the highest the run reached;
* ``elites`` and ``bosses``: fights won — an ``elite`` or ``boss`` screen followed by a screen
  that only shows outside a fight (``AFTER_A_FIGHT``: the rewards, the map, an event, a room);
  selections made during the fight (``hand_select``, ``card_select``), popups, overlays and
  menus change nothing; a boss fight followed by a won game over counts too (the last boss of a
  victory);
* ``hp_end``: the HP the last screen of the run showed (0 on a defeat);
* ``victory``: the run's outcome (``CapturedSession``: the game-over screen's HP);
* ``progress_score``, between 0 and 1: ``0.5 * min(floor, 50) / 50 + 0.5 * min(bosses, 3) / 3``,
  the Slay the Spire score of the Orak benchmark (floors reached out of the 50 of a whole run
  and bosses beaten out of 3), so scores compare with that literature. The built-in game's
  runs are shorter (two acts by default), so a victory there scores below 1.

``floors`` keeps, for each floor reached, the HP, gold and deck size of the last screen read
on it (deck only where a fight showed it), the step it was first reached at, and the bosses
beaten before it (so the progress score on reaching it is ``progress_score(floor, bosses)``):
the side-by-side view aligns two runs by it.
"""

from __future__ import annotations

from typing import Any

FIGHTS = ("monster", "elite", "boss")
#: screens shown only once a fight is over: the one after an elite or a boss says it was won
AFTER_A_FIGHT = ("rewards", "card_reward", "map", "event", "rest_site", "shop", "treasure", "fake_merchant")
GAME_OVER = "game_over"
ORAK_FLOORS, ORAK_BOSSES = 50, 3


def progress_score(floor: int | None, bosses: int) -> float:
    """Orak's Slay the Spire score (see the module docstring)."""
    return 0.5 * min(max(floor or 0, 0), ORAK_FLOORS) / ORAK_FLOORS + 0.5 * min(bosses, ORAK_BOSSES) / ORAK_BOSSES


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class RunScore:
    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.seen = False
        self.floor: int | None = None
        self.act: int | None = None
        self.hp: int | None = None
        self.max_hp: int | None = None
        self.elites = 0
        self.bosses = 0
        self.fight: str | None = None  # the elite or boss fight being played
        self.floors: dict[int, dict] = {}

    def add(self, row: dict) -> None:
        kind = row.get("state_type")
        progress = row.get("progress")
        if isinstance(progress, dict) and kind != "menu":
            self._progress(progress, row.get("step"))
        if kind in ("elite", "boss"):
            self.fight = kind
        elif kind in FIGHTS or kind == GAME_OVER:
            self.fight = None if kind == "monster" else self.fight
        elif kind in AFTER_A_FIGHT and self.fight is not None:
            if self.fight == "boss":
                self.bosses += 1
            else:
                self.elites += 1
            self.fight = None

    def _progress(self, p: dict, step: Any) -> None:
        self.seen = True
        if _whole(p.get("floor")):
            self.floor = p["floor"] if self.floor is None else max(self.floor, p["floor"])
        if _whole(p.get("act")):
            self.act = p["act"] if self.act is None else max(self.act, p["act"])
        if _whole(p.get("hp")):
            self.hp = p["hp"]
        if _whole(p.get("max_hp")):
            self.max_hp = p["max_hp"]
        floor = p.get("floor")
        if _whole(floor):
            entry = self.floors.setdefault(floor, {"floor": floor, "step": step, "bosses": self.bosses})
            for key in ("hp", "max_hp", "gold", "deck"):
                if _whole(p.get(key)):
                    entry[key] = p[key]

    def result(self, won: bool) -> dict:
        """The ended run's score fields (all None when no row showed its progress)."""
        bosses = self.bosses + (1 if won and self.fight == "boss" else 0)
        if not self.seen:
            return {
                "floor": None,
                "act": None,
                "elites": None,
                "bosses": None,
                "hp_end": None,
                "max_hp": None,
                "progress_score": None,
            }
        return {
            "floor": self.floor,
            "act": self.act,
            "elites": self.elites,
            "bosses": bosses,
            "hp_end": self.hp,
            "max_hp": self.max_hp,
            "progress_score": round(progress_score(self.floor, bosses), 6),
        }


__all__ = ["RunScore", "progress_score", "ORAK_FLOORS", "ORAK_BOSSES"]
