"""The agent policy for Game Boy cartridges (``policy.module: pyboy_llm``, ``game.backend:
pyboy``): a vision model chooses every button press.

On every emulator observation it asks the ``buttons`` question
(``actors.model_client.questions.ButtonsQuestion``) with:

* the screenshot: the frame PNG the emulator stored for this observation (``frame_png``,
  under the capture root), sent as an image;
* the goal (``policy.settings.goal``, one sentence);
* a context: the cartridge's title, the frame number, the buttons held, the named memory
  values (``emulator.memory_regions``, hex) and what is done with the answer;
* the memory: the last ``memory`` presses with their results and what changed after each
  (named memory values, the picture; ``agent.Memory``);
* why earlier answers to this decision could not be used (``feedback``).

**Presses and steps.** The answer is an ordered list of 1..``max_presses`` presses; only the
first is carried out, as one ``step`` holding that button for ``frames`` frames (default
``emulator.frames_per_step``, else 30); then the model sees the next screen and answers again.
A step holds one set of buttons for its frames, so an ordered list cannot be one step, and
holding the presses together would press at once what the model asked to press one after
another; the rest of the list was planned on a screen that is gone after the first press. The
whole answer is kept (``agent.presses``). A button named in two decisions in a row stays held
in between: the game sees one long press, not two.

An answer that cannot be used (not JSON, a button not offered, too many presses: ``model_error``
rows) is never sent; the model is asked again with the reason, ``invalid_retries`` times; then
the fallback applies: ``heuristic``, the next input of ``pyboy_explore``'s seeded stream (seed
``policy.settings.seed``, else ``game.seed``), held for the same ``frames``; or ``wait``
(nothing is sent; the next read asks again). On our demo cartridge the session ends
``run_ended`` (``run_outcome: won``) once its win flag is set, as ``pyboy_demo`` does.

Each decision's proposal row carries ``agent``: ``template`` (``builtin:buttons`` and the
SHA-256 of the question's wording, ``ButtonsQuestion.PROMPT``: the buttons question has its
own prompt, no template file applies), the buttons offered, ``max_presses``, ``frames``, the
memory's size, one record per call (``used``, or ``error`` with its kind and call id), the
``outcome`` (``chosen`` or ``fallback``) and, when chosen, ``presses``. ``source`` is ``model``,
or ``heuristic_fallback`` / ``agent_wait`` with ``agent_fallback`` saying why.
"""

from __future__ import annotations

import hashlib
import os

from actors.emulator.cartridge.layout import is_demo_cartridge
from actors.model_client.questions import GAMEBOY_BUTTONS, ButtonsQuestion

from .agent import AgentSettingError, Memory, ask, read_asking_settings
from .base import PolicyObservation, Proposal
from .pyboy import PyboyExplore, step

KIND = ButtonsQuestion.kind
TEMPLATE = {"name": "builtin:buttons", "sha256": hashlib.sha256(ButtonsQuestion.PROMPT.encode()).hexdigest()}
DEFAULT_FRAMES = 30
MAX_FRAMES = 3600
MAX_PRESSES = 16
#: named memory values listed in one memory line at most (the picture is said apart)
CHANGES_SHOWN = 16
KEYS = (
    "goal",
    "frames",
    "max_presses",
    "buttons",
    "memory",
    "invalid_retries",
    "fallback",
    "seed",
    "samples_per_step",
    "model_deadline_s",
    "consult_model",
)


