"""Archive, retrieve and restore finalized recordings: filesystem only, no ROM, no emulator.

::

    <workspace>/artifacts/recording-archives/<archive-id>/     created exclusively
        mapping.json          the mapping, copy 1 (mode 0444)
        inventory.json        the full inventory that mapping's inventoryDigest names (0444)
        recording/            the recording directory, moved here unchanged (one rename)
        parked-mapping/       after a restore: the mapping directory that stood at the original path
        .gitignore .npmignore ignore-all markers
    <original path>/          the protected mapping directory (mode 0555)
        archive-mapping.json  the mapping, copy 2 (byte-identical to copy 1, mode 0444)
        .gitignore .npmignore

* :func:`archive` — a finalized, integrity-valid ``stopped | cancelled | failed`` recording
  (maintenance.py's checks, under the maintenance lease) is renamed into a new container on the
  same filesystem; the mapping directory is published at the original path. The original
  parent's admission check no longer finds its ``recording.json``, so its ``maxBytes``
  reservation is released; no disk space is reclaimed (``bytesReclaimed`` is 0).
* :func:`retrieve` — from the original path or the archive path: both mapping copies, the
  inventory digest, every member (modes included), the manifest and the finalized journal are
  verified; returns the paths and the session identity. Writes nothing.
* :func:`restore` — verifies again under the maintenance lease, checks the original parent's
  unchanged admission quota (under the parent's lock, as creation does), parks the mapping
  directory in the container and renames the recording back to its original path.
* :func:`resolve_recording` / :func:`open_reader` — what status, export, review and clips use:
  an ordinary recording as it is, an original or archive path through the verified mapping.

Refusals before anything moves are :class:`MaintenanceRefused` (or ``AccessRefused`` for a held
lease). Once a move has begun, any failure is :class:`MaintenanceInterrupted`: nothing is removed,
the lease file is left where it is (unresolved) and the error names where every part is.
``step_hook(name)`` is called after each step of a move (``moved``, ``published``; ``parked``,
``returned``) and, in archive, between the two passes of the inspection (``inspected``); whatever
it raises is handled exactly like a filesystem failure at that point. Tests use it to interrupt a
move, or to change a member while the inspection runs.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import stat
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from actors.runtime.durable import sync

from ..recording.errors import AdmissionRefused, MaintenanceInterrupted, MaintenanceRefused
from ..recording.journal import now
from ..recording.lease import MAINTENANCE, SERVICE, Lease, LeaseService, acquire, observe
from ..recording.limits import MANIFEST, MARKERS, check_admission
from ..recording.reader import RecordingReader
from .maintenance import (
    canonical,
    compare_inventory,
    inside_workspace,
    inventory_digest,
    read_small,
    take_inventory,
    verify_finalized,
    workspace_root,
)

ARCHIVES = Path("artifacts") / "recording-archives"
MAPPING_KIND = "gamerig.recording.archive-mapping"
CONTAINER_MAPPING, INVENTORY, ARCHIVED, PARKED = "mapping.json", "inventory.json", "recording", "parked-mapping"
MAPPING_FILE = "archive-mapping.json"
StepHook = Callable[[str], None]


@dataclass(frozen=True)
class Located:
    """An archived recording found from either of its paths (mapping copies not yet verified)."""

    original: Path
    container: Path
    mapping: dict
    mapping_bytes: bytes

    @property
    def archived(self) -> Path:
        return self.container / ARCHIVED


@dataclass(frozen=True)
class Resolved:
    """The recording behind a requested path (for status / export / review / clips)."""

    requested: Path
    recording_path: Path  # where the recording's bytes are now
    original_path: Path  # where it was recorded (equal to recording_path unless archived)
    archived: bool
    archive_id: str | None = None
    mapping: dict | None = None


def _write_new(path: Path, data: bytes, mode: int = 0o444) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, data)
        sync(fd)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        sync(fd)
    finally:
        os.close(fd)


def _safe_mkdir(operation: str, path: Path) -> None:
    """An existing directory that is no symlink and not writable by others, or a new one."""
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode) or info.st_mode & stat.S_IWOTH:
        raise MaintenanceRefused(
            operation, path, "the archive location is a symlink, not a directory, or writable by others"
        )


def _create_container(operation: str, workspace: Path, original: Path) -> Path:
    archives = workspace / ARCHIVES
    try:
        _safe_mkdir(operation, archives.parent)
        _safe_mkdir(operation, archives)
        if os.lstat(archives).st_dev != os.lstat(original.parent).st_dev:
            raise MaintenanceRefused(
                operation, original, f"{archives} is on another filesystem; there is no cross-filesystem copy"
            )
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        container = archives / f"{stamp}-{uuid.uuid4().hex[:12]}"
        os.mkdir(container, 0o755)  # exclusive: an existing id is never reused
    except OSError as exc:
        raise MaintenanceRefused(operation, archives, f"cannot create the archive container ({exc.strerror})") from None
    return container


def _mapping(workspace: Path, original: Path, container: Path, facts: dict, inventory: dict) -> dict:
    return {
        "schema": 1,
        "kind": MAPPING_KIND,
        "archiveId": container.name,
        "workspace": str(workspace),
        "originalPath": str(original),
        "containerPath": str(container),
        "archivePath": str(container / ARCHIVED),
        "sessionId": facts["sessionId"],
        "status": facts["status"],
        "outcome": facts["outcome"],
        "prefixPin": facts["prefixPin"],
        "reservedMaxBytes": facts["maxBytes"],
        "inventoryDigest": inventory_digest(inventory),
        "memberCount": inventory["memberCount"],
        "totalBytes": inventory["totalBytes"],
        "archivedAt": now(),
    }


def _mapping_bytes(mapping: dict) -> bytes:
    return (json.dumps(mapping, indent=2, sort_keys=True) + "\n").encode()


def _require_recording(operation: str, path: Path) -> None:
    if (path / MAPPING_FILE).exists():
        raise MaintenanceRefused(
            operation, path, "it already holds an archive mapping (archived; use retrieve or restore)"
        )
    if not (path / MANIFEST).is_file():
        raise MaintenanceRefused(operation, path, f"no {MANIFEST}: not a recording directory")


def archive(
    path: Path | str, workspace: Path | str = ".", *, step_hook: StepHook | None = None, service: LeaseService = SERVICE
) -> dict:
    """Move a finalized recording into a new archive container and leave its mapping behind."""
    operation = "archive"
    ws = workspace_root(workspace)
    original = inside_workspace(operation, path, ws)
    if original.is_relative_to(ws / ARCHIVES):
        raise MaintenanceRefused(
            operation, original, f"it is inside {ws / ARCHIVES}: already archived (use retrieve or restore)"
        )
    _require_recording(operation, original)
    lease = acquire(original, MAINTENANCE, operation, service=service)
    container = None
    try:
        facts = verify_finalized(operation, original)
        inventory = take_inventory(operation, original, step_hook and (lambda: step_hook("inspected")))
        container = _create_container(operation, ws, original)
        mapping = _mapping(ws, original, container, facts, inventory)
        data = _mapping_bytes(mapping)
        _write_container(operation, container, data, inventory)
    except BaseException:
        if container is not None:
            _remove_unused_container(container)
        lease.release()
        raise
    _move_out(operation, original, container, data, lease, step_hook)
    lease.release()
    return {
        "action": operation,
        "originalPath": str(original),
        "archivePath": mapping["archivePath"],
        "archiveId": container.name,
        "sessionId": facts["sessionId"],
        "status": facts["status"],
        "inventoryDigest": mapping["inventoryDigest"],
        "memberCount": inventory["memberCount"],
        "totalBytes": inventory["totalBytes"],
        "reservationReleased": facts["maxBytes"],
        "bytesReclaimed": 0,
    }


def _write_container(operation: str, container: Path, data: bytes, inventory: dict) -> None:
    try:
        _write_new(container / INVENTORY, canonical(inventory))
        _write_new(container / CONTAINER_MAPPING, data)
        for name, text in MARKERS.items():
            _write_new(container / name, text)
        _fsync_dir(container)
    except OSError as exc:
        raise MaintenanceRefused(operation, container, f"cannot write the archive metadata ({exc.strerror})") from None


def _remove_unused_container(container: Path) -> None:
    """Before anything moved: remove the container this call created (only its own files)."""
    for name in (INVENTORY, CONTAINER_MAPPING, *MARKERS):
        try:
            os.unlink(container / name)
        except FileNotFoundError:
            pass
    os.rmdir(container)


def _move_out(
    operation: str, original: Path, container: Path, data: bytes, lease: Lease, step_hook: StepHook | None
) -> None:
    archived, step = container / ARCHIVED, "move"
    try:
        os.rename(original, archived)
        lease.moved_to(archived)
        _fsync_dir(container)
        _fsync_dir(original.parent)
        step = "publish-mapping"
        if step_hook:
            step_hook("moved")
        os.mkdir(original, 0o755)
        _write_new(original / MAPPING_FILE, data)
        for name, text in MARKERS.items():
            _write_new(original / name, text)
        os.chmod(original, 0o555)
        _fsync_dir(original)
        step = "confirm"
        if step_hook:
            step_hook("published")
        if read_small(operation, original / MAPPING_FILE) != data:
            raise OSError("the published mapping does not read back byte-identical")
    except BaseException as exc:
        raise MaintenanceInterrupted(
            operation,
            step,
            _cause(exc),
            {
                "recording": str(lease.root),
                "mappingCopy": str(container / CONTAINER_MAPPING),
                "originalPath": str(original),
                "lease": str(lease.path),
            },
        ) from exc


def _cause(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{os.strerror(exc.errno)} [{exc.errno}]"
    return exc.__class__.__name__ + (f": {exc}" if str(exc) else "")


def _parse_mapping(operation: str, where: Path, data: bytes) -> dict:
    try:
        mapping = json.loads(data)
    except ValueError:
        raise MaintenanceRefused(operation, where, "the mapping is not JSON") from None
    if not isinstance(mapping, dict) or mapping.get("kind") != MAPPING_KIND:
        raise MaintenanceRefused(operation, where, f"the file is not a {MAPPING_KIND} document")
    return mapping


def locate(operation: str, path: Path | str) -> Located:
    """The archived recording behind an original path (mapping directory) or an archive path."""
    target = Path(os.path.abspath(path))
    if (target / MAPPING_FILE).exists() or os.path.lexists(target / MAPPING_FILE):
        data = read_small(operation, target / MAPPING_FILE)
        mapping = _parse_mapping(operation, target / MAPPING_FILE, data)
        return Located(target, Path(str(mapping.get("containerPath"))), mapping, data)
    if target.name == ARCHIVED and os.path.lexists(target.parent / CONTAINER_MAPPING):
        data = read_small(operation, target.parent / CONTAINER_MAPPING)
        mapping = _parse_mapping(operation, target.parent / CONTAINER_MAPPING, data)
        return Located(Path(str(mapping.get("originalPath"))), target.parent, mapping, data)
    if (target / MANIFEST).is_file():
        raise MaintenanceRefused(operation, target, "it is not archived (it holds a recording)")
    raise MaintenanceRefused(operation, target, "neither an archive mapping directory nor an archived recording")


def _check_mapping_dir(operation: str, original: Path) -> None:
    """The original path holds exactly the protected mapping directory, nothing unrelated."""
    info = os.lstat(original)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode) or stat.S_IMODE(info.st_mode) != 0o555:
        raise MaintenanceRefused(
            operation, original, "the mapping directory is not the protected (0555) directory archive left"
        )
    names = set(os.listdir(original))
    expected = {MAPPING_FILE, *MARKERS}
    if names != expected:
        extra, missing = sorted(names - expected), sorted(expected - names)
        raise MaintenanceRefused(
            operation, original, f"unrelated content at the original path (extra {extra}, missing {missing})"
        )
    for name in expected:
        member = os.lstat(original / name)
        if not stat.S_ISREG(member.st_mode) or stat.S_IMODE(member.st_mode) != 0o444 or member.st_nlink != 1:
            raise MaintenanceRefused(
                operation, original / name, "the mapping file is not the protected (0444) regular file archive wrote"
            )
    for name, text in MARKERS.items():
        if read_small(operation, original / name) != text:
            raise MaintenanceRefused(operation, original / name, "the ignore marker was changed")


def _verify_mapping(operation: str, found: Located, workspace: Path | str | None) -> None:
    """Both mapping copies byte-identical and consistent with where they are."""
    original, container, mapping = found.original, found.container, found.mapping
    if not os.path.lexists(found.archived):
        raise MaintenanceRefused(
            operation,
            found.archived,
            f"no archived recording here (see {container / PARKED} for a restore to {original})",
        )
    copies = (read_small(operation, container / CONTAINER_MAPPING), read_small(operation, original / MAPPING_FILE))
    if copies[0] != copies[1] or copies[0] != found.mapping_bytes:
        raise MaintenanceRefused(
            operation,
            original,
            f"the two mapping copies differ ({original / MAPPING_FILE} and {container / CONTAINER_MAPPING})",
        )
    ws = Path(str(mapping.get("workspace")))
    expected = {
        "originalPath": str(original),
        "containerPath": str(container),
        "archivePath": str(found.archived),
        "archiveId": container.name,
    }
    for key, value in expected.items():
        if mapping.get(key) != value:
            raise MaintenanceRefused(
                operation, original, f"the mapping's {key} {mapping.get(key)!r} does not match {value!r}"
            )
    if container.parent != ws / ARCHIVES:
        raise MaintenanceRefused(operation, container, f"the container is not in {ws / ARCHIVES}")
    if workspace is not None and workspace_root(workspace) != ws:
        raise MaintenanceRefused(operation, original, f"archived under the workspace {ws}, not {workspace}")
    inside_workspace(operation, original, ws)
    inside_workspace(operation, found.archived, ws)
    _check_mapping_dir(operation, original)


def _verify_archived(
    operation: str,
    found: Located,
    workspace: Path | str | None,
    own_lease: Lease | None = None,
    service: LeaseService = SERVICE,
) -> dict:
    """The mapping, the inventory (every member, modes included), manifest and finalized journal."""
    _verify_mapping(operation, found, workspace)
    archived, mapping = found.archived, found.mapping
    lease_state = observe(archived, service)
    if own_lease is None and lease_state["state"] != "absent":
        raise MaintenanceRefused(
            operation,
            archived,
            f"an access lease is {lease_state['state']} "
            f"({lease_state.get('claim') or lease_state.get('problem')}); a maintenance "
            "step may be unresolved: stop for owner reconciliation",
        )
    if own_lease is not None and lease_state.get("match") != "matches-this-services-saved-lease":
        raise MaintenanceRefused(operation, archived, "the maintenance lease changed under this call")
    raw = read_small(operation, found.container / INVENTORY, 64 * 1024 * 1024)
    try:
        inventory = json.loads(raw)
    except ValueError:
        raise MaintenanceRefused(operation, found.container / INVENTORY, "inventory.json is not JSON") from None
    if canonical(inventory) != raw or inventory_digest(inventory) != mapping.get("inventoryDigest"):
        raise MaintenanceRefused(
            operation, found.container / INVENTORY, "inventory.json does not match the mapping's inventoryDigest"
        )
    compare_inventory(operation, archived, inventory, take_inventory(operation, archived))
    facts = verify_finalized(operation, archived)
    for key in ("sessionId", "status", "prefixPin"):
        if facts[key] != mapping.get(key):
            raise MaintenanceRefused(
                operation,
                archived,
                f"the recording's {key} {facts[key]!r} differs from the mapping's {mapping.get(key)!r}",
            )
    return facts


def retrieve(path: Path | str, workspace: Path | str | None = None, *, service: LeaseService = SERVICE) -> dict:
    """Verify an archived recording (from its original or archive path); writes nothing."""
    operation = "retrieve"
    found = locate(operation, path)
    facts = _verify_archived(operation, found, workspace, service=service)
    mapping = found.mapping
    return {
        "action": operation,
        "originalPath": str(found.original),
        "archivePath": str(found.archived),
        "archiveId": found.container.name,
        "containerPath": str(found.container),
        "sessionId": facts["sessionId"],
        "status": facts["status"],
        "outcome": facts["outcome"],
        "prefixPin": facts["prefixPin"],
        "inventoryDigest": mapping["inventoryDigest"],
        "memberCount": mapping.get("memberCount"),
        "totalBytes": mapping.get("totalBytes"),
        "archivedAt": mapping.get("archivedAt"),
        "bytesReclaimed": 0,
        "verified": [
            "mapping copies",
            "inventory digest",
            "members and modes",
            "manifest",
            "finalized journal",
            "frames and checkpoints",
        ],
        "recording": RecordingReader(found.archived).status(),
    }


def resolve_recording(path: Path | str) -> Resolved:
    """The recording behind PATH: an ordinary recording as it is; an original path (mapping
    directory) or a direct archive path through the verified mapping (``MaintenanceRefused``
    when that does not verify). For status, export, review and clips."""
    target = Path(os.path.abspath(path))
    direct_archive = target.name == ARCHIVED and os.path.lexists(target.parent / CONTAINER_MAPPING)
    if not direct_archive and (target / MANIFEST).is_file():
        return Resolved(target, target, target, False)
    found = locate("resolve", target)
    _verify_archived("resolve", found, None)
    return Resolved(target, found.archived, found.original, True, found.container.name, found.mapping)


def open_reader(path: Path | str) -> tuple[RecordingReader, Resolved]:
    """A :class:`RecordingReader` over the recording :func:`resolve_recording` finds."""
    resolved = resolve_recording(path)
    return RecordingReader(resolved.recording_path), resolved


def _admit(operation: str, found: Located, facts: dict) -> int:
    """Lock the original parent (as creation does) and apply its unchanged admission rules."""
    parent = found.original.parent
    if os.lstat(parent).st_dev != os.lstat(found.container).st_dev:
        raise MaintenanceRefused(operation, found.original, "the original parent is on another filesystem now")
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        check_admission(parent, facts["maxBytes"])
    except AdmissionRefused as exc:
        os.close(fd)
        raise MaintenanceRefused(
            operation, found.original, f"the original parent's quota is filled by newer recordings ({exc})"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def restore(
    path: Path | str,
    workspace: Path | str | None = None,
    *,
    step_hook: StepHook | None = None,
    service: LeaseService = SERVICE,
) -> dict:
    """Verify again, check the parent's quota, park the mapping, return the recording."""
    operation = "restore"
    found = locate(operation, path)
    if not os.path.lexists(found.archived):
        _verify_mapping(operation, found, workspace)  # raises, naming the parked mapping
    lease = acquire(found.archived, MAINTENANCE, operation, service=service)
    parent_fd = None
    try:
        facts = _verify_archived(operation, found, workspace, own_lease=lease, service=service)
        if os.path.lexists(found.container / PARKED):
            raise MaintenanceRefused(operation, found.container / PARKED, "a parked mapping already exists")
        parent_fd = _admit(operation, found, facts)
    except BaseException:
        lease.release()
        raise
    try:
        _move_back(operation, found, lease, step_hook)
    finally:
        os.close(parent_fd)
    lease.release()
    return {
        "action": operation,
        "originalPath": str(found.original),
        "archiveId": found.container.name,
        "containerPath": str(found.container),
        "parkedMappingPath": str(found.container / PARKED),
        "sessionId": facts["sessionId"],
        "status": facts["status"],
        "reservationCharged": facts["maxBytes"],
        "bytesReclaimed": 0,
    }


def _move_back(operation: str, found: Located, lease: Lease, step_hook: StepHook | None) -> None:
    original, parked, step = found.original, found.container / PARKED, "unprotect-mapping"
    try:
        os.chmod(original, 0o755)  # a directory moving to a new parent needs write permission
        step = "park-mapping"
        os.rename(original, parked)
        os.chmod(parked, 0o555)
        _fsync_dir(found.container)
        _fsync_dir(original.parent)
        step = "return-recording"
        if step_hook:
            step_hook("parked")
        os.rename(found.archived, original)
        lease.moved_to(original)
        _fsync_dir(original.parent)
        _fsync_dir(found.container)
        step = "confirm"
        if step_hook:
            step_hook("returned")
    except BaseException as exc:
        mapping = parked if os.path.lexists(parked) else original
        raise MaintenanceInterrupted(
            operation,
            step,
            _cause(exc),
            {
                "recording": str(lease.root),
                "mapping": str(mapping),
                "lease": str(lease.path),
                "originalPath": str(original),
            },
        ) from exc
