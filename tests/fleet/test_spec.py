"""Fleet files and matrix expansion: cells, sessions in turn, per-cell profile checks, errors
that name the file and the key."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from supervisor.fleet import matrix, spec
from supervisor.fleet.errors import FleetFileError
from tests.harness import DEMO


def load(tmp_path, **fields):
    path = tmp_path / "f.yaml"
    path.write_text(yaml.safe_dump({"profile": DEMO, **fields}), encoding="utf-8")
    return spec.load(str(path))


def test_the_matrix_is_every_combination_taken_in_turn(tmp_path):
    s = load(
        tmp_path,
        matrix={"game.seed": [1, 2, 3], "policy.module": ["sts2", "pkg.mod"]},
        sessions=8,
        set={"session.max_steps": 50},
    )
    plans = matrix.expand(s)
    assert s.cells == 6 and len(plans) == 8
    assert [p.cell for p in plans[:3]] == [
        {"game.seed": 1, "policy.module": "sts2"},
        {"game.seed": 1, "policy.module": "pkg.mod"},
        {"game.seed": 2, "policy.module": "sts2"},
    ]
    assert plans[6].cell == plans[0].cell and plans[6].repeat == 1 and plans[5].repeat == 0
    assert [p.slot for p in plans[:2]] == ["s0000", "s0001"]
    assert plans[1].cell_id == "game.seed=1 policy.module=pkg.mod"
    assert plans[1].overrides == ["session.max_steps=50", "game.seed=1", 'policy.module="pkg.mod"']
    assert all(p.game is None and p.resource is None for p in plans)  # the built-in game


def test_no_matrix_is_one_cell_and_sessions_default_to_the_cells(tmp_path):
    s = load(tmp_path, sessions=3)
    assert [p.cell_id for p in matrix.expand(s)] == ["-", "-", "-"]
    assert len(matrix.expand(load(tmp_path, matrix={"game.seed": [4, 5]}))) == 2


def test_outside_games_are_tied_to_their_base_url_and_a_ray_resource(tmp_path):
    s = load(
        tmp_path,
        set={"game.builtin": False},
        matrix={"game.base_url": ["http://10.0.0.5:15526/", "http://gm-2:15526"]},
        sessions=4,
    )
    plans = matrix.expand(s)
    assert [p.game for p in plans] == ["http://10.0.0.5:15526", "http://gm-2:15526"] * 2
    assert plans[0].resource == "gamerig_game_10_0_0_5_15526"
    assert plans[1].resource == "gamerig_game_gm_2_15526"


@pytest.mark.parametrize(
    "fields, key, problem",
    [
        ({"matrix": {"game.seed": ["x"]}}, "matrix.game.seed (cell game.seed=x)", "expected a whole number"),
        ({"set": {"session.max_stepz": 3}}, "set.session.max_stepz", "unknown key"),
        ({"set": {"capture.root": "elsewhere"}}, "set.capture.root", "set by the fleet"),
        ({"matrix": {"game.seed": []}}, "matrix.game.seed", "non-empty list"),
        ({"matrix": {"game.seed": [1, 1]}}, "matrix.game.seed[1]", "listed twice"),
        ({"matrix": {"game.seed": [1, 2]}, "sessions": 1}, "sessions", "fewer than the 2 matrix cells"),
        ({"concurrency": 0}, "concurrency", "whole number >= 1"),
        ({"ray": {"num_cpu": 1}}, "ray.num_cpu", "did you mean 'ray.num_cpus'"),
        ({"sessionz": 2}, "sessionz", "did you mean 'sessions'"),
    ],
)
def test_bad_fleet_files_name_the_key_and_the_problem(tmp_path, fields, key, problem):
    with pytest.raises(FleetFileError) as err:
        matrix.expand(load(tmp_path, **fields))
    assert err.value.key == key and problem in err.value.problem, str(err.value)
    assert str(tmp_path / "f.yaml") in str(err.value)


def test_a_profile_path_is_relative_to_the_fleet_file(tmp_path):
    (tmp_path / "f.yaml").write_text("profile: nope.yaml\n", encoding="utf-8")
    with pytest.raises(FleetFileError) as err:
        spec.load(str(tmp_path / "f.yaml"))
    assert err.value.key == "profile" and str(tmp_path / "nope.yaml") in err.value.problem


def test_a_relative_capture_root_that_escapes_the_users_tree_is_refused(tmp_path, monkeypatch):
    """A fleet file copied elsewhere must not silently write its captures outside the user's
    tree (``fleet start`` asks ``check_capture_root`` first); an absolute capture_root is a
    choice and is kept."""
    home, work = tmp_path / "home", tmp_path / "work"
    (home / "fleets").mkdir(parents=True)
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    path = home / "fleets" / "copied.yaml"
    path.write_text(yaml.safe_dump({"profile": DEMO, "capture_root": "../../../elsewhere"}))
    with pytest.raises(FleetFileError) as err:
        spec.check_capture_root(spec.load(str(path)))
    assert "capture_root" in str(err.value) and "outside this folder and your home" in str(err.value)
    assert str(tmp_path.parent / "elsewhere") in str(err.value)
    for given, where in (("../captures", home / "captures"), (str(tmp_path / "abs"), tmp_path / "abs")):
        path.write_text(yaml.safe_dump({"profile": DEMO, "capture_root": given}))
        kept = spec.load(str(path))
        spec.check_capture_root(kept)  # inside home; absolute: both kept
        assert kept.capture_root == str(where)


def test_fleet_start_refuses_it_before_making_anything(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    path = tmp_path / "copied.yaml"
    path.write_text(yaml.safe_dump({"profile": DEMO, "capture_root": "../../escaped"}))
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    r = subprocess.run(
        [sys.executable, "-m", "supervisor", "fleet", "start", str(path)],
        cwd=str(work),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert r.returncode == 2 and "outside this folder and your home" in r.stderr, r.stderr
    assert not (tmp_path.parent.parent / "escaped").exists()
