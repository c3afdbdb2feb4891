"""The viewer's API described once, as data: every answer's path, what it holds, whether a
bundle keeps it, the size of a page of steps, and how a bundle names its files.

The server routes by it (``api.Api.answer`` matches a path against ``ROUTES``), the bundle
names its files and builds its paths by it (``bundle_name``, ``Route.path``), and the page
reads the same description: ``script()`` is ``static/api.js`` (served by the server, written
into every bundle), which sets ``gamerigApi`` before the page's own scripts run. They build
every answer's path from ``gamerigApi.routes`` and every bundle file name from
``gamerigApi.bundle`` (``common.js``); they keep no rule of their own about either.

A template's segments are literal text or a parameter in braces: ``{key}`` any text (one path
segment, percent-encoded as ``encodeURIComponent`` writes it), ``{index:int}`` a whole number
from 0. Paths are plain segments (no query strings), so every answer a bundle keeps is one file.
"""

from __future__ import annotations

import dataclasses
import json
import re
import urllib.parse
from typing import Any, Final

PAGE: Final = 100
"""Steps in one ``page`` answer; the page counts its pages of steps by it."""

BUNDLE: Final[dict[str, str]] = {
    "folder": "data/",  # every answer and image under it
    "keep": "A-Za-z0-9-",  # characters a file name keeps as they are (a regex class's inside)
    "escape": "_{hex}_",  # every other character: its code point in lower-case hex
    "script": ".js",  # a JSON answer is a script ``CALLBACK(path, answer);`` ...
    "callback": "gamerigData",  # ... so that the folder opens from disk (file://) too
}
"""How a bundle names the file of a path's answer: ``FOLDER + name(path) [+ SCRIPT]``. Two
paths never share a file: an escaped character's hex is closed by ``_``, and ``_`` itself is
escaped."""

_KEEP = re.compile(f"[{BUNDLE['keep']}]", re.ASCII)
_PARAM = re.compile(r"\{([a-z_]+)(:int)?\}")


class BadPath(LookupError):
    """A path whose shape names an answer but whose number is not one (a 404 naming it)."""

    def __init__(self, name: str, text: str) -> None:
        super().__init__(f"{name} {text!r} is not a whole number from 0")
        self.name = name
        self.text = text


@dataclasses.dataclass(frozen=True)
class Route:
    """One answer: ``name`` (its handler in ``api.py``), ``template``, ``holds`` (``json``,
    ``png`` or ``gif``), ``bundled`` (a bundle keeps it) and what it is, in words."""

    name: str
    template: str
    holds: str
    about: str
    bundled: bool = True

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.template.split("/"))

    @property
    def params(self) -> dict[str, bool]:
        """Each parameter's name, and whether it is a whole number."""
        out: dict[str, bool] = {}
        for seg in self.segments:
            m = _PARAM.fullmatch(seg)
            if m:
                out[m.group(1)] = m.group(2) is not None
        return out

    def match(self, parts: list[str]) -> dict[str, str] | None:
        """The parameters of ``parts`` (decoded segments) when they have this route's shape;
        ``BadPath`` when a whole number is not one."""
        segments = self.segments
        if len(parts) != len(segments):
            return None
        values: dict[str, str] = {}
        numbers: list[tuple[str, str]] = []
        for seg, part in zip(segments, parts):
            m = _PARAM.fullmatch(seg)
            if m is None:
                if seg != part:
                    return None
                continue
            values[m.group(1)] = part
            if m.group(2):
                numbers.append((m.group(1), part))
        for name, text in numbers:
            if not (text.isascii() and text.isdigit()):
                raise BadPath(name, text)
        return values

    def path(self, **values: str | int) -> str:
        """This route's path for ``values``, each percent-encoded as ``encodeURIComponent``
        encodes it (what the page requests, so what a bundle must hold)."""
        if set(values) != set(self.params):
            raise TypeError(f"{self.name} takes {sorted(self.params)}, not {sorted(values)}")
        return "/".join(_fill(seg, values) for seg in self.segments)


def _fill(seg: str, values: dict[str, str | int]) -> str:
    m = _PARAM.fullmatch(seg)
    return seg if m is None else quote(values[m.group(1)])