def read_settings(settings: dict) -> dict:
    """``policy.settings`` of the Game Boy agent, with defaults; ``AgentSettingError`` naming the
    key (``policy.settings.<key>: ...``) for anything it cannot honour."""
    settings = dict(settings or {})
    for key in settings:
        if key == "prompt_template":
            raise AgentSettingError(
                "policy.settings.prompt_template: the pyboy_llm policy asks the buttons "
                "question, whose prompt is built in (no template applies)"
            )
        if key not in KEYS:
            raise AgentSettingError(
                f"policy.settings.{key}: not a setting of the pyboy_llm policy (known: {', '.join(KEYS)})"
            )
    if settings.get("consult_model", True) is not True:
        raise AgentSettingError(
            "policy.settings.consult_model: the pyboy_llm policy always asks its model "
            "(use policy.module: pyboy_explore to play without one)"
        )
    goal = settings.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise AgentSettingError(
            f"policy.settings.goal: the pyboy_llm policy needs a goal, one sentence "
            f"saying what to achieve on this cartridge; got {goal!r}"
        )
    frames = settings.get("frames")
    if frames is not None and (
        isinstance(frames, bool) or not isinstance(frames, int) or not 1 <= frames <= MAX_FRAMES
    ):
        raise AgentSettingError(
            f"policy.settings.frames: expected a whole number 1..{MAX_FRAMES} "
            f"(or null: emulator.frames_per_step), got {frames!r}"
        )
    presses = settings.get("max_presses", 4)
    if isinstance(presses, bool) or not isinstance(presses, int) or not 1 <= presses <= MAX_PRESSES:
        raise AgentSettingError(
            f"policy.settings.max_presses: expected a whole number 1..{MAX_PRESSES}, got {presses!r}"
        )
    buttons = settings.get("buttons", list(GAMEBOY_BUTTONS))
    if (
        not isinstance(buttons, list)
        or not buttons
        or any(b not in GAMEBOY_BUTTONS for b in buttons)
        or len(set(buttons)) != len(buttons)
    ):
        raise AgentSettingError(
            f"policy.settings.buttons: expected a list of distinct buttons from "
            f"{', '.join(GAMEBOY_BUTTONS)}, got {buttons!r}"
        )
    return {
        **read_asking_settings(settings),
        "goal": goal.strip(),
        "frames": frames,
        "max_presses": presses,
        "buttons": list(buttons),
    }


def check_settings(settings: dict) -> None:
    """What ``supervisor validate`` checks of the settings (the profile's other needs are
    checked by ``supervisor.profile``)."""
    read_settings(settings)


def summary(state: dict) -> dict:
    """What the memory compares between reads: the picture and the named memory values."""
    return {"picture": state.get("frame_rgba_sha256"), "values": dict(state.get("memory") or {})}


def changes(before: dict, now: dict) -> str:
    """``player_x 05 -> 06, ..., the picture``: the named values that changed, and the picture."""
    old, new = before.get("values") or {}, now.get("values") or {}
    moved = [
        f"{name} {old.get(name)} -> {new.get(name)}"
        for name in sorted(set(old) | set(new))
        if old.get(name) != new.get(name)
    ]
    parts = moved[:CHANGES_SHOWN]
    if len(moved) > CHANGES_SHOWN:
        parts.append(f"{len(moved) - CHANGES_SHOWN} more values")
    if before.get("picture") != now.get("picture"):
        parts.append("the picture")
    return ", ".join(parts) or "nothing"


def is_won_demo(state: dict) -> bool:
    """Our demo cartridge, initialised, with its win flag set."""
    memory = state.get("memory") or {}
    return (
        is_demo_cartridge(str((state.get("rom") or {}).get("title", "")))
        and memory.get("magic") == "5a"
        and memory.get("won") not in (None, "00")
    )


