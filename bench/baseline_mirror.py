"""The pipeline's per-step work done in one process, for ``bench/pipeline_baseline.py``'s replay:
the recorder's writes (``Mirror``: the observation file and its fsyncs, the observation,
run-identity, proposal, status, attempt and result rows, the ``decisions.jsonl`` feed line),
the policy actor's work (``PolicyMirror``: the session's policy built from its profile and fed
every row through the actor's hooks), and the recorder's disposition of a proposal
(``disposition``). Each uses the actors' own code, so the baseline's work cannot drift from
the pipeline's."""

from __future__ import annotations

import dataclasses
import os
import uuid

import protocol.events as ev
from actors.policy.advice import Advisor
from actors.policy.base import PolicyObservation
from actors.policy.driving import ProposalBook, decide
from actors.policy.registry import load_policy_class
from actors.recorder.files import append_feed, make_durable, write_observation
from actors.recorder.rules import disposition as recorder_disposition
from actors.recorder.writer import JournalWriter
from supervisor.profile import get as profile_get


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
