"""A score for Game Boy runs, end to end: the demo cartridge won by ``pyboy_demo`` and
rex-runner explored by ``pyboy_explore``, each step's values in the journal, the run's score in
``session.json`` and in the results columns (``CapturedSession``); and every bad section refused by
``supervisor validate`` naming the key.

The expected values are computed here, independently of the code under test: the recording's
inputs are replayed in a plain PyBoy and the cartridge's memory is read and decoded by this
file after each step."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import warnings

import pytest

from actors.emulator.cartridge import build_rom
from supervisor.capture.coverage import render, scan
from supervisor.fleet.report import table
from supervisor.fleet.results import FIELDS, read_journal
from tests.emulator.session.test_score import retitled
from tests.harness import REPO

from .conftest import PYBOY_DEMO, REX_RUNNER, recording_events

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # PyBoy's SDL2 import warning
    from pyboy import PyBoy

pytestmark = pytest.mark.timeout(90)

#: rex-runner's score, as found by watching its memory (docs/emulator.md, "A score for your
#: cartridge"): six BCD digits, lowest two first, at 0xC1A3; the game's state at 0xC1A2
#: (0 running or on the title menu, 1 paused, 2 game over, 3 restarting, 4 back to the menu)
REX_SECTION = (
    "emulator.score={values: {score: {address: 0xC1A3, width: 3, encoding: bcd}, state: 0xC1A2}, "
    "score: score, milestones: {hundred: {value: score, at_least: 100}}, "
    "game_over: {value: state, equals: 2}}"
)


def replay(rom: bytes, inputs: list[dict], cgb: bool, read) -> list[tuple[int, object]]:
    """The recording's inputs (one branch) in a plain PyBoy: ``(frame, read(memory))`` after each."""
    assert {i["branchId"] for i in inputs} == {"branch-0001"}, "one route, no restores"
    pb = PyBoy(io.BytesIO(rom), window="null", sound_emulated=False, cgb=cgb, log_level="ERROR")
    held, frame, out = set(), 0, []
    for step in inputs:
        wanted = set(step["buttons"])
        for b in sorted(held - wanted):
            pb.button_release(b)
        for b in sorted(wanted - held):
            pb.button_press(b)
        held = wanted
        pb.tick(step["frames"], False, False)
        frame += step["frames"]
        out.append((frame, read(pb.memory)))
    pb.stop(save=False)
    return out


def bcd(*data: int) -> int:
    """BCD bytes, lowest two digits first."""
    return int("".join(f"{b:02x}" for b in reversed(data)))


def test_the_demo_cartridge_reports_its_milestones_at_the_frames_they_were_reached(pyboy_session):
    s = pyboy_session()
    assert s.wait(60) == 0, s.stderr[-3000:]
    started = s.events("emulator_started")[0]["score"]
    assert started["source"] == "demo cartridge" and started["score"] == "moves"
    demo = replay(
        build_rom(),
        recording_events(s, "input"),
        False,
        lambda m: {
            "moves": m[0xC00A],
            "has_key": m[0xC002],
            "door_open": m[0xC003],
            "won": m[0xC004],
            "game_frames": m[0xC005] | m[0xC006] << 8,
        },
    )
    first = {}
    for frame, mem in demo:
        for milestone, value in (("got_key", "has_key"), ("door_open", "door_open"), ("won", "won")):
            if mem[value] and milestone not in first:
                first[milestone] = frame
    assert 0 < first["got_key"] < first["door_open"] < first["won"] == demo[-1][0]
    summary = s.summary()["score"]
    assert summary == {
        "final": demo[-1][1]["moves"],
        "best": max(m["moves"] for _, m in demo),
        "milestones": first,
        "game_over_frame": first["won"],
        "game_overs": 1,
        "evidence": len(demo),
    }
    results = s.events("action_result")
    assert [r["response"]["score"]["values"] for r in results] == [mem for _, mem in demo], "every step's values"
    facts = read_journal(s.session_dir).facts()
    assert (facts["score_final"], facts["score_best"], facts["milestones_reached"], facts["game_over_frame"]) == (
        summary["final"],
        summary["best"],
        3,
        first["won"],
    )
    state = _state(s, s.events("observation")[-1])
    assert state["score"]["milestones"] == ["got_key", "door_open", "won"] and state["score"]["game_over"] is True
    line = (
        f"{os.path.basename(s.session_dir)}: score {summary['final']} (best {summary['best']}); got_key at frame "
        f"{first['got_key']}, door_open at frame {first['door_open']}, won at frame {first['won']}; "
        f"game over at frame {first['won']}"
    )
    assert line in render(scan(s.session_dir), []).splitlines(), "capture coverage shows the score"
    row = (
        dict.fromkeys(FIELDS)
        | {"fleet": "f", "index": 0, "slot": "s0", "cell": "demo", "repeat": 0, "outcome": "ok"}
        | facts
    )
    assert f"demo {1:>6} {summary['final']:>10} {summary['best']:>8} {1:>9}" in table([row]).splitlines(), (
        "fleet report shows the score"
    )


