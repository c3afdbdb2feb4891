"""The checks archive, retrieve and restore share: workspace paths, the full inventory of a
recording directory, and the integrity of a finalized recording.

* :func:`inside_workspace` — PATH must lie strictly inside the workspace, reached without
  symlinks and through no directory writable by others.
* :func:`take_inventory` — every member (directories and files, the root included) is
  examined with ``lstat`` and never followed: symlinks, hard links (a file with more than one
  link), special files, members writable by others or owned by another user are refused; at
  most 20,000 members and 512 MiB (the recording maximum) of file bytes. Each file is hashed
  through a descriptor whose identity, size and mtime must not change while it is read, and
  the tree is walked a second time: any difference is refused as a change during inspection.
  The holder's own ``.access-lease`` at the root is not a member.
* :func:`verify_finalized` — ``recording.json`` agrees with the verified, finalized journal
  (stop is the last line, no torn tail, status ``stopped | cancelled | failed``), no live
  writer holds ``.writer.lock``, every retained PNG has its recorded PNG and RGBA hashes and
  every checkpoint file its recorded hash.

Each refusal is a :class:`MaintenanceRefused` naming the operation, the path and the reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

from ..recording import journal as j
from ..recording.errors import MaintenanceRefused, RecordingCorrupt
from ..recording.frames import decode_rgba, rgba_sha256
from ..recording.journal import canonical  # the one canonical encoding (protocol.journal.encode_row)
from ..recording.lease import LEASE_FILE
from ..recording.limits import MANIFEST, SPECS
from ..recording.reader import EVENTS, summarize, writer_alive

MAX_MEMBERS = 20_000
MAX_BYTES = SPECS["max_bytes"].maximum  # 512 MiB, the recording maximum
ARCHIVABLE = ("stopped", "cancelled", "failed")
SMALL_FILE_MAX = 1024 * 1024  # manifests and mapping files are read whole
CHUNK = 1024 * 1024


def workspace_root(workspace: Path | str) -> Path:
    root = Path(os.path.realpath(workspace))
    if not root.is_dir():
        raise MaintenanceRefused("maintenance", workspace, "the workspace is not a directory")
    return root


def inside_workspace(operation: str, path: Path | str, workspace: Path) -> Path:
    """The absolute PATH, checked to lie inside ``workspace`` without symlinks on the way."""
    target = Path(os.path.abspath(path))
    if target == workspace or not target.is_relative_to(workspace):
        raise MaintenanceRefused(operation, target, f"it is not inside the workspace {workspace}")
    current = workspace
    for part in target.relative_to(workspace).parts:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            raise MaintenanceRefused(operation, target, f"{current} does not exist") from None
        if stat.S_ISLNK(info.st_mode):
            raise MaintenanceRefused(
                operation, target, f"{current} is a symlink; recordings are not reached through symlinks"
            )
        if current != target and info.st_mode & stat.S_IWOTH:
            raise MaintenanceRefused(operation, target, f"{current} is writable by others")
    return target


def read_small(operation: str, path: Path, limit: int = SMALL_FILE_MAX) -> bytes:
    """A small metadata file: a regular file (not a symlink) of at most ``limit`` bytes."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise MaintenanceRefused(operation, path, "the file is missing") from None
    if not stat.S_ISREG(info.st_mode):
        raise MaintenanceRefused(operation, path, "it is a symlink or not a regular file")
    if info.st_mode & stat.S_IWOTH:
        raise MaintenanceRefused(operation, path, "it is writable by others")
    if info.st_size > limit:
        raise MaintenanceRefused(operation, path, f"it is larger than {limit} bytes")
    with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW)) as fh:
        return fh.read(limit + 1)


def _member_problem(info: os.stat_result) -> str | None:
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        return "is a symlink"
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return "is a special file"
    if stat.S_ISREG(mode) and info.st_nlink > 1:
        return f"is a hard link ({info.st_nlink} links)"
    if mode & stat.S_IWOTH:
        return "is writable by others"
    if info.st_uid != os.geteuid():
        return f"is owned by uid {info.st_uid}, not by this user"
    return None


