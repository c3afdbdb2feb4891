"""The OpenAI chat-completions wire format: request bodies out, completions in.

    build_body(config, questions, schema, structured)  the JSON body of one POST
    request_parameters(config, structured)              the parameters recorded as evidence
    parse_completion(data)                              a ``Completion`` from the reply JSON
    interpret(completion, questions, gate, max_tokens)  the answers, or a typed answer error

Only ``choices[0]`` is read. The order of checks in ``interpret`` is fixed: a ``refusal``
wins, then ``finish_reason == "length"`` (a truncated answer is never parsed, even if it
happens to be valid JSON), then the JSON extraction, then the schema.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from .answers import Answer, parse_answers
from .config import ModelConfig
from .errors import MalformedAnswer, RefusedAnswer, TruncatedAnswer
from .jsontext import extract_json
from .questions import Question

SYSTEM_PROMPT = (
    "You advise a bot that plays a game. Answer every question below. Reply with one JSON "
    "object and nothing else. It must match this JSON schema: {schema}\n"
    "Each answer's 'confidence' is your own estimate, from 0 to 1, that the choice is the "
    "best one; 'reason' is one short sentence."
)


@dataclasses.dataclass(frozen=True)
class Completion:
    """The parts of a chat-completions reply the client uses."""

    content: str | None
    refusal: str | None
    finish_reason: str | None
    usage: dict  # prompt_tokens, completion_tokens, total_tokens, cached_tokens (as reported or None), model

    def billed_tokens(self) -> int:
        """Tokens to charge to the budget: the reported total, else prompt + completion."""
        total = self.usage.get("total_tokens")
        if isinstance(total, int):
            return total
        parts = [self.usage.get(k) for k in ("prompt_tokens", "completion_tokens")]
        return sum(p for p in parts if isinstance(p, int))


def build_body(config: ModelConfig, questions: Sequence[Question], schema: dict, structured: bool) -> dict:
    body: dict[str, Any] = {
        "model": config.model,
        "messages": [
            {
                "role": "system",
                "content": (questions[0].system or SYSTEM_PROMPT).format(schema=json.dumps(schema, sort_keys=True)),
            },
            {"role": "user", "content": _user_content(questions)},
        ],
        config.max_tokens_param: config.max_output_tokens,
    }
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if structured:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": f"{questions[0].kind}_answers", "strict": True, "schema": schema},
        }
    return body


def request_parameters(config: ModelConfig, structured: bool) -> dict:
    return {
        "temperature": config.temperature,
        config.max_tokens_param: config.max_output_tokens,
        "response_format": "json_schema" if structured else "none (text parsed)",
        "structured_setting": config.structured,
        "vision": config.vision,
        "timeout_s": config.timeout_s,
    }


def _user_content(questions: Sequence[Question]) -> str | list:
    texts = [f"Question q{i}:\n{q.prompt()}" for i, q in enumerate(questions)]
    if not any(q.images() for q in questions):
        return "\n\n".join(texts)
    parts: list[dict] = []
    for text, question in zip(texts, questions):
        parts.append({"type": "text", "text": text})
        for png in question.images():
            url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def parse_completion(data: Any) -> Completion:
    """Read a chat-completions reply; ``MalformedAnswer`` when it is not one."""
    try:
        choice = data["choices"][0]
        message = choice["message"]
        if not isinstance(message, dict):
            raise TypeError("message is not an object")
    except (KeyError, IndexError, TypeError) as exc:
        raise MalformedAnswer(
            f"reply is not a chat completion ({exc!r})", json.dumps(data)[:80] if _jsonable(data) else ""
        ) from None
    content, refusal = message.get("content"), message.get("refusal")
    usage_in = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    usage = {
        k: usage_in.get(k) if isinstance(usage_in.get(k), int) else None
        for k in ("prompt_tokens", "completion_tokens", "total_tokens")
    }
    usage["cached_tokens"] = _cached_tokens(usage_in)
    usage["model"] = data.get("model") if isinstance(data.get("model"), str) else None
    return Completion(
        content=_content_text(content),
        refusal=refusal if isinstance(refusal, str) and refusal else None,
        finish_reason=choice.get("finish_reason") if isinstance(choice, dict) else None,
        usage=usage,
    )


def _cached_tokens(usage: dict) -> int | None:
    """``usage.prompt_tokens_details.cached_tokens``: the prompt tokens served from the
    server's prompt cache, part of ``prompt_tokens``; None when not reported. The shape is
    openai-python's ``CompletionUsage.prompt_tokens_details: Optional[PromptTokensDetails]``
    with ``PromptTokensDetails.cached_tokens: Optional[int]`` ("Cached tokens present in the
    prompt", src/openai/types/completion_usage.py)."""
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return cached if isinstance(cached, int) and not isinstance(cached, bool) and cached >= 0 else None


def interpret(completion: Completion, questions: Sequence[Question], gate: float, max_tokens: int) -> list[Answer]:
    if completion.refusal is not None:
        raise RefusedAnswer(completion.refusal)
    if completion.finish_reason == "length":
        raise TruncatedAnswer(max_tokens)
    if completion.content is None or not completion.content.strip():
        raise MalformedAnswer("the answer has no text content")
    return parse_answers(extract_json(completion.content), questions, gate)


def _content_text(content: Any) -> str | None:
    """``content`` as text: a string, or the text parts of a content array."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(t for t in texts if isinstance(t, str)) or None
    return None


def _jsonable(data: Any) -> bool:
    try:
        json.dumps(data)
        return True
    except (TypeError, ValueError):
        return False
