"""Recording directory, hash chain, export paging, stop statuses, and reading after close."""

from __future__ import annotations

import json

import pytest

from actors.emulator.recording import journal as j
from actors.emulator.recording.errors import InvalidOption, PathRefused, RecordingCorrupt
from actors.emulator.recording.reader import RecordingReader, Summary, export_page
from actors.emulator.session.core import EmulatorSession, RecordingOptions


def test_directory_layout_and_markers(recorded):
    path = recorded.recording_path
    for name in ("recording.json", "events.jsonl", "frames", "checkpoints", "quota-ledger.jsonl"):
        assert (path / name).exists(), name
    assert (path / ".gitignore").read_text() == "*\n" and (path / ".npmignore").read_text() == "*\n"
    manifest = json.loads((path / "recording.json").read_text())
    assert manifest["status"] == "live" and manifest["limits"]["maxBytes"] == 64 * 1024 * 1024
    assert not list(path.glob(".*.tmp")), "atomic replacement leaves no temporary files"


def test_explicit_path_must_be_unused(demo_rom, tmp_path):
    used = tmp_path / "used"
    used.mkdir()
    (used / "x").write_text("x")
    with pytest.raises(PathRefused):
        EmulatorSession(demo_rom, recording=RecordingOptions(path=used))
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PathRefused):
        EmulatorSession(demo_rom, recording=RecordingOptions(path=link))


def test_journal_chain_detects_edits_and_pins_stay_valid(recorded):
    pin = recorded.step({"right"}, 8).span.prefix_pin
    recorded.step([], 8)
    path = recorded.recording_path / "events.jsonl"
    scan = j.read_journal(path)
    assert j.verify_pin(scan, pin) and scan.pin == recorded.status()["recording"]["prefixPin"]
    lines = path.read_bytes().splitlines(keepends=True)
    edited = lines[1].replace(b'"frames":120', b'"frames":121')
    assert edited != lines[1]
    path.write_bytes(b"".join(lines[:1] + [edited] + lines[2:]))
    with pytest.raises(RecordingCorrupt):
        j.read_journal(path)
    path.write_bytes(b"".join(lines[:2] + lines[3:]))  # a deleted line breaks the chain too
    with pytest.raises(RecordingCorrupt):
        j.read_journal(path)


def _summary(actions: int, samples: int) -> Summary:
    return Summary(
        actions=[{"actionIndex": i + 1, "branchId": "branch-0001"} for i in range(actions)],
        samples=[{"frame": i, "rgbaSha256": str(i)} for i in range(samples)],
    )


@pytest.mark.parametrize(
    "actions,samples,offset,limit",
    [
        (0, 0, 0, 64),
        (10, 100, 0, 64),
        (100, 5, 0, 64),
        (100, 100, 64, 64),
        (130, 40, 128, 64),
        (5, 50, 10, 3),
        (200, 200, 7, 1),
        (64, 64, 0, 64),
    ],
)
def test_export_paging_arithmetic(actions, samples, offset, limit):
    page = export_page(_summary(actions, samples), offset, limit)
    expected = list(range(offset + 1, min(actions, offset + limit) + 1))
    assert [a["actionIndex"] for a in page["actions"]] == expected
    end = offset + len(expected)
    assert page["nextActionOffset"] == (end if end < actions else None)
    assert page["actionCount"] == actions and page["evidenceCount"] == samples
    evidence = min(limit, 32, samples)
    assert [e["frame"] for e in page["evidence"]] == list(range(samples - evidence, samples))
    assert page["truncation"]["actionsBefore"] == min(offset, actions)
    assert page["truncation"]["actionsAfter"] == max(0, actions - end)
    assert page["truncation"]["evidenceOmitted"] == samples - evidence


def test_export_refuses_bad_paging_values():
    for offset, limit in ((-1, 64), (0, 0), (0, 4097), ("0", 64)):
        with pytest.raises(InvalidOption):
            export_page(_summary(1, 1), offset, limit)


def test_pages_chain_through_a_real_recording(recorded):
    for _ in range(9):
        recorded.step([], 4)
    seen, offset = [], 0
    while offset is not None:
        page = recorded.export(offset, 4)
        seen += [a["actionIndex"] for a in page["actions"]]
        assert len(page["evidence"]) == 4
        offset = page["nextActionOffset"]
    assert seen == list(range(1, 11))


@pytest.mark.parametrize(
    "outcome,status",
    [
        ("passed", "stopped"),
        ("needs-review", "stopped"),
        (None, "stopped"),
        ("failed", "failed"),
        ("cancelled", "cancelled"),
    ],
)
def test_stop_outcomes_give_statuses_and_survive_close(demo_rom, parent, outcome, status):
    session = EmulatorSession(demo_rom, recording=RecordingOptions(parent=parent))
    session.step(["a"], 10, samples=2)
    session.stop(outcome, "observed by the caller")
    session.close()
    reader = RecordingReader(session.recording_path)
    assert reader.status()["status"] == status and reader.status()["outcome"] == outcome
    assert reader.export()["actionCount"] == 1 and reader.verify_frames() == []
    assert json.loads((session.recording_path / "recording.json").read_text())["status"] == status


def test_reason_is_bounded_and_outcome_checked(recorded):
    with pytest.raises(InvalidOption):
        recorded.stop("passed", "x" * 1001)
    with pytest.raises(InvalidOption):
        recorded.stop("great", "")
    recorded.stop("passed", "x" * 1000)


def test_close_without_stop_cancels_but_keeps_the_attempt(demo_rom, parent):
    session = EmulatorSession(demo_rom, recording=RecordingOptions(parent=parent))
    session.step([], 5)
    assert RecordingReader(session.recording_path).status()["status"] == "live"
    session.close()
    status = RecordingReader(session.recording_path).status()
    assert status["status"] == "cancelled" and status["actionCount"] == 1


def test_measuring_a_live_recording_skips_files_renamed_while_it_walks(tmp_path, monkeypatch):
    """The frame writer renames frames/.<hash>.tmp into place while a reader walks the
    directory; the walk must not fail on the file that vanished under it."""
    import os as os_module

    from actors.emulator.recording import reader

    (tmp_path / "frames").mkdir()
    (tmp_path / "frames" / "kept.png").write_bytes(b"x" * 10)
    (tmp_path / "frames" / ".gone.tmp").write_bytes(b"y" * 7)
    real_walk = os_module.walk

    def walk_then_rename(top):
        for root, dirs, files in real_walk(top):
            if (tmp_path / "frames" / ".gone.tmp").exists():
                os_module.replace(tmp_path / "frames" / ".gone.tmp", tmp_path / "elsewhere.bin")
            yield root, dirs, files

    monkeypatch.setattr(reader.os, "walk", walk_then_rename)
    assert reader.directory_bytes(tmp_path / "frames") == 10
