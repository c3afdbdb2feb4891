"""A finished session's observation files as one compressed, indexed file beside the journal,
and back (``protocol/obspack.py``); ``supervisor capture pack|unpack PATH`` run these.

**pack** (a session directory, or every finished session of a capture root or fleet root):
refuses a session without ``session_end`` (still running, or cut short: verify it first);
writes ``observations.pack.tmp``, makes it durable, renames it to ``observations.pack`` and
makes the directory entry durable; reads every file back from the pack and compares it byte
for byte with its file; only then removes ``observations/``. A crash at any point leaves
either the files, or the files and a whole pack (packing again finishes the job), never
neither: readers take the file when it is there and the pack otherwise. ``sessions_of(PATH)``
lists the sessions of a session directory, capture root or fleet root.

**unpack**: reads every entry of the pack, checks it against the pack's index and against the
SHA-256 the journal's observation row pins, and writes nothing unless all of them pass; then
writes ``observations/`` beside it (each file and the directory made durable), and only then
removes the pack.

``pack_session`` raises ``PackRefused`` for a session it cannot pack now; ``unpack_session``
raises ``obspack.PackDamaged`` for a pack that cannot prove its files (damaged or cut short).
"""

from __future__ import annotations

import hashlib
import os
import shutil

from actors.runtime.durable import sync, sync_path
from protocol import obspack
from protocol.events import Observation, SessionEnd
from protocol.journal import iter_lines

from . import fleetroot
from .errors import PackRefused
from .verify import resolve

JOURNAL = "events.jsonl"
TMP = obspack.PACK + ".tmp"


def sessions_of(path: str) -> list[str]:
    """The session directories of PATH (a session directory, capture root or fleet root);
    raises ``NotACapture``."""
    kind, target = resolve(path)
    if kind == "session":
        return [target]
    roots = fleetroot.capture_roots(target) if kind == "fleet_root" else [target]
    out = []
    for root in roots:
        base = os.path.join(root, "sessions")
        out += [os.path.join(base, d) for d in sorted(os.listdir(base)) if os.path.isdir(os.path.join(base, d))]
    return out


def journal_observations(session_dir: str) -> tuple[dict[str, str], bool]:
    """(observation file name -> the SHA-256 its row pins, whether the journal has a session_end)."""
    pinned, ended = {}, False
    for line in iter_lines(os.path.join(session_dir, JOURNAL)):
        row = line.row
        if row is None:
            continue
        if row.get("event") == Observation.KIND and isinstance(row.get("path"), str):
            pinned[os.path.basename(row["path"])] = row.get("sha256")
        elif row.get("event") == SessionEnd.KIND:
            ended = True
    return pinned, ended


def pack_session(session_dir: str, progress=None) -> dict:
    """Pack one finished session; what was done (``PackRefused`` when it cannot be)."""
    obs_dir = os.path.join(session_dir, obspack.DIRNAME)
    pack_path = os.path.join(session_dir, obspack.PACK)
    if not os.path.exists(os.path.join(session_dir, JOURNAL)):
        raise PackRefused("no events.jsonl: not a session directory")
    if not os.path.isdir(obs_dir):
        if os.path.exists(pack_path):
            return {"session": os.path.basename(session_dir), "done": "already packed"}
        raise PackRefused("no observations/ directory and no pack")
    _, ended = journal_observations(session_dir)
    if not ended:
        raise PackRefused(
            "the journal has no session_end row: the session is running or was cut short "
            "(supervisor capture verify says which); only a finished session is packed"
        )
    names = sorted(n for n in os.listdir(obs_dir) if not n.startswith("."))
    before = sum(os.path.getsize(os.path.join(obs_dir, n)) for n in names)

    def files():
        for i, name in enumerate(names):
            if progress is not None and i % 2000 == 0:
                progress(f"packing {os.path.basename(session_dir)}: {i}/{len(names)} observations")
            with open(os.path.join(obs_dir, name), "rb") as fh:
                yield name, fh.read()

    if not os.path.exists(pack_path):  # (present: a pack finished before a crash; it is checked below)
        tmp = os.path.join(session_dir, TMP)
        obspack.write(tmp, files())
        sync_path(tmp)
        os.replace(tmp, pack_path)
        sync_path(session_dir)
    pack = obspack.Pack(pack_path)
    if sorted(pack.names()) != names:
        raise PackRefused(
            f"{obspack.PACK} does not hold exactly the files of observations/; nothing was removed "
            "(remove the pack and pack again)"
        )
    for name in names:
        with open(os.path.join(obs_dir, name), "rb") as fh:
            if fh.read() != pack.read(name):
                raise PackRefused(f"{obspack.PACK} gives other bytes for {name} than its file; nothing was removed")
    shutil.rmtree(obs_dir)
    sync_path(session_dir)
    return {
        "session": os.path.basename(session_dir),
        "done": "packed",
        "observations": len(names),
        "bytes_before": before,
        "pack_bytes": os.path.getsize(pack_path),
        "segments": len(pack.segments),
    }


def unpack_session(session_dir: str) -> dict:
    pack_path = os.path.join(session_dir, obspack.PACK)
    obs_dir = os.path.join(session_dir, obspack.DIRNAME)
    if not os.path.exists(pack_path):
        return {"session": os.path.basename(session_dir), "done": "nothing to unpack"}
    pack = obspack.Pack(pack_path)  # PackDamaged: cut short, or its index damaged
    pinned, _ = journal_observations(session_dir)
    data = {}
    for name in pack.names():
        blob = pack.read(name)  # PackDamaged: a segment or an entry that does not hash to its index
        want = pinned.get(name)
        if want is not None and hashlib.sha256(blob).hexdigest() != want:
            raise obspack.PackDamaged(f"{name} in {obspack.PACK} does not hash to the sha256 its journal row pins")
        data[name] = blob
    missing = sorted(set(pinned) - set(data) - set(os.listdir(obs_dir) if os.path.isdir(obs_dir) else []))
    if missing:
        raise obspack.PackDamaged(
            f"{len(missing)} observation(s) the journal names are in neither the pack nor "
            f"observations/ (first: {missing[0]})"
        )
    tmp = obs_dir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.mkdir(tmp)
    for name, blob in data.items():
        with open(os.path.join(tmp, name), "wb") as fh:
            fh.write(blob)
            fh.flush()
            sync(fh.fileno())
    sync_path(tmp)
    if os.path.isdir(obs_dir):  # files a crashed pack left: the pack's copies are the same bytes
        for name in os.listdir(obs_dir):
            if not os.path.exists(os.path.join(tmp, name)):
                os.replace(os.path.join(obs_dir, name), os.path.join(tmp, name))
        shutil.rmtree(obs_dir)
    os.replace(tmp, obs_dir)
    sync_path(session_dir)
    os.unlink(pack_path)
    sync_path(session_dir)
    return {"session": os.path.basename(session_dir), "done": "unpacked", "observations": len(data)}
