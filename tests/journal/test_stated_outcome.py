"""A run whose game-over screen the game left unreadable, read from a session's files as a fleet's
results row reads them (``supervisor.fleet.results.journal_facts``): the run is counted once,
on its screen, with the outcome the policy stated there (a victory counts as a win, and as
stated, not inferred from HP); a statement never overrides a screen that was read."""

from __future__ import annotations

import json

from supervisor.fleet.results import journal_facts, read_journal

SID = "20261206T000000Z-0123456789abcdef0123456789abcdef"


def session(tmp_path, rows: list[dict], screens: dict[int, bytes | None]) -> str:
    """A session directory under a capture root: its journal, and an observation file per step
    in ``screens`` (None: the row names a file that is not there)."""
    sd = tmp_path / "capture" / "sessions" / SID
    (sd / "observations").mkdir(parents=True)
    for step, data in screens.items():
        if data is not None:
            (sd / "observations" / f"{step}.json").write_bytes(data)
    with open(sd / "events.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    return str(sd)


def screen(step: int, state_type: str, floor: int) -> dict:
    return {
        "event": "observation",
        "step": step,
        "state_type": state_type,
        "observation_id": f"o-{step:06d}",
        "path": f"sessions/{SID}/observations/{step}.json",
        "progress": {"act": 2, "floor": floor, "hp": 30, "max_hp": 80},
    }


def over(step: int) -> dict:  # the game-over screen's row carries no progress: the game left nothing to read
    return {
        "event": "observation",
        "step": step,
        "state_type": "game_over",
        "observation_id": f"o-{step:06d}",
        "path": f"sessions/{SID}/observations/{step}.json",
    }


def stated(outcome, step: int) -> dict:
    return {
        "event": "proposal",
        "proposal_id": f"p-{step:06d}",
        "observation_id": f"o-{step:06d}",
        "action": "menu_select",
        "state_type": "game_over",
        "run_outcome": outcome,
    }


def a_run_to_the_last_boss() -> list[dict]:
    return [{"event": "session_start"}, screen(1, "map", 16), screen(2, "boss", 17), screen(3, "boss", 17)]


def test_a_victory_stated_on_an_unreadable_game_over_screen_is_one_won_run_marked_stated(tmp_path):
    for name, data in (("garbled", b'{"player": {"hp": 4'), ("missing", None), ("no hp", b'{"message": "Run ended."}')):
        rows = [
            *a_run_to_the_last_boss(),
            over(4),
            stated({"outcome": "victory"}, 4),
            stated("victory", 4),  # said twice on the same screen: still one run
            over(5),
            {
                "event": "observation_error",
                "read_id": "r-6",
                "error": "timed out",
                "error_type": "timeout",
                "last_observation_id": "o-000005",
            },
        ]
        sd = session(tmp_path / name, rows, {1: b"{}", 2: b"{}", 3: b"{}", 4: data, 5: data})
        got = journal_facts(sd)
        assert (got["runs"], got["wins"], got["runs_inferred"]) == (1, 1, 0), (name, got)
        (run,) = read_journal(sd).runs
        assert (run["outcome"], run["won"], run["inferred_from"], run["step"]) == ("victory", True, None, 4), name
        # the last boss of a won run counts: floor 17, 1 boss
        assert (got["bosses"], got["floor"], got["progress_score"], got["scored_runs"]) == (
            1,
            17,
            round(0.5 * 17 / 50 + 0.5 / 3, 6),
            "ended",
        ), (name, got)


def test_without_a_statement_the_unreadable_screens_run_counts_with_an_unknown_outcome(tmp_path):
    sd = session(tmp_path, [*a_run_to_the_last_boss(), over(4)], {1: b"{}", 2: b"{}", 3: b"{}", 4: b"\x00\xff"})
    got = journal_facts(sd)
    assert (got["runs"], got["wins"], got["runs_inferred"], got["bosses"]) == (1, 0, 0, 0), got
    assert [r["outcome"] for r in read_journal(sd).runs] == ["unknown"]


def test_a_statement_does_not_override_the_screen_the_game_left_readable(tmp_path):
    rows = [*a_run_to_the_last_boss(), over(4), stated({"outcome": "victory"}, 4)]
    sd = session(
        tmp_path,
        rows,
        {1: b"{}", 2: b"{}", 3: b"{}", 4: json.dumps({"player": {"hp": 0}, "run": {"floor": 17}}).encode()},
    )
    got = journal_facts(sd)
    assert (got["runs"], got["wins"], got["runs_inferred"], got["bosses"]) == (1, 0, 1, 0), got
    (run,) = read_journal(sd).runs
    assert (run["outcome"], run["inferred_from"]) == ("defeat", "player.hp")


def test_a_statement_that_names_no_outcome_leaves_the_run_unknown_and_not_inferred(tmp_path):
    """The built-in policy on a game-over screen without the player's HP states ``unknown``,
    with why (``inferred_from``: no player hp): that is no outcome inferred from HP."""
    why = {"outcome": "unknown", "inferred_from": "no player hp in the game-over state", "hp": None}
    sd = session(
        tmp_path,
        [*a_run_to_the_last_boss(), over(4), stated(why, 4)],
        {1: b"{}", 2: b"{}", 3: b"{}", 4: b'{"message": "Run ended."}'},
    )
    got = journal_facts(sd)
    assert (got["runs"], got["wins"], got["runs_inferred"], got["bosses"]) == (1, 0, 0, 0), got
    assert [(r["outcome"], r["inferred_from"]) for r in read_journal(sd).runs] == [("unknown", None)]
