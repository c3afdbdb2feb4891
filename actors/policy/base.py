"""The policy interface: what a user's own policy implements.

A policy is a class with this shape (see ``docs/policy.md`` for a whole example)::

    class MyPolicy(Policy):
        def decide(self, obs: PolicyObservation) -> Proposal: ...

The policy actor calls, in journal order:

* ``observe(obs)``     for every observation (reconcile memory with fresh evidence);
* ``decide(obs)``      for the newest observation that has no proposal yet — return a
                       ``Proposal``; it is only a proposal: the pipeline executes it unless
                       the session is a dry run or the proposal is a wait/suppressed one;
* ``record_result(proposal, result)`` with the recorded ``action_result`` row of an attempt
  made for one of its proposals (``result["outcome"]`` is accepted, rejected or unknown);
* ``record_proposal(proposal)`` with each recorded ``proposal`` row of its own.

**Pipelined steps.** ``pipeline_depth(obs)`` says how many executable proposals may be in
flight (decided, not yet resulted) at once. The default, 1, is the one-step-at-a-time loop:
every decision waits for a fresh observation taken after the previous result. A policy whose
decisions do not depend on what it observes (seeded exploration, a script of inputs) may
return more: the actor then calls ``decide`` again on the same newest observation while
fewer than that many of its proposals await a result, and each such proposal row records
``pipeline_depth`` and ``decided_ahead`` (how many proposals were already made on that
observation) — the journal never pretends such a decision saw a fresher state.

After a restart the actor replays the session's journal through ``observe`` and
``record_result`` before deciding again, so a policy that keeps its memory only through these
calls survives its own crash.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any


@dataclasses.dataclass(frozen=True)
class PolicyObservation:
    """An observation as a policy is handed it: the journal's ``observation`` row with the
    parsed state read back from its observation file."""

    observation_id: str
    step: int
    phase: str
    state: dict
    row: dict  # the journal row (after_attempt_id, sha256, ...)

    @property
    def state_type(self) -> str | None:
        return self.state.get("state_type")


@dataclasses.dataclass
class Proposal:
    action: str | None
    parameters: dict = dataclasses.field(default_factory=dict)
    reason: str = ""
    wish: str = "execute"  # execute | wait | suppressed | stop
    source: str = "policy"
    then_stop: str | None = None  # end the session with this reason after the result
    extra: dict = dataclasses.field(default_factory=dict)  # more fields for the proposal row
    model_evidence: list | None = None

    @classmethod
    def wait(cls, reason: str, **kw: Any) -> Proposal:
        return cls(None, {}, reason, wish="wait", **kw)

    @classmethod
    def stop(cls, reason: str, **kw: Any) -> Proposal:
        return cls(None, {}, reason, wish="stop", **kw)


class Policy:
    """Base class; override ``decide`` and, if the policy keeps memory, the other hooks."""

    def __init__(self, settings: dict, session: dict):
        self.settings = settings
        self.session = session  # the profile's ``session`` section (dry_run, stop_on_run_end, ...)

    def observe(self, obs: PolicyObservation) -> None:
        pass

    def decide(self, obs: PolicyObservation) -> Proposal:
        raise NotImplementedError

    def record_result(self, proposal: dict, result: dict) -> None:
        pass

    def record_proposal(self, proposal: dict) -> None:
        pass

    def pipeline_depth(self, obs: PolicyObservation) -> int:
        return 1


def __getattr__(name: str) -> Any:
    """``Observation``, the name ``PolicyObservation`` had: a policy written against it still
    loads, with a ``DeprecationWarning`` saying the name to use."""
    if name == "Observation":
        warnings.warn(
            "actors.policy.base.Observation is now PolicyObservation (the journal's observation event "
            "is protocol.events.Observation)",
            DeprecationWarning,
            stacklevel=2,
        )
        return PolicyObservation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
