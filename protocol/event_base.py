"""The machinery under the journal's vocabulary (``protocol.events``): the ``Event`` base
class, optional and extra fields, row checking and the markdown table of the kinds.

A kind is a frozen, keyword-only dataclass. Its fields are the row's keys:

- a plain field is always in the row, even when its value is ``None``;
- ``optional()`` declares a field that is left out of the row when it is ``None`` (today's
  rows omit it then), and may be absent when read;
- ``extra_field()`` (only on an *open* kind) holds every key the kind does not declare: it is
  merged into the row by ``to_row`` (declared fields win) and collected back by ``from_row``.

The common fields (``schema_version``, ``session``, ``sequence``, ``recorded_at``, ``ts``,
``prev_sha256``) belong to the writer, never to a kind.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, ClassVar, TypeVar

from .errors import BadBody
from .fields import check_value

#: Keys every row has that no event kind declares (the writer adds them). ``event`` is the
#: kind's name and is part of ``to_row``.
WRITER_FIELDS = ("schema_version", "session", "sequence", "recorded_at", "ts", "prev_sha256")

_OMIT = "gamerig_omit_when_none"
_EXTRA = "gamerig_extra"

E = TypeVar("E", bound="Event")


class EventError(ValueError):
    """A row that does not fit its kind: names the kind, the field and what is wrong."""

    def __init__(self, kind: str, field: str, problem: str):
        super().__init__(f"journal event {kind!r}: field {field!r}: {problem}")
        self.kind, self.field, self.problem = kind, field, problem


def optional(default: Any = None) -> Any:
    """A field left out of the row when it is None (and allowed to be absent when read)."""
    return dataclasses.field(default=default, metadata={_OMIT: True})


def extra_field() -> Any:
    """The ``extra`` mapping of an open kind: the keys the kind does not declare."""
    return dataclasses.field(default_factory=dict, metadata={_EXTRA: True})


@dataclasses.dataclass(frozen=True)
class FieldSpec:
    name: str
    hint: Any
    omit_when_none: bool


@dataclasses.dataclass(frozen=True)
class KindSpec:
    fields: tuple[FieldSpec, ...]
    names: frozenset[str]
    open: bool


_SPECS: dict[type, KindSpec] = {}


def spec(cls: type[Event]) -> KindSpec:
    """The declared fields of ``cls``, resolved once per class."""
    found = _SPECS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        fields, is_open = [], False
        for f in dataclasses.fields(cls):
            if f.metadata.get(_EXTRA):
                is_open = True
                continue
            fields.append(FieldSpec(f.name, hints[f.name], bool(f.metadata.get(_OMIT))))
        found = KindSpec(tuple(fields), frozenset(f.name for f in fields), is_open)
        _SPECS[cls] = found
    return found


@dataclasses.dataclass(frozen=True, kw_only=True)
class Event:
    """One journal event kind. Subclasses set ``KIND`` (the row's ``event``), ``WRITER``
    (who appends it, for the docs) and ``RESERVED`` (only the recorder itself appends it:
    ``record_event`` refuses the kind)."""

    KIND: ClassVar[str] = ""
    WRITER: ClassVar[str] = ""
    RESERVED: ClassVar[bool] = False

    def to_row(self) -> dict[str, Any]:
        """Exactly the row's own keys plus ``event`` (the writer adds the common fields)."""
        kind = spec(type(self))
        row: dict[str, Any] = dict(getattr(self, "extra")) if kind.open else {}  # noqa: B009  (only open kinds have it)
        for f in kind.fields:
            value = getattr(self, f.name)
            if value is None and f.omit_when_none:
                continue
            row[f.name] = value
        row["event"] = self.KIND
        return row

    @classmethod
    def from_row(cls: type[E], row: Any) -> E:
        """The event a row holds. Raises ``EventError`` naming the kind and the field when a
        declared field is missing or has the wrong type. Keys the kind does not declare go
        to ``extra`` for an open kind and are ignored otherwise."""
        if not isinstance(row, dict):
            raise EventError(cls.KIND, "<row>", f"expected a JSON object, got {type(row).__name__}")
        if row.get("event") != cls.KIND:
            raise EventError(cls.KIND, "event", f"the row is a {row.get('event')!r} row")
        kind = spec(cls)
        values: dict[str, Any] = {}
        for f in kind.fields:
            if f.name not in row:
                if f.omit_when_none:
                    continue
                raise EventError(cls.KIND, f.name, "missing")
            value = row[f.name]
            try:
                check_value(cls.KIND, f.name, f.hint, value)
            except BadBody as exc:
                raise EventError(cls.KIND, f.name, exc.problem) from None
            values[f.name] = value  # as read: check_value may turn an int into a float
        if kind.open:
            values["extra"] = {
                k: v for k, v in row.items() if k not in kind.names and k != "event" and k not in WRITER_FIELDS
            }
        return cls(**values)

    @classmethod
    def from_fields(cls: type[E], fields: dict[str, Any]) -> E:
        """The event for a writer that holds its fields as a dict (e.g. an error description
        passed along): checked like ``from_row``, and a key the kind does not declare is
        refused with ``EventError`` unless the kind is open (nothing is dropped silently)."""
        kind = spec(cls)
        if not kind.open:
            for key in fields:
                if key not in kind.names and key != "event":
                    raise EventError(cls.KIND, key, "not a field of this kind")
        return cls.from_row({**fields, "event": cls.KIND})


def check_kind(cls: type[E]) -> type[E]:
    """Refuse a kind class that cannot work (no KIND, no WRITER, an unsupported type)."""
    if not cls.KIND or not cls.WRITER:
        raise TypeError(f"{cls.__name__} needs KIND and WRITER")
    for f in spec(cls).fields:
        if f.name in WRITER_FIELDS or f.name == "event":
            raise TypeError(f"{cls.__name__}.{f.name} is a field the writer owns")
    return cls


def _type_text(hint: Any, null: bool = True) -> str:
    if hint is Any:
        return "any"
    args = typing.get_args(hint)
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return " \\| ".join(_type_text(a) for a in rest) + (" \\| null" if null else "")
    return getattr(hint, "__name__", None) or str(hint)


def markdown_table(kinds: typing.Iterable[type[Event]]) -> str:
    """The docs' table of event kinds: kind, fields, optional fields, who writes it."""
    lines = ["| event | fields | optional fields (absent when unset) | written by |", "|---|---|---|---|"]
    for cls in kinds:
        kind = spec(cls)
        required = ", ".join(f"`{f.name}` ({_type_text(f.hint)})" for f in kind.fields if not f.omit_when_none)
        optional_ = [f"`{f.name}` ({_type_text(f.hint, null=False)})" for f in kind.fields if f.omit_when_none]
        if kind.open:
            optional_.append("any other key (`extra`)")
        writer = cls.WRITER + ("; reserved" if cls.RESERVED else "")
        lines.append(f"| `{cls.KIND}` | {required or '—'} | {', '.join(optional_) or '—'} | {writer} |")
    return "\n".join(lines) + "\n"
