"""One supervised gamerig session run for an agent, and the agent's requests through it: the
Game Boy server's playtest, and the base of the Slay the Spire 2 server's ``GameSession``.

:class:`Playtest` writes the profile its server built (its policy, ``mcp_pyboy`` or
``mcp_sts2``, takes the agent's requests over the bridge), starts ``python -m supervisor start
PROFILE`` as a child process (its own process group; output to a log in the server's private
directory, never to the MCP stdio), finds the session through the
runtime record it publishes, and follows its journal with the recorder's own follow
protocol (:class:`actors.runtime.follow.Follower`), as every actor does.

``request(kind, parameters)`` hands one request to the policy over the bridge and waits,
reading the journal, for the rows it produced: the ``proposal`` (carrying
``agent_request``), its ``proposal_status``, the fsynced ``action_attempt`` and the
``action_result`` — or, for ``observe``, the next ``observation``. The journal is the only
source of the answer, so whatever the tool returns is on disk already.

The emulator actor's exits (``actor_exit``) and crash resumes (``emulator_resumed``) are
kept as *notices*: the agent's next request is refused once with a message describing them
(nothing is sent), so no agent plays on a resumed branch without being told.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
import zmq

from actors.policy.mcp_bridge import pid_alive
from actors.runtime.follow import Follower
from actors.runtime.recorder_client import read_observation
from actors.runtime.transport import Client, Counters, RequestFailed
from protocol.cli_to_supervisor import StopRequest
from protocol.events import (
    ActionAttempt,
    ActionResult,
    ActorExit,
    EmulatorResumed,
    EmulatorStarted,
    Observation,
    Proposal,
    ProposalStatus,
    SessionStopping,
)
from supervisor.rundir import endpoint_beside, running_sessions

from .bridge import Bridge
from .errors import SessionGone, ToolRefused

START_TIMEOUT_S = 40.0
END_TIMEOUT_S = 20.0
RESUME_WAIT_S = 30.0  # a restarted emulator boots PyBoy and resumes; slow on a loaded machine
REPO = Path(__file__).resolve().parents[3]  # the session's ``supervisor start`` runs from here


PRIVATE_PREFIX = "gamerig-mcp-"
OWNER = "owner.pid"


def private_dir() -> Path:
    """A new private directory (0700) for one MCP server: its bridge socket, profiles, logs and
    the sessions' runtime directories. The directories of servers that died without cleaning up
    (kill -9) are removed first, once no session of theirs is still running."""
    base = Path(tempfile.gettempdir())
    for old in base.glob(PRIVATE_PREFIX + "*"):
        try:
            if old.stat().st_uid != os.getuid() or pid_alive(int((old / OWNER).read_text().strip())):
                continue
        except (OSError, ValueError):
            continue  # not ours, or no owner written (yet): left alone
        if not any(running_sessions(str(rt)) for rt in old.glob("runtime-*")):
            shutil.rmtree(old, ignore_errors=True)
    path = Path(tempfile.mkdtemp(prefix=PRIVATE_PREFIX))
    (path / OWNER).write_text(str(os.getpid()), encoding="utf-8")
    return path


def remove_private(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


class Playtest:
    def __init__(self, private: Path, attempt: Path, profile: dict, bridge: Bridge, zctx: zmq.Context):
        self.private, self.attempt, self.profile, self.bridge, self.zctx = private, attempt, profile, bridge, zctx
        self.token = secrets.token_hex(4)
        self.count = 0
        self.proc: subprocess.Popen | None = None
        self.record: dict | None = None
        self.follower: Follower | None = None
        self.log_path = private / f"supervisor-{self.token}.log"
        self.observation: dict | None = None  # the newest observation row, its state under "state"
        self.started: dict | None = None  # the emulator_started row
        self.proposals: dict[str, dict] = {}  # agent request id -> proposal row
        self.status: dict[str, dict] = {}  # proposal id -> proposal_status row
        self.attempts: dict[str, dict] = {}  # proposal id -> action_attempt row
        self.results: dict[str, dict] = {}  # attempt id -> action_result row
        self.notices: list[dict] = []  # emulator exits and resumes not yet told
        self.stopping: dict | None = None  # the session_stopping row

    # -- start ----------------------------------------------------------------------------
    def start(self) -> None:
        self.bridge.reset()
        path = self.private / f"profile-{self.token}.yaml"
        path.write_text(yaml.safe_dump(self.profile, sort_keys=False), encoding="utf-8")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "supervisor", "start", str(path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=str(REPO),
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while self.record is None:
            found = running_sessions(self.profile["supervisor"]["runtime_dir"])
            if found:
                self.record = found[0]
            elif self.proc.poll() is not None or time.monotonic() > deadline:
                raise SessionGone(f"the session did not start: {self.log_tail()}")
            else:
                time.sleep(0.05)
        self.follower = Follower(
            self.zctx,
            endpoint_beside(self.record, "recorder"),
            session=self.record["session_id"],
            sender="mcp",
            counters=Counters(),
            with_states=True,
            wait_ms=200,
        )
        self.wait(self.ready, deadline - time.monotonic(), "the session's first observation")

    def ready(self) -> bool:
        """The session can take requests: its first observation (and the emulator's start) is in."""
        return self.observation is not None and self.started is not None

    @property
    def session_dir(self) -> Path:
        return Path(self.record["session_dir"])

    @property
    def recording_path(self) -> Path | None:
        rel = (self.started or {}).get("recording")
        return Path(self.record["capture_root"]) / rel if rel else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 6) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        except OSError:
            text = []
        return " | ".join(text[-lines:]) or f"no output (see {self.log_path})"

    # -- the journal ----------------------------------------------------------------------
    def feed(self, row: dict) -> None:
        ev = row["event"]
        if ev == Observation.KIND:
            state = self.follower.take_state(row["observation_id"])
            if state is None:
                state = read_observation(self.record["capture_root"], row["path"])
            self.observation = {**row, "state": state}
        elif ev == EmulatorStarted.KIND:
            self.started = row
        elif ev == Proposal.KIND and row.get("agent_request"):
            self.proposals[row["agent_request"]] = row
            self.bridge.delivered(row["agent_request"])
        elif ev == ProposalStatus.KIND:
            self.status[row["proposal_id"]] = row
        elif ev == ActionAttempt.KIND:
            self.attempts[row["proposal_id"]] = row
        elif ev == ActionResult.KIND:
            self.results[row["attempt_id"]] = row
        elif ev == ActorExit.KIND and row.get("actor") == "emulator" and not row.get("expected"):
            self.notices.append({"exit": row})
        elif ev == EmulatorResumed.KIND:
            self.notices.append({"resumed": row})
        elif ev == SessionStopping.KIND:
            self.stopping = row

    def pump(self, wait_s: float) -> None:
        """Read the journal rows and the policy's asks that arrive within ``wait_s``."""
        poller = zmq.Poller()
        poller.register(self.follower.ensure_request(), zmq.POLLIN)
        poller.register(self.bridge.socket, zmq.POLLIN)
        poller.poll(max(1, int(wait_s * 1000)))
        for row in self.follower.pump():
            self.feed(row)
        self.bridge.pump()

    def catch_up(self) -> None:
        """Read every row appended since the last call (an emulator exit while the agent was
        thinking) with an immediate ``follow`` (``wait_ms`` 0), not the long poll."""
        for row in self.follower.read_now():
            self.feed(row)

    def wait(self, condition, seconds: float, what: str, *, until_stopped: bool = False) -> None:
        """Pump until ``condition()``; refused when the session ends (or, unless
        ``until_stopped``, begins to stop) first, or after ``seconds``."""
        deadline = time.monotonic() + seconds
        while not condition():
            if not self.alive():
                self.drain()
                if condition():
                    return
                raise SessionGone(f"the session ended while waiting for {what}: {self.ended_reason()}")
            if self.stopping is not None and not until_stopped:
                raise SessionGone(f"the session is stopping while waiting for {what}: {self.ended_reason()}")
            if time.monotonic() > deadline:
                raise ToolRefused(
                    "timeout", f"no {what} within {seconds:.0f}s; the journal is {self.session_dir}/events.jsonl"
                )
            self.pump(0.05)

    def drain(self) -> None:
        """Read the rows still available after the supervisor exited (none if the recorder is gone)."""
        if self.follower is None:
            return
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            rows = self.follower.pump() if self.follower.socket is not None and self.follower.socket.poll(50) else []
            for row in rows:
                self.feed(row)

    def ended_reason(self) -> str:
        if self.stopping is not None:
            detail = f": {self.stopping.get('detail')}" if self.stopping.get("detail") else ""
            return f"{self.stopping.get('reason')}{detail}"
        code = self.proc.poll() if self.proc else None
        return f"the supervisor exited with {code}" if code is not None else "still running"

    # -- requests -------------------------------------------------------------------------
    def request(
        self, kind: str, parameters: dict, tool: str, timeout_s: float = 30.0, *, unexecuted_ok: bool = False, **fields
    ) -> dict:
        """Hand one request to the policy and return its journal rows (module docstring);
        ``fields`` go into the request as they are (the game's policy reads them). A proposal
        not executed is refused (``not-executed``) unless ``unexecuted_ok``: then its rows are
        returned as they are."""
        if self.stopping is not None or not self.alive():
            raise SessionGone(f"the playtest session has ended ({self.ended_reason()}); start one with emulator_run")
        self.count += 1
        rid = f"{self.token}-{self.count:06d}"
        self.bridge.submit({"id": rid, "kind": kind, "tool": tool, "parameters": parameters, **fields})
        self.wait(
            lambda: rid in self.proposals, timeout_s, f"the policy to take request {rid}", until_stopped=kind == "end"
        )
        proposal = self.proposals[rid]
        pid = proposal["proposal_id"]
        self.wait(lambda: pid in self.status, timeout_s, f"the disposition of {pid}", until_stopped=kind == "end")
        status = self.status[pid]
        out = {"request": rid, "proposal": proposal, "status": status}
        if kind == "observe":
            seq = status["sequence"]
            self.wait(lambda: self.observation["sequence"] > seq, timeout_s, "a fresh observation")
            return {**out, "observation": self.observation}
        if kind == "end" or (status["status"] != "execute" and unexecuted_ok):
            return out
        if status["status"] != "execute":
            raise ToolRefused(
                "not-executed",
                f"proposal {pid} was not executed: {status['status']} "
                f"({status.get('stop_reason') or 'no reason recorded'})",
            )
        self.wait(lambda: pid in self.attempts, timeout_s, f"the recorded intent of {pid}")
        attempt = self.attempts[pid]
        self.wait(
            lambda: attempt["attempt_id"] in self.results, timeout_s, f"the result of attempt {attempt['attempt_id']}"
        )
        return {**out, "attempt": attempt, "result": self.results[attempt["attempt_id"]]}

    def take_notices(self) -> str | None:
        """The emulator's exits and resumes since the last request, as one message (waits up
        to RESUME_WAIT_S for the resume that follows an exit); None when there were none."""
        if not self.notices:
            return None
        deadline = time.monotonic() + RESUME_WAIT_S
        while (
            "resumed" not in self.notices[-1] and self.alive() and self.stopping is None and time.monotonic() < deadline
        ):
            self.pump(0.05)
        notices, self.notices = self.notices, []
        return "; ".join(describe_notice(n) for n in notices)

    # -- end ------------------------------------------------------------------------------
    def end(self, tool: str = "emulator_close") -> None:
        """End the session: the policy proposes ``stop`` (reason ``stop_command``); if it
        cannot, the supervisor's control socket, then SIGTERM, then SIGKILL."""
        if self.alive() and self.stopping is None:
            try:
                self.request("end", {}, tool, timeout_s=5.0)
            except ToolRefused:
                self.control_stop()
        deadline = time.monotonic() + END_TIMEOUT_S
        while self.alive() and time.monotonic() < deadline:
            self.pump(0.05)
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self.drain()
        if self.follower is not None:
            self.follower.close()
            self.follower = None

    def control_stop(self) -> None:
        if self.record is None:
            return
        client = Client(
            self.zctx, self.record["control"], session=self.record["session_id"], sender="mcp", counters=Counters()
        )
        try:
            client.request(StopRequest(token=self.record["token"]), deadline_s=5, try_s=5)
        except RequestFailed:
            pass
        finally:
            client.close()


def describe_notice(notice: dict) -> str:
    if "exit" in notice:
        row = notice["exit"]
        how = f"signal {row['signal']}" if row.get("signal") else f"exit code {row.get('code')}"
        return (
            f"the emulator actor (pid {row.get('pid')}) exited with {how}; the supervisor restarts it "
            "and nothing in flight was resent"
        )
    row = notice["resumed"]
    lost, branch = row.get("lost_interval") or {}, row.get("branch") or {}
    where = (
        f"checkpoint {branch.get('checkpointId')}"
        if branch.get("checkpointId")
        else f"boot (frame {branch.get('fromFrame', 0)})"
    )
    return (
        f"the restarted emulator resumed the recording on {branch.get('branchId')} from {where}, losing "
        f"actions {lost.get('fromActionIndex')}..{lost.get('toActionIndex')} (frames "
        f"{lost.get('fromFrame')}..{lost.get('toFrame')})"
    )
