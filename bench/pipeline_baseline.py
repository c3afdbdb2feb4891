"""The in-process baseline of ``bench/pipeline.py`` (and ``GameServer``, the built-in game as its
own server, which other benches use too).

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

The per-step work is ``bench/baseline_mirror.py``'s (``Mirror``, ``PolicyMirror``): the
recorder's own writer (``JournalWriter``) writes the rows, with the recorder's own file
helpers (``actors/recorder/files.py``: ``write_observation``, ``make_durable``,
``append_feed``) and the observer's run-identity rule (``actors/identity.py``): the same code,
so the baseline's work cannot drift from the pipeline's; the policy is the session's own
class (``actors/policy/registry.py``), used through its public hooks. A profile with a model
configured is refused: the baseline has no model-client actor to replay its advice.
Pauses mirror the observer's: after a step that sent nothing it waits ``game.poll_interval_s``
before the next read, after a failed read ``min(2, poll * 2**errors)``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from baseline_mirror import Mirror, PolicyMirror, disposition  # noqa: E402

import protocol.events as ev  # noqa: E402
from actors import identity as run_identity  # noqa: E402
from actors.sts2mcp import GameClient, ReadFailed  # noqa: E402
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
class DecisionMismatch(RuntimeError):
    """The baseline's policy decided otherwise than the session's policy on the same state."""


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
