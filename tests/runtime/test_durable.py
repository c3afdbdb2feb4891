"""``actors.runtime.durable.sync``, the one place files are made durable: F_FULLFSYNC where the
platform has it (macOS), fsync otherwise or when the file system refuses it; and no module of
the project calls ``os.fsync`` itself."""

from __future__ import annotations

import os
import re
import types

from actors.runtime import durable
from tests.harness import REPO


class FakeFcntl:
    def __init__(self, refuse: bool = False):
        self.calls: list[tuple[int, int]] = []
        self.refuse = refuse
        self.F_FULLFSYNC = 51

    def fcntl(self, fd: int, cmd: int) -> int:
        self.calls.append((fd, cmd))
        if self.refuse:
            raise OSError(45, "Operation not supported")
        return 0


def test_full_fsync_where_the_platform_has_it(monkeypatch, tmp_path):
    fake, fsyncs = FakeFcntl(), []
    monkeypatch.setattr(durable, "fcntl", fake)
    monkeypatch.setattr(durable.os, "fsync", fsyncs.append)
    with open(tmp_path / "f", "wb") as fh:
        durable.sync(fh.fileno())
        assert fake.calls == [(fh.fileno(), 51)] and fsyncs == []


def test_fsync_when_refused_or_absent(monkeypatch, tmp_path):
    fake, fsyncs = FakeFcntl(refuse=True), []
    monkeypatch.setattr(durable, "fcntl", fake)
    monkeypatch.setattr(durable.os, "fsync", fsyncs.append)
    with open(tmp_path / "f", "wb") as fh:
        durable.sync(fh.fileno())
        assert fake.calls and fsyncs == [fh.fileno()]
    monkeypatch.setattr(durable, "fcntl", types.SimpleNamespace(fcntl=None))  # Linux: no F_FULLFSYNC
    fsyncs.clear()
    with open(tmp_path / "g", "wb") as fh:
        durable.sync(fh.fileno())
        assert fsyncs == [fh.fileno()]


def test_no_module_syncs_files_any_other_way():
    offenders = []
    for top in ("actors", "supervisor", "protocol"):
        for dirpath, _dirs, files in os.walk(os.path.join(REPO, top)):
            for name in files:
                path = os.path.join(dirpath, name)
                if not name.endswith(".py") or path.endswith(os.path.join("runtime", "durable.py")):
                    continue
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                if re.search(r"os\.(fsync|fdatasync)\(|fcntl\.F_FULLFSYNC|\"F_FULLFSYNC\"", text):
                    offenders.append(os.path.relpath(path, REPO))
    assert offenders == [], offenders
