"""Emulator recording maintenance: ``supervisor capture archive|retrieve|restore|diagnose PATH``.

The logic lives in ``actors/emulator/tools/archive.py`` and ``actors/emulator/recording/lease.py``; these
commands print its results. Filesystem only: no ROM is loaded and no emulator is started.

Exit codes (archive, retrieve, restore):
  0  done (retrieve: verified)
  1  refused before anything moved: the reason and the path are printed
  3  interrupted part-way: every byte is retained, the lease is left unresolved; stop for owner
     reconciliation, do not repeat the call
diagnose always exits 0 (it reports an observation), or 2 for a PATH outside --workspace.
"""

from __future__ import annotations

import os
import sys

from actors.emulator.recording.errors import AccessRefused, MaintenanceInterrupted, RecordingError
from actors.emulator.recording.lease import access_diagnostic, describe_claim
from actors.emulator.tools.archive import archive, restore, retrieve
from supervisor.commands.base import Command, emit

EXIT_REFUSED, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 3


def _error(args, action: str, exc: RecordingError) -> int:
    code = EXIT_INTERRUPTED if isinstance(exc, MaintenanceInterrupted) else EXIT_REFUSED
    if args.json:
        body = {
            "action": action,
            "path": args.path,
            "exit_code": code,
            "error": {"code": exc.code, "message": str(exc)},
        }
        if isinstance(exc, AccessRefused):
            body["recordingAccessFailure"] = exc.failure
        if isinstance(exc, MaintenanceInterrupted):
            body["error"].update(step=exc.step, retained=exc.retained)
        emit(args, body, "")
    sys.stderr.write(f"error: {exc}\n")
    return code


class _Maintenance(Command):
    workspace_default: str | None = None

    def add_arguments(self, p) -> None:
        p.add_argument("path", metavar="PATH", help="the recording's original path (or its archive path)")
        default = self.workspace_default
        p.add_argument(
            "--workspace",
            metavar="DIR",
            default=default,
            help="the project whose artifacts/recording-archives/ holds archives "
            + (
                "(default: the current directory)"
                if default
                else "(default: the one the mapping names; if given, it must match)"
            ),
        )
        p.add_argument("--json", action="store_true", help="print the full result as JSON")

    def call(self, args) -> dict:
        raise NotImplementedError

    def human(self, result: dict) -> str:
        raise NotImplementedError

    def run(self, args) -> int:
        try:
            result = self.call(args)
        except RecordingError as exc:
            return _error(args, self.name, exc)
        emit(args, result, self.human(result))
        return 0


class Archive(_Maintenance):
    """Move a finalized recording into artifacts/recording-archives/<id>/recording.

    Only a finalized, integrity-valid stopped, cancelled or failed recording whose root no
    holder leases; every member is inventoried (at most 20,000 and 512 MiB; symlinks, hard
    links, special files, members writable by others and changes during inspection are
    refused). A protected mapping directory is left at PATH. bytesReclaimed is 0.

    Example:
      supervisor capture archive run/capture/sessions/<id>/recording --workspace . --json
    """

    name = "archive"
    workspace_default = "."

    def call(self, args) -> dict:
        return archive(args.path, args.workspace)

    def human(self, r: dict) -> str:
        return (
            f"archived {r['originalPath']}\n"
            f"  archive      {r['archivePath']}\n"
            f"  session      {r['sessionId']}  status {r['status']}\n"
            f"  members      {r['memberCount']} ({r['totalBytes']:,} bytes)  inventory {r['inventoryDigest']}\n"
            f"  the parent's reservation of {r['reservationReleased']:,} bytes is released; "
            f"bytesReclaimed {r['bytesReclaimed']} (no disk space is freed)\n"
            f"  keep {r['originalPath']} (the mapping) and the archive container together"
        )


class Retrieve(_Maintenance):
    """Verify an archived recording and print its original and archive paths.

    Both mapping copies, the inventory digest, every member and its mode, the manifest and
    the finalized journal are verified. Writes nothing. PATH is the original path (where the
    mapping directory stands) or the archive path.

    Example:
      supervisor capture retrieve run/capture/sessions/<id>/recording
    """

    name = "retrieve"

    def call(self, args) -> dict:
        return retrieve(args.path, args.workspace)

    def human(self, r: dict) -> str:
        rec = r["recording"]
        return (
            f"verified archived recording {r['sessionId']} ({r['status']}, outcome {r['outcome'] or 'none'})\n"
            f"  original     {r['originalPath']}\n"
            f"  archive      {r['archivePath']}\n"
            f"  checked      {', '.join(r['verified'])}\n"
            f"  journal      {r['prefixPin']}  actions {rec['actionCount']}  evidence {rec['evidenceCount']}"
            f"  checkpoints {rec['checkpointCount']}"
        )


class Restore(_Maintenance):
    """Return an archived recording to its original path.

    Verifies everything retrieve verifies (under the maintenance lease), checks the original
    parent's unchanged quota (64 recordings, 1 GiB of reservations), parks the mapping
    directory in the archive container (kept for audit) and moves the recording back.

    Example:
      supervisor capture restore run/capture/sessions/<id>/recording
    """

    name = "restore"

    def call(self, args) -> dict:
        return restore(args.path, args.workspace)

    def human(self, r: dict) -> str:
        return (
            f"restored {r['originalPath']} (session {r['sessionId']}, {r['status']})\n"
            f"  parked mapping {r['parkedMappingPath']}\n"
            f"  the parent's reservation of {r['reservationCharged']:,} bytes is charged again; "
            f"bytesReclaimed {r['bytesReclaimed']}"
        )


class Diagnose(Command):
    """Show who claims a recording root's access lease, without touching anything.

    Reads only PATH/.access-lease (at most 4 KiB): creates nothing, acquires or releases no
    lease, starts or queries no process. A pid is an unverified claim; recoveryAuthorized is
    always false and there is no force-unlock. The last acquisition failure is the one this
    process recorded, so a fresh command has none.

    Example:
      supervisor capture diagnose run/capture/sessions/<id>/recording --json
    """

    name = "diagnose"

    def add_arguments(self, p) -> None:
        p.add_argument("path", metavar="PATH", help="a recording directory")
        p.add_argument("--workspace", metavar="DIR", help="refuse a PATH outside this directory")
        p.add_argument("--json", action="store_true", help="print the full diagnostic as JSON")

    def run(self, args) -> int:
        target = os.path.abspath(args.path)
        if args.workspace is not None:
            ws = os.path.abspath(args.workspace)
            if os.path.commonpath([ws, target]) != ws:
                sys.stderr.write(f"error: {target} is not inside the workspace {ws}\n")
                return EXIT_USAGE
        result = access_diagnostic(target)
        emit(args, result, _diagnosis(result))
        return 0


def _diagnosis(r: dict) -> str:
    obs = r["observation"]
    if obs["state"] == "present":
        state = f"present: {describe_claim(obs['claim'])}\n  match        {obs['match']}"
    else:
        state = obs["state"] + (f": {obs['problem']}" if obs.get("problem") else "")
    failure = r["lastAcquisitionFailure"]
    last = (
        f"{failure['operation']} at {failure['at']}: {failure['category']}"
        if failure
        else "none recorded by this service (a new service cannot reconstruct earlier failures)"
    )
    return (
        f"lease {r['leasePath']}\n"
        f"  observed     {state}\n"
        f"  last failure {last}\n"
        f"  recoveryAuthorized false: {r['note']}"
    )
