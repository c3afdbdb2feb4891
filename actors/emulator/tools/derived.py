"""Derived outputs (clips): where they may be written, written no-clobber, charged to the ledger.

:func:`authorize_output` accepts an output path only inside the recording directory (not in
its worker-owned ``frames/``, ``checkpoints/`` or ``battery/`` nor a dot-name at its top) or
inside the workspace's top-level ``artifacts/``. A relative path is taken from the workspace.
Refused: any ``..`` component, any other location, a symlink anywhere from the root down
(the root included), a path that already exists (no-clobber), a wrong suffix, and under
``artifacts/`` anything in ``recording-archives/`` (archived bytes are immutable) or in another
recording's directory (or an archived one's mapping directory): one recording's output never
changes another recording.
Missing directories below the root are created one by one and re-checked.

:func:`write_no_clobber` writes a temporary file beside the target and hard-links it into
place (``link`` fails when the name exists, so nothing is ever replaced). :func:`charge`
appends one ``derived`` line to the recording's ``quota-ledger.jsonl`` after checking the
recording's ``maxBytes`` budget: every file of the directory plus derived outputs outside it
(the same accounting as :class:`.recording.Recording`), minus the stop reserve while the
recording is not finalized.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from actors.runtime.durable import sync

from ..recording.errors import LimitExceeded, OutputRefused
from ..recording.journal import now
from ..recording.limits import MANIFEST
from ..recording.reader import LEDGER, directory_bytes, ledger_outside_bytes
from .archive import ARCHIVES, MAPPING_FILE

WORKER_OWNED = ("frames", "checkpoints", "battery")
ARTIFACTS = "artifacts"
STOP_RESERVE = 4 * 1024  # as recording.FINAL_RESERVE: room for a stop line and the manifest


@dataclass(frozen=True)
class OutputTarget:
    path: Path  # absolute target file
    root: Path  # the recording directory or <workspace>/artifacts
    root_kind: str  # "recording" | "artifacts"
    name: str  # the target relative to the recording or the workspace (ledger name)

    @property
    def outside(self) -> bool:
        return self.root_kind != "recording"


def _roots(recording: Path, workspace: Path) -> list[tuple[str, Path, Path]]:
    """(kind, lexical root, name base) for both allowed roots, in absolute and real spelling."""
    out = []  # the recording first: a recording kept under artifacts/ is still "inside"
    for rec in dict.fromkeys((Path(os.path.abspath(recording)), Path(os.path.realpath(recording)))):
        out.append(("recording", rec, rec))
    for base in dict.fromkeys((Path(os.path.abspath(workspace)), Path(os.path.realpath(workspace)))):
        out.append(("artifacts", base / ARTIFACTS, base))
    return out


def _check_dir(path: Path, output: str, create: bool) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise OutputRefused(output, f"{path} does not exist") from None
        os.mkdir(path, 0o755)
        info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise OutputRefused(output, f"{path} is a symlink; derived outputs are never redirected")
    if not stat.S_ISDIR(info.st_mode):
        raise OutputRefused(output, f"{path} is not a directory")


def _refuse_other_recordings(output: str, root: Path, rel: Path) -> None:
    """Under ``artifacts/``: never into archived recordings nor another recording's directory."""
    if rel.parts[0] == ARCHIVES.name:
        raise OutputRefused(output, f"{root / ARCHIVES.name} holds archived recordings, whose bytes are immutable")
    current = root
    for part in rel.parts[:-1]:
        current = current / part
        if os.path.lexists(current / MANIFEST) or os.path.lexists(current / MAPPING_FILE):
            raise OutputRefused(
                output,
                f"{current} is another recording's directory (or an archived one's "
                "mapping); an output never changes another recording",
            )


