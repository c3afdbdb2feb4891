"""A score for Game Boy runs: the profile's ``emulator.score`` section, read each step.

The section names **values** in the cartridge's memory (an address, a width, a byte order, a
binary / BCD / one-digit-a-byte encoding, a bank) or, for a cartridge PyBoy ships a game
wrapper for, attributes of that wrapper; which value is the run's **score**; **milestones**
(a value reached, a bit set); and a **game-over** condition. docs/emulator.md ("A score for
your cartridge") is the reference for users.

* :func:`parse_section` checks the section against the cartridge (its memory map: ROM banks,
  cartridge RAM, CGB banks) and returns a :class:`ScoreSpec`, or raises :class:`ScoreProblem`
  naming the dotted key (``emulator.score.values.score.address``) and what is wrong.
* :meth:`ScoreSpec.evaluate` reads the values through two callables (the session passes its
  machine's), and returns the evidence block every ``emulator_observed`` /
  ``emulator_stepped`` reply carries as ``score``::

      {"score": 12, "values": {"moves": 12, "has_key": 1, ...}, "milestones": ["got_key"],
       "game_over": false}

  A value that cannot be read or decoded is ``null``, with the reason in ``unread``; a
  condition on it is neither reached nor failed (``game_over: null``). Never a silent zero.

What a cartridge makes readable (its memory map, the game wrappers PyBoy ships) and
:class:`ScoreProblem` are in ``score_map.py``; what a run reports of these blocks
(:class:`ScoreTally`) is in ``score_tally.py``. Nothing here imports PyBoy: ``supervisor
validate`` checks a section without starting one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..cartridge import layout
from .score_map import PYBOY_WRAPPERS, MemoryMap, ScoreProblem, pyboy_title

SECTION = "emulator.score"
WRAPPER_MODES = ("auto", "off")
ENCODINGS = ("binary", "bcd", "digits")
BYTE_ORDERS = ("little", "big")
TESTS = ("at_least", "at_most", "equals", "bit")
MAX_WIDTH = 8
MAX_NAMES = 64
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")

GAME_OVER = "game_over"

#: our demo cartridge's section, used when the profile names none (actors/emulator/cartridge/
#: layout.py's WRAM map): it has no score counter, so its score is the tiles walked
DEMO_SECTION = {
    "values": {
        "moves": {"address": layout.WRAM["moves"]},  # tiles walked (wraps at 256)
        "has_key": {"address": layout.WRAM["has_key"]},
        "door_open": {"address": layout.WRAM["door_open"]},
        "won": {"address": layout.WRAM["won"]},
        "game_frames": {"address": layout.WRAM["frame_lo"], "width": 2},  # the game's own frame counter
    },
    "score": "moves",
    "milestones": {
        "got_key": {"value": "has_key", "at_least": 1},
        "door_open": {"value": "door_open", "at_least": 1},
        "won": {"value": "won", "at_least": 1},
    },
    "game_over": {"value": "won", "at_least": 1},
}


# ---- the section ------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """One named number: ``width`` bytes at ``address`` (``bank`` None: as mapped), or the
    PyBoy game wrapper's attribute ``wrapper``."""

    name: str
    address: int | None = None
    width: int = 1
    encoding: str = "binary"
    byte_order: str = "little"
    bank: int | None = None
    wrapper: str | None = None

    @property
    def largest(self) -> int | None:
        """The largest number the value can hold (None: a wrapper's, unbounded)."""
        if self.wrapper is not None:
            return None
        return {"binary": 256**self.width, "bcd": 100**self.width, "digits": 10**self.width}[self.encoding] - 1

    def decode(self, data: bytes) -> int:
        """The number in ``data`` (``width`` bytes as read); ValueError naming the bad byte."""
        ordered = data if self.byte_order == "big" else data[::-1]  # most significant first
        if self.encoding == "binary":
            return int.from_bytes(ordered, "big")
        n = 0
        for b in ordered:
            if self.encoding == "bcd":
                if b >> 4 > 9 or b & 0xF > 9:
                    raise ValueError(f"byte 0x{b:02X} is not two BCD digits")
                n = n * 100 + (b >> 4) * 10 + (b & 0xF)
            else:
                if b > 9:
                    raise ValueError(f"byte 0x{b:02X} is not a decimal digit")
                n = n * 10 + b
        return n

    def to_json(self) -> dict:
        if self.wrapper is not None:
            return {"wrapper": self.wrapper}
        out = {"address": self.address, "width": self.width, "encoding": self.encoding, "byte_order": self.byte_order}
        if self.bank is not None:
            out["bank"] = self.bank
        return out


