"""What a disk may hold after a power cut, computed from a recorded trace of file-system calls
(the method of ALICE, Pillai et al., OSDI 2014, and CrashMonkey: crash states from a trace).

``parse(text)`` reads ``strace -f -y -xx -s N -o FILE`` output (every string, path and fd path
hex-escaped, so it parses exactly; a call split by ``<unfinished ...>`` is taken at its
``<... resumed>`` line, when it completed). ``Disk`` replays the calls and keeps, per file (by
inode), its bytes and the part made durable by ``fsync``/``fdatasync``; per directory, its
entries and the entries made durable by an ``fsync`` of the directory. ``Disk.crash(mode)``
is the tree a power cut at that moment may leave:

* ``strict``: every pending thing lost: a file's bytes since its last fsync, and every create,
  rename, unlink and mkdir since its directory's last fsync (a file fsynced without its
  directory loses its name; a rename without a directory fsync is undone);
* ``appends``: names as in ``strict``, but every file keeps all its pending bytes (a disk that
  wrote the data and lost only the metadata);
* ``torn``: names as in ``strict``, each file keeps half of its pending bytes (a write cut in
  the middle of a line).

Only files under ``root`` are modelled; directories that existed before the trace are durable
and empty-known. Sends are kept as events with their attempt id: the actions that left for the
game. To an HTTP game that is a ``write``/``sendto`` whose bytes start with ``POST /api/`` (its
``X-Gamerig-Attempt`` header); in the emulator, the ``input`` line its recording writes before
the step's frames run (its ``attemptId``).
"""

from __future__ import annotations

import dataclasses
import os
import re

LINE = re.compile(r"^(\d+)\s+(.*)$")  # strace pads a pid to five columns: "5303  openat("
CALL = re.compile(r"^([a-z0-9_]+)\((.*)\)\s+=\s+(-?\d+)(?:<([^>]*)>)?")
UNFINISHED = re.compile(r"^([a-z0-9_]+)\((.*) <unfinished \.\.\.>$")
RESUMED = re.compile(r"^<\.\.\. ([a-z0-9_]+) resumed>(.*)\)\s+=\s+(-?\d+)(?:<([^>]*)>)?")
ATTEMPT = re.compile(rb"X-Gamerig-Attempt: ([^\r\n]+)")
INPUT_ATTEMPT = re.compile(rb'"attemptId":\s*"([^"]+)"')
RECORDING_JOURNAL = os.path.join("recording", "events.jsonl")


def unhex(text: str) -> bytes:
    """``\\x2f\\x74`` (strace -xx) as bytes."""
    return bytes.fromhex(text.replace("\\x", ""))


@dataclasses.dataclass
class Call:
    index: int
    pid: int
    name: str
    args: list[str]
    result: int
    result_path: str | None

    def path(self, i: int) -> str | None:
        """Argument ``i`` as a path: a quoted string, or an fd's ``<path>``."""
        a = self.args[i]
        if a.startswith('"'):
            return unhex(a[1:-1]).decode("utf-8", "surrogateescape")
        m = re.match(r"^-?\w+<(.*)>$", a)
        return unhex(m.group(1)).decode("utf-8", "surrogateescape") if m else None

    def data(self, i: int) -> bytes:
        a = self.args[i]
        return unhex(a[1:-1]) if a.startswith('"') else b""


def split_args(text: str) -> list[str]:
    out, depth, cur, quoted = [], 0, [], False
    i = 0
    while i < len(text):
        c = text[i]
        if quoted:
            cur.append(c)
            if c == "\\":
                cur.append(text[i + 1])
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
            cur.append(c)
        elif c in "[{(<":
            depth += 1
            cur.append(c)
        elif c in "]})>":
            depth -= 1
            cur.append(c)
        elif c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if cur:
        out.append("".join(cur).strip())
    return out


def parse(text: str) -> list[Call]:
    calls: list[Call] = []
    pending: dict[int, tuple[str, str]] = {}
    for raw in text.splitlines():
        m = LINE.match(raw)
        if not m:
            continue
        pid, rest = int(m.group(1)), m.group(2)
        u = UNFINISHED.match(rest)
        if u:
            pending[pid] = (u.group(1), u.group(2))
            continue
        r = RESUMED.match(rest)
        if r:
            name, head = pending.pop(pid, (r.group(1), ""))
            tail = r.group(2)
            args_text = head + tail
            calls.append(Call(len(calls), pid, name, split_args(args_text), int(r.group(3)), r.group(4)))
            continue
        c = CALL.match(rest)
        if c:
            calls.append(Call(len(calls), pid, c.group(1), split_args(c.group(2)), int(c.group(3)), c.group(4)))
    return calls


@dataclasses.dataclass
class Inode:
    data: bytearray = dataclasses.field(default_factory=bytearray)
    durable: bytes = b""
    is_dir: bool = False
    entries: dict = dataclasses.field(default_factory=dict)  # name -> inode id (directories)
    durable_entries: dict = dataclasses.field(default_factory=dict)


