"""The intent check: each POST must match an ``action_attempt`` already in the journal."""

from __future__ import annotations

import json

import pytest

from actors.game.intent_check import PENDING_MAX, IntentChecker

from .conftest import SP, get, http_client

pytestmark = pytest.mark.timeout(30)


def attempt(attempt_id: str, action: str, **params) -> str:
    return (
        json.dumps(
            {"event": "action_attempt", "attempt_id": attempt_id, "action": action, "parameters": params, "sequence": 1}
        )
        + "\n"
    )


def send(c, attempt_id, **body):
    headers = {"X-Gamerig-Attempt": attempt_id} if attempt_id else {}
    return c.post(SP, json=body, headers=headers)


def test_intent_check_counts_and_reasons(make_server, tmp_path):
    journal = tmp_path / "events.jsonl"
    journal.write_text(
        json.dumps({"event": "session_start"}) + "\n" + attempt("a1", "menu_select", option="singleplayer")
    )
    srv = make_server(1, journal_path=str(journal))
    with http_client(srv.url) as c:
        assert send(c, "a1", action="menu_select", option="singleplayer").json()["status"] == "ok"
        assert get(c)["menu_screen"] == "singleplayer"
        assert srv.stats()["posts_with_intent"] == 1
        # no header: counted, reported, still applied
        send(c, None, action="menu_select", option="standard")
        assert get(c)["menu_screen"] == "character_select"
        # an attempt that is not (yet) on disk, then a torn line that is ignored
        with journal.open("a") as f:
            f.write(attempt("a2", "menu_select", option="back")[:25])
        send(c, "a2", action="menu_select", option="back")
        with journal.open("a") as f:
            f.write(attempt("a2", "menu_select", option="back")[25:])
            f.write(attempt("a3", "menu_select", option="singleplayer"))
        # reuse of a1, and a body that differs from the recorded intent
        send(c, "a1", action="menu_select", option="singleplayer")
        send(c, "a3", action="menu_select", option="standard")
        stats = srv.stats()
    assert stats["posts"] == 5 and stats["posts_with_intent"] == 1
    reasons = stats["intent_violations"]
    assert len(reasons) == 4
    assert "missing X-Gamerig-Attempt" in reasons[0]
    assert "a2" in reasons[1] and "no action_attempt" in reasons[1]
    assert "a1" in reasons[2] and "reused" in reasons[2]
    assert "a3" in reasons[3] and "does not match" in reasons[3]


def test_intent_check_accepts_torn_then_completed_line(make_server, tmp_path):
    journal = tmp_path / "events.jsonl"
    line = attempt("x1", "menu_select", option="singleplayer")
    journal.write_text(line[:10])
    srv = make_server(1, journal_path=str(journal))
    with http_client(srv.url) as c:
        journal.write_text(line + attempt("x2", "end_turn"))
        send(c, "x1", action="menu_select", option="singleplayer")
        send(c, "x2", action="end_turn")
    stats = srv.stats()
    assert stats["posts_with_intent"] == 2 and stats["intent_violations"] == []


def test_without_journal_the_check_is_off(client, server):
    send(client, None, action="menu_select", option="singleplayer")
    stats = server.stats()
    assert stats["posts"] == 1 and stats["intent_violations"] == []


def test_memory_stays_bounded_and_forgotten_intents_are_read_back(tmp_path):
    """More intents than the checker keeps: the oldest is forgotten yet still accepted (read
    back from the journal), its reuse and an unknown attempt are still reported, and after
    POSTs in order the used attempts are a few runs of ordinals, whatever the session's length."""
    journal = tmp_path / "events.jsonl"
    total = PENDING_MAX + 500
    journal.write_text("".join(attempt(f"a-{i:06d}", "end_turn", n=i) for i in range(total)))
    checker = IntentChecker(str(journal))
    checker.check("a-000000", {"action": "end_turn", "n": 0})  # forgotten: read back
    assert len(checker.pending) == PENDING_MAX and checker.lookups == 1
    checker.check("a-000000", {"action": "end_turn", "n": 0})
    checker.check("b-000001", {"action": "end_turn"})
    checker.check("a-000002", {"action": "end_turn", "n": 3})  # forgotten, wrong body
    kept = range(total - PENDING_MAX, total)  # the newest intents, still in memory
    for i in kept:
        checker.check(f"a-{i:06d}", {"action": "end_turn", "n": i})
    stats = checker.stats()
    assert stats["posts_with_intent"] == 1 + len(kept) and checker.lookups == 4
    assert [r.split(":")[1].strip() for r in stats["intent_violations"]] == [
        "reused by a second POST",
        "no action_attempt in the journal",
        "POST body does not match the recorded intent",
    ]
    assert checker.used_ordinals.runs == 3 and not checker.pending  # {0}, {2}, kept
    with checker.lock:
        assert checker.used == ({f"a-{i:06d}" for i in kept} | {"a-000000", "a-000002", "b-000001"})