@dataclass(frozen=True)
class Condition:
    """``value`` compared by ``test`` (at_least / at_most / equals / bit) with ``operand``."""

    value: str
    test: str
    operand: int

    def holds(self, n: int | None) -> bool | None:
        if n is None:
            return None
        if self.test == "at_least":
            return n >= self.operand
        if self.test == "at_most":
            return n <= self.operand
        if self.test == "equals":
            return n == self.operand
        return bool(n >> self.operand & 1)

    def to_json(self) -> dict:
        return {"value": self.value, self.test: self.operand}


@dataclass(frozen=True)
class ScoreSpec:
    values: tuple[Value, ...]
    score: str
    milestones: tuple[tuple[str, Condition], ...]
    game_over: Condition | None
    wrapper: str  # auto | off
    wrapper_class: str | None  # the PyBoy game wrapper read, when any
    source: str  # "profile", "demo cartridge" or "PyBoy game wrapper"

    def to_json(self) -> dict:
        """The effective section (every default filled in), as ``emulator_started`` records it."""
        return {
            "source": self.source,
            "wrapper": self.wrapper,
            "wrapper_class": self.wrapper_class,
            "values": {v.name: v.to_json() for v in self.values},
            "score": self.score,
            "milestones": {name: c.to_json() for name, c in self.milestones},
            "game_over": self.game_over.to_json() if self.game_over else None,
        }

    def evaluate(self, read: Callable[[int, int, int | None], bytes], read_wrapper: Callable[[str], Any]) -> dict:
        """The evidence block (module docstring). ``read(address, width, bank)`` returns the
        bytes; ``read_wrapper(name)`` the game wrapper's attribute (raising when it cannot)."""
        numbers: dict[str, int | None] = {}
        unread: dict[str, str] = {}
        for v in self.values:
            try:
                if v.wrapper is not None:
                    got = read_wrapper(v.wrapper)
                    if isinstance(got, bool):
                        got = int(got)
                    if not isinstance(got, int):
                        raise ValueError(f"PyBoy's game wrapper gave {type(got).__name__} {got!r}, not a whole number")
                    numbers[v.name] = got
                else:
                    numbers[v.name] = v.decode(read(v.address, v.width, v.bank))
            except Exception as exc:  # noqa: BLE001 - one unreadable value never stops a step
                numbers[v.name] = None
                unread[v.name] = str(exc) or type(exc).__name__
        block: dict[str, Any] = {
            "score": numbers[self.score],
            "values": numbers,
            "milestones": [name for name, c in self.milestones if c.holds(numbers[c.value])],
        }
        if self.game_over is not None:
            block["game_over"] = self.game_over.holds(numbers[self.game_over.value])
        if unread:
            block["unread"] = unread
        return block


