"""Answers: the envelope schema of a batch of questions, and parsing into ``Answer`` objects.

A call asks one or more questions of one kind. The model answers with one JSON object whose
properties ``q0``, ``q1``, ... each hold the answer to that question (so every question keeps
its own allowed choices in the schema)::

    {"q0": {"card_index": 2, "confidence": 0.8, "reason": "scales with strength"}}

``parse_answers(payload, questions, gate)`` validates the payload (``OffSchemaAnswer`` on any
problem) and returns one ``Answer`` per question. ``gated`` is ``confidence < gate``: the
default helper's gate, labelled by ``answer_gate_scope`` exactly as the evidence rules ask.
It says nothing about the gate a particular policy handler applies, and nothing about whether
the answer was right.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from .errors import OffSchemaAnswer, QuestionError
from .questions import Question
from .schema import check_schema, validate

ANSWER_GATE_SCOPE = "default_helper_not_policy_gate"


@dataclasses.dataclass(frozen=True)
class Answer:
    """One parsed answer. ``value`` holds the choice field(s), e.g. ``{"card_index": 2}``."""

    question_index: int
    kind: str
    choice_field: str
    value: dict
    confidence: float
    reason: str
    gated: bool

    @property
    def choice(self) -> Any:
        """The chosen value: a card/option/node index, ``None`` (skip), or a button list."""
        return self.value[self.choice_field]

    def to_record(self) -> dict:
        return {
            "question_index": self.question_index,
            "answer": dict(self.value),
            "confidence": self.confidence,
            "reason": self.reason,
            "gated": self.gated,
            "answer_gate_scope": ANSWER_GATE_SCOPE,
        }


def question_key(index: int) -> str:
    return f"q{index}"


def check_batch(questions: Sequence[Question]) -> str:
    """The batch's single kind; ``QuestionError`` for an empty or mixed batch."""
    if not questions:
        raise QuestionError("ask() needs at least one question")
    kinds = {getattr(q, "kind", None) for q in questions}
    if len(kinds) != 1 or not all(isinstance(q, Question) for q in questions):
        raise QuestionError(f"one call asks questions of one kind, got {sorted(map(str, kinds))}")
    return kinds.pop()


def envelope_schema(questions: Sequence[Question]) -> dict:
    """The schema of the whole reply: ``{"q0": answer0, "q1": answer1, ...}``."""
    properties = {question_key(i): q.answer_schema() for i, q in enumerate(questions)}
    schema = {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
    check_schema(schema)
    return schema


def parse_answers(payload: Any, questions: Sequence[Question], gate: float) -> list[Answer]:
    """Validate ``payload`` against the envelope and build the answers."""
    payload = _tolerate_bare_answer(payload, questions)
    problems = validate(payload, envelope_schema(questions))
    if problems:
        raise OffSchemaAnswer(problems)
    answers = []
    for index, question in enumerate(questions):
        item = payload[question_key(index)]
        value = {k: v for k, v in item.items() if k not in ("confidence", "reason")}
        confidence = float(item["confidence"])
        answers.append(
            Answer(index, question.kind, question.choice_field, value, confidence, item["reason"], confidence < gate)
        )
    return answers


def _tolerate_bare_answer(payload: Any, questions: Sequence[Question]) -> Any:
    """A single question answered without the ``q0`` wrapper is accepted as ``q0``."""
    if (
        len(questions) == 1
        and isinstance(payload, dict)
        and question_key(0) not in payload
        and questions[0].choice_field in payload
    ):
        return {question_key(0): payload}
    return payload
