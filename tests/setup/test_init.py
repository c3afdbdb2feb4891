"""``supervisor init``: a new user's starting point. It writes the repository's own starting
profiles (byte for byte: one source of truth) and the built demo cartridge into a folder; from
that folder they validate (``.ci/wheel-smoke`` runs them from a folder an installed gamerig's
init wrote: the demo, the built cartridge, the stand-in agent, Slay the Spire 2 against the
built-in game); it refuses a folder that holds them already, a
path that is a file and a place it cannot write, naming the path and writing nothing."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from supervisor import installed
from supervisor import profile as prof
from supervisor.cli import build_parser
from supervisor.commands import init
from supervisor.commands.validate import check_emulator_inputs
from supervisor.fleet import spec as fleet_spec
from tests.harness import REPO


def supervisor(*args, cwd, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "supervisor", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def listing(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def inited(tmp_path_factory):
    folder = tmp_path_factory.mktemp("starter") / "my-bots"
    r = supervisor("init", str(folder), cwd=REPO)
    assert r.returncode == 0, r.stderr
    return folder, r.stdout


def test_init_writes_the_repositorys_own_profiles_and_the_built_cartridge(inited):
    folder, out = inited
    files = listing(folder)
    assert set(files) == set(installed.STARTER) | {init.ROM}
    for rel in installed.STARTER:  # copies of the repository's files, not a second version
        assert files[rel] == (Path(REPO) / rel).read_bytes(), rel
    rom = files[init.ROM]
    assert len(rom) == 0x8000 and rom[0x134:0x143].rstrip(b"\0")  # a 32 KiB cartridge with a title
    assert "cd " in out and "supervisor start run/profiles/demo.yaml" in out


def test_inits_help_names_every_file_it_writes():
    for rel in (*installed.STARTER, init.ROM):
        assert f"\n  {rel} " in init.__doc__, rel


def test_what_init_says_to_run_next_are_real_commands(inited):
    parser = build_parser()
    for cmd, _ in init.NEXT:
        words = shlex.split(cmd)
        assert words[0] == "supervisor"
        parser.parse_args(words[1:])  # exits (fails the test) on an unknown command or option
        paths = [w for w in words if w.startswith(("run/profiles/", "run/fleets/"))]
        assert all(p in installed.STARTER for p in paths), paths


def test_every_profile_validates_and_every_fleet_finds_its_profile_from_the_folder(inited, monkeypatch):
    folder, _ = inited
    monkeypatch.chdir(folder)
    profiles = sorted(Path("run/profiles").glob("*.yaml"))
    assert len(profiles) == 7
    for path in profiles:
        check_emulator_inputs(prof.load(str(path)), str(path))
    check_emulator_inputs(prof.load("run/profiles/pyboy-demo.yaml", [f"game.rom={init.ROM}"]), "built rom")
    for path in sorted(Path("run/fleets").glob("*.yaml")):
        fleet = fleet_spec.load(str(path))
        assert Path(fleet.profile).resolve().parent == (folder / "run" / "profiles").resolve(), fleet.profile
        assert Path(fleet.capture_root).resolve().is_relative_to(folder.resolve()), fleet.capture_root


def test_start_in_a_folder_without_profiles_points_to_init(tmp_path):
    r = supervisor("start", "run/profiles/demo.yaml", cwd=tmp_path)
    assert r.returncode == 2, r
    assert r.stderr == (
        "error: run/profiles/demo.yaml: no such profile file\n"
        "(supervisor init writes starting profiles into a folder: run/profiles/*.yaml)\n"
    )


def test_init_refuses_a_folder_holding_any_of_its_files_and_changes_nothing(tmp_path):
    (tmp_path / "run" / "fleets").mkdir(parents=True)
    (tmp_path / "run" / "fleets" / "agent-models.yaml").write_text("mine\n")
    before = listing(tmp_path)
    r = supervisor("init", str(tmp_path), cwd=REPO)
    assert r.returncode == 2
    assert f"{tmp_path}: already holds run/fleets/agent-models.yaml" in r.stderr, r.stderr
    assert listing(tmp_path) == before
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["fleets"]


def test_init_refuses_a_path_that_is_a_file(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("x")
    r = supervisor("init", str(target), cwd=REPO)
    assert r.returncode == 2 and f"{target}: is a file" in r.stderr, r.stderr
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "run").write_text("a file where the run folder goes")
    r = supervisor("init", str(tmp_path / "other"), cwd=REPO)
    assert r.returncode == 2 and f"{tmp_path / 'other' / 'run'}: is a file" in r.stderr, r.stderr
    assert listing(tmp_path / "other") == {"run": b"a file where the run folder goes"}


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs Linux's /sys (not writable, even by root)")
def test_init_refuses_a_place_it_cannot_write_naming_it():
    r = supervisor("init", "/sys/gamerig-init-test", cwd=REPO)
    assert r.returncode == 2 and "error: /sys" in r.stderr, r.stderr
    assert not os.path.exists("/sys/gamerig-init-test")


def test_a_failure_part_way_leaves_nothing_written(tmp_path):
    files = {
        "run/profiles/a.yaml": b"a: 1\n",
        "run/profiles/b.yaml": b"b: 2\n",
        "run/roms/" + "x" * 300 + ".gb": b"\0",
    }  # a name no file system takes: fails after two files
    with pytest.raises(init.InitError, match="nothing was left written"):
        init.write(tmp_path / "new", files)
    assert not (tmp_path / "new").exists()
    (tmp_path / "kept").mkdir()
    with pytest.raises(init.InitError):
        init.write(tmp_path / "kept", files)
    assert list((tmp_path / "kept").iterdir()) == []