def parse_section(raw: Any, rom: bytes, *, cgb: bool, title: str, demo: bool) -> ScoreSpec | None:
    """``emulator.score`` for this cartridge: the profile's section; when it names none (null),
    our demo cartridge's own section, or the values of the game wrapper PyBoy ships for this
    cartridge, or no score. ``cgb`` is the mode the session runs in; ``title`` the header title
    for messages; ``demo`` whether this is our demo cartridge."""
    wrapped = PYBOY_WRAPPERS.get(pyboy_title(rom))
    source = "profile"
    if raw is None:
        if demo:
            raw, source = DEMO_SECTION, "demo cartridge"
        elif wrapped is not None:
            raw, source = {}, "PyBoy game wrapper"
        else:
            return None
    if not isinstance(raw, Mapping):
        raise ScoreProblem(
            SECTION, f"expected a mapping (values, score, milestones, game_over, wrapper) or null, got {raw!r}"
        )
    _known_keys(raw, ("values", "score", "milestones", "game_over", "wrapper"), SECTION)
    mode = raw.get("wrapper", "auto")
    if isinstance(mode, bool):  # YAML 1.1 reads a bare off as false
        mode = "auto" if mode else "off"
    if mode not in WRAPPER_MODES:
        raise ScoreProblem(f"{SECTION}.wrapper", f"{mode!r} is not one of {', '.join(WRAPPER_MODES)}")
    memory = MemoryMap.of(rom, cgb, title)
    raw_values = raw.get("values") if raw.get("values") is not None else {}
    if not isinstance(raw_values, Mapping):
        raise ScoreProblem(f"{SECTION}.values", f"expected a mapping of names to values, got {raw_values!r}")
    wrapper_names = (*wrapped[1], GAME_OVER) if wrapped is not None and mode == "auto" else ()
    values: dict[str, Value] = {}
    for name, spec in raw_values.items():
        key = f"{SECTION}.values.{name}"
        _check_name(name, key)
        if name in wrapper_names:
            raise ScoreProblem(
                key,
                f"PyBoy's game wrapper for {title!r} ({wrapped[0]}) provides {name!r} itself "
                f"({SECTION}.wrapper is auto): name this value differently, leave it out, or "
                f"set {SECTION}.wrapper: off",
            )
        values[name] = _value(name, spec, key, memory, wrapped if mode == "auto" else None, title, mode)
    for name in wrapper_names:
        values[name] = Value(name, wrapper=name)
    if len(values) > MAX_NAMES:
        raise ScoreProblem(f"{SECTION}.values", f"{len(values)} values; at most {MAX_NAMES}")
    if not values:
        wrappers = ", ".join(sorted(PYBOY_WRAPPERS))
        raise ScoreProblem(
            f"{SECTION}.values",
            f"names no values, and PyBoy has no game wrapper for cartridge "
            f"{title!r} to read them from (it has one for {wrappers}): name at least the score, "
            "e.g. values: {score: {address: 0xC0A0, width: 2, encoding: bcd}}",
        )
    score = raw.get("score")
    if score is None:
        if "score" not in values:
            raise ScoreProblem(
                f"{SECTION}.score",
                f"names no value as the score, and none is called 'score': name one of {', '.join(values)}",
            )
        score = "score"
    _check_ref(score, values, f"{SECTION}.score")
    raw_milestones = raw.get("milestones") if raw.get("milestones") is not None else {}
    if not isinstance(raw_milestones, Mapping):
        raise ScoreProblem(
            f"{SECTION}.milestones", f"expected a mapping of names to conditions, got {raw_milestones!r}"
        )
    if len(raw_milestones) > MAX_NAMES:
        raise ScoreProblem(f"{SECTION}.milestones", f"{len(raw_milestones)} milestones; at most {MAX_NAMES}")
    milestones = []
    for name, spec in raw_milestones.items():
        key = f"{SECTION}.milestones.{name}"
        _check_name(name, key)
        milestones.append((str(name), _condition(spec, key, values)))
    game_over = raw.get("game_over")
    if game_over is None and GAME_OVER in values and values[GAME_OVER].wrapper == GAME_OVER:
        condition = Condition(GAME_OVER, "at_least", 1)  # the wrapper's own game_over()
    else:
        condition = None if game_over is None else _condition(game_over, f"{SECTION}.game_over", values)
    return ScoreSpec(
        tuple(values.values()),
        score,
        tuple(milestones),
        condition,
        mode,
        wrapped[0] if wrapped is not None and mode == "auto" and any(v.wrapper for v in values.values()) else None,
        source,
    )