def quote(value: str | int) -> str:
    """``encodeURIComponent(String(value))``."""
    return urllib.parse.quote(str(value), safe="!~*'()")


ROUTES: Final[tuple[Route, ...]] = (
    Route("meta", "api/meta", "json", "what was given, live or bundle, the version"),
    Route("sessions", "api/sessions", "json", "every session's list entry"),
    Route("session", "api/session/{key}", "json", "the summary: groups, markers, runs, verdict"),
    Route("page", "api/session/{key}/page/{offset:int}", "json", "PAGE steps from OFFSET"),
    Route("series", "api/session/{key}/series", "json", "the chart columns (thinned)"),
    Route(
        "series_range",
        "api/session/{key}/series/{first:int}/{last:int}",
        "json",
        "the chart columns of steps FIRST..LAST (thinned)",
        bundled=False,
    ),
    Route("step", "api/session/{key}/step/{index:int}", "json", "one step's observation (hash checked) and rows"),
    Route("verify", "api/session/{key}/verify", "json", "the verifier's findings"),
    Route("emulator", "api/session/{key}/emulator", "json", "the recording: status, checkpoints, branches, frames"),
    Route("frame", "api/session/{key}/frame/{name}", "png", "a retained frame"),
    Route(
        "sheet",
        "api/session/{key}/sheet/{branch}/{first:int}/{last:int}",
        "png",
        "a contact sheet of actions (FIRST, LAST] of a branch",
        bundled=False,
    ),
    Route(
        "gif",
        "api/session/{key}/gif/{branch}/{start:int}/{end:int}",
        "gif",
        "a GIF of retained frames START..END of a branch (- for the current one)",
        bundled=False,
    ),
    Route("fleets", "api/fleets", "json", "every fleet"),
    Route("fleet", "api/fleet/{key}", "json", "its matrix, aggregates and flagged sessions"),
    Route("compare_fleets", "api/compare/fleets/{a}/{b}", "json", "fleet A against fleet B"),
    Route(
        "compare_group",
        "api/compare/group/{fleet}/{column}/{a}/{b}",
        "json",
        "two values of one matrix key in one fleet",
    ),
    Route("pair", "api/pair/{a}/{b}/{run:int}", "json", "run RUN (from 1) of sessions A and B side by side"),
)
BY_NAME: Final[dict[str, Route]] = {r.name: r for r in ROUTES}


def route(name: str) -> Route:
    return BY_NAME[name]


def find(parts: list[str]) -> tuple[Route, dict[str, str]] | None:
    """The route ``parts`` (decoded segments) has the shape of, with its parameters."""
    for r in ROUTES:
        values = r.match(parts)
        if values is not None:
            return r, values
    return None


def under(parts: list[str]) -> list[str]:
    """The templates that begin with ``parts``' first two segments (to name in a 404)."""
    head = tuple(parts[:2])
    return ["/" + r.template for r in ROUTES if r.segments[:2] == head]


def bundle_name(path: str) -> str:
    """The file name (without ``BUNDLE["folder"]``) a bundle keeps ``path``'s answer under."""
    return "".join(c if _KEEP.fullmatch(c) else BUNDLE["escape"].replace("{hex}", f"{ord(c):x}") for c in path)


def description() -> dict[str, Any]:
    """What the page is told: the routes by name (template with ``{name}`` parameters, what
    each holds, whether a bundle keeps it), the page size and the bundle's naming."""
    return {
        "page": PAGE,
        "bundle": dict(BUNDLE),
        "routes": {
            r.name: {
                "path": _PARAM.sub(r"{\1}", r.template),
                "params": list(r.params),
                "holds": r.holds,
                "bundled": r.bundled,
            }
            for r in ROUTES
        },
    }


def script() -> bytes:
    """``static/api.js``: the description as the global ``gamerigApi``."""
    text = json.dumps(description(), ensure_ascii=True, sort_keys=True, indent=1)
    return (
        f"/* generated by supervisor/view/routes.py: the viewer's API as the server routes it */\n"
        f'"use strict";\nwindow.gamerigApi = Object.freeze({text});\n'
    ).encode("ascii")
