"""The journal readers under damaged journals: ``protocol.journal.scan_bytes`` (the
recorder's resume and the hash chain) and the line reader under it, the verifier
(``supervisor capture verify``) and the model replay reader never raise on damage; each
reports what it found (torn rows, findings, skipped lines) and accounts for every byte.
The typed reading (``protocol.events.parse``) of any row either gives an event, skips an
unknown kind, or raises the one ``EventError`` naming the kind and field."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from actors.model_client import CardRewardQuestion, ModelError, ReplayBackend
from protocol import events
from protocol.journal import GENESIS, encode_row, iter_lines, line_digest, scan_bytes
from supervisor import cli
from tests.harness import DEMO, Session

from .strategies import deep_nesting, trees

SESSION = "20261201T000000Z-fuzz0001"
FUZZ = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


def chained_journal(rows: list[dict]) -> bytes:
    """Rows as the recorder writes them: canonical lines, each naming the previous digest."""
    out, prev = [], GENESIS
    for number, fields in enumerate(rows, 1):
        row = {
            "schema_version": 1,
            "session": SESSION,
            "sequence": number,
            "recorded_at": "2026-12-01T00:00:00Z",
            "ts": "00:00:00",
            "prev_sha256": prev,
            **fields,
        }
        line = encode_row(row)
        out.append(line)
        prev = line_digest(line)
    return b"".join(line + b"\n" for line in out)


BASE = chained_journal(
    [
        {"event": "session_start", "profile": "fuzz"},
        {"event": "observation", "observation_id": "o-000001", "path": "x.json", "sha256": "0" * 64},
        {
            "event": "proposal",
            "proposal_id": "p-1",
            "observation_id": "o-000001",
            "action": "wait",
            "model_evidence": [
                {
                    "request": {"question_kind": "card_reward", "questions": []},
                    "answers": [{"answer": {"card_index": 0}, "confidence": 0.9}],
                }
            ],
        },
        {"event": "model_error", "kind": "timeout", "request": {"question_kind": "card_reward"}},
        {"event": "session_end", "exit_code": 0, "reason": "done"},
    ]
)

damage = st.one_of(
    st.binary(max_size=64).map(lambda b: ("insert", b)),
    st.integers(1, 8).map(lambda n: ("cut", n)),
    st.integers(0, 7).map(lambda bit: ("flip", bit)),
    st.just(("insert", deep_nesting(50_000).encode() + b"\n")),
    st.just(("insert", b'{"event": NaN, "sequence": Infinity}\n')),
    trees().map(lambda t: ("insert", json.dumps(t).encode() + b"\n")),
)


def damaged(data: bytes, edits: list, where: list[int]) -> bytes:
    buf = bytearray(data)
    for (how, arg), at in zip(edits, where):
        at = at % (len(buf) + 1)
        if how == "insert":
            buf[at:at] = arg
        elif how == "cut":
            del buf[at : at + arg]
        elif buf:
            buf[min(at, len(buf) - 1)] ^= 1 << arg
    return bytes(buf)


@FUZZ
@given(st.lists(damage, min_size=1, max_size=4), st.lists(st.integers(0, 10**6), min_size=4, max_size=4))
def test_scan_accounts_for_every_line_of_a_damaged_journal(edits, where):
    data = damaged(BASE, edits, where)
    scan = scan_bytes(data)
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    assert len(scan.rows) + len(scan.torn) == lines
    assert sorted(scan.line_numbers + [t.line_number for t in scan.torn]) == list(range(1, lines + 1))
    assert scan.size == len(data)


@FUZZ
@given(st.lists(damage, min_size=1, max_size=4), st.lists(st.integers(0, 10**6), min_size=4, max_size=4))
def test_the_line_reader_and_the_scan_agree_on_a_damaged_journal(edits, where):
    data = damaged(BASE, edits, where)
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "events.jsonl")
        with open(path, "wb") as fh:
            fh.write(data)
        lines = list(iter_lines(path))
    scan = scan_bytes(data)
    rows = [line for line in lines if line.row is not None]
    assert [line.row for line in rows] == scan.rows
    assert [(line.number, line.offset, line.sha256) for line in rows] == list(
        zip(scan.line_numbers, scan.offsets, scan.digests)
    )
    assert b"".join(line.data + b"\n" * line.terminated for line in lines) == data


REAL_ROWS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "protocol", "journal_rows.jsonl")
with open(REAL_ROWS, encoding="utf-8") as _fh:
    REAL = [json.loads(line) for line in _fh]


@FUZZ
@given(st.sampled_from(REAL), st.integers(0, 50), st.one_of(st.just(None), trees()), st.booleans())
def test_typed_reading_of_a_damaged_row_gives_an_event_or_names_the_field(row, pick, value, drop):
    """A real row with one field replaced by anything (or removed)."""
    row = dict(row)
    names = sorted(k for k in row if k not in events.WRITER_FIELDS and k != "event")
    name = names[pick % len(names)]
    if drop:
        del row[name]
    else:
        row[name] = value
    try:
        event = events.parse(row)
    except events.EventError as err:
        assert (err.kind, err.field) == (row["event"], name) and err.problem
        return
    assert isinstance(event, events.EVENTS[row["event"]])
    assert events.parse(event.to_row()) == event


@pytest.fixture(scope="module")
def real_session(tmp_path_factory) -> str:
    """A real, whole, intact session (the demo, five steps): the verifier's undamaged base."""
    s = Session(str(tmp_path_factory.mktemp("real")), DEMO, "session.max_steps=5")
    assert s.wait(90) == 0, s.stderr[-2000:]
    return s.session_dir


