"""What every agent policy shares: its settings, its prompt template, its memory of the run,
and asking until the model's answer can be used.

``policy.settings`` of an agent policy (checked when the policy is built and by ``supervisor
validate``; an error names the key):

    prompt_template   a template file (``string.Template``: ``$screen``, ``$actions`` ...;
                      ``actors.model_client.questions.TEMPLATE_PLACEHOLDERS``), relative to the
                      directory the supervisor runs in; null: the built-in one
    memory            how many of the run's last actions the question shows (0..200, default 8)
    invalid_retries   how often a decision asks again after an answer it cannot use (0..10,
                      default 2)
    fallback          ``heuristic`` (default: the built-in policy's choice) or ``wait`` (nothing
                      is sent; the next read asks again)

``ask(advisor, kind, build, use, retries)`` asks one decision's question, and asks again with
the reason in the question's ``feedback`` while the answer cannot be used: not JSON, not in the
schema, an index the screen does not list (``model_error`` rows, recorded by the advisor), or an
answer the screen's own checks or the guards refuse (kept in the decision's evidence). A failure
that asking again cannot mend (a timeout, a refused connection, a spent budget) ends the asking
at once. Nothing it was not sure of is ever sent: the caller proposes ``chosen`` or falls back.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import os
from collections.abc import Callable
from typing import Any

from actors.model_client.errors import ANSWERED_KINDS
from actors.model_client.questions import template_problem

from .base import Proposal

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "prompts")
#: kinds of ``model_error`` that asking again, with the reason, may mend: the model answered
RETRYABLE = ANSWERED_KINDS
FALLBACKS = ("heuristic", "wait")
AGENT_KEYS = {"prompt_template", "memory", "invalid_retries", "fallback"}


class AgentSettingError(ValueError):
    """A bad agent setting; the message starts with ``policy.settings.<key>``."""


@dataclasses.dataclass(frozen=True)
class Template:
    name: str
    sha256: str
    text: str

    def question_field(self) -> dict:
        return {"name": self.name, "sha256": self.sha256, "text": self.text}

    def record(self) -> dict:
        return {"name": self.name, "sha256": self.sha256}


def load_template(path: str | None, builtin: str) -> Template:
    """The template at ``path`` (or the built-in file ``builtin``); ``AgentSettingError``
    naming ``policy.settings.prompt_template`` when it is missing, unreadable or does not render."""
    key = "policy.settings.prompt_template"
    name = path if path is not None else f"builtin:{builtin}"
    file = path if path is not None else os.path.join(TEMPLATE_DIR, builtin)
    try:
        with open(file, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise AgentSettingError(f"{key}: no such file {path!r}") from None
    except OSError as exc:
        raise AgentSettingError(f"{key}: {path!r} cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentSettingError(f"{key}: {path!r} is not UTF-8 text (byte {exc.start})") from None
    problem = template_problem(text)
    if problem:
        raise AgentSettingError(f"{key}: {name!r} {problem}")
    return Template(name, hashlib.sha256(raw).hexdigest(), text)


def read_agent_settings(settings: dict, builtin: str) -> dict:
    """The agent keys of ``settings`` with defaults, the template loaded (``template``)."""
    asking = read_asking_settings(settings)
    path = settings.get("prompt_template")
    if path is not None and (not isinstance(path, str) or not path):
        raise AgentSettingError(f"policy.settings.prompt_template: expected a file path, got {path!r}")
    return {**asking, "prompt_template": path, "template": load_template(path, builtin)}


def read_asking_settings(settings: dict) -> dict:
    """``memory``, ``invalid_retries`` and ``fallback`` with their defaults: what every agent
    reads, whether or not its question takes a template."""

    def whole(key: str, default: int, high: int) -> int:
        value = settings.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
            raise AgentSettingError(f"policy.settings.{key}: expected a whole number 0..{high}, got {value!r}")
        return value

    fallback = settings.get("fallback", "heuristic")
    if fallback not in FALLBACKS:
        raise AgentSettingError(f"policy.settings.fallback: expected one of {', '.join(FALLBACKS)}, got {fallback!r}")
    return {"memory": whole("memory", 8, 200), "invalid_retries": whole("invalid_retries", 2, 10), "fallback": fallback}


class Memory:
    """The run's last actions with their results and what changed, newest last, bounded.

    Fed in journal order (so a restarted policy rebuilds it): ``record_result`` notes an
    executed action and its result, with the summary of the screen it acted on; the next
    ``observe`` whose summary differs says what changed. ``clear`` at a run's start."""

    def __init__(self, size: int, summarize: Callable[[dict], dict], compare: Callable[[dict, dict], str]):
        self.entries: collections.deque = collections.deque(maxlen=max(size, 1))
        self.size = size
        self.summarize, self.compare = summarize, compare
        self.now: dict = {}
        self.open: dict | None = None  # the newest entry, still waiting for a change

    def clear(self) -> None:
        self.entries.clear()
        self.open = None

    def observe(self, state: dict) -> None:
        self.now = self.summarize(state)
        if self.open is not None and self.now != self.open["_before"]:
            self.open["changed"] = self.compare(self.open.pop("_before"), self.now)
            self.open = None

    def record_result(self, screen: Any, action: str, params: dict, outcome: str, error: str = "") -> None:
        if self.open is not None:
            self.open.pop("_before", None)
            self.open["changed"] = "no visible change"
        entry = {"screen": screen, "action": action, "args": params, "result": outcome, "_before": dict(self.now)}
        if error:
            entry["error"] = error[:200]
        self.entries.append(entry)
        self.open = entry

    def lines(self) -> list[str]:
        """The entries as the question shows them (oldest first)."""
        if self.size == 0:
            return []
        out = []
        for e in self.entries:
            args = ", ".join(f"{k}={v}" for k, v in e["args"].items())
            text = f"{e['screen']}: {e['action']}({args}) -> {e['result']}"
            if e.get("error"):
                text += f" ({e['error']})"
            text += f"; changed: {e.get('changed', 'not seen yet')}"
            out.append(text)
        return out