def _scan(operation: str, root: Path) -> list[tuple[str, os.stat_result]]:
    """Every member as (relative path, lstat), sorted; limits and member kinds checked."""
    found: list[tuple[str, os.stat_result]] = []
    total, stack = 0, [(".", root)]
    while stack:
        rel, path = stack.pop()
        info = os.lstat(path)
        problem = _member_problem(info)
        if problem:
            raise MaintenanceRefused(operation, path, f"the member {rel} {problem}")
        found.append((rel, info))
        if len(found) > MAX_MEMBERS + 1:  # the root is not counted
            raise MaintenanceRefused(operation, root, f"more than {MAX_MEMBERS} members")
        if stat.S_ISDIR(info.st_mode):
            names = sorted(os.listdir(path), reverse=True)
            for name in names:
                if not (rel == "." and name == LEASE_FILE):
                    stack.append((name if rel == "." else f"{rel}/{name}", path / name))
        else:
            total += info.st_size
            if total > MAX_BYTES:
                raise MaintenanceRefused(operation, root, f"more than {MAX_BYTES} bytes of files")
    return sorted(found, key=lambda item: item[0])


def _identity(info: os.stat_result) -> tuple:
    return (info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_nlink)


def _hash_file(operation: str, path: Path, rel: str, seen: os.stat_result) -> str:
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if _identity(os.fstat(fd)) != _identity(seen):
            raise MaintenanceRefused(operation, path, f"the member {rel} changed during inspection")
        while chunk := os.read(fd, CHUNK):
            digest.update(chunk)
        if _identity(os.fstat(fd)) != _identity(seen):
            raise MaintenanceRefused(operation, path, f"the member {rel} changed during inspection")
    finally:
        os.close(fd)
    return digest.hexdigest()


def take_inventory(operation: str, root: Path, between: Callable[[], None] | None = None) -> dict:
    """The full inventory of ``root``: members with type, mode, size, mtime and SHA-256.
    ``between`` runs after the first pass and the hashing, before the second walk."""
    try:
        first = _scan(operation, root)
        members = []
        for rel, info in first:
            entry = {
                "path": rel,
                "type": "dir" if stat.S_ISDIR(info.st_mode) else "file",
                "mode": f"{stat.S_IMODE(info.st_mode):04o}",
            }
            if entry["type"] == "file":
                entry.update(
                    size=info.st_size, mtimeNs=info.st_mtime_ns, sha256=_hash_file(operation, root / rel, rel, info)
                )
            members.append(entry)
        if between is not None:
            between()
        second = _scan(operation, root)
    except FileNotFoundError as exc:
        raise MaintenanceRefused(operation, root, f"{exc.filename} vanished during inspection") from None
    except OSError as exc:
        raise MaintenanceRefused(operation, root, f"{exc.filename}: {exc.strerror}") from None
    before = {rel: _identity(info) for rel, info in first}
    after = {rel: _identity(info) for rel, info in second}
    if before != after:
        changed = sorted(set(before) ^ set(after)) or sorted(r for r in before if before[r] != after[r])
        raise MaintenanceRefused(operation, root, f"changed during inspection ({changed[0]})")
    return {
        "schema": 1,
        "members": members,
        "memberCount": len(members) - 1,
        "totalBytes": sum(m.get("size", 0) for m in members),
    }


def inventory_digest(inventory: dict) -> str:
    return "sha256:" + hashlib.sha256(canonical(inventory)).hexdigest()


def compare_inventory(operation: str, root: Path, recorded: dict, current: dict) -> None:
    """Refuse the first member whose presence, type, mode, size, mtime or bytes differ."""
    old = {m["path"]: m for m in recorded.get("members", [])}
    new = {m["path"]: m for m in current["members"]}
    for rel in sorted(set(old) | set(new)):
        if rel not in new:
            raise MaintenanceRefused(operation, root, f"the member {rel} is missing")
        if rel not in old:
            raise MaintenanceRefused(operation, root, f"the member {rel} is not in the inventory")
        for key in ("type", "mode", "size", "mtimeNs", "sha256"):
            if old[rel].get(key) != new[rel].get(key):
                raise MaintenanceRefused(
                    operation,
                    root,
                    f"the member {rel} has a different {key} ({new[rel].get(key)!r}, inventory {old[rel].get(key)!r})",
                )


