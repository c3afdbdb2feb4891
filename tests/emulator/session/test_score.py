"""The score section in the session core: decoding, the memory map, values read after each
step, and PyBoy's game wrappers (PyBoy 2.8.1: ``pyboy/plugins/manager.py``
``PluginManager.gamewrapper`` picks a wrapper by ``PyBoy.cartridge_title``; its numbers are
the ``cdef readonly int`` fields of ``pyboy/plugins/game_wrapper_*.pxd``).

No cartridge PyBoy wraps is in ``../shared/roms/`` (rex-runner is not one), so the wrapper path
runs on our demo cartridge with its header title set to a title PyBoy knows: real PyBoy picks
its real wrapper for it, and the numbers that wrapper computes from our room are compared with
what PyBoy's own ``game_wrapper`` says for the same inputs. What a real Tetris would score is
not tested here."""

from __future__ import annotations

import importlib
import io
import pkgutil
import warnings

import pytest

from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.emulator.session.score import Value, parse_section
from actors.emulator.session.score_map import PYBOY_WRAPPERS, MemoryMap, ScoreProblem, pyboy_title
from actors.emulator.session.score_tally import ScoreTally
from tests.emulator.cartridges import with_header

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # PyBoy's SDL2 import warning
    import pyboy.plugins
    from pyboy import PyBoy
    from pyboy.plugins.base_plugin import PyBoyGameWrapper


def retitled(rom: bytes, title: str) -> bytes:
    """``rom`` with header title ``title`` (0x134..0x142, NUL-padded) and its checksum fixed."""
    out = bytearray(rom)
    out[0x134:0x143] = title.encode("ascii").ljust(15, b"\0")
    return with_header(bytes(out))


def spec(rom: bytes, section, *, cgb: bool = False, demo: bool = False):
    return parse_section(section, rom, cgb=cgb, title="test", demo=demo)


# ---- decoding and the memory map -----------------------------------------------------------


def test_values_decode_binary_bcd_and_digits_in_either_byte_order():
    data = bytes([0x08, 0x02, 0x00])
    assert Value("s", 0xC000, 3).decode(data) == 0x000208
    assert Value("s", 0xC000, 3, byte_order="big").decode(data) == 0x080200
    assert Value("s", 0xC000, 3, "bcd").decode(data) == 208  # rex-runner's score bytes
    assert Value("s", 0xC000, 3, "bcd", "big").decode(data) == 80200
    assert Value("s", 0xD070, 3, "digits", "big").decode(bytes([1, 2, 3])) == 123
    with pytest.raises(ValueError, match="0x1F is not two BCD digits"):
        Value("s", 0xC000, 2, "bcd").decode(bytes([0x1F, 0x00]))
    with pytest.raises(ValueError, match="0x0A is not a decimal digit"):
        Value("s", 0xC000, 1, "digits").decode(bytes([10]))


def test_the_memory_map_is_the_cartridges_own(demo_rom, rex_rom):
    demo, rex = MemoryMap.of(demo_rom, False, "GAMERIG DEMO"), MemoryMap.of(rex_rom, True, "Rex Runner")
    assert (demo.rom_banks, demo.ram_bytes, rex.rom_banks, rex.ram_bytes, rex.ram_banks) == (2, 0, 2, 8192, 1)
    assert rex.check(0xA000, 2, None, "k") == 0, "cartridge RAM is read by bank, enabled or not"
    assert rex.check(0xD000, 1, 7, "k") == 7 and demo.check(0xD000, 1, 1, "k") == 1
    assert demo.check(0xFF80, 127, None, "k") is None and demo.check(0x4000, 1, 1, "k") == 1
    refused = [
        (demo, 0xA000, 1, None, "k.address", "has none"),
        (demo, 0xD000, 1, 2, "k.bank", "CGB mode only"),
        (demo, 0x4000, 1, 2, "k.bank", "2 ROM banks"),
        (demo, 0xC000, 1, 1, "k.bank", "no banks"),
        (demo, 0xFFFE, 2, None, "k.width", "run past the end of high RAM"),
        (rex, 0xBFFF, 2, None, "k.width", "run past the end of cartridge RAM"),
        (demo, 0xE000, 1, None, "k.address", "echo RAM"),
        (demo, 0xFF41, 1, None, "k.address", "I/O"),
    ]
    for memory, address, width, bank, key, words in refused:
        with pytest.raises(ScoreProblem, match=words) as err:
            memory.check(address, width, bank, "k")
        assert err.value.key == key


def test_a_value_that_cannot_be_decoded_is_null_with_its_reason_never_zero(demo_rom):
    """The game's frame counter read as BCD: once its low byte has a digit above 9 the value
    is null, the reason says which byte, and a condition on it is unknown (not false)."""
    section = {
        "values": {"score": {"address": 0xC005, "encoding": "bcd"}, "raw": 0xC005},
        "game_over": {"value": "score", "at_least": 99},
    }
    with EmulatorSession(demo_rom, score=spec(demo_rom, section)) as session:
        session.step([], 70)  # the game's code starts near frame 65
        seen = []
        for _ in range(40):
            block = session.step([], 1).score
            seen.append(block)
            if block["values"]["raw"] & 0xF > 9:
                break
    bad = seen[-1]
    assert bad["values"]["raw"] & 0xF > 9, "the counter reached a byte that is not BCD"
    assert bad["score"] is None and bad["values"]["score"] is None and bad["game_over"] is None
    assert bad["unread"] == {"score": f"byte 0x{bad['values']['raw']:02X} is not two BCD digits"}
    good = [b for b in seen if b["values"]["raw"] & 0xF <= 9 and b["values"]["raw"] >> 4 <= 9]
    assert good and all(b["score"] == int(f"{b['values']['raw']:02x}") and "unread" not in b for b in good)


