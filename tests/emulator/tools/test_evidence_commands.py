"""``supervisor capture review`` and ``supervisor capture clip`` through the CLI entry point."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PIL import Image

from supervisor import cli

from .evidence_helpers import copy_recording, play_demo, tree


@pytest.fixture(scope="module")
def played_once(tmp_path_factory):
    return play_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def ws(played_once, tmp_path, monkeypatch):
    """A workspace (the current directory) holding a session directory with a copy of the recording."""
    copy_recording(played_once.path, tmp_path / "sessions" / "s1" / "recording")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def interval(played, start: int, end: int) -> list[str]:
    return ["--session", played.session_id, "--branch", "branch-0001", "--from", str(start), "--to", str(end)]


def test_review_prints_a_contact_sheet_to_open(played_once, ws, capsys):
    rec = ws / "sessions" / "s1" / "recording"
    before = tree(rec)
    code, out, _err = run(capsys, "capture", "review", "sessions/s1", *interval(played_once, 40, 48), "--contact-sheet")
    assert code == 0
    sheet = Path(next(line for line in out.splitlines() if line.startswith("contact sheet: ")).split(": ", 1)[1])
    assert sheet.is_relative_to(ws / "artifacts" / "review") and Image.open(sheet).format == "PNG"
    assert "actions (40,48]" in out and "semantic validity: not adjudicated" in out
    code, out, _err = run(capsys, "capture", "review", str(rec), *interval(played_once, 40, 48), "--json")
    meta = json.loads(out)
    assert code == 0 and meta["sheetPath"] is None and len(meta["frames"]) == 4
    for frame in meta["frames"]:
        assert Path(frame["path"]).is_file()
    code, out, _err = run(
        capsys, "capture", "review", str(rec), *interval(played_once, 40, 48), "--no-images", "--contact-sheet"
    )
    assert code == 0 and "contact sheet" not in out and len(list((ws / "artifacts" / "review").iterdir())) == 1
    assert tree(rec) == before


def test_review_takes_a_steps_span_as_it_was_returned(played_once, ws, capsys):
    span = {**played_once.span(30), "recordingPath": str(ws / "sessions" / "s1" / "recording")}
    code, out, _err = run(capsys, "capture", "review", "--span", json.dumps(span), "--json")
    meta = json.loads(out)
    assert code == 0 and [i["actionIndex"] for i in meta["inputs"]] == [30]
    assert meta["authentication"]["requestedPrefixPin"] == span["prefixPin"]
    code, _out, err = run(capsys, "capture", "review", "sessions/s1", "--span", json.dumps(span))
    assert code == 2 and "one form" in err


def test_review_exit_codes(played_once, ws, capsys):
    rec = ws / "sessions" / "s1" / "recording"
    code, out, err = run(capsys, "capture", "review", str(rec), *interval(played_once, 40, 999), "--json")
    assert code == 1 and json.loads(out)["code"] == "interval-refused" and "last committed action" in err
    code, _out, err = run(capsys, "capture", "review", str(ws), *interval(played_once, 40, 48))
    assert code == 2 and "not a recording directory" in err
    code, _out, err = run(capsys, "capture", "review", str(rec), *interval(played_once, 40, 48), "--max-images", "9")
    assert code == 2 and "maxImages" in err
    code, out, _err = run(capsys, "capture", "review", str(rec), *interval(played_once, 40, 48), "--json")
    victim = rec / json.loads(out)["frames"][0]["png"]
    os.chmod(victim, 0o644)
    victim.write_bytes(b"not a png")
    code, out, _err = run(capsys, "capture", "review", str(rec), *interval(played_once, 40, 48))
    assert code == 4 and "NOT VERIFIED frame" in out


def test_clip_prints_the_gif_path_and_refuses_clobbering(ws, capsys):
    code, out, _err = run(
        capsys,
        "capture",
        "clip",
        "sessions/s1",
        "--out",
        "artifacts/clips/door.gif",
        "--start-frame",
        "360",
        "--end-frame",
        "400",
    )
    assert code == 0 and out.startswith(f"clip: {ws / 'artifacts' / 'clips' / 'door.gif'}\n")
    assert "11 source images" in out and "charged to" in out
    data = (ws / "artifacts" / "clips" / "door.gif").read_bytes()
    code, _out, err = run(
        capsys,
        "capture",
        "clip",
        "sessions/s1",
        "--out",
        "artifacts/clips/door.gif",
        "--cut",
        "360:372",
        "--cut",
        "360:372@branch-0001",
        "--json",
    )
    assert code == 1 and "already exists" in err and (ws / "artifacts" / "clips" / "door.gif").read_bytes() == data
    code, out, _err = run(
        capsys,
        "capture",
        "clip",
        "sessions/s1",
        "--out",
        "artifacts/clips/twice.gif",
        "--cut",
        "360:372",
        "--cut",
        "360:372@branch-0001",
        "--json",
    )
    meta = json.loads(out)
    assert code == 0 and meta["sourceImages"] == 8 and [c["startFrame"] for c in meta["cuts"]] == [360, 360]


def test_clip_exit_codes(ws, capsys):
    code, _out, err = run(capsys, "capture", "clip", "sessions/s1", "--out", "artifacts/x.gif", "--cut", "360-372")
    assert code == 2 and "START:END" in err
    code, _out, err = run(
        capsys, "capture", "clip", "sessions/s1", "--out", "../x.gif", "--start-frame", "360", "--end-frame", "400"
    )
    assert code == 1 and "'..'" in err
    rec = ws / "sessions" / "s1" / "recording"
    for png in (rec / "frames").glob("*.png"):
        os.chmod(png, 0o644)
        png.write_bytes(png.read_bytes()[:-1])
    code, _out, err = run(
        capsys,
        "capture",
        "clip",
        "sessions/s1",
        "--out",
        "artifacts/x.gif",
        "--start-frame",
        "360",
        "--end-frame",
        "400",
    )
    assert code == 4 and "does not verify" in err and not (ws / "artifacts" / "x.gif").exists()
