"""The viewer's pages in a real headless Chromium over real captures.

Each test computes what the page should show from the capture itself (the journal's rows,
the observation files), never from the viewer's own code, and saves a screenshot under
tests/artifacts/view/.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.harness import REPO, Session

from .helpers import Viewer, edit_row, journal_rows, shot

WAIT = 20


def wait(driver, cond, what: str, timeout: float = WAIT):
    """Wait for ``cond``; a live page redraws itself every second, so an element found a moment
    ago may be gone: that is a retry, not a failure."""
    return WebDriverWait(
        driver, timeout, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)
    ).until(cond, message=what)


def click(driver, by: str, value: str) -> None:
    """Click an element of a page that may redraw itself meanwhile (``wait`` retries)."""
    wait(driver, lambda d: d.find_element(by, value).click() or True, f"to click {value}")


def text(driver, css: str) -> str:
    return driver.find_element(By.CSS_SELECTOR, css).text


def sessions_of(capture: str) -> list[str]:
    return sorted(os.listdir(os.path.join(capture, "sessions")))


def demo_session(capture: str) -> str:
    """The built-in game's session directory (its first row names the http backend)."""
    for sid in sessions_of(capture):
        d = os.path.join(capture, "sessions", sid)
        if journal_rows(d)[0]["game_backend"] == "http":
            return d
    raise AssertionError("no http session")


def test_the_list_shows_every_session_of_a_real_capture_and_the_timeline_counts_its_steps(demo_capture, driver):
    v = Viewer(demo_capture)
    try:
        driver.get(v.url)
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions tbody tr")) == 2, "two rows")
        shown = wait(
            driver,
            lambda d: sorted(a.text for a in d.find_elements(By.CSS_SELECTOR, "#sessions a.session-link")),
            "the listed ids",
        )
        assert shown == sessions_of(demo_capture)
        wait(
            driver,
            lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions .b-intact")) == 2,
            "both sessions verified intact",
        )
        shot(driver, "sessions")
        session = demo_session(demo_capture)
        steps = sum(1 for r in journal_rows(session) if r["event"] == "observation")
        click(driver, By.LINK_TEXT, os.path.basename(session))
        wait(
            driver,
            lambda d: d.find_elements(By.ID, "step-count") and text(d, "#step-count") == str(steps),
            f"the step count {steps}",
        )
        rows = driver.find_elements(By.CSS_SELECTOR, "#timeline tr.step")
        assert len(rows) == min(100, steps)
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#charts canvas"), "charts drawn")
        wait(driver, lambda d: "reading observation figures" not in d.find_element(By.ID, "main").text, "figures read")
        shot(driver, "session")
    finally:
        v.close()


def test_opening_a_step_shows_its_observation_with_its_hash_checked_and_its_rows(demo_capture, driver):
    session = demo_session(demo_capture)
    rows = journal_rows(session)
    obs = [r for r in rows if r["event"] == "observation"][9]
    with open(os.path.join(os.path.dirname(os.path.dirname(session)), obs["path"]), "rb") as fh:
        data = fh.read()
    assert hashlib.sha256(data).hexdigest() == obs["sha256"]
    v = Viewer(demo_capture)
    try:
        driver.get(v.url + f"#/session/{os.path.basename(session)}/step/9")
        wait(driver, lambda d: d.find_elements(By.ID, "observation"), "the observation")
        assert json.loads(text(driver, "#observation")) == json.loads(data)
        assert "matches the journal row" in text(driver, "#hash-status")
        shown_rows = driver.find_elements(By.CSS_SELECTOR, "#rows pre")
        seqs = {json.loads(p.text)["sequence"] for p in shown_rows}
        proposal = next(r for r in rows if r["event"] == "proposal" and r["observation_id"] == obs["observation_id"])
        assert {obs["sequence"], proposal["sequence"]} <= seqs
        shot(driver, "step")
    finally:
        v.close()


