"""Archive, retrieve and restore of real demo-cartridge recordings: round trip, refusals, interruption."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.errors import AccessRefused, MaintenanceInterrupted, MaintenanceRefused
from actors.emulator.recording.lease import LEASE_FILE, access_diagnostic
from actors.emulator.recording.limits import MIB, check_admission
from actors.emulator.recording.reader import RecordingReader
from actors.emulator.session.core import EmulatorSession, RecordingLimits, RecordingOptions
from actors.emulator.tools.archive import archive, open_reader, resolve_recording, restore, retrieve
from tests.emulator.tools.maintenance_helpers import REPO, Holder, content, demo_rom, play_demo

PLAYTESTS = Path("run") / "capture" / "playtests"


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """One recording of the demo cartridge played to its win (copied into each test)."""
    return play_demo(tmp_path_factory.mktemp("played"))


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / PLAYTESTS).mkdir(parents=True)
    return tmp_path


@pytest.fixture
def recording(played, workspace) -> Path:
    target = workspace / PLAYTESTS / played.name
    shutil.copytree(played, target, copy_function=shutil.copy2)
    return target


def _containers(workspace: Path) -> list[Path]:
    root = workspace / "artifacts" / "recording-archives"
    return sorted(root.iterdir()) if root.is_dir() else []


def test_archive_retrieve_restore_round_trip_keeps_every_byte(recording, workspace):
    before = content(recording)
    done = archive(recording, workspace)
    archived = Path(done["archivePath"])
    assert archived.parent.parent == workspace / "artifacts" / "recording-archives"
    assert done["bytesReclaimed"] == 0 and done["reservationReleased"] == 64 * MIB
    assert content(archived) == before, "the move preserved bytes, modes and mtimes"
    assert sorted(os.listdir(recording)) == [".gitignore", ".npmignore", "archive-mapping.json"]
    assert stat.S_IMODE(os.stat(recording).st_mode) == 0o555
    assert (recording / "archive-mapping.json").read_bytes() == (archived.parent / "mapping.json").read_bytes()
    check_admission(recording.parent, 1024 * MIB)  # the parent's reservation is released
    for path in (recording, archived):  # both paths resolve through the verified mapping
        found = retrieve(path)
        assert (found["originalPath"], found["archivePath"]) == (str(recording), str(archived))
        assert found["sessionId"] == done["sessionId"] and found["recording"]["status"] == "stopped"
    reader, resolved = open_reader(recording)
    assert resolved.archived and resolved.original_path == recording and resolved.recording_path == archived
    assert reader.export(0, 4)["actionCount"] > 0 and reader.verify_frames() == []
    with pytest.raises(MaintenanceRefused, match="already archived"):
        archive(archived, workspace)  # not an archive of an archive
    back = restore(recording, workspace)
    assert content(recording) == before, "restored byte-identical to the original"
    parked = Path(back["parkedMappingPath"])
    assert (parked / "archive-mapping.json").is_file() and (archived.parent / "inventory.json").is_file()
    assert not archived.exists() and resolve_recording(recording).archived is False
    assert RecordingReader(recording).status()["status"] == "stopped"
    with pytest.raises(MaintenanceRefused, match="not archived"):
        retrieve(recording)
    again = archive(recording, workspace)  # a second archive gets a new container
    assert again["archiveId"] != done["archiveId"] and len(_containers(workspace)) == 2


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def test_the_commands_archive_retrieve_restore_and_refuse(recording, workspace):
    before = content(recording)
    done = _run("archive", str(recording), "--workspace", str(workspace), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["bytesReclaimed"] == 0 and Path(result["archivePath"]).is_dir()
    again = _run("archive", str(recording), "--workspace", str(workspace), "--json")
    assert again.returncode == 1 and "already holds an archive mapping" in again.stderr
    assert json.loads(again.stdout)["error"]["code"] == "maintenance-refused"
    found = _run("retrieve", str(recording))
    assert found.returncode == 0 and result["archivePath"] in found.stdout
    wrong = _run("restore", str(recording), "--workspace", str(REPO))
    assert wrong.returncode == 1 and "archived under the workspace" in wrong.stderr
    back = _run("restore", str(recording), "--workspace", str(workspace))
    assert back.returncode == 0, back.stderr
    assert content(recording) == before


def _refused(path: Path, workspace: Path, reason: str, offending: Path | None = None) -> None:
    before = content(path) if path.is_dir() else None
    with pytest.raises(MaintenanceRefused) as refused:
        archive(path, workspace)
    assert reason in str(refused.value), str(refused.value)
    assert str(refused.value.path).startswith(str(offending or path)) and str(refused.value.path) in str(refused.value)
    if before is not None:
        assert content(path) == before, "a refusal moves and changes nothing"
    assert _containers(workspace) == [], "no archive container is left behind"
    assert not (path / LEASE_FILE).exists(), "the maintenance lease was released"


def _drop_stop_line(path: Path) -> None:
    lines = (path / "events.jsonl").read_bytes().splitlines(keepends=True)
    (path / "events.jsonl").write_bytes(b"".join(lines[:-1]))


def _edit_manifest(path: Path) -> None:
    manifest = json.loads((path / "recording.json").read_text())
    manifest["status"] = "failed"
    (path / "recording.json").write_text(json.dumps(manifest))


def _edit_journal(path: Path) -> None:
    data = (path / "events.jsonl").read_bytes()
    (path / "events.jsonl").write_bytes(data.replace(b'"frames":120', b'"frames":121', 1))


def _first(path: Path, sub: str) -> Path:
    return sorted((path / sub).iterdir())[0]


def _tamper(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-20] ^= 0xFF
    path.write_bytes(bytes(data))


def _many_members(path: Path) -> None:
    (path / "battery").mkdir()
    for i in range(20_001):
        (path / "battery" / f"{i}").touch()


def _huge_sparse_file(path: Path) -> None:
    with open(path / "battery" / "big.ram", "wb") as fh:  # sparse: 512 MiB + 1 byte, no disk used
        fh.truncate(512 * MIB + 1)


SPOILERS = {
    "not finalized": _drop_stop_line,
    "disagrees with the journal": _edit_manifest,
    "journal does not verify": _edit_journal,
    "the PNG differs": lambda p: _tamper(_first(p, "frames")),
    "checkpoint differs": lambda p: _tamper(_first(p, "checkpoints")),
    "is a symlink": lambda p: (p / "frames" / "link.png").symlink_to(_first(p, "frames")),
    "is a hard link": lambda p: os.link(p / "quota-ledger.jsonl", p.parent / "ledger-copy"),
    "is a special file": lambda p: os.mkfifo(p / "checkpoints" / "pipe"),
    "is writable by others": lambda p: os.chmod(_first(p, "frames"), 0o646),
    "more than 20000 members": _many_members,
    "bytes of files": _huge_sparse_file,
}


@pytest.mark.parametrize("reason", list(SPOILERS))
def test_each_archive_refusal_names_its_reason_and_path(recording, workspace, reason):
    if reason == "bytes of files":
        (recording / "battery").mkdir()
    SPOILERS[reason](recording)
    _refused(recording, workspace, reason)


def test_a_live_writer_without_a_lease_is_refused(recording, workspace):
    fd = os.open(recording / ".writer.lock", os.O_RDWR)  # an older client: writer lock, no lease
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _refused(recording, workspace, "a live writer holds .writer.lock")
    finally:
        os.close(fd)


def test_paths_outside_symlinked_or_not_recordings_are_refused(recording, workspace, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    _refused(recording, elsewhere, "not inside the workspace")
    link = workspace / PLAYTESTS / "link"
    link.symlink_to(recording)
    _refused(link, workspace, "is a symlink")
    plain = workspace / PLAYTESTS / "plain"
    plain.mkdir()
    _refused(plain, workspace, "not a recording directory")
    (workspace / "artifacts").symlink_to(elsewhere)
    _refused(recording, workspace, "symlink, not a directory", offending=workspace / "artifacts")


@pytest.mark.parametrize("change", ["append", "touch", "add", "remove"])
def test_a_change_during_inspection_is_refused(recording, workspace, change):
    """The change is made between the inspection's two passes (the hook's ``inspected`` point),
    as a writer that ignores leases could at any moment."""
    ledger = recording / "quota-ledger.jsonl"
    edits = {
        "append": lambda: ledger.open("ab").write(b"{}\n"),
        "touch": lambda: os.utime(ledger, ns=(1, 1)),
        "add": lambda: (recording / "frames" / "late.png").write_bytes(b"late"),
        "remove": (recording / ".npmignore").unlink,
    }

    def hook(step: str) -> None:
        if step == "inspected":
            edits[change]()

    with pytest.raises(MaintenanceRefused, match="changed during inspection") as refused:
        archive(recording, workspace, step_hook=hook)
    assert str(recording) in str(refused.value)
    assert (recording / "recording.json").is_file() and _containers(workspace) == []
    assert not (recording / LEASE_FILE).exists()


def test_retrieve_refuses_a_damaged_archive(recording, workspace):
    done = archive(recording, workspace)
    archived = Path(done["archivePath"])
    os.chmod(_first(archived, "frames"), 0o600)
    with pytest.raises(MaintenanceRefused, match="different mode"):
        retrieve(recording)
    os.chmod(_first(archived, "frames"), 0o644)
    retrieve(recording)
    mapping = archived.parent / "mapping.json"
    os.chmod(mapping, 0o644)
    mapping.write_text(mapping.read_text().replace('"stopped"', '"failed"'))
    with pytest.raises(MaintenanceRefused, match="two mapping copies differ"):
        retrieve(recording)
    with pytest.raises(MaintenanceRefused, match="two mapping copies differ"):
        resolve_recording(recording)


def test_restore_refuses_unrelated_content_and_a_filled_quota(recording, workspace):
    archive(recording, workspace)
    os.chmod(recording, 0o755)
    (recording / "notes.txt").write_text("unrelated")
    os.chmod(recording, 0o555)
    with pytest.raises(MaintenanceRefused, match="unrelated content"):
        restore(recording)
    os.chmod(recording, 0o755)
    (recording / "notes.txt").unlink()
    os.chmod(recording, 0o555)
    newer = []
    for _ in range(2):  # two newer attempts reserve 2 x 512 MiB = 1 GiB
        session = EmulatorSession(
            demo_rom(),
            memory_regions=DEMO_REGIONS,
            recording=RecordingOptions(parent=recording.parent, limits=RecordingLimits(max_bytes=512 * MIB)),
        )
        session.close()
        newer.append(session.recording_path)
    with pytest.raises(MaintenanceRefused, match="quota is filled by newer recordings"):
        restore(recording)
    assert (recording / "archive-mapping.json").is_file() and not (recording / LEASE_FILE).exists()
    shutil.rmtree(newer[0])
    assert restore(recording)["bytesReclaimed"] == 0


class Interrupt:
    """A failure injected between two steps of a move (what a full disk or a crash would leave)."""

    def __init__(self, at: str):
        self.at = at

    def __call__(self, step: str) -> None:
        if step == self.at:
            raise OSError(errno.EIO, "injected failure between the steps of the move")


def test_an_archive_interrupted_mid_move_keeps_every_byte_and_the_lease(recording, workspace):
    before = content(recording)
    with pytest.raises(MaintenanceInterrupted) as stopped:
        archive(recording, workspace, step_hook=Interrupt("moved"))
    retained = stopped.value.retained
    archived = Path(retained["recording"])
    assert stopped.value.step == "publish-mapping" and "do not repeat" in str(stopped.value)
    assert not recording.exists() and archived.name == "recording"
    moved = content(archived)
    lease = moved.pop(LEASE_FILE)
    assert moved == before, "every byte and mode kept"
    assert json.loads(lease[1])["holder"] == "maintenance" and retained["lease"] == str(archived / LEASE_FILE)
    assert Path(retained["mappingCopy"]).is_file()
    assert access_diagnostic(archived)["observation"]["state"] == "present"
    with pytest.raises(AccessRefused, match="leased by maintenance"):
        restore(archived)
    with pytest.raises(MaintenanceRefused):
        retrieve(archived)  # the mapping was never published
    with pytest.raises(MaintenanceRefused):
        archive(recording, workspace)  # nothing at the original path to archive


def test_a_restore_interrupted_mid_move_keeps_every_byte_and_the_lease(recording, workspace):
    before = content(recording)
    done = archive(recording, workspace)
    with pytest.raises(MaintenanceInterrupted) as stopped:
        restore(recording, step_hook=Interrupt("parked"))
    retained = stopped.value.retained
    assert stopped.value.step == "return-recording" and not recording.exists()
    parked = Path(retained["mapping"])
    assert parked.name == "parked-mapping" and (parked / "archive-mapping.json").is_file()
    archived = Path(done["archivePath"])
    moved = content(archived)
    assert json.loads(moved.pop(LEASE_FILE)[1])["operation"] == "restore"
    assert moved == before
    with pytest.raises(MaintenanceRefused):
        retrieve(archived)  # no mapping at the original path any more


def test_an_archiver_killed_mid_move_keeps_every_byte_and_the_lease(recording, workspace):
    before = content(recording)
    archiver = Holder("archive", recording, str(workspace))  # a real process, SIGKILLed after the rename
    archiver.kill()
    [container] = _containers(workspace)
    archived = container / "recording"
    moved = content(archived)
    claim = json.loads(moved.pop(LEASE_FILE)[1])
    assert moved == before and not recording.exists()
    assert claim["holder"] == "maintenance" and claim["pid"] == archiver.pid
    with pytest.raises(AccessRefused, match=f"leased by maintenance .*pid {archiver.pid}"):
        restore(archived)
    with pytest.raises(MaintenanceRefused):
        retrieve(archived)


def test_failed_and_cancelled_recordings_are_archived_and_restored(workspace):
    for outcome in ("failed", "cancelled"):
        path = play_demo(workspace / PLAYTESTS, steps=4, outcome=outcome, reason=f"an attempt that {outcome}")
        before = content(path)
        assert archive(path, workspace)["status"] == outcome
        assert retrieve(path)["status"] == outcome
        restore(path)
        assert content(path) == before
