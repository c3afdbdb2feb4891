"""The built-in Game Boy policies (``game.backend: pyboy``) and the inputs they play.

* ``pyboy_explore`` (:class:`PyboyExplore`) — seeded random inputs for any cartridge
  (:class:`ExplorationInputs`). The seed is ``policy.settings.seed``, else
  ``game.seed`` (passed on by the observer in ``policy_hints``). ``frames_per_step`` fixes
  the frames of every step (else the explorer picks 4..60); ``samples_per_step`` asks for
  sampled frames. The n-th proposal is the n-th input of the seeded stream, also after a
  restart of the policy (the count is rebuilt from the recorded proposals). Its inputs do
  not depend on what it observes, so it pipelines: ``policy.settings.pipeline_depth``
  (default 32, 1..64) steps may be in flight at once (see ``actors.policy.base``).
* ``pyboy_demo`` (:class:`PyboyDemo`) — plays our demo cartridge to its win from WRAM reads
  (:func:`demo_next_buttons`) and ends the session (``run_ended``, ``run_outcome: won``) once the
  win flag is set. Given any other cartridge it hands over to ``pyboy_explore`` by itself
  and records it: the first exploration proposal carries ``handover: {...}``.

Every executed proposal is ``action: "step"`` with ``parameters: {"buttons", "frames",
"samples"}``. A step refused because a recording limit is reached ends the session
(``recording_limit``): further steps would be refused too.

The inputs, usable without a pipeline (the emulator's tests and benchmarks drive a session
with them):

* :func:`demo_next_buttons` — pure: WRAM reads of the demo cartridge → the button set to
  hold for the next :data:`DEMO_STEP_FRAMES` frames. It walks a shortest path (BFS over the
  room map the cartridge itself is built from) to the key, then to the door, bumps the door
  open and walks out. Presses alternate with releases, because the game moves one tile per
  new press.
* :class:`ExplorationInputs` — a seeded, reproducible stream of ``(buttons, frames)`` for
  any other cartridge; every ``neutral_every``-th input is a neutral step so automatic
  checkpoints can be taken.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator, Mapping

from actors.emulator.cartridge import layout
from actors.emulator.cartridge.layout import is_demo_cartridge
from actors.emulator.session.buttons import BUTTONS

from .base import Policy, PolicyObservation, Proposal

DEMO_STEP_FRAMES = 4
BOOT_FRAMES = 30  # a neutral step while the demo cartridge initialises
DEFAULT_PIPELINE_DEPTH = 32
MAX_PIPELINE_DEPTH = 64

_MOVES = {"right": (1, 0), "left": (-1, 0), "up": (0, -1), "down": (0, 1)}
_WALKABLE = {".", "K", "P"}


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

    def __init__(
        self,
        seed: int,
        *,
        frame_choices: tuple[int, ...] = (4, 8, 15, 30, 60),
        neutral_every: int = 6,
        max_buttons: int = 2,
    ):
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


def step(buttons, frames: int, samples: int, reason: str, **kw) -> Proposal:
    return Proposal("step", {"buttons": sorted(buttons), "frames": int(frames), "samples": int(samples)}, reason, **kw)


class PyboyExplore(Policy):
    """Seeded exploration of any cartridge."""

    def __init__(self, settings: dict, session: dict):
        super().__init__(settings, session)
        self.explorer: ExplorationInputs | None = None
        self.inputs_used = 0  # the highest input index of a recorded proposal (replayed after a restart)
        self.limit_reached: str | None = None
        depth = settings.get("pipeline_depth", DEFAULT_PIPELINE_DEPTH)
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_PIPELINE_DEPTH:
            raise ValueError(
                f"policy.settings.pipeline_depth: expected an integer 1..{MAX_PIPELINE_DEPTH}, got {depth!r}"
            )
        self.depth = depth

    def _hint(self, obs: PolicyObservation, name: str, default=None):
        if self.settings.get(name) is not None:
            return self.settings[name]
        value = (obs.state.get("policy_hints") or {}).get(name)
        return default if value is None else value

    def pipeline_depth(self, obs: PolicyObservation) -> int:
        return self.depth

    def record_proposal(self, proposal: dict) -> None:
        index = proposal.get("input_index")
        if isinstance(index, int) and not isinstance(index, bool):
            self.inputs_used = max(self.inputs_used, index)

    def record_result(self, proposal: dict, result: dict) -> None:
        if proposal.get("action") != "step":
            return
        code = (result.get("response") or {}).get("error_code") if isinstance(result.get("response"), dict) else None
        if result.get("outcome") == "rejected" and code == "limit-exceeded":
            self.limit_reached = result.get("error") or code

    def decide(self, obs: PolicyObservation) -> Proposal:
        if obs.state_type != "pyboy":
            return Proposal.wait(f"not an emulator state ({obs.state_type!r})")
        if self.limit_reached:
            return Proposal.stop("recording_limit", extra={"limit": self.limit_reached})
        return self.explore(obs)

    def explore(self, obs: PolicyObservation, **extra) -> Proposal:
        if self.explorer is None:
            seed = int(self._hint(obs, "seed", 1))
            fixed = self._hint(obs, "frames_per_step")
            choices = (int(fixed),) if fixed else ExplorationInputs(seed).frame_choices
            self.explorer = ExplorationInputs(seed, frame_choices=choices)
        while self.explorer.count < self.inputs_used:  # after a restart: skip what was proposed
            next(self.explorer)
        buttons, frames = next(self.explorer)
        samples = min(int(self._hint(obs, "samples_per_step", 0)), frames)
        return step(
            buttons,
            frames,
            samples,
            f"explore input #{self.explorer.count} (seed {self.explorer.seed})",
            source="exploration",
            extra={"seed": self.explorer.seed, "input_index": self.explorer.count, **extra},
        )


class PyboyDemo(PyboyExplore):
    """Plays the demo cartridge to its win; hands any other cartridge to the explorer."""

    def __init__(self, settings: dict, session: dict):
        super().__init__(settings, session)
        self.handover_recorded = False

    def record_result(self, proposal: dict, result: dict) -> None:
        super().record_result(proposal, result)
        if proposal.get("handover"):
            self.handover_recorded = True

    def pipeline_depth(self, obs: PolicyObservation) -> int:
        """One step at a time while playing the demo cartridge from memory reads; the
        explorer's depth once it has taken over another cartridge."""
        return self.depth if self.handover_recorded else 1

    def decide(self, obs: PolicyObservation) -> Proposal:
        if obs.state_type != "pyboy":
            return Proposal.wait(f"not an emulator state ({obs.state_type!r})")
        if self.limit_reached:
            return Proposal.stop("recording_limit", extra={"limit": self.limit_reached})
        rom = obs.state.get("rom") or {}
        memory = {name: bytes.fromhex(value) for name, value in (obs.state.get("memory") or {}).items()}
        if not is_demo_cartridge(str(rom.get("title", ""))) or "magic" not in memory:
            return self._handover(obs, rom)
        samples = int(self._hint(obs, "samples_per_step", 0))
        if memory.get("won", b"\0")[0]:
            if self.session.get("stop_on_run_end", True):
                return Proposal.stop("run_ended", extra={"run_outcome": "won", "frame": obs.state.get("frame")})
            return step([], 60, min(samples, 60), "won; idling until the session ends")
        buttons = demo_next_buttons(memory)
        if memory["magic"] != b"\x5a":
            return step([], BOOT_FRAMES, min(samples, BOOT_FRAMES), "the cartridge is booting")
        x, y = memory["player_x"][0], memory["player_y"][0]
        goal = "the door" if memory["has_key"][0] else "the key"
        why = f"at ({x}, {y}), heading for {goal}" if buttons else f"at ({x}, {y}), release before the next move"
        return step(buttons, DEMO_STEP_FRAMES, min(samples, DEMO_STEP_FRAMES), why)

    def _handover(self, obs: PolicyObservation, rom: dict) -> Proposal:
        if self.handover_recorded:
            return self.explore(obs)
        self.handover_recorded = True
        handover = {
            "from": "pyboy_demo",
            "to": "pyboy_explore",
            "reason": f"cartridge {rom.get('title')!r} is not the gamerig demo cartridge",
            "rom_sha256": rom.get("sha256"),
            "seed": int(self._hint(obs, "seed", 1)),
        }
        return self.explore(obs, handover=handover)
