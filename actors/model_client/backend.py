"""The interface every model backend offers, and the result of a successful call.

    ModelBackend   ask(questions) -> ModelAnswer   (raises ModelError)
                   usage() -> dict                  (the session's UsageTotals)
                   close()
    ModelAnswer    answers (one Answer per question) + evidence (the dict to record)

``ModelClient`` (HTTP) and ``ReplayBackend`` (answers from an earlier capture) implement
it, so a policy cannot tell which one it is talking to except by ``evidence["backend"]``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

from .answers import Answer
from .questions import Question


@dataclasses.dataclass(frozen=True)
class ModelAnswer:
    """A successful call: the parsed answers and the evidence dict to store with the proposal."""

    answers: tuple[Answer, ...]
    evidence: dict

    @property
    def answer(self) -> Answer:
        """The first (for a one-question call, the only) answer."""
        return self.answers[0]


class ModelBackend(Protocol):
    def ask(self, questions: Sequence[Question]) -> ModelAnswer: ...

    def usage(self) -> dict: ...

    def close(self) -> None: ...
