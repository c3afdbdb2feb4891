"""The built-in Game Boy policies (``game.backend: pyboy``).

* ``pyboy_explore`` (:class:`PyboyExplore`) — seeded random inputs for any cartridge
  (``actors.emulator.session.policy.ExplorationInputs``). The seed is ``policy.settings.seed``, else
  ``game.seed`` (passed on by the observer in ``policy_hints``). ``frames_per_step`` fixes
  the frames of every step (else the explorer picks 4..60); ``samples_per_step`` asks for
  sampled frames. The n-th proposal is the n-th input of the seeded stream, also after a
  restart of the policy (the count is rebuilt from the recorded proposals). Its inputs do
  not depend on what it observes, so it pipelines: ``policy.settings.pipeline_depth``
  (default 32, 1..64) steps may be in flight at once (see ``actors.policy.base``).
* ``pyboy_demo`` (:class:`PyboyDemo`) — plays our demo cartridge to its win from WRAM reads
  (``demo_next_buttons``) and ends the session (``run_ended``, ``run_outcome: won``) once the
  win flag is set. Given any other cartridge it hands over to ``pyboy_explore`` by itself
  and records it: the first exploration proposal carries ``handover: {...}``.

Every executed proposal is ``action: "step"`` with ``parameters: {"buttons", "frames",
"samples"}``. A step refused because a recording limit is reached ends the session
(``recording_limit``): further steps would be refused too.
"""
from __future__ import annotations

from actors.emulator.session.policy import DEMO_STEP_FRAMES, ExplorationInputs, demo_next_buttons, is_demo_cartridge

from .base import Policy, PolicyObservation, Proposal

BOOT_FRAMES = 30  # a neutral step while the demo cartridge initialises
DEFAULT_PIPELINE_DEPTH = 32
MAX_PIPELINE_DEPTH = 64


def step(buttons, frames: int, samples: int, reason: str, **kw) -> Proposal:
    return Proposal("step", {"buttons": sorted(buttons), "frames": int(frames), "samples": int(samples)},
                    reason, **kw)


class PyboyExplore(Policy):
    """Seeded exploration of any cartridge."""

    def __init__(self, settings: dict, session: dict):
        super().__init__(settings, session)
        self.explorer: ExplorationInputs | None = None
        self.inputs_used = 0  # the highest input index of a recorded proposal (replayed after a restart)
        self.limit_reached: str | None = None
        depth = settings.get("pipeline_depth", DEFAULT_PIPELINE_DEPTH)
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_PIPELINE_DEPTH:
            raise ValueError(f"policy.settings.pipeline_depth: expected an integer 1..{MAX_PIPELINE_DEPTH}, "
                             f"got {depth!r}")
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
        return step(buttons, frames, samples, f"explore input #{self.explorer.count} (seed {self.explorer.seed})",
                    source="exploration", extra={"seed": self.explorer.seed, "input_index": self.explorer.count,
                                                 **extra})


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
        handover = {"from": "pyboy_demo", "to": "pyboy_explore",
                    "reason": f"cartridge {rom.get('title')!r} is not the gamerig demo cartridge",
                    "rom_sha256": rom.get("sha256"), "seed": int(self._hint(obs, "seed", 1))}
        return self.explore(obs, handover=handover)
