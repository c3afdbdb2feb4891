"""A run seed asked by ``policy.settings.run_seed``: the seeded embark, the marks each run gets
(``seeded`` with ``seed_applied`` or ``unseeded``, actors/policy/run_state.py ``RunSeed``) and
the runs list that shows them (supervisor/capture/facts.py ``CapturedSession``).

What the game answers is the mod's (McpMod.Actions.cs ``ExecuteCharacterSelectMenuOption``
1620-1643: samples vendor/sts2mcp/reply__seed*.json; the built-in game's knob
``char_select_lobby`` picks which, docs/game.md). One whole session against the built-in game
where a lobby takes the seed; the other paths through the policy alone (tests/policy/driver.py),
fed the samples' exact texts.
"""

from __future__ import annotations

import json

import pytest

from actors.policy.sts2 import Sts2Heuristic
from supervisor.capture.facts import CapturedSession, observation_reader

from .driver import Driver, sample

pytestmark = pytest.mark.timeout(120)

SEED = "GAMERIG7"
NOT_SUPPORTED = sample("reply__seed_not_supported")["error"]
FAILED = sample("reply__seed_failed")["error"]
EMBARKED = f"Embarking on run (seed: {SEED})"  # reply__seeded_embark's text, for this seed


def character_select(picked: bool) -> dict:
    options = sample("menu__character_select")["options"]
    for o in options:
        if o["name"] in ("confirm", "embark"):
            o["enabled"] = picked
    return sample("menu__character_select", options=options)


def in_run(d: Driver, run_id: str, seed) -> None:
    """A map read inside a run, with the identity the observer read for it."""
    d.see(sample("map"), run_identity={"status": "ok", "run_id": run_id, "seed": seed})


def embark_with(d: Driver, outcome: str = "accepted", error: str | None = None, message: str | None = None) -> dict:
    """Pick a character, then answer the embark proposal; returns its parameters."""
    d.play(character_select(False))
    p = d.see(character_select(True))
    assert p.action == "menu_select" and p.parameters["option"] in ("embark", "confirm"), p
    response = (
        {"status": "ok", "message": message or "Embarking on run"}
        if outcome != "rejected"
        else {"status": "error", "error": error}
    )
    d.policy.record_result(d.rows[-1], {"outcome": outcome, "http_status": 200, "response": response})
    return dict(p.parameters)


def marks(d: Driver) -> list[dict]:
    return [{k: r[k] for k in ("seeded", "seed_applied", "unseeded") if k in r} for r in d.rows if "seeded" in r]


def test_a_lobby_that_takes_the_seed_gives_a_seeded_run_in_the_journal_and_the_runs_list(session_factory):
    s = session_factory("game.knobs={char_select_lobby: 2, acts: 1}", f"policy.settings={{run_seed: '  {SEED} '}}")
    assert s.wait(110) == 0, s.stderr
    rows = s.rows()
    embarks = [
        r
        for r in rows
        if r["event"] == "action_attempt"
        and r["action"] == "menu_select"
        and r["parameters"].get("option") in ("embark", "confirm")
    ]
    assert [e["parameters"] for e in embarks] == [{"option": "embark", "seed": SEED}]
    result = next(r for r in rows if r["event"] == "action_result" and r["attempt_id"] == embarks[0]["attempt_id"])
    assert result["outcome"] == "accepted" and result["response"]["message"] == EMBARKED
    idents = [r["run_identity"] for r in rows if r["event"] == "observation" and r.get("run_identity")]
    reported = {i["seed"] for i in idents if i.get("status") == "ok"}
    assert reported == {SEED}, "the game's compendium reports the run's seed"
    marked = [r for r in rows if r["event"] == "proposal" and "seeded" in r]
    assert len(marked) == 1 and marked[0]["seeded"] is True
    applied = marked[0]["seed_applied"]
    assert applied == {
        "requested": SEED,
        "embark_reply": EMBARKED,
        "reported_seed": SEED,
        "run_id": applied["run_id"],
    } and applied["run_id"].startswith("modded:profile1:")
    facts = CapturedSession(observation_reader(s.capture))
    for row in rows:
        facts.add(row)
    assert s.summary()["reason"] == "run_ended"
    assert [r["seeded"] for r in facts.runs] == [True]