def test_cartridge_ram_is_read_from_its_bank_as_pyboy_saves_it(rex_rom, parent):
    """rex-runner writes its scoreboard to cartridge RAM while it starts (from 0xA100); the
    value read by bank equals those bytes of the battery RAM PyBoy itself writes when it stops."""
    section = {"values": {"score": {"address": 0xA100, "width": 4, "byte_order": "big"}}}
    session = EmulatorSession(
        rex_rom, recording=RecordingOptions(parent=parent), score=spec(rex_rom, section, cgb=True)
    )
    read = session.step([], 700).score["score"]
    session.close()
    saved = (session.recording_path / "battery" / "battery.ram").read_bytes()
    assert read == int.from_bytes(saved[0x100:0x104], "big") and read != 0


# ---- what a run reports -------------------------------------------------------------------


def test_the_tally_keeps_final_best_first_frames_and_how_often_game_over_began():
    tally = ScoreTally()
    assert tally.as_dict() is None and set(tally.facts().values()) == {None}, "nothing read: no zeros"
    blocks = [
        (60, 0, [], False),
        (120, 30, ["a"], False),
        (180, 70, ["a", "b"], True),
        (240, 70, ["a"], True),
        (300, 5, [], False),
        (360, 40, ["a"], True),
        (420, None, [], None),
    ]
    for frame, score, milestones, over in blocks:
        tally.add({"score": score, "milestones": milestones, "game_over": over}, frame)
    assert tally.as_dict() == {
        "final": None,
        "best": 70,
        "milestones": {"a": 120, "b": 180},
        "game_over_frame": 180,
        "game_overs": 2,
        "evidence": 7,
    }
    assert tally.facts() == {"score_final": None, "score_best": 70, "milestones_reached": 2, "game_over_frame": 180}
    again = ScoreTally(dict(tally.state))  # the recorder's checkpoint: the state is JSON
    again.add_row({"event": "action_result", "response": {"frame": 480, "score": {"score": 9, "game_over": True}}})
    assert again.as_dict()["final"] == 9 and again.as_dict()["game_overs"] == 3


# ---- PyBoy's game wrappers ------------------------------------------------------------------


def test_the_wrapper_table_is_pyboys():
    """Every game wrapper PyBoy ships with numbers is listed, under the title it matches, with
    attributes its class really has (and a game_over)."""
    classes = {}
    for found in pkgutil.iter_modules(pyboy.plugins.__path__):
        module = importlib.import_module(f"pyboy.plugins.{found.name}")
        classes.update(
            {
                name: c
                for name, c in vars(module).items()
                if isinstance(c, type) and issubclass(c, PyBoyGameWrapper) and c is not PyBoyGameWrapper
            }
        )
    for title, (name, attributes) in PYBOY_WRAPPERS.items():
        cls = classes[name]
        assert cls.cartridge_title == title, name
        assert all(hasattr(cls, a) for a in (*attributes, "game_over")), name
    unlisted = {n for n in classes if n not in {w[0] for w in PYBOY_WRAPPERS.values()}}
    assert unlisted == {"GameWrapperPokemonGen1"}, "a new PyBoy game wrapper: add it to PYBOY_WRAPPERS"


@pytest.mark.parametrize("title", ["TETRIS", "SUPER MARIOLAND", "KIRBY DREAM LAN", "DMGTRIS", "MARIO DELUXAHY"])
def test_a_cartridge_pyboy_wraps_is_read_through_its_wrapper(demo_rom, title):
    rom = retitled(demo_rom, title)
    raw = PyBoy(io.BytesIO(rom), window="null", sound_emulated=False, cgb=False, log_level="ERROR")
    assert pyboy_title(rom) == raw.cartridge_title == title
    assert type(raw.game_wrapper).__name__ == PYBOY_WRAPPERS[title][0]
    raw.tick(90, True, False)
    wrapper = raw.game_wrapper
    over = wrapper.game_over() if callable(wrapper.game_over) else wrapper.game_over
    expected = {a: getattr(wrapper, a) for a in PYBOY_WRAPPERS[title][1]} | {"game_over": int(over)}
    raw.stop(save=False)
    score = parse_section(None, rom, cgb=False, title=title, demo=False)  # no section: the wrapper's
    assert score.source == "PyBoy game wrapper" and score.wrapper_class == PYBOY_WRAPPERS[title][0]
    with EmulatorSession(rom, score=score) as session:
        block = session.step([], 90).score
    assert block["values"] == expected and block["score"] == expected["score"]
    assert block["game_over"] is bool(expected["game_over"])


def test_wrapper_values_are_unread_after_a_restore_until_a_frame_runs(demo_rom, parent):
    """PyBoy updates a wrapper after each tick: right after a state load its numbers would be
    the booting instance's, so they are null with the reason, not a stale or zero number."""
    rom = retitled(demo_rom, "TETRIS")
    with EmulatorSession(
        rom,
        recording=RecordingOptions(parent=parent),
        score=parse_section(None, rom, cgb=False, title="TETRIS", demo=False),
    ) as session:
        session.step([], 90)
        saved = session.checkpoint("x")
        before = session.observe().score
        session.restore(saved.checkpoint_id)
        after = session.observe().score
        stepped = session.step([], 1).score
    assert before["score"] == 2000, "Tetris's wrapper reads our room's row 3 as its score digits"
    assert after["score"] is None and set(after["unread"]) == {"score", "level", "lines", "game_over"}
    assert "since the state was loaded" in after["unread"]["score"] and after["game_over"] is None
    assert stepped["score"] == 2000 and "unread" not in stepped
