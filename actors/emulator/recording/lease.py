"""Advisory access leases on a recording root, and the access diagnostic that has no side effects.

A *recording root* is one recording directory. While an emulator (``Recording``) or an artifact
worker (a clip writer) has it open, or maintenance (archive, restore) works on it, the holder
owns one small file::

    <root>/.access-lease     JSON, at most 4 KiB: holder, operation, pid, host, acquiredAt, token

created exclusively (``O_CREAT|O_EXCL|O_NOFOLLOW``). A competing holder or maintenance finds it
and is refused with :class:`AccessRefused`, naming the holder the file *claims* (the pid is an
unverified claim: nothing here checks process liveness). Releasing removes the file only when
its file identity and bytes are still exactly what this holder wrote; otherwise
:class:`LeaseUnresolved`. A stale lease (its holder died) is never cleared automatically and
there is no force-unlock. The one continuation is the emulator's own crash resume: a restarted
writer of the same recording that already holds the recording's ``.writer.lock`` (so the kernel
has proved the previous writer gone) takes over an ``emulator`` lease, and the new file names
the claim it replaced (``adoptedFrom``). No other holder ever adopts a lease.

:func:`access_diagnostic` reads only ``<root>/.access-lease`` (at most 4 KiB, ``O_NOATIME`` where
allowed): it creates no directory or file, acquires or releases nothing, starts or queries no
process. It separates the current observation from the last acquisition failure recorded by
this service (:class:`LeaseService`, one per process; a new process cannot reconstruct an
earlier one's failures). ``recoveryAuthorized`` is always false.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import socket
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from actors.runtime.durable import sync

from .errors import AccessRefused, LeaseUnresolved
from .journal import now

LEASE_FILE = ".access-lease"
LEASE_MAX_BYTES = 4096
LEASE_KIND = "gamerig.recording.access-lease"
EMULATOR, ARTIFACT_WORKER, MAINTENANCE = "emulator", "artifact-worker", "maintenance"
HOLDERS = (EMULATOR, ARTIFACT_WORKER, MAINTENANCE)
CLAIM_KEYS = ("holder", "operation", "pid", "host", "acquiredAt", "adoptedFrom")
CATEGORIES = {
    errno.EEXIST: "already-exists",
    errno.EACCES: "permission-denied",
    errno.EPERM: "permission-denied",
    errno.ENOSPC: "storage-full",
    errno.EDQUOT: "storage-full",
    errno.ENOENT: "not-found",
    errno.ENOTDIR: "not-found",
    errno.ELOOP: "redirected",
    errno.EROFS: "read-only-filesystem",
}


def failure_record(operation: str, root: Path, category: str, err: int | None) -> dict:
    """The bounded ``recordingAccessFailure`` details: no raw message, stack or token."""
    return {
        "operation": operation,
        "at": now(),
        "root": str(root),
        "category": category,
        "errno": err,
        "code": errno.errorcode.get(err) if err is not None else None,
    }


class LeaseService:
    """This process's side of the leases: what it holds (the release capability) and the last
    acquisition failure it recorded."""

    def __init__(self):
        self.started_at = now()
        self.held: dict[str, Lease] = {}
        self.last_failure: dict | None = None

    def describe(self) -> dict:
        return {"pid": os.getpid(), "startedAt": self.started_at, "leasesHeld": len(self.held)}


SERVICE = LeaseService()


@dataclass
class Lease:
    """A lease this process created: where it is, its file identity and its exact bytes."""

    root: Path
    holder: str
    operation: str
    device: int
    inode: int
    data: bytes
    service: LeaseService

    @property
    def path(self) -> Path:
        return self.root / LEASE_FILE

    def moved_to(self, root: Path) -> None:
        """The recording directory (and the lease file in it) was renamed to ``root``."""
        self.service.held.pop(str(self.root), None)
        self.root = Path(root)
        self.service.held[str(self.root)] = self

    def matches(self, info: os.stat_result, data: bytes) -> bool:
        return (info.st_dev, info.st_ino) == (self.device, self.inode) and data == self.data

    def release(self) -> None:
        """Remove the lease file if it is still exactly ours; otherwise leave it (unresolved)."""
        try:
            info, data = read_lease_file(self.path)
        except FileNotFoundError:
            raise LeaseUnresolved(self.path, "the lease file is gone; it was removed by someone else") from None
        except (OSError, ValueError) as exc:
            raise LeaseUnresolved(self.path, f"cannot read it back ({exc})") from None
        if not self.matches(info, data):
            raise LeaseUnresolved(self.path, "its file identity or bytes differ from what this holder wrote")
        os.unlink(self.path)
        self.service.held.pop(str(self.root), None)


def read_lease_file(path: Path) -> tuple[os.stat_result, bytes]:
    """Read a lease file safely: not followed through a symlink, a regular file of at most
    4 KiB, unchanged while read. Raises ``OSError`` (FileNotFoundError when absent) or
    ``ValueError`` naming the problem. Does not update the access time where allowed."""
    before = os.lstat(path)
    if stat.S_ISLNK(before.st_mode):
        raise ValueError("the lease file is a symlink (redirected)")
    if not stat.S_ISREG(before.st_mode):
        raise ValueError("the lease file is not a regular file")
    if before.st_size > LEASE_MAX_BYTES:
        raise ValueError(f"the lease file is larger than {LEASE_MAX_BYTES} bytes")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags | os.O_NOATIME)
    except PermissionError:
        fd = os.open(path, flags)
    try:
        opened = os.fstat(fd)
        data = os.read(fd, LEASE_MAX_BYTES + 1)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    same = (
        (opened.st_dev, opened.st_ino) == (before.st_dev, before.st_ino)
        and (after.st_size, after.st_mtime_ns)
        == (before.st_size, before.st_mtime_ns)
        == (opened.st_size, opened.st_mtime_ns)
        and len(data) == before.st_size
    )
    if not same:
        raise ValueError("the lease file changed while it was read")
    return before, data


def parse_claim(data: bytes) -> dict:
    """The claim a lease file makes (token omitted); ``ValueError`` if malformed."""
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the lease file is not JSON ({exc.__class__.__name__})") from None
    if not isinstance(doc, dict) or doc.get("kind") != LEASE_KIND:
        raise ValueError(f"the lease file is not a {LEASE_KIND} document")
    if doc.get("holder") not in HOLDERS or not isinstance(doc.get("pid"), int):
        raise ValueError("the lease file names no known holder and pid")
    return {key: doc[key] for key in CLAIM_KEYS if key in doc}


def describe_claim(claim: dict | None) -> str:
    if not claim:
        return "a lease file whose claim cannot be read"
    text = (
        f"{claim['holder']} (operation {claim.get('operation')}, pid {claim['pid']} on "
        f"{claim.get('host')}, since {claim.get('acquiredAt')}"
    )
    return text + "; the pid is an unverified claim)"


def _claim_bytes(holder: str, operation: str, adopted: dict | None) -> bytes:
    doc = {
        "schema": 1,
        "kind": LEASE_KIND,
        "holder": holder,
        "operation": operation,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "acquiredAt": now(),
        "token": secrets.token_hex(16),
    }
    if adopted:
        doc["adoptedFrom"] = adopted
    return (json.dumps(doc, sort_keys=True) + "\n").encode()


def _refuse(
    service: LeaseService,
    root: Path,
    operation: str,
    category: str,
    err: int | None,
    detail: str,
    claim: dict | None = None,
) -> AccessRefused:
    failure = failure_record(operation, root, category, err)
    service.last_failure = failure
    return AccessRefused(root, operation, category, detail, claim, failure)


def _check_root(root: Path, operation: str, service: LeaseService) -> None:
    try:
        info = os.lstat(root)
    except OSError as exc:
        raise _refuse(
            service,
            root,
            operation,
            CATEGORIES.get(exc.errno, "io-error"),
            exc.errno,
            f"the recording root cannot be examined ({exc.strerror})",
        ) from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise _refuse(
            service, root, operation, "unsafe-root", None, "the recording root is a symlink or not a directory"
        )


def _write_exclusive(path: Path, data: bytes) -> os.stat_result:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, data)
        sync(fd)
        return os.fstat(fd)
    finally:
        os.close(fd)


def _held_elsewhere(
    path: Path, root: Path, holder: str, operation: str, service: LeaseService, adopt_emulator: bool
) -> dict | None:
    """The lease file exists: the claim to adopt (emulator resume), or raise AccessRefused."""
    try:
        _info, data = read_lease_file(path)
        claim = parse_claim(data)
    except (OSError, ValueError) as exc:
        raise _refuse(
            service,
            root,
            operation,
            "already-exists",
            errno.EEXIST,
            f"a lease file exists that cannot be read ({exc}); it is never cleared automatically",
        ) from None
    if adopt_emulator and holder == EMULATOR and claim["holder"] == EMULATOR:
        return {key: claim[key] for key in ("pid", "host", "acquiredAt") if key in claim}
    raise _refuse(
        service,
        root,
        operation,
        "already-exists",
        errno.EEXIST,
        f"leased by {describe_claim(claim)}; close that holder first (leases are never cleared "
        "automatically and there is no force-unlock)",
        claim,
    )


def acquire(
    root: Path | str, holder: str, operation: str, *, service: LeaseService = SERVICE, adopt_emulator: bool = False
) -> Lease:
    """Create the lease on ``root`` for ``holder`` or raise :class:`AccessRefused` (recorded as
    this service's last acquisition failure). ``adopt_emulator`` is only for a resuming writer
    that already holds the recording's writer lock (see the module docstring)."""
    if holder not in HOLDERS:
        raise ValueError(f"unknown lease holder {holder!r}; expected one of {', '.join(HOLDERS)}")
    root = Path(os.path.abspath(root))
    _check_root(root, operation, service)
    path = root / LEASE_FILE
    try:
        try:
            data = _claim_bytes(holder, operation, None)
            info = _write_exclusive(path, data)
        except FileExistsError:
            adopted = _held_elsewhere(path, root, holder, operation, service, adopt_emulator)
            data = _claim_bytes(holder, operation, adopted)
            tmp = root / f"{LEASE_FILE}.adopt-{os.getpid()}"
            _write_exclusive(tmp, data)
            os.replace(tmp, path)  # one atomic step: the old claim is named in the new one
            info = os.lstat(path)
    except OSError as exc:
        raise _refuse(
            service,
            root,
            operation,
            CATEGORIES.get(exc.errno, "io-error"),
            exc.errno,
            f"cannot create the lease file {path} ({exc.strerror})",
        ) from None
    lease = Lease(root, holder, operation, info.st_dev, info.st_ino, data, service)
    service.held[str(root)] = lease
    return lease


@contextmanager
def hold(root: Path | str, holder: str, operation: str, *, service: LeaseService = SERVICE) -> Iterator[Lease]:
    """Hold the lease for the block (artifact workers); released however the block ends."""
    lease = acquire(root, holder, operation, service=service)
    try:
        yield lease
    finally:
        lease.release()


def observe(root: Path, service: LeaseService = SERVICE) -> dict:
    """What ``root/.access-lease`` shows right now: ``absent``, ``present`` or ``unresolved``."""
    path = root / LEASE_FILE
    try:
        root_info = os.lstat(root)
        if stat.S_ISLNK(root_info.st_mode) or not stat.S_ISDIR(root_info.st_mode):
            return {"state": "unresolved", "problem": "the recording root is a symlink or not a directory"}
        info, data = read_lease_file(path)
        claim = parse_claim(data)
    except FileNotFoundError as exc:
        gone = "the recording root does not exist" if exc.filename == str(root) else None
        return {"state": "absent", **({"problem": gone} if gone else {})}
    except (OSError, ValueError) as exc:
        text = exc.strerror if isinstance(exc, OSError) else str(exc)
        return {"state": "unresolved", "problem": text}
    if info.st_mode & stat.S_IWOTH:
        return {"state": "unresolved", "problem": "the lease file is writable by others"}
    saved = service.held.get(str(root))
    if saved is None:
        match = "no-saved-lease-in-this-service"
    elif saved.matches(info, data):
        match = "matches-this-services-saved-lease"
    else:
        match = "differs-from-this-services-saved-lease"
    return {
        "state": "present",
        "claim": claim,
        "pidVerified": False,
        "bytes": len(data),
        "file": {"device": info.st_dev, "inode": info.st_ino, "mode": f"{stat.S_IMODE(info.st_mode):04o}"},
        "match": match,
    }


def access_diagnostic(root: Path | str, *, service: LeaseService = SERVICE) -> dict:
    """The access diagnostic: the current observation and this service's last acquisition
    failure, kept apart. Reads one file of at most 4 KiB; changes nothing."""
    root = Path(os.path.abspath(root))
    return {
        "action": "access_diagnostic",
        "recordingPath": str(root),
        "leasePath": str(root / LEASE_FILE),
        "observedAt": now(),
        "observation": observe(root, service),
        "lastAcquisitionFailure": service.last_failure,
        "lastAcquisitionFailureScope": "recorded by this service only; a new service cannot reconstruct "
        "an earlier one's failures",
        "service": service.describe(),
        "recoveryAuthorized": False,
        "note": "a pid is an unverified claim; no result establishes process liveness, quiescence or "
        "permission to recover, and absence does not authorize a new run",
    }
