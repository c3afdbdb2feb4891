"""GIF clips from retained frames of real demo-cartridge recordings (actors/emulator/tools/clips.py)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from PIL import Image

from actors.emulator.cartridge import build_rom
from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.errors import (
    AccessRefused,
    EvidenceLimitExceeded,
    IntervalRefused,
    InvalidOption,
    LimitExceeded,
    OutputRefused,
    RecordingBusy,
    RecordingCorrupt,
)
from actors.emulator.recording.limits import RecordingLimits
from actors.emulator.recording.reader import RecordingReader
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.emulator.tools.archive import archive
from actors.emulator.tools.clips import clip
from actors.emulator.tools.review import review

from .evidence_helpers import copy_recording, play_demo, play_sparse, tree

REPO = Path(__file__).resolve().parents[3]
FRAME = Fraction(70_224, 4_194_304)  # seconds per native frame (docs: 70,224 dots at 4,194,304 Hz)


@pytest.fixture(scope="module")
def played_once(tmp_path_factory):
    return play_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def played(played_once, tmp_path):
    """A private copy of the demo recording (clips write into its ledger) and a workspace."""
    copy = copy_recording(played_once.path, tmp_path / "ws" / "playtests" / played_once.path.name)
    (tmp_path / "ws" / "artifacts").mkdir()
    return copy, tmp_path / "ws"


def make(recording: Path, workspace: Path, out: str, **form) -> dict:
    return clip({"recordingPath": str(recording), "outputPath": out, **form}, workspace=workspace)


def gif_frames(path: Path) -> list[tuple[bytes, int]]:
    """(RGB pixels, delay ms) of every encoded GIF frame."""
    out = []
    with Image.open(path) as image:
        for i in range(image.n_frames):
            image.seek(i)
            out.append((image.convert("RGB").tobytes(), image.info["duration"]))
    return out


def test_one_interval_maps_source_frames_to_native_time(played):
    rec, ws = played
    meta = make(rec, ws, "artifacts/clips/walk.gif", startFrame=360, endFrame=400)
    cut = meta["cuts"][0]
    assert [s["frame"] for s in cut["sources"]] == list(range(360, 401, 4))
    for source in cut["sources"]:
        assert source["outputStartMs"] == round(float((source["frame"] - 360) * FRAME * 1000), 3)
    assert [s["holdFrames"] for s in cut["sources"]] == [4] * 10 + [1]
    assert cut["nativeFrames"] == 41 and meta["timing"]["nativeMs"] == round(float(41 * FRAME * 1000), 3)
    assert cut["gaps"] == [{"fromFrame": f + 1, "toFrame": f + 3, "frames": 3} for f in range(360, 400, 4)]
    # the GIF holds exactly the source pictures (nothing interpolated) with the planned delays
    encoded = gif_frames(Path(meta["outputPath"]))
    assert len(encoded) == meta["timing"]["gifFrames"] and sum(d for _p, d in encoded) == meta["timing"]["durationMs"]
    expected = []
    for source in cut["sources"]:
        pixels = Image.open(rec / f"frames/{source['rgbaSha256']}.png").convert("RGB").tobytes()
        if expected and expected[-1][0] == pixels:
            expected[-1][1] += source["gifDelayMs"]  # identical neighbours merge
        else:
            expected.append([pixels, source["gifDelayMs"]])
    assert [(p, d) for p, d in encoded] == [tuple(e) for e in expected]
    assert abs(meta["timing"]["durationMs"] - meta["timing"]["nativeMs"]) < 10
    assert meta["interpolated"] is False and meta["replayed"] is False and meta["downsampled"] is False


def test_cuts_keep_order_and_repeats(played):
    rec, ws = played
    cuts = [
        {"startFrame": 400, "endFrame": 420},
        {"startFrame": 360, "endFrame": 372},
        {"startFrame": 400, "endFrame": 420},
    ]
    meta = make(rec, ws, "artifacts/montage.gif", cuts=cuts)
    assert [[s["frame"] for s in c["sources"]] for c in meta["cuts"]] == [
        list(range(400, 421, 4)),
        list(range(360, 373, 4)),
        list(range(400, 421, 4)),
    ]
    assert meta["sourceImages"] == 6 + 4 + 6
    starts = [c["outputStartMs"] for c in meta["cuts"]]
    assert (
        starts[0] == 0 and starts[1] == meta["cuts"][0]["outputEndMs"] and starts[2] == meta["cuts"][1]["outputEndMs"]
    )
    assert meta["cuts"][2]["outputEndMs"] == round(float((21 + 13 + 21) * FRAME * 1000), 3)


def test_endpoints_must_be_exact_retained_frames(played):
    rec, ws = played
    with pytest.raises(IntervalRefused, match="361 before.*364 after|360 before, 364 after"):
        make(rec, ws, "artifacts/a.gif", startFrame=361, endFrame=400)
    with pytest.raises(IntervalRefused, match="cuts\\[1\\].endFrame"):
        make(
            rec,
            ws,
            "artifacts/a.gif",
            cuts=[
                {"startFrame": 360, "endFrame": 364},
                {"startFrame": 360, "endFrame": 363, "branchId": "branch-0001"},
            ],
        )
    with pytest.raises(IntervalRefused, match="known branches"):
        make(rec, ws, "artifacts/a.gif", startFrame=360, endFrame=400, branchId="branch-0002")
    with pytest.raises(InvalidOption, match="exactly one form"):
        make(rec, ws, "artifacts/a.gif", startFrame=360, endFrame=400, cuts=[])
    with pytest.raises(InvalidOption, match="endFrame"):
        make(rec, ws, "artifacts/a.gif", startFrame=400, endFrame=360)
    assert not (ws / "artifacts" / "a.gif").exists()


def test_clip_limits_refuse_instead_of_downsampling(played, tmp_path):
    rec, ws = played
    with pytest.raises(EvidenceLimitExceeded, match="17 cuts exceed the limit of 16"):
        make(rec, ws, "artifacts/a.gif", cuts=[{"startFrame": 360, "endFrame": 364}] * 17)
    whole = {"startFrame": 124, "endFrame": 560}  # 110 retained images each
    with pytest.raises(EvidenceLimitExceeded, match="660 source image occurrences .* limit of 600"):
        make(rec, ws, "artifacts/a.gif", cuts=[whole] * 6)
    assert make(rec, ws, "artifacts/five.gif", cuts=[whole] * 5)["sourceImages"] == 550
    with pytest.raises(EvidenceLimitExceeded, match="11 source image occurrences .*maxFrames.* limit of 10"):
        make(rec, ws, "artifacts/a.gif", startFrame=360, endFrame=400, maxFrames=10)
    with pytest.raises(InvalidOption, match="maxFrames"):
        make(rec, ws, "artifacts/a.gif", startFrame=360, endFrame=400, maxFrames=601)
    sparse = play_sparse(tmp_path / "sparse")  # retained frames 1, 3583, 3584 only
    ok = clip(
        {"recordingPath": str(sparse.path), "outputPath": "artifacts/edge.gif", "startFrame": 1, "endFrame": 3583},
        workspace=ws,
    )
    assert ok["timing"]["nativeFrames"] == 3583 and ok["timing"]["nativeMs"] <= 60_000
    with pytest.raises(EvidenceLimitExceeded, match="3,584 native frames of summed game time"):
        clip(
            {"recordingPath": str(sparse.path), "outputPath": "artifacts/over.gif", "startFrame": 1, "endFrame": 3584},
            workspace=ws,
        )
    with pytest.raises(EvidenceLimitExceeded, match="summed game time"):
        clip(
            {
                "recordingPath": str(sparse.path),
                "outputPath": "artifacts/over.gif",
                "cuts": [{"startFrame": 3583, "endFrame": 3584}, {"startFrame": 1, "endFrame": 3583}],
            },
            workspace=ws,
        )
    assert sorted(p.name for p in (ws / "artifacts").iterdir()) == ["edge.gif", "five.gif"]


def test_outputs_are_never_overwritten(played):
    rec, ws = played
    first = make(rec, ws, "artifacts/clips/door.gif", startFrame=360, endFrame=400)
    data = Path(first["outputPath"]).read_bytes()
    ledger = (rec / "quota-ledger.jsonl").read_bytes()
    with pytest.raises(OutputRefused, match="already exists"):
        make(rec, ws, "artifacts/clips/door.gif", startFrame=500, endFrame=560)
    assert Path(first["outputPath"]).read_bytes() == data and (rec / "quota-ledger.jsonl").read_bytes() == ledger
    inside = make(rec, ws, str(rec / "clips" / "door.gif"), startFrame=360, endFrame=400)
    assert inside["outputRoot"] == "recording" and inside["ledger"]["outside"] is False
    with pytest.raises(OutputRefused, match="already exists"):
        make(rec, ws, str(rec / "clips" / "door.gif"), startFrame=360, endFrame=400)


def test_outputs_outside_the_allowed_places_are_refused(played, tmp_path):
    rec, ws = played
    (tmp_path / "elsewhere").mkdir()
    (ws / "artifacts" / "out").symlink_to(tmp_path / "elsewhere")
    (ws / "other").mkdir()
    other_rec = copy_recording(rec, ws / "artifacts" / "playtests" / "other")  # another recording
    (ws / "artifacts" / "recording-archives" / "some-id").mkdir(parents=True)
    refused = [
        (str(tmp_path / "elsewhere" / "x.gif"), "only the recording directory"),
        ("artifacts/../other/x.gif", "'..'"),
        ("other/x.gif", "only the recording directory"),
        ("other/artifacts/x.gif", "only the recording directory"),
        ("artifacts/out/x.gif", "symlink"),
        ("artifacts/x.png", "must end with .gif"),
        (str(rec / "frames" / "x.gif"), "owned by the recording's writer"),
        (str(rec / "checkpoints" / "x.gif"), "owned by the recording's writer"),
        (str(rec / ".x.gif"), "owned by the recording's writer"),
        (str(rec / "events.jsonl.gif" / ".." / "x.gif"), "'..'"),
        ("artifacts/playtests/other/clips/x.gif", "another recording's directory"),
        ("artifacts/playtests/other/x.gif", "another recording's directory"),
        ("artifacts/recording-archives/some-id/recording/clips/x.gif", "archived recordings"),
    ]
    before_rec, before_elsewhere, before_other = tree(rec), tree(tmp_path / "elsewhere"), tree(other_rec)
    for out, reason in refused:
        with pytest.raises(OutputRefused, match=reason):
            make(rec, ws, out, startFrame=360, endFrame=400)
    assert tree(rec) == before_rec and tree(tmp_path / "elsewhere") == before_elsewhere
    assert (
        tree(other_rec) == before_other
        and not (ws / "artifacts" / "recording-archives" / "some-id" / "recording").exists()
    )
    linked_ws = tmp_path / "ws2"
    linked_ws.mkdir()
    (linked_ws / "artifacts").symlink_to(tmp_path / "elsewhere")  # artifacts/ itself redirected
    with pytest.raises(OutputRefused, match="symlink"):
        make(rec, linked_ws, "artifacts/x.gif", startFrame=360, endFrame=400)
    assert tree(tmp_path / "elsewhere") == before_elsewhere


def test_bytes_are_charged_to_the_quota_ledger(played):
    rec, ws = played
    before = RecordingReader(rec).status()["bytesUsed"]
    outside = make(rec, ws, "artifacts/clips/a.gif", startFrame=360, endFrame=400)
    lines = (rec / "quota-ledger.jsonl").read_text().splitlines()
    entry = json.loads(lines[-1])
    gif = Path(outside["outputPath"]).read_bytes()
    assert entry["bytes"] == len(gif) and entry["sha256"] == hashlib.sha256(gif).hexdigest() and entry["outside"]
    after = RecordingReader(rec).status()["bytesUsed"]
    assert after - before == len(gif) + len(lines[-1]) + 1
    make(rec, ws, str(rec / "clips" / "b.gif"), startFrame=360, endFrame=380)
    inside_line = (rec / "quota-ledger.jsonl").read_text().splitlines()[-1]
    inside_gif = (rec / "clips" / "b.gif").read_bytes()
    assert RecordingReader(rec).status()["bytesUsed"] - after == len(inside_gif) + len(inside_line) + 1


def test_a_clip_that_does_not_fit_the_byte_budget_is_refused(tmp_path):
    limits = RecordingLimits.from_options({"maxBytes": 64 * 1024})  # the smallest budget allowed
    session = EmulatorSession(
        build_rom(), memory_regions=DEMO_REGIONS, recording=RecordingOptions(parent=tmp_path / "p", limits=limits)
    )
    for _ in range(3):
        session.step([], 40)
    for buttons in (["right"], ["down"], ["left"], ["up"]) * 3:
        session.step(buttons, 10)
    session.stop("needs-review", "budget fixture")
    session.close()
    (tmp_path / "artifacts").mkdir()
    rec = session.recording_path
    made = []
    with pytest.raises(LimitExceeded, match="maxBytes"):
        for i in range(200):
            made.append(
                clip(
                    {"recordingPath": str(rec), "outputPath": f"artifacts/{i}.gif", "startFrame": 4, "endFrame": 240},
                    workspace=tmp_path,
                )
            )
    assert made, "the first clip should have fitted"
    assert len(list((tmp_path / "artifacts").iterdir())) == len(made)  # the refused one was not written
    assert RecordingReader(rec).status()["bytesUsed"] <= 64 * 1024


def test_live_and_archived_recordings_are_refused(played, tmp_path):
    rec, ws = played
    session = EmulatorSession(build_rom(), recording=RecordingOptions(parent=tmp_path / "live"))
    try:
        session.step([], 8)
        session.flush_evidence()
        with pytest.raises((AccessRefused, RecordingBusy)):
            clip(
                {
                    "recordingPath": str(session.recording_path),
                    "outputPath": "artifacts/live.gif",
                    "startFrame": 4,
                    "endFrame": 8,
                },
                workspace=ws,
            )
    finally:
        session.close()
    moved = archive(rec, ws)
    assert moved["bytesReclaimed"] == 0
    for path in (rec, moved["archivePath"]):
        with pytest.raises(IntervalRefused, match="restore it before creating new derived clips"):
            make(Path(path), ws, "artifacts/archived.gif", startFrame=360, endFrame=400)
    assert not (ws / "artifacts" / "archived.gif").exists()


def test_review_resolves_an_archived_recording_and_writes_nothing(played):
    rec, ws = played
    moved = archive(rec, ws)
    archive_root = ws / "artifacts" / "recording-archives"
    before_original, before_archive = tree(rec), tree(archive_root)
    body = {
        "recordingPath": str(rec),
        "sessionId": moved["sessionId"],
        "branchId": "branch-0001",
        "fromActionIndex": 60,
        "toActionIndex": 70,
        "imageLayout": "contact-sheet",
    }
    meta = review(body).metadata
    assert meta["archive"]["archived"] and meta["archive"]["originalPath"] == str(rec)
    assert meta["recordingPath"] == moved["archivePath"] and meta["coverage"]["verifiedFrames"] == 4
    assert review({**body, "recordingPath": moved["archivePath"]}).metadata["inputs"] == meta["inputs"]
    assert tree(rec) == before_original and tree(archive_root) == before_archive


def test_a_tampered_source_refuses_the_clip(played):
    rec, ws = played
    session_id = json.loads((rec / "recording.json").read_text())["sessionId"]
    frame = review(
        {
            "recordingPath": str(rec),
            "sessionId": session_id,
            "branchId": "branch-0001",
            "fromActionIndex": 60,
            "toActionIndex": 61,
            "maxImages": 1,
        }
    ).metadata["frames"][0]
    assert 300 <= frame["frame"] <= 400
    victim = rec / frame["png"]
    os.chmod(victim, 0o644)
    victim.write_bytes(victim.read_bytes()[:-20])
    with pytest.raises(RecordingCorrupt, match="pngSha256"):
        make(rec, ws, "artifacts/x.gif", startFrame=300, endFrame=400)
    assert not (ws / "artifacts" / "x.gif").exists()


def test_clips_need_no_pyboy(played):
    rec, ws = played
    script = (
        "import json, sys\nfrom actors.emulator.tools.clips import clip\n"
        "meta = clip(json.loads(sys.argv[1]), workspace=sys.argv[2])\n"
        "assert 'pyboy' not in sys.modules, 'clip imported PyBoy'\nprint(meta['sourceImages'])\n"
    )
    body = {"recordingPath": str(rec), "outputPath": "artifacts/np.gif", "startFrame": 360, "endFrame": 400}
    proc = subprocess.run(
        [sys.executable, "-c", script, json.dumps(body), str(ws)], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) == 11 and Image.open(io.BytesIO((ws / "artifacts" / "np.gif").read_bytes())).format == "GIF"
