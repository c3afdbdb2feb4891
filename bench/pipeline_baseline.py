"""The in-process baseline and the intent-acknowledgement probe of ``bench/pipeline.py``.

``replay(rows, workdir)``: ONE process does the work a pipeline session did, step for step,
against a fresh built-in game (a ``python -m actors.game`` server with the session's seed and
knobs, checking every POST's intent against the baseline's own journal, as the game actor
does), replaying the session's journal in its order:

* each ``observation`` row: GET the state (and the compendium where the pipeline read it),
  write the observation file exactly as the recorder does and fsync it and its directory,
  append the observation row (and
  a ``run_identity_changed`` / ``run_identity_unavailable`` row by the recorder's rule), and
  hand the row and state to the policy's ``observe``;
* each ``observation_error`` row: the GET that failed there, and its row;
* each ``proposal`` / ``proposal_status`` row: the session's policy, built from the session's
  profile as the policy actor builds it and fed every row through the same hooks in the same
  order (``PolicyMirror``), decides on the newest observation (timed, as the actor times it:
  ``decide_ms``); then the proposal and status rows of that decision, the ``decisions.jsonl``
  feed line, and ``record_proposal``. The decision must be the session's — action,
  parameters, reason, source, extra fields, and the disposition its wish gets: checked once
  the replay is done (outside the timed steps), the first that is not raises
  ``DecisionMismatch`` naming the observation and both values;
* each ``action_attempt``: the ``action_attempt`` row fsynced (its observation file is
  durable since it was stored), then the POST of the same action, then the
  ``action_result`` row fsynced and ``record_result`` with the proposal's row.

The recorder's own writer (``JournalWriter``) writes the rows, with the recorder's own file
helpers (``actors/recorder/files.py``: ``write_observation``, ``make_durable``,
``append_feed``) and the observer's run-identity rule (``actors/identity.py``): the same code,
so the baseline's work cannot drift from the pipeline's; the policy is the session's own
class (``actors/policy/registry.py``), used through its public hooks. A profile with a model
configured is refused: the baseline has no model-client actor to replay its advice.
Pauses mirror the observer's: after a step that sent nothing it waits ``game.poll_interval_s``
before the next read, after a failed read ``min(2, poll * 2**errors)``.

``AckProbe``: a real recorder process (``python -m actors.recorder``) started for the bench
behind a minimal stand-in for the supervisor's control endpoint (hello → welcome, pings),
and the bench as its client over the real wire (ZeroMQ DEALER, msgpack envelopes).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import zmq

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

import protocol  # noqa: E402
import protocol.events as ev  # noqa: E402
from actors import identity as run_identity  # noqa: E402
from actors.policy.advice import Advisor  # noqa: E402
from actors.policy.base import PolicyObservation  # noqa: E402
from actors.policy.driving import ProposalBook, decide  # noqa: E402
from actors.policy.registry import load_policy_class  # noqa: E402
from actors.recorder.files import append_feed, make_durable, write_observation  # noqa: E402
from actors.recorder.rules import disposition as recorder_disposition  # noqa: E402
from actors.recorder.writer import JournalWriter  # noqa: E402
from actors.sts2mcp import GameClient, ReadFailed  # noqa: E402
from protocol.actor_to_supervisor import Hello  # noqa: E402
from protocol.from_recorder import IntentAck, ObservationStored, ProposalRecorded, Recorded  # noqa: E402
from protocol.supervisor_to_actor import Ping, StopActor, Welcome  # noqa: E402
from protocol.to_recorder import AwaitIntent, RecordIntent, RecordProposal, RecordResult, StoreObservation  # noqa: E402
from supervisor.profile import get as profile_get  # noqa: E402


# -- the built-in game as its own server -----------------------------------------------------
class GameServer:
    """``python -m actors.game --port 0 --seed S [--journal J] [--<knob> N ...]``."""

    def __init__(self, seed: int, knobs: dict, journal: str | None, log_path: str):
        cmd = [sys.executable, "-m", "actors.game", "--port", "0", "--seed", str(seed)]
        if journal:
            cmd += ["--journal", journal]
        for name, value in sorted((knobs or {}).items()):
            cmd += ["--" + name.replace("_", "-"), str(int(value))]
        self.log = open(log_path, "w", encoding="utf-8")
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        found = re.search(r"(http://\S+)", line)
        if not found:
            self.stop()
            raise RuntimeError(f"the built-in game did not start (said {line!r}; log {log_path})")
        self.url = found.group(1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc.stdout.close()
        self.log.close()


# -- the baseline ----------------------------------------------------------------------------
@dataclasses.dataclass
class Mirror:
    """The recorder's per-step writes, done in this process."""

    root: str
    sid: str
    writer: JournalWriter
    observations: int = 0
    attempts: int = 0
    last_obs: dict | None = None
    awaiting_attempt: str | None = None
    last_run_id: str | None = None
    durable: set = dataclasses.field(default_factory=set)

    @classmethod
    def create(cls, root: str, profile: dict) -> Mirror:
        sid = "baseline-" + uuid.uuid4().hex[:12]
        os.makedirs(os.path.join(root, "sessions", sid, "observations"))
        writer = JournalWriter(os.path.join(root, "sessions", sid, "events.jsonl"), sid, resume=False)
        mirror = cls(root, sid, writer)
        # Not an ev.SessionStart: the baseline's first row has always carried only these keys
        # (and ``baseline``), and the bench's readers need no more; the kind is the same.
        writer.append(ev.SessionStart.KIND, {"profile": profile, "capture_root": root, "baseline": True}, durable=True)
        return mirror

    def append(self, event: ev.Event, *, durable: bool = False) -> dict:
        """Append ``event``'s row (the writer adds the common fields); return the row."""
        fields = event.to_row()
        row, _ = self.writer.append(fields.pop("event"), fields, durable=durable)
        return row

    def observation(self, state: dict, read_ms: float, ident: dict | None) -> dict:
        number = self.observations + 1
        relpath = f"sessions/{self.sid}/observations/{number:06d}.json"
        while os.path.exists(os.path.join(self.root, relpath)):  # the recorder's orphan check
            number += 1
            relpath = f"sessions/{self.sid}/observations/{number:06d}.json"
        oid = f"o-{number:06d}"
        sha = write_observation(self.root, relpath, state)
        make_durable(self.root, relpath)  # the recorder makes each observation durable when stored
        self.durable.add(relpath)
        self.observations += 1
        st = state.get("state_type")
        after, self.awaiting_attempt = self.awaiting_attempt or None, None
        self.last_obs = self.append(
            ev.Observation(
                observation_id=oid,
                path=relpath,
                sha256=sha,
                step=self.observations,
                phase="preflight" if self.last_obs is None else "run",
                state_type=st if isinstance(st, str) else None,
                read_id=uuid.uuid4().hex,
                read_ms=read_ms,
                after_attempt_id=after,
                run_identity=ident,
            )
        )
        if ident is not None:
            self._identity_row(oid, ident)
        return self.last_obs

    def _identity_row(self, oid: str, ident: dict) -> None:
        if ident.get("status") == "ok" and isinstance(ident.get("run_id"), str):
            if ident["run_id"] != self.last_run_id:
                self.append(
                    ev.RunIdentityChanged(
                        observation_id=oid,
                        previous_run_id=self.last_run_id,
                        run_id=ident["run_id"],
                        seed=ident.get("seed"),
                    )
                )
                self.last_run_id = ident["run_id"]
        else:
            self.append(
                ev.RunIdentityUnavailable(
                    observation_id=oid,
                    status=ident.get("status"),
                    detail=ident.get("error") or ident.get("reason"),
                    last_known_run_id=self.last_run_id,
                )
            )

    def proposal(self, proposal: ev.Proposal, status: ev.ProposalStatus) -> tuple[ev.Proposal, dict]:
        """The proposal and status rows of this baseline's own decision (``PolicyMirror``),
        and the ``decisions.jsonl`` feed line, as the recorder writes them; return the
        proposal and its row."""
        prow = self.append(proposal)
        row = self.append(status)
        if status.status in ("execute", "dry_run"):
            feed = {k: v for k, v in proposal.to_row().items() if k != "model_evidence"}
            feed.update(event="decide", session=self.sid, disposition=status.status, recorded_at=row["recorded_at"])
            append_feed(os.path.join(self.root, "decisions.jsonl"), feed)
        return proposal, prow

    def intent(self, proposal: ev.Proposal) -> dict:
        path = self.last_obs["path"]
        if path not in self.durable:
            make_durable(self.root, path)
            self.durable.add(path)
        self.attempts += 1
        row = self.append(
            ev.ActionAttempt(
                attempt_id=f"a-{self.attempts:06d}",
                proposal_id=proposal.proposal_id,
                observation_id=proposal.observation_id,
                action=proposal.action,
                parameters=proposal.parameters,
                requester="baseline",
            ),
            durable=True,
        )
        self.awaiting_attempt = row["attempt_id"]
        return row

    def result(self, attempt_id: str, out) -> dict:
        return self.append(
            ev.ActionResult(
                attempt_id=attempt_id,
                outcome=out.outcome,
                http_status=out.http_status,
                response=out.response,
                error=out.error,
                request_ms=out.request_ms,
            ),
            durable=True,
        )