class PyboyAgent(PyboyExplore):
    """See the module docstring."""

    def __init__(self, settings: dict, session: dict):
        self.agent = read_settings(settings)
        super().__init__(dict(settings or {}), session)
        self.memory = Memory(self.agent["memory"], summary, changes)
        self.where = "frame ?"  # the frame of the newest read: a memory line's place
        self.advisor = None  # set by the policy actor (None: no model configured)

    def pipeline_depth(self, obs: PolicyObservation) -> int:
        return 1  # every decision sees the screen its step starts from

    def frames(self, obs: PolicyObservation) -> int:
        if self.agent["frames"] is not None:
            return self.agent["frames"]
        return int((obs.state.get("policy_hints") or {}).get("frames_per_step") or DEFAULT_FRAMES)

    def _hint(self, obs: PolicyObservation, name: str, default=None):
        if name == "frames_per_step":  # the fallback's exploration steps last as long as the model's
            return self.frames(obs)
        return super()._hint(obs, name, default)

    # -- memory ---------------------------------------------------------------------------
    def observe(self, obs: PolicyObservation) -> None:
        if obs.state_type == "pyboy":
            self.where = f"frame {obs.state.get('frame')}"
            self.memory.observe(obs.state)

    def record_result(self, proposal: dict, result: dict) -> None:
        super().record_result(proposal, result)
        if proposal.get("action") != "step":
            return
        params = proposal.get("parameters") or {}
        args = {
            "buttons": "+".join(params.get("buttons") or []) or "none",
            "frames": params.get("frames"),
            "by": "you" if proposal.get("source") == "model" else "the exploration fallback",
        }
        outcome = str(result.get("outcome"))
        error = str(result.get("error") or "") if outcome != "accepted" else ""
        self.memory.record_result(self.where, "press", args, outcome, error)

    # -- deciding -------------------------------------------------------------------------
    def decide(self, obs: PolicyObservation) -> Proposal:
        if obs.state_type != "pyboy":
            return Proposal.wait(f"not an emulator state ({obs.state_type!r})")
        if self.limit_reached:
            return Proposal.stop("recording_limit", extra={"limit": self.limit_reached})
        st = obs.state
        if is_won_demo(st) and self.session.get("stop_on_run_end", True):
            return Proposal.stop("run_ended", extra={"run_outcome": "won", "frame": st.get("frame")})
        frames = self.frames(obs)
        samples = min(int(self._hint(obs, "samples_per_step", 0)), frames)
        lines = self.memory.lines()
        info = {
            "template": dict(TEMPLATE),
            "buttons": self.agent["buttons"],
            "max_presses": self.agent["max_presses"],
            "frames": frames,
            "memory": len(lines),
        }
        if self.advisor is None:
            return self._fallback(obs, {**info, "attempts": []}, "no model configured", [])
        png, problem = self._screenshot(st)
        if png is None:
            return self._fallback(obs, {**info, "attempts": []}, problem, [])
        question = {
            "screenshot_png": png,
            "goal": self.agent["goal"],
            "buttons": self.agent["buttons"],
            "max_presses": self.agent["max_presses"],
            "memory": lines,
            "context": {
                "cartridge": (st.get("rom") or {}).get("title"),
                "frame": st.get("frame"),
                "held": st.get("held"),
                "memory_values": st.get("memory") or {},
                "what_happens": f"only your first press is carried out: that button is "
                f"held for {frames} frames, then you see the next screen",
            },
        }
        answered: list = []

        def build(feedback: list[str]) -> dict:
            return {**question, "feedback": feedback}

        def use(answer: dict):
            presses = answer.get("buttons")
            if not isinstance(presses, list) or not presses or presses[0] not in self.agent["buttons"]:
                return None, f"buttons must start with one of {self.agent['buttons']}, got {presses!r}"
            answered[:] = presses
            return step([presses[0]], frames, samples, ""), None

        decision = ask(self.advisor, KIND, build, use, self.agent["invalid_retries"], obs.observation_id)
        info["attempts"] = decision.attempts
        if decision.chosen is None:
            return self._fallback(obs, info, decision.why_not, decision.evidence)
        p = decision.chosen
        p.source, p.model_evidence = "model", decision.evidence
        p.reason = f"the model's first press: {p.reason}" if p.reason else "the model's first press"
        p.extra["agent"] = {**info, "outcome": "chosen", "presses": list(answered)}
        return p

    def _screenshot(self, state: dict) -> tuple[bytes | None, str]:
        """The frame PNG the emulator stored for this read (on disk before its reply), or why not."""
        rel = state.get("frame_png")
        if not isinstance(rel, str) or not rel:
            return None, (
                "no frame stored for this read (emulator.record is false, or the recording's byte budget is spent)"
            )
        try:
            with open(os.path.join(self.advisor.ctx.capture_root, rel), "rb") as fh:
                return fh.read(), ""
        except OSError as exc:
            return None, f"the frame {rel} cannot be read: {exc.strerror or exc}"

    def _fallback(self, obs: PolicyObservation, info: dict, why: str, evidence: list) -> Proposal:
        info = {**info, "outcome": "fallback", "fallback": self.agent["fallback"]}
        if self.agent["fallback"] == "wait":
            p = Proposal.wait(f"agent: no usable answer ({why}); nothing sent, reading again")
            p.source = "agent_wait"
        else:
            p = self.explore(obs)
            p.source = "heuristic_fallback"
        p.model_evidence = list(evidence) or None
        p.extra.update(agent=info, agent_fallback=why or "no usable answer")
        return p


__all__ = ["PyboyAgent", "read_settings", "check_settings", "TEMPLATE"]
