"""Access leases on recording roots and the access diagnostic, with real holder processes."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import pytest

from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.errors import AccessRefused, LeaseUnresolved, RecordingBusy
from actors.emulator.recording.lease import (
    ARTIFACT_WORKER,
    LEASE_FILE,
    MAINTENANCE,
    LeaseService,
    access_diagnostic,
    acquire,
)
from actors.emulator.recording.reader import RecordingReader
from actors.emulator.session.resume import resume_from_latest_checkpoint
from actors.emulator.tools.archive import archive
from tests.emulator.tools.maintenance_helpers import REPO, Holder, demo_rom, play_demo, snapshot


@pytest.fixture
def workspace(tmp_path):
    parent = tmp_path / "run" / "capture" / "playtests"
    parent.mkdir(parents=True)
    return tmp_path


def test_a_live_emulator_holds_the_lease_and_competitors_are_refused(workspace):
    path = workspace / "run" / "capture" / "playtests" / "live"
    holder = Holder("record", path)
    try:
        claim = json.loads((path / LEASE_FILE).read_text())
        assert claim["holder"] == "emulator" and claim["pid"] == holder.pid
        with pytest.raises(AccessRefused) as refused:
            archive(path, workspace)
        text = str(refused.value)
        assert "emulator" in text and f"pid {holder.pid}" in text and str(path) in text
        assert refused.value.category == "already-exists" and refused.value.failure["errno"] == errno.EEXIST
        assert "token" not in json.dumps(refused.value.failure) and "token" not in (refused.value.claim or {})
        with pytest.raises(AccessRefused, match="leased by emulator"):
            acquire(path, ARTIFACT_WORKER, "clip", service=LeaseService())
        with pytest.raises(RecordingBusy):
            resume_from_latest_checkpoint(path, demo_rom())  # a second writer: the writer lock refuses
        assert RecordingReader(path).status()["status"] == "live"
    finally:
        assert holder.finish() == 0
    assert not (path / LEASE_FILE).exists(), "closing the recording released the lease"
    assert archive(path, workspace)["status"] == "stopped"


def test_an_artifact_worker_lease_refuses_maintenance_and_other_workers(workspace):
    path = play_demo(workspace / "run" / "capture" / "playtests", steps=12)
    holder = Holder("clip", path)
    try:
        with pytest.raises(AccessRefused, match=f"leased by artifact-worker .*pid {holder.pid}"):
            archive(path, workspace)
        with pytest.raises(AccessRefused, match="artifact-worker"):
            acquire(path, ARTIFACT_WORKER, "clip", service=LeaseService())
        assert (path / "recording.json").is_file(), "nothing moved"
    finally:
        assert holder.finish() == 0
    assert not (path / LEASE_FILE).exists()
    archive(path, workspace)


def test_a_stale_lease_is_never_cleared_but_the_emulators_own_resume_continues_it(workspace):
    path = workspace / "run" / "capture" / "playtests" / "crashed"
    holder = Holder("record", path)
    dead_pid = holder.pid
    holder.kill()
    for _ in range(2):  # refused again: nothing clears it
        with pytest.raises(AccessRefused, match=f"pid {dead_pid}"):
            archive(path, workspace)
    assert json.loads((path / LEASE_FILE).read_text())["pid"] == dead_pid
    session = resume_from_latest_checkpoint(path, demo_rom(), memory_regions=DEMO_REGIONS)
    try:
        claim = json.loads((path / LEASE_FILE).read_text())
        assert claim["pid"] == os.getpid() and claim["adoptedFrom"]["pid"] == dead_pid
        assert claim["operation"] == "resume"
        with pytest.raises(AccessRefused, match="leased by emulator"):
            archive(path, workspace)
        session.stop("cancelled", "resumed only to close it")
    finally:
        session.close()
    assert not (path / LEASE_FILE).exists()
    assert archive(path, workspace)["status"] == "cancelled"


def test_release_leaves_a_lease_file_that_is_no_longer_its_own(workspace):
    path = play_demo(workspace / "run" / "capture" / "playtests", steps=4)
    lease = acquire(path, MAINTENANCE, "archive", service=LeaseService())
    (path / LEASE_FILE).write_text((path / LEASE_FILE).read_text().replace('"archive"', '"restore"'))
    with pytest.raises(LeaseUnresolved, match="differ"):
        lease.release()
    assert (path / LEASE_FILE).is_file(), "a lease that is not exactly ours stays"


def _cli_diagnose(path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", "diagnose", str(path), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_diagnostic_changes_nothing_in_any_state(workspace):
    parent = workspace / "run" / "capture" / "playtests"
    live = parent / "live"
    holder = Holder("record", live)
    try:
        finished = play_demo(parent, steps=4)
        malformed = play_demo(parent, steps=4)
        (malformed / LEASE_FILE).write_text("not json")
        redirected = play_demo(parent, steps=4)
        (redirected / LEASE_FILE).symlink_to(live / LEASE_FILE)
        missing = parent / "never-created"
        service = LeaseService()
        before = snapshot(workspace)
        results = {
            name: access_diagnostic(path, service=service)
            for name, path in [
                ("live", live),
                ("finished", finished),
                ("malformed", malformed),
                ("redirected", redirected),
                ("missing", missing),
            ]
        }
        cli = _cli_diagnose(live)
        assert snapshot(workspace) == before, "the tree is byte-identical, mtimes included"
        assert not missing.exists() and service.held == {} and service.last_failure is None
    finally:
        assert holder.finish() == 0
    states = {name: r["observation"]["state"] for name, r in results.items()}
    assert states == {
        "live": "present",
        "finished": "absent",
        "malformed": "unresolved",
        "redirected": "unresolved",
        "missing": "absent",
    }
    observed = results["live"]["observation"]
    assert observed["claim"]["pid"] == holder.pid and observed["pidVerified"] is False
    assert observed["match"] == "no-saved-lease-in-this-service" and "token" not in observed["claim"]
    assert "symlink" in results["redirected"]["observation"]["problem"]
    assert all(r["recoveryAuthorized"] is False for r in [*results.values(), cli])
    assert cli["observation"]["claim"]["pid"] == holder.pid and cli["lastAcquisitionFailure"] is None


def test_the_diagnostic_keeps_the_last_failure_apart_from_the_observation(workspace):
    path = play_demo(workspace / "run" / "capture" / "playtests", steps=4)
    service = LeaseService()
    holder = Holder("clip", path)
    try:
        with pytest.raises(AccessRefused):
            acquire(path, MAINTENANCE, "archive", service=service)
        during = access_diagnostic(path, service=service)
    finally:
        assert holder.finish() == 0
    after = access_diagnostic(path, service=service)
    assert during["observation"]["state"] == "present" and after["observation"]["state"] == "absent"
    for result in (during, after):
        failure = result["lastAcquisitionFailure"]
        assert failure["operation"] == "archive" and failure["category"] == "already-exists"
        assert failure["code"] == "EEXIST" and failure["root"] == str(path)
    assert access_diagnostic(path, service=LeaseService())["lastAcquisitionFailure"] is None, (
        "a new service cannot reconstruct an earlier failure"
    )
    own = acquire(path, MAINTENANCE, "archive", service=service)
    try:
        assert access_diagnostic(path, service=service)["observation"]["match"] == "matches-this-services-saved-lease"
        assert (
            access_diagnostic(path, service=LeaseService())["observation"]["match"] == "no-saved-lease-in-this-service"
        )
    finally:
        own.release()