def _value(name: str, spec: Any, key: str, memory: MemoryMap, wrapped, title: str, mode: str) -> Value:
    if isinstance(spec, int) and not isinstance(spec, bool):
        spec = {"address": spec}
    if not isinstance(spec, Mapping):
        raise ScoreProblem(
            key,
            f"expected {{address: ..., width: ..., encoding: ...}}, an address, or "
            f"{{wrapper: <attribute>}}, got {spec!r}",
        )
    if "wrapper" in spec:
        _known_keys(spec, ("wrapper",), key)
        attribute = spec["wrapper"]
        if mode == "off":
            raise ScoreProblem(f"{key}.wrapper", f"{SECTION}.wrapper is off: no game wrapper is read")
        if wrapped is None:
            raise ScoreProblem(
                f"{key}.wrapper",
                f"PyBoy has no game wrapper for cartridge {title!r} "
                f"(it has one for {', '.join(sorted(PYBOY_WRAPPERS))})",
            )
        offered = (*wrapped[1], GAME_OVER)
        if attribute not in offered:
            raise ScoreProblem(
                f"{key}.wrapper", f"{attribute!r} is not a number PyBoy's {wrapped[0]} provides ({', '.join(offered)})"
            )
        return Value(str(name), wrapper=attribute)
    _known_keys(spec, ("address", "width", "encoding", "byte_order", "bank"), key)
    address = spec.get("address")
    if address is None:
        raise ScoreProblem(
            f"{key}.address",
            "missing: name the address of the value's first byte "
            "(or {wrapper: <attribute>} for a cartridge PyBoy wraps)",
        )
    width = spec.get("width", 1)
    encoding = spec.get("encoding", "binary")
    order = spec.get("byte_order", "little")
    bank = spec.get("bank")
    for field, v in (("address", address), ("width", width)) + ((("bank", bank),) if bank is not None else ()):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ScoreProblem(f"{key}.{field}", f"expected a whole number, got {v!r}")
    if not 1 <= width <= MAX_WIDTH:
        raise ScoreProblem(f"{key}.width", f"{width} bytes: a value is 1..{MAX_WIDTH} bytes wide")
    if encoding not in ENCODINGS:
        raise ScoreProblem(f"{key}.encoding", f"{encoding!r} is not one of {', '.join(ENCODINGS)}")
    if order not in BYTE_ORDERS:
        raise ScoreProblem(f"{key}.byte_order", f"{order!r} is not one of {', '.join(BYTE_ORDERS)}")
    bank = memory.check(address, width, bank, key)
    return Value(str(name), address, width, encoding, order, bank)


def _condition(spec: Any, key: str, values: dict[str, Value]) -> Condition:
    if not isinstance(spec, Mapping):
        raise ScoreProblem(key, f"expected {{value: <name>, at_least: N}} (or at_most, equals, bit), got {spec!r}")
    _known_keys(spec, ("value", *TESTS), key)
    name = spec.get("value")
    if name is None:
        raise ScoreProblem(f"{key}.value", f"names no value: give value: <one of {', '.join(values)}>")
    _check_ref(name, values, f"{key}.value")
    tests = [t for t in TESTS if t in spec]
    if len(tests) != 1:
        raise ScoreProblem(
            key, f"give exactly one of {', '.join(TESTS)}" + (f", not {' and '.join(tests)}" if tests else "")
        )
    test, operand = tests[0], spec[tests[0]]
    if isinstance(operand, bool) or not isinstance(operand, int) or operand < 0:
        raise ScoreProblem(f"{key}.{test}", f"expected a whole number >= 0, got {operand!r}")
    value = values[name]
    largest = value.largest
    if test == "bit":
        if value.wrapper is None and value.encoding != "binary":
            raise ScoreProblem(f"{key}.bit", f"value {name!r} is {value.encoding}: a bit is tested on a binary value")
        bits = 8 * value.width if value.wrapper is None else 64
        if operand >= bits:
            raise ScoreProblem(
                f"{key}.bit", f"bit {operand} does not exist in value {name!r} ({bits} bits: 0..{bits - 1})"
            )
    elif largest is not None and operand > largest and test in ("at_least", "equals"):
        raise ScoreProblem(
            f"{key}.{test}",
            f"can never hold: value {name!r} ({value.width} byte(s), {value.encoding}) is at most {largest:,}",
        )
    return Condition(str(name), test, operand)


def _known_keys(spec: Mapping, allowed: tuple[str, ...], key: str) -> None:
    for k in spec:
        if k not in allowed:
            close = difflib.get_close_matches(str(k), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(allowed)})"
            raise ScoreProblem(f"{key}.{k}", f"unknown key{hint}")


def _check_name(name: Any, key: str) -> None:
    if not isinstance(name, str) or not NAME.match(name):
        raise ScoreProblem(
            key, f"{name!r} is not a usable name (letters, digits and _, at most 64, not starting with a digit)"
        )


def _check_ref(name: Any, values: Mapping[str, Value], key: str) -> None:
    if not isinstance(name, str) or name not in values:
        raise ScoreProblem(key, f"{name!r} is not one of the values ({', '.join(values)})")