def test_a_changed_observation_file_and_a_tampered_row_are_shown_at_the_right_place(copy_capture, driver):
    capture = copy_capture()
    session = demo_session(capture)
    n = edit_row(
        session,
        lambda lines: len(lines) // 2,  # any row in the middle, in place
        lambda row: row.update(ts="tampered"),
    )
    observations = [r for r in journal_rows(session) if r["event"] == "observation"]
    last = len(observations) - 1  # after the edited row: the edited row is the first damage
    with open(os.path.join(capture, observations[last]["path"]), "ab") as fh:
        fh.write(b" ")
    v = Viewer(capture)
    try:
        driver.get(v.url)
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#sessions .b-damaged"), "a damaged session")
        click(driver, By.LINK_TEXT, os.path.basename(session))
        where = wait(
            driver, lambda d: d.find_elements(By.ID, "verdict-where") and text(d, "#verdict-where"), "the verdict's row"
        )
        assert f"line {n + 1}" in where, where  # the edited row (1-based) is the one named
        shot(driver, "damaged")
        driver.get(v.url + f"#/session/{os.path.basename(session)}/step/{last}")
        wait(driver, lambda d: d.find_elements(By.ID, "hash-status"), "the step")
        assert "was changed" in text(driver, "#hash-status")
    finally:
        v.close()


def test_a_running_session_appears_and_updates_on_the_page(tmp_path, driver):
    base = str(tmp_path / "live")
    os.makedirs(os.path.join(base, "capture", "sessions"))
    v = Viewer(os.path.join(base, "capture"))
    s = Session(
        base,
        os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "run", "profiles", "demo.yaml"),
        "session.stop_on_run_end=false",
        "session.max_steps=20000",
    )
    try:
        driver.get(v.url)
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#sessions .b-live"), "a running session listed")
        click(driver, By.CSS_SELECTOR, "#sessions a.session-link")
        wait(driver, lambda d: d.find_elements(By.ID, "step-count") and int(text(d, "#step-count")) > 0, "steps")
        first = wait(driver, lambda d: int(text(d, "#step-count")), "the count")
        wait(driver, lambda d: int(text(d, "#step-count")) > first + 20, "the count to grow", timeout=15)
        shot(driver, "running", full=False)
        s.signal(signal.SIGINT)
        assert s.wait(60) in (0, 130)
        steps = sum(1 for r in journal_rows(s.session_dir) if r["event"] == "observation")
        wait(driver, lambda d: text(d, "#step-count") == str(steps), f"the final count {steps}")
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#evidence .b-intact"), "verified intact", timeout=30)
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
        v.close()


def test_a_pyboy_session_shows_its_retained_frames_a_contact_sheet_and_a_refused_gif(demo_capture, driver):
    sid = next(
        s
        for s in sessions_of(demo_capture)
        if journal_rows(os.path.join(demo_capture, "sessions", s))[0]["game_backend"] == "pyboy"
    )
    with open(os.path.join(demo_capture, "sessions", sid, "recording", "events.jsonl"), "rb") as fh:
        retained = [r for r in map(json.loads, fh) if r.get("kind") == "sample" and r.get("png")]
    v = Viewer(demo_capture)
    try:
        driver.get(v.url + f"#/session/{sid}")
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#strip img")) == len(retained), "the strip")
        # its score, from the score block each step's reply carries: the last, the highest,
        # the milestones the last step's block shows reached
        blocks = [
            r["response"]["score"]
            for r in journal_rows(os.path.join(demo_capture, "sessions", sid))
            if r["event"] == "action_result" and isinstance((r.get("response") or {}).get("score"), dict)
        ]
        assert blocks, "the demo cartridge reports a score"
        assert text(driver, "#score").startswith(
            f"final {blocks[-1]['score']} · best {max(b['score'] for b in blocks)} "
            f"· milestones {len(blocks[-1]['milestones'])}"
        )
        wait(
            driver,
            lambda d: d.execute_script(
                "return [...document.querySelectorAll('#strip img')].every(i => i.complete && i.naturalWidth === 160)"
            ),
            "every retained frame loaded at 160 px",
        )
        driver.find_element(By.ID, "iv-sheet").click()
        wait(
            driver,
            lambda d: (
                d.find_elements(By.ID, "iv-image")
                and d.execute_script(
                    "const i = document.getElementById('iv-image'); return i.complete && i.naturalWidth > 160"
                )
            ),
            "a sheet",
        )
        shot(driver, "emulator")
        start = driver.find_element(By.ID, "iv-start")
        start.clear()
        start.send_keys(str(retained[0]["frame"] + 1))  # not a retained frame: clip refuses it
        driver.find_element(By.ID, "iv-gif").click()
        wait(driver, lambda d: d.find_elements(By.ID, "iv-error"), "the refusal")
        assert "not a retained frame" in text(driver, "#iv-error")
    finally:
        v.close()


