"""Tolerant extraction of a JSON object from a model's free text.

Used for every answer (a server that accepted ``response_format`` may still wrap its JSON),
and the only parser when the server does not support structured output. In order it tries:

1. the whole text, after removing ``<think>...</think>`` reasoning blocks;
2. each fenced code block (```` ```json ... ``` ```` or a bare fence);
3. the first ``{`` from which a complete JSON object decodes (prose before and after is
   ignored).

It never guesses: text holding no complete JSON object raises ``MalformedAnswer``; the
schema check that follows decides whether the object is an answer. JSON is strict: ``NaN``
and ``Infinity`` (which Python's parser accepts) are not JSON, nor is nesting past the
parser's recursion limit.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import MalformedAnswer

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_MAX_STARTS = 200  # bound the work on long prose with many braces


def extract_json(text: str) -> Any:
    """The JSON object in ``text``; ``MalformedAnswer`` when there is none."""
    cleaned = _THINK.sub("", text).strip()
    found, value = _try_loads(cleaned)
    if found and isinstance(value, dict):
        return value
    for block in _FENCE.findall(cleaned):
        found, value = _try_loads(block.strip())
        if found and isinstance(value, dict):
            return value
    value = _first_embedded_object(cleaned)
    if value is not None:
        return value
    raise MalformedAnswer("no complete JSON object in the answer text", _excerpt(text))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _try_loads(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's limit
        return False, None


def _first_embedded_object(text: str) -> dict | None:
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    start = text.find("{")
    tries = 0
    while start != -1 and tries < _MAX_STARTS:
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
        tries += 1
    return None


def _excerpt(text: str) -> str:
    return text[:80]