def test_rex_runner_scores_while_it_runs_and_each_death_is_a_game_over(pyboy_session, rex_rom_copy):
    """Seed 12's exploration starts a game three times in 36 steps of 60 frames; the dino dies
    each time (the third game's score passes 100, so all three BCD bytes are read)."""
    s = pyboy_session(f"game.rom={rex_rom_copy}", "game.seed=12", REX_SECTION, args=("--max-steps", "36"))
    assert s.wait(60) == 0, s.stderr[-3000:]
    rex = replay(
        REX_RUNNER.read_bytes(),
        recording_events(s, "input"),
        True,
        lambda m: {"score": bcd(m[0xC1A3], m[0xC1A4], m[0xC1A5]), "state": m[0xC1A2]},
    )
    results = s.events("action_result")
    assert len(results) == len(rex) == 36
    assert [r["response"]["score"]["values"] for r in results] == [mem for _, mem in rex]
    scores = [mem["score"] for _, mem in rex]
    assert any(b > a > 0 for a, b in zip(scores, scores[1:])), "the score climbs while the dino runs"
    deaths = [
        frame
        for (frame, mem), (_, before) in zip(rex, [(0, {"state": 0})] + rex)
        if mem["state"] == 2 and before["state"] != 2
    ]
    assert len(deaths) == 3
    summary = s.summary()["score"]
    assert summary["best"] == max(scores) > 100 and summary["final"] == scores[-1]
    assert summary["game_over_frame"] == deaths[0] and summary["game_overs"] == 3
    assert summary["milestones"] == {"hundred": next(f for f, mem in rex if mem["score"] >= 100)}
    assert [r["response"]["score"]["game_over"] for r in results] == [mem["state"] == 2 for _, mem in rex]


def _state(s, row: dict) -> dict:
    with open(os.path.join(s.capture, row["path"]), encoding="utf-8") as fh:
        return json.load(fh)


def _validate(*sets: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "supervisor", "validate", PYBOY_DEMO]
    for kv in sets:
        cmd += ["--set", kv]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=60)


def test_validate_refuses_each_bad_score_section_naming_the_key(tmp_path):
    tetris = tmp_path / "tetris-titled.gb"
    tetris.write_bytes(retitled(build_rom(), "TETRIS"))
    value = "emulator.score.values.score"
    section = "emulator.score={values: {moves: 0xC00A, won: 0xC004}, score: moves"  # closed by each case
    cases = [  # (--set ..., the key named, words of the problem)
        ((f"{value}={{address: 0x10000}}",), f"{value}.address", "outside the Game Boy's address space"),
        ((f"{value}={{address: 0xA000}}",), f"{value}.address", "cartridge RAM, and cartridge 'GAMERIG DEMO' has none"),
        ((f"{value}={{address: 0xFF44}}",), f"{value}.address", "I/O register"),
        ((f"{value}={{address: 0x4000, bank: 9}}",), f"{value}.bank", "this cartridge has 2 ROM banks"),
        ((f"{value}={{address: 0xFFFE, width: 2}}",), f"{value}.width", "run past the end of high RAM at 0xFFFE"),
        ((f"{value}={{address: 0xC000, width: 9}}",), f"{value}.width", "a value is 1..8 bytes wide"),
        ((f"{value}={{address: 0xC000, encoding: packed}}",), f"{value}.encoding", "not one of binary, bcd, digits"),
        ((f"{value}={{adress: 0xC000}}",), f"{value}.adress", "did you mean 'address'"),
        (
            (f"{section}, milestones: {{key: {{at_least: 1}}}}}}",),
            "emulator.score.milestones.key.value",
            "names no value: give value: <one of moves, won>",
        ),
        (
            (f"{section}, milestones: {{key: {{value: keys, at_least: 1}}}}}}",),
            "emulator.score.milestones.key.value",
            "'keys' is not one of the values (moves, won)",
        ),
        (
            (f"{section}, game_over: {{value: won, at_least: 300}}}}",),
            "emulator.score.game_over.at_least",
            "can never hold: value 'won' (1 byte(s), binary) is at most 255",
        ),
        (
            (f"{section}, game_over: {{value: won, bit: 8}}}}",),
            "emulator.score.game_over.bit",
            "bit 8 does not exist in value 'won' (8 bits: 0..7)",
        ),
        (
            ("emulator.score={values: {moves: 0xC00A}, score: steps}",),
            "emulator.score.score",
            "'steps' is not one of the values",
        ),
        (
            ("emulator.score={values: {score: {wrapper: score}}}",),
            f"{value}.wrapper",
            "PyBoy has no game wrapper for cartridge 'GAMERIG DEMO'",
        ),
        (
            (f"game.rom={tetris}", f"{value}={{address: 0xC000}}"),
            value,
            "PyBoy's game wrapper for 'TETRIS' (GameWrapperTetris) provides 'score' itself",
        ),
        (("emulator.score=[0xC000]",), "emulator.score", "expected dict or null"),
    ]
    for sets, key, words in cases:
        done = _validate(*sets)
        assert done.returncode == 2, (sets, done.stdout, done.stderr)
        assert done.stderr.startswith(f"error: {PYBOY_DEMO}: ")
        assert f": {key}: " in done.stderr and words in done.stderr, (sets, done.stderr)
        assert "Traceback" not in done.stderr
    ok = _validate(f"game.rom={tetris}", "emulator.score.values.apples={address: 0xC00A}")
    assert ok.returncode == 0, ok.stderr