def verify_json(session: str) -> tuple[int, dict]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["capture", "verify", session, "--json"])
    return code, json.loads(out.getvalue())


def test_the_verifiers_base_is_intact(real_session):
    code, report = verify_json(real_session)
    assert (code, report["verdict"]) == (0, "intact"), report


@FUZZ
@given(st.lists(damage, min_size=1, max_size=3), st.lists(st.integers(0, 10**6), min_size=3, max_size=3))
def test_the_verifier_calls_any_damage_to_an_intact_journal_damage(real_session, edits, where):
    with open(os.path.join(real_session, "events.jsonl"), "rb") as fh:
        original = fh.read()
    data = damaged(original, edits, where)
    assume(data != original)  # an edit that changed nothing is no damage
    with tempfile.TemporaryDirectory() as root:
        session = os.path.join(root, "sessions", os.path.basename(real_session))
        shutil.copytree(real_session, session)
        with open(os.path.join(session, "events.jsonl"), "wb") as fh:
            fh.write(data)
        code, report = verify_json(session)
    assert code in (3, 4) and report["exit_code"] == code, "damage is never called intact"
    assert report["verdict"] in ("incomplete", "damaged")


@FUZZ
@given(st.lists(damage, min_size=1, max_size=3), st.lists(st.integers(0, 10**6), min_size=3, max_size=3))
def test_the_verifier_gives_a_verdict_on_any_damaged_journal(edits, where):
    """Anything at all (a journal lacking fields, a summary that is not JSON): a verdict,
    never a crash."""
    with tempfile.TemporaryDirectory() as root:
        session = os.path.join(root, "sessions", SESSION)
        os.makedirs(session)
        with open(os.path.join(session, "events.jsonl"), "wb") as fh:
            fh.write(damaged(BASE, edits, where))
        with open(os.path.join(session, "session.json"), "wb") as fh:
            fh.write(damaged(b'{"session": "%s", "last_sequence": 5}' % SESSION.encode(), edits[:1], where[:1]))
        code, report = verify_json(session)
    assert code in (3, 4) and report["exit_code"] == code
    assert report["verdict"] in ("incomplete", "damaged")


@FUZZ
@given(st.lists(damage, min_size=1, max_size=3), st.lists(st.integers(0, 10**6), min_size=3, max_size=3))
def test_replay_loads_any_damaged_journal_and_answers_or_names_the_divergence(edits, where):
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "events.jsonl")
        with open(path, "wb") as fh:
            fh.write(damaged(BASE, edits, where))
        backend = ReplayBackend.from_events(path)
    assert backend.skipped_lines >= 0
    question = {"cards": [{"index": 0, "name": "Strike"}, {"index": 1, "name": "Bash"}], "evidence": {}}
    try:
        backend.ask(_card_question(question))
    except ModelError as err:
        assert err.kind in ("divergence", "timeout") or err.to_record()["message"]


QUESTION = CardRewardQuestion(cards=[{"index": 0, "name": "Strike"}], evidence={})
ASKED = {"question_kind": "card_reward", "questions": [QUESTION.state()]}
LEAF = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(), st.text(max_size=4))


@settings(max_examples=150, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "answers": trees()
            | st.lists(
                st.fixed_dictionaries(
                    {}, optional={"answer": trees(), "confidence": LEAF, "reason": LEAF, "question_index": LEAF}
                )
            ),
            "confidence_gate": LEAF,
            "usage": trees(),
            "call_id": LEAF,
            "kind": LEAF,
            "message": trees(),
        },
    ),
    st.sampled_from(["model_evidence", "model_error", "event"]),
)
def test_recorded_outcomes_of_any_shape_replay_or_are_named_never_a_crash(record, how):
    """Records that match the question asked, with anything at all in their other fields."""
    record = {**record, "request": ASKED}
    row = (
        {"model_evidence": [record]}
        if how == "model_evidence"
        else {"model_error": record}
        if how == "model_error"
        else {**record, "event": "model_error", "kind": record.get("kind", "x")}
    )
    backend = ReplayBackend([row, {"model_evidence": record}, {"model_evidence": [7, None]}])
    for _ in range(2):
        try:
            backend.ask(QUESTION)
        except ModelError as err:
            assert err.to_record()["kind"] and str(err)


def _card_question(fields: dict) -> CardRewardQuestion:
    return CardRewardQuestion(**fields)
