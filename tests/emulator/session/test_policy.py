"""Policy helpers: the demo policy wins from memory reads; the explorer is seeded."""

from __future__ import annotations

from itertools import islice

from actors.emulator.cartridge import layout
from actors.emulator.cartridge.layout import DEMO_REGIONS, is_demo_cartridge
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.policy.pyboy import DEMO_STEP_FRAMES, ExplorationInputs, demo_next_buttons


def _memory(**overrides):
    base = dict.fromkeys(layout.WRAM, 0)
    base.update(magic=layout.MAGIC, player_x=layout.START[0], player_y=layout.START[1])
    base.update(overrides)
    return base


def test_pure_decisions():
    assert demo_next_buttons(_memory(magic=0)) == frozenset(), "still booting"
    assert demo_next_buttons(_memory()) == {"right"}, "shortest way to the key starts rightwards"
    assert demo_next_buttons(_memory(joy_cur=1)) == frozenset(), "release before the next press"
    assert demo_next_buttons(_memory(won=1)) == frozenset()
    door_x, door_y = layout.DOOR
    assert demo_next_buttons(_memory(has_key=1, player_x=door_x + 1, player_y=door_y)) == {"left"}
    assert demo_next_buttons({k: bytes([v]) for k, v in _memory().items()}) == {"right"}


def test_demo_policy_reaches_the_win_flag(demo_rom, parent):
    with EmulatorSession(demo_rom, memory_regions=DEMO_REGIONS, recording=RecordingOptions(parent=parent)) as session:
        assert is_demo_cartridge(session.rom.title)
        session.step([], 60)
        for _ in range(400):
            memory = session.observe().memory
            if memory["won"] == b"\x01":
                break
            session.step(demo_next_buttons(memory), DEMO_STEP_FRAMES)
        assert memory["won"] == b"\x01" and memory["has_key"] == b"\x01" and memory["door_open"] == b"\x01"
        assert (memory["player_x"][0], memory["player_y"][0]) == layout.DOOR
        session.stop("passed", "the policy walked out of the door")


def test_exploration_is_seeded_and_includes_neutral_steps():
    first = list(islice(ExplorationInputs(5), 60))
    assert first == list(islice(ExplorationInputs(5), 60))
    assert first != list(islice(ExplorationInputs(6), 60))
    assert all(buttons == frozenset() for buttons, _ in first[5::6])
    assert not is_demo_cartridge("REX RUNNER")