def _check_evidence(operation: str, root: Path, events: list[dict]) -> None:
    """Retained PNGs (PNG and RGBA hashes) and checkpoint files (file hash) as recorded."""
    for ev in events:
        name = ev.get("png") if ev["kind"] in (j.SAMPLE, j.OBSERVATION) else ev.get("path")
        if not name or ev["kind"] not in (j.SAMPLE, j.OBSERVATION, j.CHECKPOINT):
            continue
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise MaintenanceRefused(operation, root / EVENTS, f"evidence path {name!r} leaves the recording")
        try:
            data = (root / name).read_bytes()
        except OSError as exc:
            raise MaintenanceRefused(operation, root / name, f"unreadable evidence ({exc.strerror})") from None
        if ev["kind"] == j.CHECKPOINT:
            if hashlib.sha256(data).hexdigest() != ev.get("fileSha256"):
                raise MaintenanceRefused(operation, root / name, "the checkpoint differs from its journal hash")
            continue
        if ev.get("pngSha256") and hashlib.sha256(data).hexdigest() != ev["pngSha256"]:
            raise MaintenanceRefused(operation, root / name, "the PNG differs from its journal pngSha256")
        try:
            pixels = decode_rgba(data)
        except Exception as exc:  # noqa: BLE001 - PIL raises several unrelated types for damaged PNGs
            raise MaintenanceRefused(operation, root / name, f"the PNG does not decode ({exc})") from None
        if rgba_sha256(pixels) != ev["rgbaSha256"]:
            raise MaintenanceRefused(operation, root / name, "the pixels differ from the journal rgbaSha256")


def _manifest(operation: str, root: Path) -> dict:
    try:
        manifest = json.loads(read_small(operation, root / MANIFEST))
    except ValueError:
        raise MaintenanceRefused(operation, root / MANIFEST, "recording.json is not JSON") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != "gamerig.emulator.recording":
        raise MaintenanceRefused(operation, root / MANIFEST, "recording.json is not a gamerig recording manifest")
    return manifest


def verify_finalized(operation: str, root: Path) -> dict:
    """Integrity of a finalized, archivable recording; returns its identity facts."""
    manifest = _manifest(operation, root)
    if writer_alive(root):
        raise MaintenanceRefused(operation, root, "a live writer holds .writer.lock (close it first)")
    try:
        scan = j.read_journal(root / EVENTS)
    except (RecordingCorrupt, OSError) as exc:
        raise MaintenanceRefused(operation, root / EVENTS, f"the journal does not verify ({exc})") from None
    if scan.torn_tail is not None:
        raise MaintenanceRefused(operation, root / EVENTS, "the journal ends in a torn line (interrupted)")
    stop = summarize(scan.events).stop
    if stop is None:
        raise MaintenanceRefused(operation, root, "the recording is not finalized (live or interrupted)")
    if scan.events[-1]["kind"] != j.STOP:
        raise MaintenanceRefused(operation, root / EVENTS, "journal lines follow the stop line")
    if stop["status"] not in ARCHIVABLE:
        raise MaintenanceRefused(operation, root, f"status {stop['status']!r} is not one of {', '.join(ARCHIVABLE)}")
    header = scan.events[0]
    expected = {"status": stop["status"], "sessionId": header.get("sessionId"), "prefixPin": scan.pin}
    for key, value in expected.items():
        if manifest.get(key) != value:
            raise MaintenanceRefused(
                operation,
                root / MANIFEST,
                f"recording.json {key} {manifest.get(key)!r} disagrees with the journal ({value!r})",
            )
    _check_evidence(operation, root, scan.events)
    return {
        "sessionId": header.get("sessionId"),
        "status": stop["status"],
        "outcome": stop.get("outcome"),
        "prefixPin": scan.pin,
        "maxBytes": int(header["limits"]["maxBytes"]),
    }
