"""Shared bits of the viewer's tests: real captures, a real ``supervisor view`` process, and
Debian's headless Chromium driven through its chromedriver (Selenium).

Nothing here fakes a gamerig part: captures come from real ``supervisor start`` sessions,
the viewer is the real command on a real port, the browser is a real Chromium. Waits are on
conditions with deadlines (``WebDriverWait``, ``harness.wait_for``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from tests.harness import DEMO, REPO, Session

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
PYBOY_DEMO = os.path.join(REPO, "run", "profiles", "pyboy-demo.yaml")
SHOTS = os.path.join(REPO, "tests", "artifacts", "view")


def need_browser() -> None:
    """Chromium and its chromedriver from Debian's packages (``.ci/run`` installs them)."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(p)]
    if missing:
        message = (
            f"{', '.join(missing)} missing: install Debian's chromium and chromium-driver "
            "(apt-get install chromium chromium-driver; .ci/run does it)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    need_browser()
    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--no-first-run",
        "--disable-extensions",
    ):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


def shot(driver, name: str, full: bool = True) -> str:
    """Save a screenshot under tests/artifacts/view/ (the whole page when ``full``)."""
    os.makedirs(SHOTS, exist_ok=True)
    path = os.path.join(SHOTS, name + ".png")
    if full:
        height = driver.execute_script("return Math.min(6000, document.documentElement.scrollHeight)")
        driver.set_window_size(1400, max(900, height))
    driver.save_screenshot(path)
    driver.set_window_size(1400, 1000)
    return path


def run_session(base: str, profile: str = DEMO, *sets: str) -> None:
    """One whole real session into ``base``/capture."""
    s = Session(base, profile, *sets)
    code = s.wait(120)
    assert code == 0, s.stderr[-2000:]


class Viewer:
    """``supervisor view PATH... --port 0`` as a real process."""

    def __init__(self, *paths: str, args: tuple[str, ...] = ()):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "supervisor", "view", *paths, "--port", "0", *args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        if not line.startswith("gamerig view: "):
            self.proc.kill()
            raise AssertionError(f"the viewer did not start: {line!r} {self.proc.stderr.read()[-2000:]}")
        self.url = line.split()[2]

    def get(self, path: str, headers: dict | None = None, method: str = "GET"):
        req = urllib.request.Request(self.url + path, headers=headers or {}, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.headers.get("Content-Type"), r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get("Content-Type"), exc.read()

    def json(self, path: str):
        status, _ctype, body = self.get(path)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


def journal_rows(session_dir: str) -> list[dict]:
    with open(os.path.join(session_dir, "events.jsonl"), "rb") as fh:
        return [json.loads(line) for line in fh if line.endswith(b"\n")]


def edit_row(session_dir: str, pick, change) -> int:
    """Change one journal row in place as a tamperer would (canonical JSON, the hash chain not
    mended): ``pick(lines)`` chooses the 0-based line, ``change(row)`` edits it. Returns the line."""
    journal = os.path.join(session_dir, "events.jsonl")
    with open(journal, "rb") as fh:
        lines = fh.readlines()
    i = pick(lines)
    row = json.loads(lines[i])
    change(row)
    lines[i] = json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
    with open(journal, "wb") as fh:
        fh.writelines(lines)
    return i


def tree_state(root: str) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and mtime (to prove nothing was written)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            out[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns)
    return out