class DecisionMismatch(RuntimeError):
    """The baseline's policy decided otherwise than the session's policy on the same state."""


class ProfileSettings:
    """A profile's settings by dotted name, read as the actors read them
    (``ActorContext.setting``), for the policy actor's own rules taken from it."""

    def __init__(self, profile: dict):
        self.profile = profile

    def setting(self, dotted: str, default=None):
        return profile_get(self.profile, dotted, default)


class PolicyMirror:
    """The policy actor's work, in this process (``actors/policy/__main__.py``): the policy
    built as its ``main`` builds it, every row through the same hooks in the same order as
    ``PolicyDriver.on_row`` (observe, record_proposal, record_result with the proposal row),
    and each decision made as ``PolicyDriver._decide`` makes it (``actors.policy.driving``:
    ``decide`` and the ``ProposalBook`` of proposal rows, the actor's own)."""

    def __init__(self, profile: dict):
        ctx = ProfileSettings(profile)
        cls = load_policy_class(ctx.setting("policy.module", "sts2"))
        self.policy = cls(dict(ctx.setting("policy.settings") or {}), dict(ctx.setting("session") or {}))
        if Advisor.from_context(ctx, self.policy.settings) is not None:
            raise ValueError(
                "the session's profile configures a model (model.base_url or model.replay, "
                "policy.settings.consult_model not false): the baseline runs the policy in "
                "one process without the model-client actor and cannot replay its advice"
            )
        self.policy.advisor = None  # as the actor's, without a model
        self.dry_run = bool(ctx.setting("session.dry_run", False))
        self.latest: PolicyObservation | None = None
        self.made: dict[str, int] = {}  # decisions on the newest observation
        self.book = ProposalBook({})  # proposal rows by proposal id and by attempt id

    def observe(self, row: dict, state: dict) -> None:
        obs = PolicyObservation(row["observation_id"], row.get("step", 0), row.get("phase", "run"), state, dict(row))
        self.policy.observe(obs)
        self.latest, self.made = obs, {}

    def decide(self) -> tuple[ev.Proposal, str]:
        """A decision on the newest observation, as the actor makes it; with its wish."""
        obs = self.latest
        made = self.made.get(obs.observation_id, 0)
        p, extra, _, decide_ms = decide(self.policy, obs, made)
        self.made[obs.observation_id] = made + 1
        return ev.Proposal(
            proposal_id=uuid.uuid4().hex,
            observation_id=obs.observation_id,
            action=p.action,
            parameters=dict(p.parameters),
            reason=p.reason,
            source=p.source,
            decide_ms=decide_ms,
            model_evidence=p.model_evidence,
            extra=extra,
        ), p.wish

    def proposed(self, row: dict) -> None:
        row = dict(row)
        self.book.proposed(row)
        self.policy.record_proposal(row)

    def disposed(self, status: str, proposal_id: str) -> None:
        self.book.disposed(proposal_id, status)

    def attempted(self, row: dict) -> None:
        self.book.attempted(row)

    def resulted(self, row: dict) -> None:
        prop = self.book.resulted(row)
        if prop is not None:
            self.policy.record_result(prop, dict(row))


