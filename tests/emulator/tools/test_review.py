"""Review of an interval already played, on real demo-cartridge recordings (actors/emulator/tools/review.py)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageFont

from actors.emulator.cartridge import build_rom
from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.errors import EvidenceLimitExceeded, IntervalRefused, InvalidOption, RecordingCorrupt
from actors.emulator.recording.frames import decode_rgba
from actors.emulator.recording.retained import FRAME_SECONDS
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.emulator.session.resume import resume_from_latest_checkpoint
from actors.emulator.tools.review import MAX_METADATA_BYTES, enforce_metadata_limit, review, select_evenly

from .evidence_helpers import copy_recording, play_branched, play_demo, play_long, tree

REPO = Path(__file__).resolve().parents[3]
SPAN_INPUTS = (
    "recordingPath",
    "sessionId",
    "branchId",
    "fromActionIndex",
    "toActionIndex",
    "fromFrame",
    "toFrame",
    "prefixPin",
)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    return play_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def branched(tmp_path_factory):
    return play_branched(tmp_path_factory.mktemp("branched"))


@pytest.fixture(scope="module")
def long_played(tmp_path_factory):
    return play_long(tmp_path_factory.mktemp("long"))


def request(played, start: int, end: int, branch: str = "branch-0001", **extra) -> dict:
    return {
        "recordingPath": str(played.path),
        "sessionId": played.session_id,
        "branchId": branch,
        "fromActionIndex": start,
        "toActionIndex": end,
        **extra,
    }


def from_span(span: dict, **extra) -> dict:
    return {**{k: span[k] for k in SPAN_INPUTS}, **extra}


def test_a_steps_span_reviews_exactly_that_step(played):
    span = played.span(30)
    meta = review(from_span(span)).metadata
    journal = [json.loads(line) for line in (played.path / "events.jsonl").read_text().splitlines()]
    step = next(e for e in journal if e["kind"] == "input" and e["actionIndex"] == 30)
    assert [i["actionIndex"] for i in meta["inputs"]] == [30]
    assert meta["inputs"][0]["buttons"] == step["buttons"] and meta["inputs"][0]["frames"] == step["frames"]
    assert [p["actionIndex"] for p in meta["physicalEvents"]] == [30]
    assert meta["physicalEvents"][0]["pressed"] == step["pressed"]
    assert meta["interval"] == {
        "fromActionIndex": 29,
        "toActionIndex": 30,
        "fromFrame": span["fromFrame"],
        "toFrame": span["toFrame"],
    }
    assert meta["authentication"]["requestedPrefixPin"] == span["prefixPin"]
    assert meta["authentication"]["intervalPrefixPin"] == span["prefixPin"]  # the step's own last line
    assert meta["semanticValidity"] == "not-adjudicated"
    assert all(f["verified"] for f in meta["frames"]) and meta["frames"]


@pytest.mark.parametrize("start,end", [(1, 2), (10, 26), (0, 40), (60, 112), (111, 112), (1, 112)])
def test_interval_arithmetic_follows_the_journal(played, start, end):
    meta = review(request(played, start, end, maxImages=8)).metadata
    assert [i["actionIndex"] for i in meta["inputs"]] == list(range(start + 1, end + 1))
    from_frame = played.span(start)["toFrame"] if start else 0
    to_frame = played.span(end)["toFrame"]
    assert (meta["interval"]["fromFrame"], meta["interval"]["toFrame"]) == (from_frame, to_frame)
    cov = meta["coverage"]
    assert cov["nativeFrames"] == to_frame - from_frame
    assert cov["nativeMs"] == round(float((to_frame - from_frame) * FRAME_SECONDS * 1000), 3)
    retained = to_frame // 4 - from_frame // 4  # the default keeps every 4th frame
    assert cov["retainedFrames"] == retained
    assert sum(g["frames"] for g in cov["gaps"]) + retained == to_frame - from_frame
    assert all(from_frame < g["fromFrame"] <= g["toFrame"] <= to_frame for g in cov["gaps"])
    assert cov["endpointRetained"] == (to_frame % 4 == 0)


def test_equal_indices_are_an_explicit_empty_interval(played):
    result = review(request(played, 40, 40, imageLayout="contact-sheet"))
    meta = result.metadata
    assert meta["coverage"]["empty"] is True and meta["coverage"]["actions"] == 0
    assert meta["inputs"] == [] and meta["physicalEvents"] == [] and meta["frames"] == []
    assert result.sheet is None and meta["contactSheet"]["composed"] is False
    assert meta["interval"]["fromFrame"] == meta["interval"]["toFrame"] == played.span(40)["toFrame"]


def test_requests_that_do_not_match_the_recording_are_refused(played):
    last = played.spans[-1]["toActionIndex"]
    cases = [
        (request(played, 5, last + 1), IntervalRefused, "last committed action"),
        (request(played, 5, 6, branch="branch-0009"), IntervalRefused, "known branches"),
        ({**request(played, 5, 6), "sessionId": "0" * 32}, IntervalRefused, "this recording is session"),
        (request(played, 5, 6, fromFrame=played.span(5)["toFrame"] + 1), IntervalRefused, "fromFrame"),
        (request(played, 5, 6, toFrame=0), IntervalRefused, "toFrame"),
        (request(played, 6, 5), InvalidOption, "toActionIndex"),
        (
            {**from_span(played.span(6)), "fromPrefixPin": played.span(6)["fromPrefixPin"]},
            InvalidOption,
            "fromPrefixPin",
        ),
        ({**request(played, 5, 6), "steps": 1}, InvalidOption, "steps"),
        (
            {**request(played, 5, 6), "recordingPath": str(played.path / "frames")},
            IntervalRefused,
            "not a recording directory",
        ),
    ]
    for body, error, text in cases:
        with pytest.raises(error, match=text):
            review(body)


def test_limits_name_the_limit_and_the_value(long_played):
    # actions 1..4097 are one frame each: 4,097 actions is over the action limit
    with pytest.raises(EvidenceLimitExceeded, match="4,097 normalized actions exceed the limit of 4,096"):
        review(request(long_played, 1, 4098))
    over_frames = next(s for s in long_played.spans if s["toFrame"] - s["fromFrame"] == 3601)
    with pytest.raises(EvidenceLimitExceeded, match="3,601 native frames exceed the limit of 3,600"):
        review(from_span(over_frames))
    at_frames = next(s for s in long_played.spans if s["toFrame"] - s["fromFrame"] == 3600)
    assert review(from_span(at_frames)).metadata["coverage"]["nativeFrames"] == 3600
    most = review(request(long_played, 1, 3601)).metadata  # 3,600 one-frame actions: both fit
    assert len(most["inputs"]) == 3600
    assert enforce_metadata_limit(most) <= MAX_METADATA_BYTES
    size = enforce_metadata_limit(most)
    with pytest.raises(EvidenceLimitExceeded, match=f"{size:,} bytes of response metadata exceed the limit"):
        enforce_metadata_limit(most, size - 1)


def test_select_evenly_takes_first_last_and_even_spacing():
    for count in range(40):
        for wanted in range(1, 9):
            picks = select_evenly(count, wanted)
            assert len(picks) == min(count, wanted)
            assert picks == sorted(set(picks)) and all(0 <= p < count for p in picks)
            if count and wanted == 1:
                assert picks == [count - 1]
            if len(picks) >= 2:
                steps = [b - a for a, b in zip(picks, picks[1:])]
                assert picks[0] == 0 and picks[-1] == count - 1 and max(steps) - min(steps) <= 1


def test_image_selection_and_delivery(played):
    retained = [f for f in range(1, played.span(60)["toFrame"] + 1) if f % 4 == 0 and f > played.span(20)["toFrame"]]
    for k in (1, 2, 4, 8):
        result = review(request(played, 20, 60, maxImages=k))
        frames = [f["frame"] for f in result.metadata["frames"]]
        assert len(frames) == k and frames[-1] == retained[-1]
        if k > 1:
            assert frames[0] == retained[0]
        assert [pair[0]["frame"] for pair in result.images] == frames
        assert all(Image.open(io.BytesIO(png)).size == (160, 144) for _meta, png in result.images)
        hidden = review(request(played, 20, 60, maxImages=k, includeImages=False))
        assert hidden.metadata["frames"] == result.metadata["frames"]  # only delivery changes
        assert hidden.images == () and hidden.sheet is None and hidden.metadata["images"]["delivered"] == 0
    for bad in (0, 9, True, "4"):
        with pytest.raises(InvalidOption, match="maxImages"):
            review(request(played, 20, 60, maxImages=bad))


def test_contact_sheet_is_composed_from_the_verified_sources(played):
    result = review(request(played, 20, 60, maxImages=6, imageLayout="contact-sheet"))
    meta = result.metadata["contactSheet"]
    assert result.images == () and result.sheet is not None and meta["composed"]
    sheet = Image.open(io.BytesIO(result.sheet)).convert("RGB")
    assert sheet.size == (meta["width"], meta["height"])
    assert len(meta["tiles"]) == 6 and meta["columns"] == 4 and meta["rows"] == 2
    for tile, frame in zip(meta["tiles"], result.metadata["frames"]):
        assert (tile["frame"], tile["rgbaSha256"], tile["pngSha256"]) == (
            frame["frame"],
            frame["rgbaSha256"],
            frame["pngSha256"],
        )
        assert f"f{frame['frame']} a{frame['actionIndex']}" in tile["label"]
        source = Image.open(played.path / frame["png"]).convert("RGB")
        crop = sheet.crop((tile["x"], tile["y"], tile["x"] + tile["width"], tile["y"] + tile["height"]))
        assert crop.tobytes() == source.tobytes()
    assert meta["sha256"] == hashlib.sha256(result.sheet).hexdigest()


def _replace_png(path: Path, other: Path) -> None:
    os.chmod(path, 0o644)
    path.write_bytes(other.read_bytes())


def test_a_tampered_png_is_reported_and_never_shown(played, tmp_path):
    copy = copy_recording(played.path, tmp_path / "rec")
    body = {**request(played, 20, 60, maxImages=4), "recordingPath": str(copy)}
    before = review(body).metadata["frames"]
    victim, donor = copy / before[1]["png"], copy / before[2]["png"]
    assert victim != donor
    _replace_png(victim, donor)  # a valid PNG of another picture
    (copy / before[3]["png"]).unlink()  # and a missing one
    for layout in ("individual", "contact-sheet"):
        result = review({**body, "imageLayout": layout})
        frames = result.metadata["frames"]
        assert [f["status"] for f in frames] == ["verified", "tampered", "verified", "missing"]
        assert "pngSha256" in frames[1]["problem"] and frames[1]["verified"] is False
        bad = {f["frame"] for f in result.metadata["coverage"]["unverifiedFrames"]}
        assert bad == {before[1]["frame"], before[3]["frame"]}
        shown = (
            [m["frame"] for m, _png in result.images]
            if layout == "individual"
            else [t["frame"] for t in result.metadata["contactSheet"]["tiles"]]
        )
        assert shown == [before[0]["frame"], before[2]["frame"]]


def test_pixels_that_differ_from_the_recorded_hash_are_tampered(played, tmp_path):
    copy = copy_recording(played.path, tmp_path / "rec")
    body = {**request(played, 20, 24, maxImages=1), "recordingPath": str(copy)}
    frame = review(body).metadata["frames"][0]
    image = Image.frombytes("RGBA", (160, 144), decode_rgba((copy / frame["png"]).read_bytes()))
    image.putpixel((0, 0), (1, 2, 3, 255))
    buf = io.BytesIO()
    image.save(buf, "PNG")
    events = copy / "events.jsonl"
    # the journal still names the old file hash, so the new bytes fail the SHA-256 check first
    (copy / frame["png"]).write_bytes(buf.getvalue())
    assert review(body).metadata["frames"][0]["status"] == "tampered"
    small = io.BytesIO()
    image.resize((80, 72)).save(small, "PNG")
    (copy / frame["png"]).write_bytes(small.getvalue())
    checked = review(body).metadata["frames"][0]
    assert checked["status"] == "tampered" and (checked["width"], checked["height"]) == (80, 72)
    assert events.read_bytes() == (played.path / "events.jsonl").read_bytes()


def test_prefix_pins_authenticate_committed_bytes(played, tmp_path):
    early = played.span(10)
    later = played.span(50)
    assert review(from_span(early)).metadata["authentication"]["requestedPrefixPinVerified"]  # still valid later
    assert review({**from_span(early), "prefixPin": later["prefixPin"]}).metadata["authentication"]["chainVerified"]
    with pytest.raises(IntervalRefused, match="covers journal lines"):
        review({**from_span(later), "prefixPin": early["prefixPin"]})
    seq = early["prefixPin"].split(":")[1]
    with pytest.raises(IntervalRefused, match="does not name a prefix"):
        review({**from_span(early), "prefixPin": f"v1:{seq}:{'0' * 64}"})
    with pytest.raises(IntervalRefused, match="malformed"):
        review({**from_span(early), "prefixPin": "v2:1:abc"})
    copy = copy_recording(played.path, tmp_path / "rec")
    lines = (copy / "events.jsonl").read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b'"actionIndex":5,' in line and b'"kind":"input"' in line)
    edited = lines[at].replace(b'"frames":4', b'"frames":5')
    assert edited != lines[at]
    (copy / "events.jsonl").write_bytes(b"".join(lines[:at] + [edited] + lines[at + 1 :]))
    with pytest.raises(RecordingCorrupt):
        review({**from_span(early), "recordingPath": str(copy)})


def test_branches_are_kept_apart(branched):
    played, checkpoint_action = branched
    second = [s for s in played.spans if s["branchId"] == "branch-0002"]
    assert second and second[0]["fromActionIndex"] == checkpoint_action
    meta = review(
        from_span(
            second[0],
            toActionIndex=second[4]["toActionIndex"],
            toFrame=second[4]["toFrame"],
            prefixPin=second[4]["prefixPin"],
        )
    ).metadata
    assert [i["actionIndex"] for i in meta["inputs"]] == list(range(checkpoint_action + 1, checkpoint_action + 6))
    assert all(f["branchId"] == "branch-0002" for f in meta["frames"])
    first = review(request(played, checkpoint_action, checkpoint_action + 5)).metadata  # the original route
    assert [i["actionIndex"] for i in first["inputs"]] == [i["actionIndex"] for i in meta["inputs"]]
    assert not {i["seq"] for i in first["inputs"]} & {i["seq"] for i in meta["inputs"]}
    assert all(f["branchId"] == "branch-0001" for f in first["frames"])
    with pytest.raises(IntervalRefused, match="branch-0002 starts at action .* earlier route is on branch-0001"):
        review(request(played, checkpoint_action - 1, checkpoint_action + 1, branch="branch-0002"))


def test_an_imported_checkpoint_prefix_has_no_inputs_here(tmp_path):
    with EmulatorSession(build_rom(), recording=RecordingOptions(parent=tmp_path / "a")) as first:
        first.step([], 120)
        first.step([], 1)
        info = first.checkpoint("for the next session")
        first.stop("passed", "checkpoint source")
    source, source_session, at = first.recording_path / info.path, first.session_id, info.action_index
    with EmulatorSession(
        build_rom(), memory_regions=DEMO_REGIONS, recording=RecordingOptions(parent=tmp_path / "b")
    ) as later:
        later.start_from_checkpoint(source)
        spans = [later.step(["right"], 4).span.to_json() for _ in range(3)]
        later.stop("passed", "continued from a checkpoint")
    meta = review(
        from_span(
            spans[0],
            toActionIndex=spans[-1]["toActionIndex"],
            toFrame=spans[-1]["toFrame"],
            prefixPin=spans[-1]["prefixPin"],
        )
    ).metadata
    assert meta["branch"]["reason"] == "start-checkpoint" and meta["branch"]["startActionIndex"] == at
    assert meta["branch"]["importedFrom"]["sourceSessionId"] == source_session
    assert [i["actionIndex"] for i in meta["inputs"]] == [at + 1, at + 2, at + 3]
    with pytest.raises(IntervalRefused, match="imported from a checkpoint of session " + source_session):
        review(from_span(spans[0], fromActionIndex=0, fromFrame=None, prefixPin=None))


def test_review_writes_nothing_and_needs_no_pyboy(played, tmp_path):
    before = tree(played.path)
    for layout in ("individual", "contact-sheet"):
        for include in (True, False):
            review(request(played, 0, 112, maxImages=8, imageLayout=layout, includeImages=include))
    review(request(played, 3, 3))
    assert tree(played.path) == before
    script = (
        "import json, sys\nfrom actors.emulator.tools.review import review\n"
        "meta = review(json.loads(sys.argv[1])).metadata\n"
        "assert 'pyboy' not in sys.modules, 'review imported PyBoy'\n"
        "print(meta['coverage']['verifiedFrames'])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, json.dumps(request(played, 0, 20))],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) == 4
    assert tree(played.path) == before


def test_review_of_a_live_recording_writes_nothing(tmp_path):
    session = EmulatorSession(build_rom(), memory_regions=DEMO_REGIONS, recording=RecordingOptions(parent=tmp_path))
    try:
        spans = [session.step([], 120).span, session.step(["right"], 8).span]
        session.flush_evidence()
        before = tree(session.recording_path)
        meta = review(from_span(spans[1].to_json(), imageLayout="contact-sheet")).metadata
        assert meta["recordingStatus"] == "live" and meta["frames"] and all(f["verified"] for f in meta["frames"])
        assert tree(session.recording_path) == before
    finally:
        session.close()


def test_a_live_frame_not_yet_on_disk_is_pending_not_damaged(tmp_path):
    session = EmulatorSession(build_rom(), memory_regions=DEMO_REGIONS, recording=RecordingOptions(parent=tmp_path))
    try:
        span = session.step([], 120).span.to_json()
        session.flush_evidence()
        body = from_span(span, maxImages=1)
        frame = review(body).metadata["frames"][0]
        (session.recording_path / frame["png"]).unlink()  # as if the frame writer had not run yet
        pending = review(body).metadata["frames"][0]
        assert pending["status"] == "pending" and not pending["verified"]
    finally:
        session.close()
    assert review(body).metadata["frames"][0]["status"] == "missing"  # finalized: absent means missing


def test_lost_work_and_missing_physical_events_stay_unavailable(tmp_path):
    path = tmp_path / "crashed"
    worker = subprocess.run(
        [sys.executable, "-m", "tests.emulator.tools.crash_worker", str(path), "12", "3590"],
        cwd=REPO,
        capture_output=True,
        timeout=120,
    )
    assert worker.returncode == -signal.SIGKILL, worker.stderr.decode()[-2000:]
    assert b"FINISHED" not in worker.stdout, "the long step ended before the kill; the test proves nothing"
    session = resume_from_latest_checkpoint(path, build_rom(), memory_regions=DEMO_REGIONS)
    lost = session.resume_info["lostInterval"]
    session.stop("failed", "crashed mid-step")
    session.close()
    session_id = json.loads((path / "recording.json").read_text())["sessionId"]
    last = lost["toActionIndex"]
    meta = review(
        {
            "recordingPath": str(path),
            "sessionId": session_id,
            "branchId": "branch-0001",
            "fromActionIndex": last - 2,
            "toActionIndex": last,
        }
    ).metadata
    cov = meta["coverage"]
    assert [i["actionIndex"] for i in meta["inputs"]] == [last - 1, last]
    assert [p["actionIndex"] for p in meta["physicalEvents"]] == [last - 1]
    assert [m["actionIndex"] for m in cov["physicalEventsMissing"]] == [last]
    assert cov["lostIntervals"] and cov["lostIntervals"][0]["lastActionCompleted"] is False
    assert cov["endpointRetained"] is False and cov["gaps"][-1]["toFrame"] == meta["interval"]["toFrame"]


def test_a_one_tile_sheet_carries_its_whole_title(played):
    result = review(request(played, 20, 60, maxImages=1, imageLayout="contact-sheet"))
    meta = result.metadata["contactSheet"]
    assert meta["columns"] == 1 and len(meta["titleLines"]) > 1  # 168 px: the title wraps
    assert " ".join(meta["titleLines"]) == meta["title"]
    font = ImageFont.load_default(size=10)
    assert all(font.getlength(line) <= meta["width"] - 8 for line in meta["titleLines"])
    sheet = Image.open(io.BytesIO(result.sheet)).convert("RGB")
    assert sheet.size == (meta["width"], meta["height"])
    tile = meta["tiles"][0]
    assert tile["y"] >= 16 * len(meta["titleLines"])  # the tile starts below the title
    source = Image.open(played.path / tile["png"]).convert("RGB")
    crop = sheet.crop((tile["x"], tile["y"], tile["x"] + tile["width"], tile["y"] + tile["height"]))
    assert crop.tobytes() == source.tobytes()
