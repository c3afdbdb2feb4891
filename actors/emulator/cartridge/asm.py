"""A tiny two-pass SM83 (Game Boy CPU) assembler for the demo cartridge.

It understands the subset of RGBDS-like syntax that ``game.asm`` uses:

* ``NAME equ EXPR`` constants, ``label:`` definitions, ``; comments``;
* ``org EXPR`` to place code, ``db EXPR, ...`` / ``dw EXPR, ...`` data;
* registers ``a b c d e h l``, pairs ``bc de hl sp af``, memory operands in brackets
  (``[hl]``, ``[hl+]``, ``[hl-]``, ``[bc]``, ``[de]``, ``[c]``, ``[EXPR]``);
* numbers as ``$1F`` (hex), ``%0101`` (binary) or decimal; expressions with ``+ - * // ( )``
  and the functions ``low(x)`` / ``high(x)``.

Pass one sizes every line (sizes depend only on syntax), pass two encodes with all labels
known. Errors raise :class:`AsmError` with the source line number and text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

R8 = {"b": 0, "c": 1, "d": 2, "e": 3, "h": 4, "l": 5, "[hl]": 6, "a": 7}
R16 = {"bc": 0, "de": 1, "hl": 2, "sp": 3}
R16_STACK = {"bc": 0, "de": 1, "hl": 2, "af": 3}
CONDITIONS = {"nz": 0, "z": 1, "nc": 2, "c": 3}
ALU = {"add": 0, "adc": 1, "sub": 2, "sbc": 3, "and": 4, "xor": 5, "or": 6, "cp": 7}
CB_SHIFTS = {"rlc": 0, "rrc": 1, "rl": 2, "rr": 3, "sla": 4, "sra": 5, "swap": 6, "srl": 7}
CB_BITS = {"bit": 1, "res": 2, "set": 3}
IMPLIED = {
    "nop": b"\x00",
    "halt": b"\x76",
    "di": b"\xf3",
    "ei": b"\xfb",
    "cpl": b"\x2f",
    "scf": b"\x37",
    "ccf": b"\x3f",
    "rlca": b"\x07",
    "rrca": b"\x0f",
    "rla": b"\x17",
    "rra": b"\x1f",
    "daa": b"\x27",
    "ret": b"\xc9",
    "reti": b"\xd9",
    "stop": b"\x10\x00",
}
LOAD_INDIRECT_A = {"[bc]": 0x02, "[de]": 0x12, "[hl+]": 0x22, "[hl-]": 0x32}


class AsmError(Exception):
    """A source line that cannot be assembled (carries line number and text)."""

    def __init__(self, line_no: int, text: str, problem: str):
        super().__init__(f"line {line_no}: {problem}: {text.strip()!r}")
        self.line_no, self.text, self.problem = line_no, text, problem


@dataclass
class _Ctx:
    symbols: dict[str, int]
    final: bool  # pass two: unknown names are errors

    def value(self, expr: str) -> int:
        source = re.sub(r"\$([0-9a-fA-F]+)", r"0x\1", expr.strip())
        source = re.sub(r"%([01]+)", r"0b\1", source)
        try:
            tree = ast.parse(source, mode="eval")
        except SyntaxError as exc:
            raise ValueError(f"bad expression {expr!r}") from exc
        return self._eval(tree.body)

    def _eval(self, node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.symbols:
                return self.symbols[node.id]
            if self.final:
                raise ValueError(f"unknown symbol {node.id!r}")
            return 0
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self._eval(node.operand)
        if isinstance(node, ast.BinOp):
            ops = {
                ast.Add: int.__add__,
                ast.Sub: int.__sub__,
                ast.Mult: int.__mul__,
                ast.FloorDiv: int.__floordiv__,
                ast.BitOr: int.__or__,
                ast.BitAnd: int.__and__,
                ast.LShift: int.__lshift__,
                ast.RShift: int.__rshift__,
            }
            if type(node.op) in ops:
                return ops[type(node.op)](self._eval(node.left), self._eval(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1:
            arg = self._eval(node.args[0])
            if node.func.id == "low":
                return arg & 0xFF
            if node.func.id == "high":
                return (arg >> 8) & 0xFF
        raise ValueError(f"unsupported expression {ast.unparse(node)!r}")


def _u8(v: int) -> bytes:
    if not -128 <= v <= 255:
        raise ValueError(f"byte out of range: {v}")
    return bytes([v & 0xFF])


def _u16(v: int) -> bytes:
    if not -32768 <= v <= 0xFFFF:
        raise ValueError(f"word out of range: {v}")
    return bytes([v & 0xFF, (v >> 8) & 0xFF])


def _is_mem(op: str) -> bool:
    return op.startswith("[") and op.endswith("]")


def _encode_ld(ops: list[str], ctx: _Ctx) -> bytes:
    dst, src = ops
    if dst in R8 and src in R8:
        if dst == src == "[hl]":
            raise ValueError("ld [hl],[hl] does not exist")
        return bytes([0x40 | R8[dst] << 3 | R8[src]])
    if dst in R8 and not _is_mem(src):
        return bytes([0x06 | R8[dst] << 3]) + _u8(ctx.value(src))
    if dst in R16 and not _is_mem(src):
        if dst == "sp" and src == "hl":
            return b"\xf9"
        return bytes([0x01 | R16[dst] << 4]) + _u16(ctx.value(src))
    if src == "a" and dst in LOAD_INDIRECT_A:
        return bytes([LOAD_INDIRECT_A[dst]])
    if dst == "a" and src in LOAD_INDIRECT_A:
        return bytes([LOAD_INDIRECT_A[src] | 0x08])
    if dst == "[c]" and src == "a":
        return b"\xe2"
    if dst == "a" and src == "[c]":
        return b"\xf2"
    if src == "a" and _is_mem(dst):
        return b"\xea" + _u16(ctx.value(dst[1:-1]))
    if dst == "a" and _is_mem(src):
        return b"\xfa" + _u16(ctx.value(src[1:-1]))
    raise ValueError("unsupported ld form")


def _high_page(expr: str, ctx: _Ctx) -> int:
    value = ctx.value(expr)
    if value >= 0xFF00:
        value -= 0xFF00
    if not 0 <= value <= 0xFF:
        raise ValueError(f"ldh address out of range: {value:#x}")
    return value


def _encode_jump(mnemonic: str, ops: list[str], ctx: _Ctx, pc: int) -> bytes:
    cond = None
    if len(ops) == 2:
        cond, ops = ops[0], ops[1:]
        if cond not in CONDITIONS:
            raise ValueError(f"unknown condition {cond!r}")
    if mnemonic == "ret":
        return bytes([0xC0 | CONDITIONS[ops[0]] << 3]) if ops else b"\xc9"
    if mnemonic == "jp" and ops == ["hl"]:
        return b"\xe9"
    target = ctx.value(ops[0])
    if mnemonic == "jr":
        offset = target - (pc + 2)
        if ctx.final and not -128 <= offset <= 127:
            raise ValueError(f"jr target too far ({offset})")
        opcode = 0x18 if cond is None else 0x20 | CONDITIONS[cond] << 3
        return bytes([opcode, offset & 0xFF])
    base = {"jp": (0xC3, 0xC2), "call": (0xCD, 0xC4)}[mnemonic]
    opcode = base[0] if cond is None else base[1] | CONDITIONS[cond] << 3
    return bytes([opcode]) + _u16(target)


def _encode(mnemonic: str, ops: list[str], ctx: _Ctx, pc: int) -> bytes:
    if mnemonic in IMPLIED and not ops:
        return IMPLIED[mnemonic]
    if mnemonic == "ld":
        return _encode_ld(ops, ctx)
    if mnemonic == "ldh":
        if ops[1] == "a" and _is_mem(ops[0]):
            return b"\xe0" + bytes([_high_page(ops[0][1:-1], ctx)])
        if ops[0] == "a" and _is_mem(ops[1]):
            return b"\xf0" + bytes([_high_page(ops[1][1:-1], ctx)])
        raise ValueError("unsupported ldh form")
    if mnemonic in ("inc", "dec"):
        (op,) = ops
        if op in R8:
            return bytes([(0x04 if mnemonic == "inc" else 0x05) | R8[op] << 3])
        return bytes([(0x03 if mnemonic == "inc" else 0x0B) | R16[op] << 4])
    if mnemonic == "add" and len(ops) == 2 and ops[0] == "hl":
        return bytes([0x09 | R16[ops[1]] << 4])
    if mnemonic in ALU:
        src = ops[-1] if not (len(ops) == 2 and ops[0] != "a") else None
        if src is None:
            raise ValueError("ALU destination must be a")
        if src in R8:
            return bytes([0x80 | ALU[mnemonic] << 3 | R8[src]])
        return bytes([0xC6 | ALU[mnemonic] << 3]) + _u8(ctx.value(src))
    if mnemonic in ("jp", "jr", "call", "ret"):
        return _encode_jump(mnemonic, ops, ctx, pc)
    if mnemonic in ("push", "pop"):
        return bytes([(0xC5 if mnemonic == "push" else 0xC1) | R16_STACK[ops[0]] << 4])
    if mnemonic in CB_SHIFTS:
        return bytes([0xCB, CB_SHIFTS[mnemonic] << 3 | R8[ops[0]]])
    if mnemonic in CB_BITS:
        bit = ctx.value(ops[0])
        return bytes([0xCB, CB_BITS[mnemonic] << 6 | bit << 3 | R8[ops[1]]])
    raise ValueError(f"unknown instruction {mnemonic!r}")


KEYWORDS = set(R8) | set(R16) | set(R16_STACK) | set(CONDITIONS) | {"[hl+]", "[hl-]", "[bc]", "[de]", "[c]"}


def _split_operands(text: str) -> list[str]:
    """Split on top-level commas; registers and conditions become lower case."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += (ch in "([") - (ch in ")]")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current)
    normalised = []
    for part in parts:
        squashed = part.replace(" ", "").lower()
        normalised.append(squashed if squashed in KEYWORDS else part.strip())
    return normalised