@pytest.mark.parametrize("refusal", [NOT_SUPPORTED, FAILED])
def test_a_refused_seed_is_not_asked_again_and_the_run_is_marked_unseeded(refusal):
    d = Driver({"run_seed": SEED})
    assert embark_with(d, "rejected", refusal) == {"option": "embark", "seed": SEED}
    assert marks(d) == []
    assert embark_with(d) == {"option": "embark"}, "the seed was refused: embark without it"
    d.see(sample("map"))
    assert marks(d) == [{"seeded": False, "unseeded": {"reason": "refused", "requested": SEED, "error": refusal}}]
    d.play(sample("game_over"))
    assert embark_with(d) == {"option": "embark"}, "the next run: the game's flows do not change"
    d.see(sample("map"))
    assert len(marks(d)) == 2 and marks(d)[1] == marks(d)[0]


def test_another_refusal_of_a_seeded_embark_says_nothing_of_the_seed():
    d = Driver({"run_seed": SEED})
    embark_with(d, "rejected", "Action rejected: the game is busy")
    assert embark_with(d, message=EMBARKED) == {"option": "embark", "seed": SEED}
    assert marks(d) == []


def test_a_seed_the_game_took_is_confirmed_by_the_new_runs_identity_only():
    d = Driver({"run_seed": 7})
    d.play(sample("menu__main"))
    for run_id in ("modded:profile1:100", "modded:profile1:160"):
        assert embark_with(d, message="Embarking on run (seed: 7)") == {"option": "embark", "seed": "7"}
        d.see(sample("unknown__no_run_state"))
        in_run(d, "modded:profile1:100", "7")  # the first run; for the second, lagging metadata
        if run_id != "modded:profile1:100":
            assert len(marks(d)) == 1, "an identity seen before the embark confirms nothing"
            in_run(d, run_id, "7")
        in_run(d, run_id, "7")
        d.play(sample("game_over"))
    assert marks(d) == [
        {
            "seeded": True,
            "seed_applied": {
                "requested": "7",
                "embark_reply": "Embarking on run (seed: 7)",
                "reported_seed": "7",
                "run_id": run_id,
            },
        }
        for run_id in ("modded:profile1:100", "modded:profile1:160")
    ]


def test_an_accepted_seed_the_game_reports_otherwise_or_never_is_unseeded():
    d = Driver({"run_seed": SEED})
    embark_with(d, message=EMBARKED)
    in_run(d, "modded:profile1:1", "OTHER")
    assert marks(d)[-1]["seeded"] is False and marks(d)[-1]["unseeded"]["reason"] == "seed_mismatch"
    assert marks(d)[-1]["seed_applied"]["reported_seed"] == "OTHER"
    d.play(sample("game_over"))
    embark_with(d, message=EMBARKED)
    d.see(sample("map"))  # in the run, its identity never read
    d.see(sample("game_over"))
    assert marks(d)[-1] == {
        "seeded": False,
        "unseeded": {"reason": "unconfirmed", "requested": SEED, "embark_reply": EMBARKED},
    }
    assert d.rows[-1]["state_type"] == "game_over", "marked on the run's own game over"


def test_joined_runs_are_unseeded_and_without_a_seed_asked_nothing_is_marked():
    d = Driver({"run_seed": SEED})
    d.see(sample("map"))  # the session's first read is inside a run
    assert marks(d) == [{"seeded": False, "unseeded": {"reason": "joined_in_run", "requested": SEED}}]
    d = Driver({"run_seed": SEED})
    p = d.see(sample("menu__main_saved_run"))
    assert p.parameters == {"option": "continue"}
    assert marks(d)[0]["unseeded"]["reason"] == "continued_saved_run"
    d = Driver()
    assert embark_with(d) == {"option": "embark"}
    in_run(d, "modded:profile1:1", "1")
    assert marks(d) == []


def test_a_restarted_policy_rebuilds_the_marks_from_the_journal_without_repeating_one():
    d = Driver({"run_seed": SEED})
    journal = []  # the policy's hooks in journal order, as the policy actor replays them
    for hook in ("observe", "record_proposal", "record_result"):
        original = getattr(d.policy, hook)
        setattr(d.policy, hook, lambda *a, _h=hook, _f=original: (journal.append((_h, a)), _f(*a))[1])
    embark_with(d, "rejected", FAILED)
    embark_with(d)
    d.see(sample("map"))
    assert len(marks(d)) == 1
    replayed = Sts2Heuristic({"run_seed": SEED}, {"stuck_seconds": 20, "stop_on_run_end": False})
    for hook, args in journal:
        getattr(replayed, hook)(*json.loads(json.dumps(args, default=vars)) if hook != "observe" else args)
    d.policy = replayed  # decides on from here, as a restarted policy does
    d.see(sample("map"))
    assert len(marks(d)) == 1, "the recorded mark is not made again"
    d.play(sample("game_over"))
    assert embark_with(d) == {"option": "embark"}, "the refusal is remembered"