def disposition(wish: str, reason: str, dry_run: bool, stopping: str | None) -> ev.ProposalStatus:
    """The recorder's disposition of a proposal (``actors.recorder.rules.disposition``) as its
    status row, under a placeholder proposal id."""
    status, stop_reason = recorder_disposition(wish, reason, stopping=stopping, dry_run=dry_run)
    return ev.ProposalStatus(proposal_id="", status=status, stop_reason=stop_reason)


#: keys of a decision that hold the time it took the policy to notice something (a stall's
#: or a released action's ``seconds``, the ``stuck_on`` text): they differ between two runs
TIMED_KEYS = frozenset({"seconds", "stuck_on"})
ABSENT = "(absent)"  # an extra field one side has and the other has not, as a mismatch shows it


def check_decisions(decisions: list[tuple]) -> None:
    """``check_decision`` for each ``(mine, status, prow, srow)``, after the replay: a check
    costs about as much as a decision (≈ 0.1 ms: the session's row parsed and compared), work
    the pipeline does not do, so it stays out of the timed steps. The first mismatch raises."""
    for mine, status, prow, srow in decisions:
        check_decision(mine, status, prow, srow)


def check_decision(mine: ev.Proposal, status: ev.ProposalStatus, prow: dict, srow: dict) -> None:
    """Raise ``DecisionMismatch`` unless the baseline's decision is the session's: action,
    parameters, reason, source, model evidence, every extra field (timed ones aside), and
    the disposition and stop reason its wish gets."""
    theirs = ev.Proposal.from_row(prow)
    a = {**_decision(mine), "status": status.status, "stop_reason": status.stop_reason}
    b = {**_decision(theirs), "status": srow.get("status"), "stop_reason": srow.get("stop_reason")}
    differ = sorted(k for k in a.keys() | b.keys() if a.get(k, ABSENT) != b.get(k, ABSENT))
    if differ:
        raise DecisionMismatch(
            f"observation {mine.observation_id}: the baseline's policy decided "
            f"{json.dumps({k: a.get(k, ABSENT) for k in differ}, sort_keys=True, default=str)}, the session "
            f"recorded {json.dumps({k: b.get(k, ABSENT) for k in differ}, sort_keys=True, default=str)} "
            f"(proposal {prow.get('proposal_id')!r})"
        )


