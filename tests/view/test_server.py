"""The viewer's server over real captures, asked over real HTTP: what it refuses, what it
shows of damaged evidence, and that it writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.harness import REPO, wait_for

from .helpers import Viewer, edit_row, journal_rows, tree_state
from .test_browser import demo_session


def test_a_path_that_is_not_a_capture_is_refused_naming_it(tmp_path):
    (tmp_path / "empty").mkdir()
    for path in (str(tmp_path / "nothing-here"), str(tmp_path / "empty")):
        r = subprocess.run(
            [sys.executable, "-m", "supervisor", "view", path, "--port", "0"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert r.returncode == 2 and path in r.stderr and "error:" in r.stderr, r.stderr


def test_foreign_hosts_other_methods_and_paths_outside_are_refused(demo_capture):
    v = Viewer(demo_capture)
    try:
        status, _t, body = v.get("api/sessions", headers={"Host": "evil.example:80"})
        assert status == 403 and b"refused" in body
        status, _t, _b = v.get("api/sessions", headers={"Host": "localhost:" + v.url.rsplit(":", 1)[1].strip("/")})
        assert status == 200
        assert v.get("api/sessions", method="POST")[0] == 405
        key = demo_session(demo_capture).rsplit("/", 1)[1]
        for path in (
            "static/../../pyproject.toml",
            "static/%2e%2e/%2e%2e/pyproject.toml",
            f"api/session/{key}/frame/..%2F..%2Fevents.jsonl",
            f"api/session/{key}/frame/..%2Fsession.json",
            "api/session/..%2F..%2F..%2Fetc",
            "etc/passwd",
        ):
            status, _t, body = v.get(path)
            assert status == 404, (path, status, body[:200])
        status, ctype, _b = v.get("")
        assert status == 200 and ctype.startswith("text/html")
        req_headers = v.get("api/meta")
        assert req_headers[0] == 200
    finally:
        v.close()


def test_the_security_headers_are_sent(demo_capture):
    import urllib.request

    v = Viewer(demo_capture)
    try:
        with urllib.request.urlopen(v.url) as r:
            assert r.headers["Content-Security-Policy"].startswith("default-src 'self'")
            assert r.headers["X-Content-Type-Options"] == "nosniff"
    finally:
        v.close()


def test_a_torn_last_row_and_a_missing_observation_file_are_shown_not_crashed_on(copy_capture):
    capture = copy_capture()
    session = demo_session(capture)
    key = os.path.basename(session)
    rows = journal_rows(session)
    lines = len(rows)
    with open(os.path.join(session, "events.jsonl"), "ab") as fh:
        fh.write(b'{"event":"observation","seq')  # a row cut off by a crash
    obs = [r for r in rows if r["event"] == "observation"][7]
    os.unlink(os.path.join(capture, obs["path"]))
    v = Viewer(capture)
    try:
        summary = wait_for(
            lambda: (s := v.json(f"api/session/{key}"))["verdict"] and s["verdict"].get("state") == "done" and s,
            30,
            "the verdict",
        )
        assert summary["torn_tail"] is True and summary["journal_lines"] == lines
        assert summary["verdict"]["verdict"] == "damaged"  # the missing file is damage
        findings = v.json(f"api/session/{key}/verify")["findings"]
        assert any(f["code"] == "torn_last_row" and f["line"] == lines + 1 for f in findings), findings
        assert any(obs["path"].rsplit("/", 1)[1] in f["message"] for f in findings), findings
        step = v.json(f"api/session/{key}/step/7")
        assert step["observation"] is None and step["hash_ok"] is False and "No such file" in step["problem"]
        assert v.json(f"api/session/{key}/page/0")["steps"][7]["observation_id"] == obs["observation_id"]
    finally:
        v.close()


def test_a_row_naming_a_file_outside_its_session_is_not_read(copy_capture):
    capture = copy_capture()
    session = demo_session(capture)
    edit_row(
        session,
        lambda lines: [k for k, ln in enumerate(lines) if b'"event":"observation"' in ln][2],
        lambda row: row.update(path="../../../../../../etc/hostname"),
    )
    v = Viewer(capture)
    try:
        step = v.json(f"api/session/{os.path.basename(session)}/step/2")
        assert step["observation"] is None and "outside this session directory" in step["problem"]
    finally:
        v.close()


def test_the_viewer_writes_nothing_into_the_capture(demo_capture):
    before = tree_state(demo_capture)
    v = Viewer(demo_capture)
    try:
        listed = wait_for(
            lambda: (
                (d := v.json("api/sessions"))["sessions"]
                and all(s["verdict"] and s["verdict"].get("state") == "done" for s in d["sessions"])
                and d
            ),
            30,
            "every session verified",
        )
        for s in listed["sessions"]:
            key = s["key"]
            for path in ("", "/series", "/page/0", "/step/0", "/verify", "/emulator"):
                assert v.get(f"api/session/{key}{path}")[0] == 200, path
            if s["backend"] == "pyboy":
                assert v.get(f"api/session/{key}/sheet/branch-0001/0/20")[0] == 200
                info = v.json(f"api/session/{key}/emulator")
                frames = [x["frame"] for x in info["samples"]]
                status, ctype, gif = v.get(f"api/session/{key}/gif/-/{frames[0]}/{frames[2]}")
                assert status == 200 and ctype == "image/gif" and gif[:6] == b"GIF89a"
                status, _c, body = v.get(f"api/session/{key}/sheet/branch-0001/0/99999")
                assert status == 422 and b"last committed action" in body
    finally:
        v.close()
    assert tree_state(demo_capture) == before
