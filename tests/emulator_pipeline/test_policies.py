"""The pyboy policies and the emulator actor's profile settings, without processes."""

from __future__ import annotations

import pytest

from actors.emulator.session.config import ConfigProblem, EmulatorConfig, load_rom, parse_regions
from actors.policy.base import PolicyObservation
from actors.policy.mcp_pyboy import AgentPolicy
from actors.policy.mcp_sts2 import Sts2AgentPolicy
from actors.policy.pyboy import ExplorationInputs, PyboyDemo, PyboyExplore
from actors.policy.registry import load_policy_class

DEMO_ROM = {"title": "GAMERIG DEMO", "sha256": "d" * 64}
OTHER_ROM = {"title": "Rex Runner", "sha256": "r" * 64}


def obs(memory: dict | None = None, rom: dict = DEMO_ROM, hints: dict | None = None, n: int = 1) -> PolicyObservation:
    state = {
        "state_type": "pyboy",
        "frame": 100,
        "memory": memory or {},
        "rom": rom,
        "held": [],
        "policy_hints": hints or {"seed": 3, "frames_per_step": None, "samples_per_step": 0},
    }
    return PolicyObservation(f"o-{n:06d}", n, "run", state, {})


def demo_memory(**over) -> dict:
    mem = {
        "player_x": 5,
        "player_y": 14,
        "has_key": 0,
        "door_open": 0,
        "won": 0,
        "joy_cur": 0,
        "joy_prev": 0,
        "magic": 0x5A,
    }
    mem.update(over)
    return {k: f"{v:02x}" for k, v in mem.items()}


def test_builtin_names_resolve():
    assert load_policy_class("pyboy_demo") is PyboyDemo
    assert load_policy_class("pyboy_explore") is PyboyExplore


def test_demo_policy_boots_walks_and_stops_on_the_win():
    p = PyboyDemo({}, {"stop_on_run_end": True})
    boot = p.decide(obs(demo_memory(magic=0)))
    assert boot.action == "step" and boot.parameters == {"buttons": [], "frames": 30, "samples": 0}
    walk = p.decide(obs(demo_memory()))
    assert walk.parameters["frames"] == 4 and len(walk.parameters["buttons"]) == 1
    release = p.decide(obs(demo_memory(joy_cur=1)))
    assert release.parameters["buttons"] == []
    won = p.decide(obs(demo_memory(won=1)))
    assert won.wish == "stop" and won.reason == "run_ended" and won.extra["run_outcome"] == "won"


def test_demo_policy_hands_any_other_cartridge_to_the_explorer_once():
    p = PyboyDemo({}, {})
    first = p.decide(obs(rom=OTHER_ROM))
    assert first.source == "exploration" and first.extra["handover"]["to"] == "pyboy_explore"
    assert first.extra["handover"]["seed"] == 3 and first.extra["handover"]["rom_sha256"] == "r" * 64
    second = p.decide(obs(rom=OTHER_ROM, n=2))
    assert "handover" not in second.extra and second.source == "exploration"


def test_exploration_is_the_seeded_stream_and_survives_a_policy_restart():
    expected = ExplorationInputs(3)
    p = PyboyExplore({}, {})
    made = [p.decide(obs(rom=OTHER_ROM, n=i)) for i in range(1, 6)]
    for proposal in made:
        buttons, frames = next(expected)
        assert proposal.parameters == {"buttons": sorted(buttons), "frames": frames, "samples": 0}
    restarted = PyboyExplore({}, {})
    for proposal in made[:4]:  # the journal replay: four proposals were recorded
        restarted.record_proposal({"action": "step", **proposal.extra})
    for proposal in made[:2]:  # (results, fewer: the rest were still in flight)
        restarted.record_result({"action": "step", **proposal.extra}, {"outcome": "accepted"})
    assert restarted.decide(obs(rom=OTHER_ROM, n=6)).parameters == made[4].parameters


def test_pipeline_depth_is_the_explorers_and_only_after_a_handover():
    assert PyboyExplore({}, {}).pipeline_depth(obs(rom=OTHER_ROM)) == 32
    assert PyboyExplore({"pipeline_depth": 3}, {}).pipeline_depth(obs(rom=OTHER_ROM)) == 3
    demo = PyboyDemo({"pipeline_depth": 5}, {})
    assert demo.pipeline_depth(obs(demo_memory())) == 1  # decides from each fresh memory read
    demo.decide(obs(rom=OTHER_ROM))
    assert demo.pipeline_depth(obs(rom=OTHER_ROM, n=2)) == 5
    for bad in (0, 65, "8", True, 2.5):
        with pytest.raises(ValueError, match="policy.settings.pipeline_depth"):
            PyboyExplore({"pipeline_depth": bad}, {})


def test_settings_override_hints_and_fixed_frames_apply():
    p = PyboyExplore({"seed": 9, "frames_per_step": 60, "samples_per_step": 2}, {})
    proposal = p.decide(obs(rom=OTHER_ROM))
    assert proposal.parameters["frames"] == 60 and proposal.parameters["samples"] == 2
    assert proposal.extra["seed"] == 9


def test_a_recording_limit_ends_the_session():
    p = PyboyExplore({}, {})
    p.record_result(
        {"action": "step"},
        {
            "outcome": "rejected",
            "error": "limit-exceeded: maxFrames",
            "response": {"error_code": "limit-exceeded", "effect": "none"},
        },
    )
    assert p.decide(obs(rom=OTHER_ROM)).wish == "stop"


def _setting(values: dict):
    return lambda key, default=None: values.get(key, default)


def test_profile_settings_are_checked_with_the_key_named(tmp_path):
    assert load_rom("")[1] == "builtin" and load_rom(None)[1] == "builtin"
    with pytest.raises(ConfigProblem, match="game.rom"):
        load_rom(str(tmp_path / "missing.gb"))
    assert parse_regions({"hp": [0xC100, 2], "lives": 0xC102}) == {"hp": (0xC100, 2), "lives": (0xC102, 1)}
    with pytest.raises(ConfigProblem, match="emulator.memory_regions.bad"):
        parse_regions({"bad": [0xFFFF, 4]})
    with pytest.raises(ConfigProblem, match="emulator.recording_limits"):
        EmulatorConfig.from_profile(_setting({"emulator.recording_limits": {"maxFrames": 0}}))
    config = EmulatorConfig.from_profile(_setting({"emulator.recording_limits": {"maxFrames": 6000}}))
    assert config.limits.max_frames == 6000 and config.checkpoint_every_frames == 3600


def test_module_strings_of_recorded_mcp_profiles_still_load_their_policies():
    """A recorded MCP session's profile names its policy by the module string its server wrote;
    each still loads the same policy class as its registered name."""
    assert load_policy_class("supervisor.mcp.bridge:AgentPolicy") is AgentPolicy
    assert load_policy_class("supervisor.mcp.sts2_policy:Sts2AgentPolicy") is Sts2AgentPolicy
    assert load_policy_class("mcp_pyboy") is AgentPolicy and load_policy_class("mcp_sts2") is Sts2AgentPolicy


def test_a_user_policy_written_against_the_old_observation_name_still_loads(tmp_path, monkeypatch):
    (tmp_path / "olduser.py").write_text(
        "from actors.policy.base import Observation, Policy, Proposal\n"
        "class Mine(Policy):\n"
        "    def decide(self, obs: Observation) -> Proposal:\n"
        "        return Proposal.wait('x')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.warns(DeprecationWarning, match="PolicyObservation"):
        cls = load_policy_class("olduser:Mine")
    assert cls.__name__ == "Mine" and cls({}, {}).decide(obs({})).wish == "wait"
