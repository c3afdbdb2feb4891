"""Policy helpers: a demo-cart player and a seeded explorer for cartridges nobody taught us.

* :func:`demo_next_buttons` — pure: WRAM reads of the demo cartridge → the button set to
  hold for the next :data:`DEMO_STEP_FRAMES` frames. It walks a shortest path (BFS over the
  room map the cartridge itself is built from) to the key, then to the door, bumps the door
  open and walks out. Presses alternate with releases, because the game moves one tile per
  new press.
* :func:`is_demo_cartridge` — whether a ROM title is ours (for handing over to the explorer).
* :class:`ExplorationInputs` — a seeded, reproducible stream of ``(buttons, frames)`` for
  any other cartridge; every ``neutral_every``-th input is a neutral step so automatic
  checkpoints can be taken.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator, Mapping

from .buttons import BUTTONS
from ..cartridge import layout

DEMO_STEP_FRAMES = 4
DEMO_REGIONS = {name: (address, 1) for name, address in layout.WRAM.items()}
_MOVES = {"right": (1, 0), "left": (-1, 0), "up": (0, -1), "down": (0, 1)}
_WALKABLE = {".", "K", "P"}


def is_demo_cartridge(title: str) -> bool:
    return title.strip().upper() == layout.TITLE


def _byte(value: int | bytes | bytearray | list) -> int:
    return value if isinstance(value, int) else int(value[0])


def _first_move(start: tuple[int, int], goal: tuple[int, int]) -> str | None:
    """First direction of a shortest path from start to goal (goal may be the door)."""
    if start == goal:
        return None
    seen: dict[tuple[int, int], tuple[tuple[int, int], str] | None] = {start: None}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        if here == goal:
            while seen[here][0] != start:
                here = seen[here][0]
            return seen[here][1]
        for name, (dx, dy) in _MOVES.items():
            nxt = (here[0] + dx, here[1] + dy)
            if nxt in seen or not (0 <= nxt[0] < layout.WIDTH and 0 <= nxt[1] < layout.HEIGHT):
                continue
            if nxt == goal or layout.ROOM[nxt[1]][nxt[0]] in _WALKABLE:
                seen[nxt] = (here, name)
                queue.append(nxt)
    return None


def demo_next_buttons(memory: Mapping[str, int | bytes]) -> frozenset[str]:
    """The buttons to hold next, from the demo cart's WRAM (names as in ``layout.WRAM``).

    Values may be ints or the 1-byte ``bytes`` an observation returns. Returns the empty set
    while the game boots, after a press (to release), and once the game is won.
    """
    mem = {name: _byte(value) for name, value in memory.items()}
    if mem.get("magic") != layout.MAGIC or mem.get("won"):
        return frozenset()
    if mem.get("joy_cur") or mem.get("joy_prev"):
        return frozenset()
    here = (mem["player_x"], mem["player_y"])
    goal = layout.DOOR if mem.get("has_key") else layout.KEY
    move = _first_move(here, goal)
    return frozenset({move}) if move else frozenset()


class ExplorationInputs(Iterator[tuple[frozenset[str], int]]):
    """Seeded random inputs: the same seed always yields the same ``(buttons, frames)`` stream."""

    def __init__(self, seed: int, *, frame_choices: tuple[int, ...] = (4, 8, 15, 30, 60),
                 neutral_every: int = 6, max_buttons: int = 2):
        self._rng = random.Random(seed)
        self.seed, self.frame_choices = seed, frame_choices
        self.neutral_every, self.max_buttons = neutral_every, max_buttons
        self.count = 0

    def __next__(self) -> tuple[frozenset[str], int]:
        self.count += 1
        frames = self._rng.choice(self.frame_choices)
        if self.neutral_every and self.count % self.neutral_every == 0:
            return frozenset(), frames
        size = self._rng.randint(1, self.max_buttons)
        weights = [3 if b in ("a", "start") else 1 if b == "select" else 2 for b in BUTTONS]
        chosen = set()
        while len(chosen) < size:
            chosen.add(self._rng.choices(BUTTONS, weights)[0])
        return frozenset(chosen), frames