def _run_pass(lines: list[str], symbols: dict[str, int], final: bool, rom: bytearray | None) -> None:
    ctx, pc = _Ctx(symbols, final), 0
    for line_no, raw in enumerate(lines, 1):
        text = raw.split(";", 1)[0].strip()
        try:
            while match := re.match(r"^([A-Za-z_.][\w.]*):", text):
                symbols[match.group(1)] = pc
                text = text[match.end() :].strip()
            if not text:
                continue
            if match := re.match(r"^(\w+)\s+equ\s+(.+)$", text, re.IGNORECASE):
                symbols[match.group(1)] = ctx.value(match.group(2))
                continue
            mnemonic, _, rest = text.partition(" ")
            mnemonic = mnemonic.lower()
            ops = _split_operands(rest)
            if mnemonic == "org":
                pc = ctx.value(ops[0])
                continue
            if mnemonic == "db":
                code = b"".join(_u8(ctx.value(op)) for op in ops)
            elif mnemonic == "dw":
                code = b"".join(_u16(ctx.value(op)) for op in ops)
            else:
                code = _encode(mnemonic, ops, ctx, pc)
        except (ValueError, KeyError, IndexError) as exc:
            raise AsmError(line_no, raw, str(exc)) from exc
        if rom is not None:
            if pc + len(code) > len(rom):
                raise AsmError(line_no, raw, "code runs past the end of the ROM")
            if any(rom[pc : pc + len(code)]):
                raise AsmError(line_no, raw, f"overlaps earlier code at {pc:#06x}")
            rom[pc : pc + len(code)] = code
        pc += len(code)


def assemble(
    source: str, size: int = 0x8000, predefined: dict[str, int] | None = None
) -> tuple[bytearray, dict[str, int]]:
    """Assemble ``source`` into a zero-filled image of ``size`` bytes; return (image, symbols)."""
    lines = source.splitlines()
    symbols: dict[str, int] = dict(predefined or {})
    _run_pass(lines, symbols, final=False, rom=None)
    rom = bytearray(size)
    _run_pass(lines, symbols, final=True, rom=rom)
    return rom, symbols