def test_text_from_a_capture_is_shown_as_text_never_run(copy_capture, driver):
    capture = copy_capture()
    session = demo_session(capture)
    evil = '<img src=x id=pwned onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
    edit_row(
        session,
        lambda lines: next(k for k, ln in enumerate(lines) if b'"event":"proposal"' in ln),
        lambda row: row.update(reason=evil),
    )
    v = Viewer(capture)
    try:
        driver.get(v.url + f"#/session/{os.path.basename(session)}")
        wait(driver, lambda d: evil in d.find_element(By.ID, "timeline").text, "the reason as text")
        assert not driver.find_elements(By.ID, "pwned") and driver.title != "pwned"
    finally:
        v.close()


MARKUP = "<img src=x onerror=window.__pwned=1><b>bold</b>"


def _shown_as_text(driver, where: str, css: str) -> None:
    """Each element ``css`` matches shows MARKUP literally, holds no element made from it, and
    no script of it ran."""
    found = driver.execute_script(
        """
        const els = [...document.querySelectorAll(arguments[0])];
        return {n: els.length, text: els.map(e => e.textContent.includes(arguments[1])),
                made: els.map(e => e.querySelectorAll('img, b').length), pwned: window.__pwned === 1};""",
        css,
        MARKUP,
    )
    assert found["n"] and all(found["text"]), (where, css, found)
    assert not any(found["made"]) and not found["pwned"], (where, css, found)


def test_text_from_a_capture_is_shown_as_text_on_the_step_page(copy_capture, driver, tmp_path):
    """The observation, the model's evidence and the journal rows of a step, live and in a
    bundle opened from disk (where no Content Security Policy would stop an inline handler)."""
    capture = copy_capture()
    session = demo_session(capture)
    rows = journal_rows(session)
    index = 3
    obs = [r for r in rows if r["event"] == "observation"][index]
    proposal = next(r for r in rows if r["event"] == "proposal" and r["observation_id"] == obs["observation_id"])
    with open(os.path.join(capture, obs["path"]), encoding="utf-8") as fh:
        state = json.load(fh)
    state["label"] = MARKUP
    with open(os.path.join(capture, obs["path"]), "w", encoding="utf-8") as fh:
        json.dump(state, fh)
    evidence = {
        "call_id": "c-1",
        "backend": MARKUP,
        "attempts": 1,
        "message": MARKUP,
        "request": {"model": MARKUP, "question_kind": MARKUP, "questions": [MARKUP]},
        "answers": [MARKUP],
        "usage": {"total_tokens": 1, "cost_unknown": MARKUP},
    }
    edit_row(
        session,
        lambda lines: next(k for k, ln in enumerate(lines) if json.loads(ln).get("sequence") == proposal["sequence"]),
        lambda row: row.update(reason=MARKUP, model_evidence=[evidence], note=MARKUP),
    )
    out = str(tmp_path / "bundle")
    r = subprocess.run(
        [sys.executable, "-m", "supervisor", "view", "--bundle", out, "--bundle-max-steps", str(index + 1), capture],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    v = Viewer(capture)
    try:
        for where, base in (("server", v.url), ("bundle", "file://" + out + "/index.html")):
            driver.get(base + f"#/session/{os.path.basename(session)}/step/{index}")
            wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#rows pre"), f"the step ({where})")
            _shown_as_text(driver, where, "#observation")
            _shown_as_text(driver, where, ".model-evidence")
            _shown_as_text(driver, where, "#rows")
            shot(driver, f"step-markup-{where}")
    finally:
        v.close()