@dataclasses.dataclass
class Decision:
    """One decision's asking: the proposal it chose (None: fall back), the evidence of every
    answered call, and one record per call (``agent.attempts`` on the proposal row)."""

    chosen: Proposal | None = None
    evidence: list = dataclasses.field(default_factory=list)
    attempts: list = dataclasses.field(default_factory=list)
    why_not: str = ""


def ask(
    advisor,
    kind: str,
    build: Callable[[list[str]], dict],
    use: Callable[[dict], tuple[Proposal | None, str | None]],
    retries: int,
    observation_id: str | None,
) -> Decision:
    """Ask until an answer can be used, at most ``1 + retries`` times (module docstring).
    ``build(feedback)`` makes the question; ``use(answer)`` turns an answer into a proposal
    or says why it cannot be sent."""
    out = Decision()
    feedback: list[str] = []
    for _ in range(1 + retries):
        advice = advisor.ask(kind, build(list(feedback)), observation_id)
        if not advice.ok:
            error = advice.error
            out.attempts.append({"outcome": "error", "error_kind": error.get("kind"), "call_id": error.get("call_id")})
            out.why_not = f"{error.get('kind')}: {str(error.get('message') or '')[:300]}"
            if error.get("kind") not in RETRYABLE:
                break
            feedback.append(_plain(str(error.get("message") or error.get("kind"))))
            continue
        out.evidence.append(advice.evidence)
        call_id = (advice.evidence or {}).get("call_id")
        proposal, problem = use(dict(advice.answer.get("answer") or {}))
        if proposal is not None:
            proposal.reason = proposal.reason or str(advice.answer.get("reason") or "")
            out.attempts.append({"outcome": "used", "call_id": call_id})
            out.chosen = proposal
            return out
        out.attempts.append({"outcome": "not_usable", "problem": problem, "call_id": call_id})
        out.why_not = f"not usable: {problem}"
        feedback.append(problem)
    return out


def _plain(message: str) -> str:
    """A model client's message as feedback for the model (its question wrapper left out)."""
    return message.replace("$.q0.", "").replace("$.q0", "the answer")


__all__ = [
    "AgentSettingError",
    "Template",
    "load_template",
    "read_agent_settings",
    "read_asking_settings",
    "Memory",
    "Decision",
    "ask",
    "RETRYABLE",
    "AGENT_KEYS",
]