class Disk:
    """The modelled tree under ``root`` (see the module docstring)."""

    def __init__(self, root: str):
        self.root = os.path.normpath(root)
        self.inodes: dict[int, Inode] = {0: Inode(is_dir=True)}
        self.next = 1
        self.positions: dict[tuple[int, int], int] = {}  # (pid, fd) -> file position
        self.sends: list[tuple[int, str]] = []  # (call index, attempt id) of each action POST

    # -- the namespace ----------------------------------------------------------------
    def _parts(self, path: str) -> list[str] | None:
        path = os.path.normpath(path)
        if path == self.root:
            return []
        if not path.startswith(self.root + os.sep):
            return None
        return path[len(self.root) + 1 :].split(os.sep)

    def lookup(self, path: str) -> int | None:
        parts = self._parts(path)
        if parts is None:
            return None
        node = 0
        for p in parts:
            node = self.inodes[node].entries.get(p)
            if node is None:
                return None
        return node

    def _parent(self, path: str) -> tuple[int | None, str | None]:
        parts = self._parts(path)
        if not parts:
            return None, None
        parent = self.lookup(os.path.join(self.root, *parts[:-1])) if len(parts) > 1 else 0
        return parent, parts[-1]

    def _new(self, is_dir: bool) -> int:
        n, self.next = self.next, self.next + 1
        self.inodes[n] = Inode(is_dir=is_dir)
        return n

    # -- replay ---------------------------------------------------------------------------
    def apply(self, c: Call) -> None:
        if c.result < 0:
            return
        name = c.name
        if name in ("openat", "open", "creat"):
            path = unhex(c.result_path).decode("utf-8", "surrogateescape") if c.result_path else None
            if path is None:
                return
            flags = c.args[2] if name == "openat" and len(c.args) > 2 else (c.args[1] if len(c.args) > 1 else "")
            node = self.lookup(path)
            if node is None and ("O_CREAT" in flags or name == "creat"):
                parent, leaf = self._parent(path)
                if parent is not None:
                    node = self._new(False)
                    self.inodes[parent].entries[leaf] = node
            if node is not None and "O_TRUNC" in flags:
                del self.inodes[node].data[:]
            if node is not None:
                self.positions[(c.pid, c.result)] = len(self.inodes[node].data) if "O_APPEND" in flags else 0
        elif name in ("write", "pwrite64", "sendto"):
            data = c.data(1)[: c.result]
            if data.startswith(b"POST /api/"):
                m = ATTEMPT.search(data)
                self.sends.append((c.index, m.group(1).decode() if m else ""))
                return
            path = c.path(0) or ""
            node = self.lookup(path)
            if node is None or self.inodes[node].is_dir:
                return
            if path.endswith(os.sep + RECORDING_JOURNAL):  # the emulator runs a step's frames after this
                for line in data.split(b"\n"):
                    m = INPUT_ATTEMPT.search(line) if b'"kind":"input"' in line else None  # canonical JSON
                    if m:
                        self.sends.append((c.index, m.group(1).decode()))
            fd = int(c.args[0].split("<", 1)[0])
            buf = self.inodes[node].data
            at = int(c.args[3]) if name == "pwrite64" else self.positions.get((c.pid, fd), len(buf))
            buf[at : at + len(data)] = data
            if name != "pwrite64":
                self.positions[(c.pid, fd)] = at + len(data)
        elif name in ("fsync", "fdatasync"):
            node = self.lookup(c.path(0) or "")
            if node is None:
                return
            ino = self.inodes[node]
            if ino.is_dir:
                ino.durable_entries = dict(ino.entries)
            else:
                ino.durable = bytes(ino.data)
        elif name in ("mkdir", "mkdirat"):
            path = c.path(1 if name == "mkdirat" else 0)
            path = self._abs(c, path, 0 if name == "mkdirat" else None)
            parent, leaf = self._parent(path)
            if parent is not None and leaf not in self.inodes[parent].entries:
                self.inodes[parent].entries[leaf] = self._new(True)
        elif name in ("unlink", "unlinkat", "rmdir"):
            path = self._abs(c, c.path(1 if name == "unlinkat" else 0), 0 if name == "unlinkat" else None)
            parent, leaf = self._parent(path)
            if parent is not None:
                self.inodes[parent].entries.pop(leaf, None)
        elif name in ("rename", "renameat", "renameat2"):
            at = name != "rename"
            old = self._abs(c, c.path(1 if at else 0), 0 if at else None)
            new = self._abs(c, c.path(3 if at else 1), 2 if at else None)
            op, ol = self._parent(old)
            np_, nl = self._parent(new)
            if op is not None and np_ is not None and ol in self.inodes[op].entries:
                self.inodes[np_].entries[nl] = self.inodes[op].entries.pop(ol)
        elif name == "ftruncate":
            node = self.lookup(c.path(0) or "")
            if node is not None:
                del self.inodes[node].data[int(c.args[1]) :]

    def _abs(self, c: Call, path: str | None, dirfd_arg: int | None) -> str:
        path = path or ""
        if os.path.isabs(path):
            return path
        base = c.path(dirfd_arg) if dirfd_arg is not None else None
        return os.path.join(base or "/", path)

    # -- the crash ------------------------------------------------------------------------
    def crash(self, mode: str = "strict") -> dict[str, bytes | None]:
        """``relative path -> bytes`` (None for a directory) of what a power cut now may leave."""
        out: dict[str, bytes | None] = {}

        def walk(node: int, rel: str) -> None:
            for leaf, child in sorted(self.inodes[node].durable_entries.items()):
                path = os.path.join(rel, leaf) if rel else leaf
                ino = self.inodes[child]
                if ino.is_dir:
                    out[path] = None
                    walk(child, path)
                else:
                    out[path] = self._content(ino, mode)

        root = self.inodes[0]
        root.durable_entries = root.durable_entries or {}
        walk(0, "")
        return out

    @staticmethod
    def _content(ino: Inode, mode: str) -> bytes:
        data, durable = bytes(ino.data), ino.durable
        if mode == "strict" or not data.startswith(durable):
            return durable
        if mode == "appends":
            return data
        return data[: len(durable) + (len(data) - len(durable)) // 2]  # torn


def materialize(state: dict[str, bytes | None], where: str) -> None:
    for rel, data in sorted(state.items()):
        path = os.path.join(where, rel)
        if data is None:
            os.makedirs(path, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
