"""Typed questions a policy can ask, each with the JSON schema of its answer.

    CardRewardQuestion   which offered card to take (or skip), given the cards and evidence
    EventOptionQuestion  which event option to choose
    MapNodeQuestion      which of the map's next nodes to travel to
    ButtonsQuestion      which Game Boy buttons to press next, given a PNG screenshot
    AgentActionQuestion  which of a screen's legal actions to take (the agent policy's question)

Every question is a frozen dataclass with:

* ``kind`` — the stable name recorded in evidence (``QUESTION_KINDS`` maps kind → class);
* ``state()`` — the JSON-ready form recorded in evidence and hashed for replay (a screenshot
  appears as its SHA-256 and size, never as bytes);
* ``answer_schema()`` — the schema of one answer: the choice field plus ``confidence``
  (0..1, the model's own statement) and ``reason``;
* ``prompt()`` and ``images()`` — what the model is shown.

``build_questions(kind, items, images)`` builds questions from plain mappings (as they
arrive in a message). Constructors copy their inputs through JSON, so a question cannot change after it is asked
and carries nothing a capture could not store. A question that cannot be answered (no
options, a PNG that is not a PNG) raises ``QuestionError`` at construction.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import string
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .errors import QuestionError

GAMEBOY_BUTTONS = ("a", "b", "start", "select", "up", "down", "left", "right")
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

#: kind → question class, filled by ``Question.__init_subclass__``.
QUESTION_KINDS: dict[str, type[Question]] = {}


def _json_copy(value: Any, what: str) -> Any:
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise QuestionError(f"{what} must be JSON-serializable: {exc}") from exc


def _indexed(options: Sequence[Mapping], what: str) -> tuple[dict, ...]:
    """Copy ``options``; each gets an integer ``index`` (its own, else its position)."""
    if not options:
        raise QuestionError(f"{what}: at least one option is needed")
    copied = []
    for position, option in enumerate(options):
        if not isinstance(option, Mapping):
            raise QuestionError(f"{what}[{position}] must be a mapping, got {type(option).__name__}")
        item = _json_copy(dict(option), f"{what}[{position}]")
        item.setdefault("index", position)
        if isinstance(item["index"], bool) or not isinstance(item["index"], int):
            raise QuestionError(f"{what}[{position}].index must be an integer, got {item['index']!r}")
        copied.append(item)
    indices = [item["index"] for item in copied]
    if len(set(indices)) != len(indices):
        raise QuestionError(f"{what}: duplicate indices {indices}")
    return tuple(copied)


def _common_answer(choice_name: str, choice_schema: dict) -> dict:
    return {
        "type": "object",
        "properties": {
            choice_name: choice_schema,
            "confidence": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "your confidence that this choice is best, 0..1",
            },
            "reason": {"type": "string", "description": "one short sentence"},
        },
        "required": [choice_name, "confidence", "reason"],
        "additionalProperties": False,
    }


def _render(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclasses.dataclass(frozen=True)
class Question:
    """Base of all question kinds; see the module docstring for the contract."""

    kind: ClassVar[str] = ""
    choice_field: ClassVar[str] = ""
    #: the system message (``{schema}`` is replaced by the reply's schema); None: the default
    system: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.kind:
            QUESTION_KINDS[cls.kind] = cls

    def state(self) -> dict:
        raise NotImplementedError

    def answer_schema(self) -> dict:
        raise NotImplementedError

    def prompt(self) -> str:
        raise NotImplementedError

    def images(self) -> tuple[bytes, ...]:
        return ()

    @classmethod
    def from_item(cls, item: Mapping, images: Sequence[bytes], position: int) -> Question:
        """Build from a plain mapping of constructor fields (e.g. off the wire)."""
        if not isinstance(item, Mapping):
            raise QuestionError(f"{cls.kind} question {position} must be a mapping, got {type(item).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(item) - names)
        if unknown:
            raise QuestionError(f"{cls.kind} question {position}: unknown fields {unknown} (known: {sorted(names)})")
        try:
            return cls(**item)
        except TypeError as exc:
            raise QuestionError(f"{cls.kind} question {position}: {exc}") from exc


def build_questions(kind: str, items: Sequence[Mapping], images: Sequence[bytes] = ()) -> list[Question]:
    """Questions of ``kind`` from plain mappings; ``QuestionError`` names what is wrong.

    A ``buttons`` item takes its screenshot from ``images[item["image"]]`` (default: the
    image at the item's own position), so PNG bytes can travel beside JSON-like items.
    """
    cls = QUESTION_KINDS.get(kind)
    if cls is None:
        raise QuestionError(f"unknown question kind {kind!r} (known: {sorted(QUESTION_KINDS)})")
    return [cls.from_item(item, images, i) for i, item in enumerate(items)]


@dataclasses.dataclass(frozen=True)
class CardRewardQuestion(Question):
    """Which card reward to take. ``cards`` are the offered cards (STS2MCP card objects,
    ``index`` included); ``evidence`` is whatever the policy knows (deck, relics, HP...)."""

    kind: ClassVar[str] = "card_reward"
    choice_field: ClassVar[str] = "card_index"
    cards: tuple = ()
    evidence: Any = None
    can_skip: bool = True

    def __post_init__(self):
        object.__setattr__(self, "cards", _indexed(self.cards, "cards"))
        object.__setattr__(self, "evidence", _json_copy(self.evidence, "evidence"))

    def state(self) -> dict:
        return {"cards": list(self.cards), "evidence": self.evidence, "can_skip": self.can_skip}

    def answer_schema(self) -> dict:
        allowed: list = [card["index"] for card in self.cards]
        types = ["integer", "null"] if self.can_skip else "integer"
        if self.can_skip:
            allowed.append(None)
        return _common_answer("card_index", {"type": types, "enum": allowed})

    def prompt(self) -> str:
        skip = " or null to skip the reward" if self.can_skip else ""
        return (
            f"Card reward: choose the card to add to the deck.\nCards offered: "
            f"{_render(list(self.cards))}\nEvidence: {_render(self.evidence)}\n"
            f"Answer card_index with the index of the card{skip}."
        )


@dataclasses.dataclass(frozen=True)
class EventOptionQuestion(Question):
    """Which event option to choose. Options marked ``is_locked``/``locked`` are shown but
    cannot be chosen."""

    kind: ClassVar[str] = "event_option"
    choice_field: ClassVar[str] = "option_index"
    options: tuple = ()
    event: Any = None

    def __post_init__(self):
        object.__setattr__(self, "options", _indexed(self.options, "options"))
        object.__setattr__(self, "event", _json_copy(self.event, "event"))
        if not self.allowed():
            raise QuestionError("options: every event option is locked")

    def allowed(self) -> list[int]:
        return [o["index"] for o in self.options if not (o.get("is_locked") or o.get("locked"))]

    def state(self) -> dict:
        return {"options": list(self.options), "event": self.event}

    def answer_schema(self) -> dict:
        return _common_answer("option_index", {"type": "integer", "enum": self.allowed()})

    def prompt(self) -> str:
        return (
            f"Event: choose an option.\nEvent: {_render(self.event)}\nOptions: "
            f"{_render(list(self.options))}\nAnswer option_index with the index of an "
            f"option that is not locked."
        )


@dataclasses.dataclass(frozen=True)
class MapNodeQuestion(Question):
    """Which map node to travel to; ``next_options`` as in the STS2MCP ``map`` block."""

    kind: ClassVar[str] = "map_node"
    choice_field: ClassVar[str] = "node_index"
    next_options: tuple = ()
    context: Any = None

    def __post_init__(self):
        object.__setattr__(self, "next_options", _indexed(self.next_options, "next_options"))
        object.__setattr__(self, "context", _json_copy(self.context, "context"))

    def state(self) -> dict:
        return {"next_options": list(self.next_options), "context": self.context}

    def answer_schema(self) -> dict:
        return _common_answer("node_index", {"type": "integer", "enum": [o["index"] for o in self.next_options]})

    def prompt(self) -> str:
        return (
            f"Map: choose the next node.\nNext options: {_render(list(self.next_options))}"
            f"\nContext: {_render(self.context)}\nAnswer node_index with the index of one "
            f"next option."
        )


@dataclasses.dataclass(frozen=True)
class ButtonsQuestion(Question):
    """Which Game Boy buttons to press next (in order), given a PNG screenshot.

    ``memory`` is the last presses with their results and what they changed, oldest first,
    and ``feedback`` why earlier answers to this decision could not be used (the Game Boy
    agent's, ``actors.policy.pyboy_llm``); both are text, shown in the prompt and recorded in
    the state. The prompt's wording is ``PROMPT`` (its SHA-256 names it in an agent's records).
    """

    kind: ClassVar[str] = "buttons"
    choice_field: ClassVar[str] = "buttons"
    PROMPT: ClassVar[str] = (
        "Game Boy: the attached image is the current screen.\nGoal: {goal}\n"
        "Context: {context}\nYour last presses, oldest first, and what they changed:\n{memory}\n"
        "{feedback}Answer buttons with 1 to {max_presses} presses, in order, from {buttons}."
    )
    screenshot_png: bytes = dataclasses.field(default=b"", repr=False)
    goal: str = ""
    buttons: tuple = GAMEBOY_BUTTONS
    max_presses: int = 4
    context: Any = None
    memory: tuple = ()
    feedback: tuple = ()

    def __post_init__(self):
        if not isinstance(self.screenshot_png, bytes) or not self.screenshot_png.startswith(_PNG_MAGIC):
            raise QuestionError("screenshot_png must be the bytes of a PNG image")
        unknown = [b for b in self.buttons if b not in GAMEBOY_BUTTONS]
        if unknown or not self.buttons:
            raise QuestionError(f"buttons must be a non-empty subset of {GAMEBOY_BUTTONS}, got {list(self.buttons)}")
        if isinstance(self.max_presses, bool) or not isinstance(self.max_presses, int) or self.max_presses < 1:
            raise QuestionError(f"max_presses must be an integer >= 1, got {self.max_presses!r}")
        for name in ("memory", "feedback"):
            value = getattr(self, name)
            if (
                isinstance(value, (str, bytes))
                or not isinstance(value, Sequence)
                or not all(isinstance(line, str) for line in value)
            ):
                raise QuestionError(f"{name} must be a list of text lines, got {value!r}"[:200])
            object.__setattr__(self, name, tuple(value))
        object.__setattr__(self, "buttons", tuple(self.buttons))
        object.__setattr__(self, "context", _json_copy(self.context, "context"))

    def state(self) -> dict:
        return {
            "screenshot": {
                "sha256": hashlib.sha256(self.screenshot_png).hexdigest(),
                "bytes": len(self.screenshot_png),
                "media_type": "image/png",
            },
            "goal": self.goal,
            "buttons": list(self.buttons),
            "max_presses": self.max_presses,
            "context": self.context,
            "memory": list(self.memory),
            "feedback": list(self.feedback),
        }

    def answer_schema(self) -> dict:
        return _common_answer(
            "buttons",
            {
                "type": "array",
                "items": {"type": "string", "enum": list(self.buttons)},
                "minItems": 1,
                "maxItems": self.max_presses,
            },
        )

    def prompt(self) -> str:
        memory = "\n".join(f"- {line}" for line in self.memory) or "(none yet)"
        feedback = (
            (
                "Your previous answer could not be used:\n"
                + "\n".join(f"- {f}" for f in self.feedback)
                + "\nChoose again.\n"
            )
            if self.feedback
            else ""
        )
        return self.PROMPT.format(
            goal=self.goal,
            context=_render(self.context),
            memory=memory,
            feedback=feedback,
            max_presses=self.max_presses,
            buttons=list(self.buttons),
        )

    def images(self) -> tuple[bytes, ...]:
        return (self.screenshot_png,)

    @classmethod
    def from_item(cls, item: Mapping, images: Sequence[bytes], position: int) -> Question:
        fields = dict(item) if isinstance(item, Mapping) else item
        if isinstance(fields, dict) and "screenshot_png" not in fields:
            index = fields.pop("image", position)
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(images):
                raise QuestionError(f"buttons question {position}: no image {index!r} among {len(images)} images")
            fields["screenshot_png"] = bytes(images[index])
        return super().from_item(fields, images, position)


#: the placeholders an agent prompt template may use (``string.Template`` syntax: ``$screen``)
TEMPLATE_PLACEHOLDERS = ("screen_type", "screen", "memory", "actions", "feedback")


def template_problem(text: Any) -> str | None:
    """Why ``text`` cannot be an agent prompt template, or None: not text, a ``$`` that is no
    placeholder (write ``$$`` for a dollar sign), or a placeholder that is not one of
    ``TEMPLATE_PLACEHOLDERS``."""
    if not isinstance(text, str) or not text.strip():
        return "the template is empty"
    template = string.Template(text)
    if not template.is_valid():
        try:
            template.substitute(dict.fromkeys(TEMPLATE_PLACEHOLDERS, ""))
        except ValueError as exc:
            return f"does not render: {exc} (write $$ for a dollar sign)"
    unknown = [n for n in template.get_identifiers() if n not in TEMPLATE_PLACEHOLDERS]
    if unknown:
        return (
            f"does not render: unknown placeholder ${unknown[0]} "
            f"(known: {', '.join('$' + n for n in TEMPLATE_PLACEHOLDERS)})"
        )
    return None


def _value_schema(values: list) -> dict:
    kinds = sorted({"integer" if isinstance(v, int) and not isinstance(v, bool) else "string" for v in values})
    return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": list(values)}


@dataclasses.dataclass(frozen=True)
class AgentActionQuestion(Question):
    """Which of the screen's legal actions to take: the agent policy's question.

    ``actions`` lists the legal action kinds, each ``{"action": name, "args": {arg: [allowed
    values]}, "about": text}`` (an action may appear more than once with other arguments,
    e.g. cards that take a target and cards that do not); the answer's schema is one
    alternative per entry (``anyOf``), each naming its action and limiting every argument to
    the listed values. ``screen`` is the screen as text, ``memory`` the last actions of the run
    with their results, ``feedback`` why earlier answers to this decision were not used, and
    ``template`` the prompt template ``{"name", "sha256", "text"}`` (``TEMPLATE_PLACEHOLDERS``).
    The recorded state names the template by name and hash, not by its text.
    """

    kind: ClassVar[str] = "agent_action"
    choice_field: ClassVar[str] = "action"
    system: ClassVar[str | None] = (
        "You play a game: each question shows the current screen and the actions it allows. "
        "Reply with one JSON object and nothing else. It must match this JSON schema: {schema}\n"
        "'confidence' is your own estimate, from 0 to 1, that the action is the best one; "
        "'reason' is one short sentence."
    )
    screen: str = ""
    screen_type: str = ""
    actions: tuple = ()
    memory: tuple = ()
    feedback: tuple = ()
    template: Any = None

    def __post_init__(self):
        if not isinstance(self.screen, str) or not isinstance(self.screen_type, str):
            raise QuestionError("screen and screen_type must be text")
        actions = _json_copy(list(self.actions), "actions")
        if not actions:
            raise QuestionError("actions: at least one legal action is needed")
        for i, entry in enumerate(actions):
            if not isinstance(entry, dict) or not isinstance(entry.get("action"), str) or not entry["action"]:
                raise QuestionError(f"actions[{i}] must be a mapping with an action name")
            args = entry.setdefault("args", {})
            if not isinstance(args, dict) or any(not isinstance(v, list) or not v for v in args.values()):
                raise QuestionError(f"actions[{i}].args must map each argument to a non-empty list of allowed values")
            if set(args) & {"action", "confidence", "reason"}:
                raise QuestionError(f"actions[{i}].args: an argument cannot be named action, confidence or reason")
        object.__setattr__(self, "actions", tuple(actions))
        object.__setattr__(self, "memory", tuple(_json_copy(list(self.memory), "memory")))
        object.__setattr__(self, "feedback", tuple(str(f) for f in self.feedback))
        template = self.template
        if not isinstance(template, Mapping) or not isinstance(template.get("name"), str):
            raise QuestionError("template must be {name, sha256, text}")
        problem = template_problem(template.get("text"))
        if problem:
            raise QuestionError(f"template {template['name']!r}: {problem}")
        object.__setattr__(self, "template", _json_copy(dict(template), "template"))

    def state(self) -> dict:
        return {
            "screen_type": self.screen_type,
            "screen": self.screen,
            "actions": list(self.actions),
            "memory": list(self.memory),
            "feedback": list(self.feedback),
            "template": {"name": self.template["name"], "sha256": self.template.get("sha256")},
        }

    def answer_schema(self) -> dict:
        options = []
        for entry in self.actions:
            props = {"action": {"type": "string", "enum": [entry["action"]]}}
            props.update({name: _value_schema(values) for name, values in entry["args"].items()})
            answer = _common_answer("action", props["action"])
            answer["properties"] = {**props, **{k: v for k, v in answer["properties"].items() if k != "action"}}
            answer["required"] = list(answer["properties"])
            options.append(answer)
        return options[0] if len(options) == 1 else {"anyOf": options}

    def prompt(self) -> str:
        return render_prompt(
            self.template["text"], self.screen_type, self.screen, self.memory, self.actions, self.feedback
        )


def render_prompt(
    text: str, screen_type: str, screen: str, memory: Sequence, actions: Sequence, feedback: Sequence
) -> str:
    """The agent prompt: ``text`` (a ``string.Template``) with its placeholders filled."""
    return string.Template(text).substitute(
        screen_type=screen_type,
        screen=screen,
        memory="\n".join(f"- {_render(m) if not isinstance(m, str) else m}" for m in memory) or "(nothing yet)",
        actions="\n".join(_action_line(a) for a in actions),
        feedback=(
            "\nYour previous answer could not be used:\n" + "\n".join(f"- {f}" for f in feedback) + "\nChoose again.\n"
        )
        if feedback
        else "",
    )


def _action_line(entry: Mapping) -> str:
    args = ", ".join(f"{name} one of {_render(values)}" for name, values in entry["args"].items())
    about = f" ({entry['about']})" if entry.get("about") else ""
    return f"- {entry['action']}" + (f": {args}" if args else "") + about