def authorize_output(
    output: str | Path, recording: Path, workspace: Path, suffix: str, *, allow_recording: bool = True
) -> OutputTarget:
    """The checked target of ``output`` (see the module docstring); creates missing parents.
    ``allow_recording=False`` (a review's contact sheet) admits only ``<workspace>/artifacts/``."""
    text = str(output)
    if not text or "\x00" in text:
        raise OutputRefused(repr(text), "an output path must be a non-empty path")
    if ".." in Path(text).parts:
        raise OutputRefused(text, "'..' components are refused")
    if not text.lower().endswith(suffix):
        raise OutputRefused(text, f"the output must end with {suffix}")
    target = Path(os.path.normpath(Path(workspace, text) if not os.path.isabs(text) else text))
    for kind, root, base in _roots(recording, workspace):  # noqa: B007 - base is read after the loop's break
        if kind == "recording" and target.is_relative_to(root) and not allow_recording:
            raise OutputRefused(text, "a review writes nothing inside the recording; use artifacts/")
        if target.is_relative_to(root) and target != root:
            rel = target.relative_to(root)
            break
    else:
        allowed = f"the recording directory {recording} or " if allow_recording else ""
        raise OutputRefused(
            text, f"only {allowed}the workspace's top-level {Path(workspace, ARTIFACTS)}/ may receive it"
        )
    if kind == "recording" and (rel.parts[0] in WORKER_OWNED or rel.parts[0].startswith(".")):
        raise OutputRefused(text, f"{rel.parts[0]} is owned by the recording's writer; use e.g. clips/NAME{suffix}")
    if kind == "artifacts":
        _refuse_other_recordings(text, root, rel)
    _check_dir(root.parent, text, create=False)
    current = root
    _check_dir(current, text, create=kind == "artifacts")
    for part in rel.parts[:-1]:
        current = current / part
        _check_dir(current, text, create=True)
    if os.path.lexists(target):
        raise OutputRefused(text, "it already exists (outputs are never overwritten)")
    return OutputTarget(target, root, kind, str(target.relative_to(base)))


def write_no_clobber(path: Path, data: bytes) -> None:
    """Create ``path`` holding ``data``, never replacing an existing name."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            sync(fh.fileno())
        os.link(tmp, path)
    except FileExistsError:
        raise OutputRefused(
            str(path), "it appeared while the clip was written (outputs are never overwritten)"
        ) from None
    finally:
        os.unlink(tmp)


def ledger_entry(target: OutputTarget, data: bytes, tool: str) -> dict:
    return {
        "kind": "derived",
        "tool": tool,
        "name": target.name,
        "path": str(target.path),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "outside": target.outside,
        "at": now(),
    }


def check_budget(recording: Path, max_bytes: int, finalized: bool, nbytes: int) -> int:
    """Bytes the recording already uses; :class:`LimitExceeded` when ``nbytes`` more do not fit."""
    used = directory_bytes(recording) + ledger_outside_bytes(recording)
    allowed = max_bytes - (0 if finalized else STOP_RESERVE)
    if used + nbytes > allowed:
        raise LimitExceeded("maxBytes", used, nbytes, allowed)
    return used


def append_ledger(recording: Path, entry: dict) -> int:
    """Append one whole ledger line (never through a symlink); returns its length."""
    line = (json.dumps(entry, sort_keys=True) + "\n").encode()
    fd = os.open(recording / LEDGER, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, line)
        sync(fd)
    finally:
        os.close(fd)
    return len(line)


def publish(target: OutputTarget, data: bytes, recording: Path, max_bytes: int, finalized: bool, tool: str) -> dict:
    """Budget check, no-clobber write, ledger charge; the output is removed again if the
    charge cannot be written. Returns the ledger entry with ``bytesUsedBefore``."""
    entry = ledger_entry(target, data, tool)
    line_bytes = len(json.dumps(entry, sort_keys=True)) + 1
    used = check_budget(recording, max_bytes, finalized, len(data) + line_bytes)
    write_no_clobber(target.path, data)
    try:
        append_ledger(recording, entry)
    except BaseException:
        os.unlink(target.path)
        raise
    return {**entry, "bytesUsedBefore": used, "maxBytes": max_bytes}