def _decision(p: ev.Proposal) -> dict:
    out = {
        "action": p.action,
        "parameters": p.parameters,
        "reason": p.reason,
        "source": p.source,
        "model_evidence": p.model_evidence,
    }
    out.update(("extra." + k, _untimed(v)) for k, v in (p.extra or {}).items())
    return out


def _untimed(value):
    if isinstance(value, dict):
        return {k: "<timed>" if k in TIMED_KEYS else _untimed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _setting(profile: dict, dotted: str, default=None):
    value = profile_get(profile, dotted)
    return default if value is None else value


def replay(rows: list[dict], workdir: str) -> str:
    """Replay the session ``rows`` in one process on a fresh game, deciding each proposal
    again with the session's policy; return the baseline's journal. A decision other than
    the session's raises ``DecisionMismatch``."""
    profile = rows[0]["profile"]
    policy = PolicyMirror(profile)  # first: a profile it cannot replay fails before any work
    root = os.path.join(workdir, "capture")
    os.makedirs(root, exist_ok=True)
    mirror = Mirror.create(root, profile)
    game = GameServer(
        int(_setting(profile, "game.seed", 1)),
        _setting(profile, "game.knobs", {}),
        mirror.writer.path,
        os.path.join(workdir, "game.log"),
    )
    timeout = float(_setting(profile, "game.timeout_s", 5))
    reader, actor = GameClient(game.url, timeout), GameClient(game.url, timeout)
    try:
        _replay_rows(rows, mirror, policy, reader, actor, float(_setting(profile, "game.poll_interval_s", 0.05)))
    finally:
        reader.close()
        actor.close()
        mirror.writer.close()
        game.stop()
    return mirror.writer.path


def _replay_rows(
    rows: list[dict], mirror: Mirror, policy: PolicyMirror, reader: GameClient, actor: GameClient, poll: float
) -> None:
    statuses = {r["proposal_id"]: r for r in rows if r["event"] == ev.ProposalStatus.KIND}
    decisions: list[tuple] = []  # checked after the replay (check_decisions)
    proposal = None
    errors = 0
    stopping = None  # the session's stop, as the recorder's index keeps it (its dispositions)
    for row in rows:
        kind = row["event"]
        if kind in (ev.Observation.KIND, ev.ObservationError.KIND):
            start = time.monotonic()
            try:
                state = reader.read_state()
            except ReadFailed:
                errors += 1
                mirror.append(ev.ObservationError.from_row(row))  # the session's failure, as written
                time.sleep(min(2.0, poll * 2**errors))
                continue
            read_ms = round((time.monotonic() - start) * 1000, 3)
            ident = _read_identity(reader, state) if "run_identity" in row else None
            policy.observe(mirror.observation(state, read_ms, ident), state)
            errors = 0
        elif kind == ev.SessionStopping.KIND:
            stopping = row.get("reason") or "stopping"
        elif kind == ev.Proposal.KIND and mirror.last_obs is not None and row["proposal_id"] in statuses:
            proposal = _propose(mirror, policy, row, statuses[row["proposal_id"]], stopping, decisions)
            if proposal is None:
                time.sleep(poll)  # the observer waits poll_interval_s after a step that sent nothing
        elif kind == ev.ActionAttempt.KIND and proposal is not None:
            att = mirror.intent(proposal)
            policy.attempted(att)
            out = actor.send_action(att["action"], att["parameters"], att["attempt_id"])
            policy.resulted(mirror.result(att["attempt_id"], out))
            proposal = None
    check_decisions(decisions)


def _propose(
    mirror: Mirror, policy: PolicyMirror, prow: dict, srow: dict, stopping: str | None, decisions: list[tuple]
) -> ev.Proposal | None:
    """Decide on the newest observation where the session did, record the decision's rows and
    keep it beside the session's for ``check_decisions``; return the proposal if it is to be
    executed."""
    mine, wish = policy.decide()
    status = disposition(wish, mine.reason, policy.dry_run, stopping)
    decisions.append((mine, status, prow, srow))
    mine, row = mirror.proposal(mine, dataclasses.replace(status, proposal_id=mine.proposal_id))
    policy.proposed(row)
    policy.disposed(status.status, mine.proposal_id)
    return mine if status.status == "execute" else None


def _read_identity(client: GameClient, state: dict) -> dict | None:
    if not run_identity.wants_identity(state):
        return None
    try:
        return run_identity.normalise(client.read_identity())
    except ReadFailed as exc:
        return {"status": "error", "error": str(exc)}


# -- the intent-acknowledgement probe --------------------------------------------------------
class AckProbe:
    """A real recorder process, with this object standing in for the supervisor's control
    endpoint (welcome, pings), and a request client over the recorder's real endpoint."""

    def __init__(self, workdir: str, profile: dict, heartbeat_s: float = 0.5):
        self.sock_dir = tempfile.mkdtemp(prefix="gr-ack-")  # short: unix socket paths are limited
        self.root = os.path.join(workdir, "capture")
        self.sid = "ackprobe-" + uuid.uuid4().hex[:12]
        self.endpoints = {n: f"ipc://{self.sock_dir}/{n}.sock" for n in ("control", "recorder")}
        self.profile = json.loads(json.dumps(profile))
        self.profile.setdefault("capture", {})["root"] = self.root
        self.hb = heartbeat_s
        self.zctx = zmq.Context()
        self.welcomed = threading.Event()
        self.done = threading.Event()
        self.log = open(os.path.join(workdir, "recorder.log"), "w", encoding="utf-8")
        env = dict(
            os.environ,
            GAMERIG_CONTROL=self.endpoints["control"],
            GAMERIG_SESSION=self.sid,
            GAMERIG_ACTOR="recorder",
            GAMERIG_START_COUNT="1",
        )
        env.pop("GAMERIG_PROFILE_DIR", None)
        self.thread = threading.Thread(target=self._control, daemon=True)
        self.thread.start()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "actors.recorder"], cwd=REPO, env=env, stdout=self.log, stderr=self.log
        )
        if not self.welcomed.wait(20):
            self.close()
            raise RuntimeError(f"the recorder sent no hello (see {self.log.name})")
        self.client = self.zctx.socket(zmq.DEALER)
        self.client.setsockopt(zmq.LINGER, 0)
        self.client.connect(self.endpoints["recorder"])
        self.standing = self.zctx.socket(zmq.DEALER)  # the actuator's standing intent
        self.standing.setsockopt(zmq.LINGER, 0)
        self.standing.connect(self.endpoints["recorder"])

    def _control(self) -> None:
        sock = self.zctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.bind(self.endpoints["control"])
        routing = None
        next_ping = 0.0
        while not self.done.is_set():
            if sock.poll(50):
                frames = sock.recv_multipart()
                env = protocol.decode(frames[-1])
                if isinstance(env.body, Hello):
                    routing = frames[:-1]
                    self._send(
                        sock,
                        routing,
                        Welcome(
                            actor="recorder",
                            session_id=self.sid,
                            session_dir=os.path.join(self.root, "sessions", self.sid),
                            capture_root=self.root,
                            endpoints=self.endpoints,
                            profile=self.profile,
                            heartbeat_s=self.hb,
                        ),
                    )
                    self.welcomed.set()
            if routing is not None and time.monotonic() >= next_ping:
                self._send(sock, routing, Ping())
                next_ping = time.monotonic() + self.hb
        if routing is not None:
            self._send(sock, routing, StopActor(reason="bench done"))
        sock.close(0)

    def _send(self, sock: zmq.Socket, routing: list[bytes], body) -> None:
        sock.send_multipart([*routing, protocol.encode(protocol.wrap(body, session=self.sid, sender="bench"))])

    def request(self, body, expect: type, wait_s: float = 30.0):
        env = protocol.wrap(body, session=self.sid, sender="bench-probe")
        self.client.send(protocol.encode(env))
        end = time.monotonic() + wait_s
        while time.monotonic() < end:
            if self.client.poll(int((end - time.monotonic()) * 1000) + 1):
                reply = protocol.decode(self.client.recv()).body
                if getattr(reply, "reply_to", None) == env.id:
                    if not isinstance(reply, expect):
                        raise RuntimeError(f"{body.TYPE}: the recorder answered {reply!r}")
                    return reply
        raise RuntimeError(f"{body.TYPE}: no reply from the recorder within {wait_s:g}s")

    def probe(self, states: list[dict], count: int) -> dict[str, list[float]]:
        """``count`` steps, each a fresh observation, an executable proposal, its intent and
        its result; every round trip (send → reply decoded) timed, in ms, by request type."""
        out: dict[str, list[float]] = {
            n: [] for n in ("store_observation", "record_proposal", "record_intent", "record_result", "await_intent")
        }
        for i in range(count):
            self._standing_step(out, states[i % len(states)])
            stored = self._timed(
                out,
                StoreObservation(read_id=uuid.uuid4().hex, state=states[i % len(states)], read_ms=0.0),
                ObservationStored,
            )
            pid = uuid.uuid4().hex
            self._timed(
                out,
                RecordProposal(
                    proposal_id=pid,
                    observation_id=stored.observation_id,
                    action="end_turn",
                    parameters={},
                    reason="ack probe",
                    source="bench",
                    wish="execute",
                ),
                ProposalRecorded,
            )
            ack = self._timed(out, RecordIntent(proposal_id=pid, requester="bench-probe"), IntentAck)
            self._timed(
                out,
                RecordResult(
                    attempt_id=ack.attempt_id,
                    outcome="accepted",
                    http_status=200,
                    response={"status": "ok"},
                    request_ms=0.0,
                ),
                Recorded,
            )
        return out

    def _standing_step(self, out: dict, state: dict) -> None:
        """One step as the pipeline takes it: a standing intent parked (``await_intent``, on
        a socket of its own, as the actuator's), then the proposal; timed from sending the
        proposal to the decoded ``intent_ack`` on the standing socket (the proposal's rows,
        the attempt row, their one fsync, the ack)."""
        stored = self.request(StoreObservation(read_id=uuid.uuid4().hex, state=state, read_ms=0.0), ObservationStored)
        env = protocol.wrap(
            AwaitIntent(requester="bench-standing", wait_ms=30_000), session=self.sid, sender="bench-actuator"
        )
        self.standing.send(protocol.encode(env))
        start = time.perf_counter()
        self.request(
            RecordProposal(
                proposal_id=uuid.uuid4().hex,
                observation_id=stored.observation_id,
                action="end_turn",
                parameters={},
                reason="ack probe",
                source="bench",
                wish="execute",
            ),
            ProposalRecorded,
        )
        if not self.standing.poll(30_000):
            raise RuntimeError("await_intent: no intent_ack within 30 s")
        ack = protocol.decode(self.standing.recv()).body
        if not isinstance(ack, IntentAck) or ack.reply_to != env.id:
            raise RuntimeError(f"await_intent: the recorder answered {ack!r}")
        out["await_intent"].append((time.perf_counter() - start) * 1000)
        self.request(
            RecordResult(
                attempt_id=ack.attempt_id,
                outcome="accepted",
                http_status=200,
                response={"status": "ok"},
                request_ms=0.0,
            ),
            Recorded,
        )

    def _timed(self, out: dict, body, expect: type):
        start = time.perf_counter()
        reply = self.request(body, expect)
        out[body.TYPE].append((time.perf_counter() - start) * 1000)
        return reply

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        if hasattr(self, "client"):
            self.client.close(0)
            self.standing.close(0)
        self.zctx.term()
        self.log.close()
        for name in os.listdir(self.sock_dir):
            os.unlink(os.path.join(self.sock_dir, name))
        os.rmdir(self.sock_dir)
