"""The viewer's answers, by path: ``answer(catalog, "api/session/KEY/page/0")``.

The live server and the static bundle both call ``answer``, so a bundle holds exactly what the
server would have said. Paths are plain segments (no query strings) so that every answer a
bundle holds is one file (``bundle_name``):

    api/meta                                  what was given, live or bundle
    api/sessions                              every session's list entry
    api/session/KEY                           the summary: groups, markers, runs, verdict
    api/session/KEY/page/OFFSET               PAGE steps from OFFSET
    api/session/KEY/series[/FIRST/LAST]       the chart columns (thinned to MAX_POINTS)
    api/session/KEY/step/I                    one step's observation (hash checked) and rows
    api/session/KEY/verify                    the verifier's findings
    api/session/KEY/emulator                  the recording: status, checkpoints, branches, frames
    api/session/KEY/frame/NAME.png            a retained frame (image/png)
    api/session/KEY/sheet/BRANCH/FROM/TO      a contact sheet of actions (FROM, TO] (image/png)
    api/session/KEY/gif/BRANCH/START/END      a GIF of retained frames START..END (image/gif)
    api/fleets                                every fleet
    api/fleet/KEY                             its matrix, aggregates and flagged sessions
    api/compare/fleets/A/B                    fleet A against fleet B
    api/compare/group/FLEET/COLUMN/VA/VB      two values of one matrix key in one fleet
    api/pair/A/B/RUN                          run RUN of sessions A and B side by side (pairs.py)

An answer is ``Answer(status, content_type, body)``. A path that names nothing is a 404 with
a JSON error naming it; a refused interval is a 422 with the emulator code's own message; a
comparison of an arm with no session or no run is a 400 naming the arm (``compare.CompareError``).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import urllib.parse
from collections.abc import Callable
from typing import Any

from supervisor.fleet.compare import CompareError

from . import emulator, fleets, pages, pairs
from .catalog import Catalog, public_verdict

PAGE = 100
JSON = "application/json; charset=utf-8"


@dataclasses.dataclass
class Answer:
    status: int
    content_type: str
    body: bytes


def as_json(data: Any, status: int = 200) -> Answer:
    return Answer(
        status,
        JSON,
        json.dumps(data, ensure_ascii=False, allow_nan=False, default=str, separators=(",", ":")).encode("utf-8"),
    )


def error(status: int, message: str, code: str = "not_found") -> Answer:
    return as_json({"error": message, "code": code}, status)


def bundle_name(path: str) -> str:
    """The file a bundle keeps ``path``'s answer in (the same rule as app.js's ``bundleName``):
    every character outside ``[A-Za-z0-9-]`` becomes ``_`` and its code in hex, so two paths
    never share a file."""
    return "".join(c if (c.isascii() and (c.isalnum() or c == "-")) else f"_{ord(c):x}_" for c in path)


def _int(text: str, name: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise LookupError(f"{name} {text!r} is not a whole number") from None
    if value < 0:
        raise LookupError(f"{name} {value} is negative")
    return value


class Api:
    def __init__(self, catalog: Catalog, mode: str = "live"):
        self.catalog = catalog
        self.mode = mode

    def answer(self, path: str) -> Answer:
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        if len(parts) < 2 or parts[0] != "api":
            return error(404, f"no such page: /{path.strip('/')}")
        handler = _ROUTES.get(parts[1])
        if handler is None:
            return error(404, f"no such answer: /{path.strip('/')}")
        try:
            return handler(self, parts[2:])
        except CompareError as exc:
            return error(400, str(exc), "bad_compare")
        except LookupError as exc:
            return error(404, str(exc).strip("'\""))

    # -- sessions ---------------------------------------------------------------------------
    def meta(self, rest: list[str]) -> Answer:
        return as_json(
            {
                "mode": self.mode,
                "version": _version(),
                "given": [{"kind": k, "path": pages.shown_path(p)} for k, p in self.catalog.given],
            }
        )

    def sessions(self, rest: list[str]) -> Answer:
        out = [pages.entry(t, public_verdict(self.catalog.verdict(t.key))) for t in self.catalog.all_tracks()]
        out.sort(key=lambda e: e.get("started") or "", reverse=True)
        return as_json({"sessions": out})

    def session(self, rest: list[str]) -> Answer:
        if not rest:
            raise LookupError("which session? /api/session/KEY")
        track = self.catalog.track(rest[0])
        if track is None:
            raise LookupError(f"no session {rest[0]!r} in the paths this viewer was given")
        self.catalog.looked_at(track.key)
        if track.offset == 0:  # asked before the background thread reached it
            track.follow()
        verdict = public_verdict(self.catalog.verdict(track.key))
        sub, args = (rest[1], rest[2:]) if len(rest) > 1 else ("", [])
        if sub == "":
            return as_json(pages.summary(track, _short(verdict)))
        if sub == "page" and len(args) == 1:
            return as_json(pages.page(track, _int(args[0], "offset"), PAGE))
        if sub == "series" and not args:
            return as_json(pages.series(track))
        if sub == "series" and len(args) == 2:
            return as_json(pages.series(track, _int(args[0], "first"), _int(args[1], "last")))
        if sub == "step" and len(args) == 1:
            detail = pages.step_detail(track, _int(args[0], "step index"))
            if detail is None:
                raise LookupError(f"session {track.key} has no step index {args[0]} (it has {track.steps})")
            return as_json(detail)
        if sub == "verify" and not args:
            return as_json(verdict or {"state": "waiting"})
        if sub == "emulator" and not args:
            return as_json(emulator.info(track))
        if sub == "frame" and len(args) == 1:
            path = emulator.frame_file(track, args[0])
            if path is None:
                raise LookupError(f"no retained frame {args[0]!r} in session {track.key}")
            with open(path, "rb") as fh:
                return Answer(200, "image/png", fh.read())
        if sub in ("sheet", "gif") and len(args) == 3:
            return self._interval(track, sub, args)
        raise LookupError(f"no such answer: /api/session/{'/'.join(rest)}")

    def _interval(self, track, sub: str, args: list[str]) -> Answer:
        if self.mode != "live":
            return error(409, "contact sheets and GIFs are made by the live viewer", "bundle")
        first, last = _int(args[1], "from"), _int(args[2], "to")
        try:
            if sub == "sheet":
                _meta, data = emulator.sheet(track, args[0], first, last, 8)
                return Answer(200, "image/png", data)
            _meta, data = emulator.gif(track, args[0] if args[0] != "-" else None, first, last)
            return Answer(200, "image/gif", data)
        except emulator.Refused as exc:
            return error(422, str(exc), exc.code)

    # -- fleets ----------------------------------------------------------------------------
    def fleets_list(self, rest: list[str]) -> Answer:
        out = []
        for f in self.catalog.fleets.values():
            info = f.info()
            rows = f.rows()
            out.append(
                {
                    "key": f.key,
                    "name": info.get("name") or f.name,
                    "state": info.get("state"),
                    "sessions": info.get("sessions"),
                    "finished": len(rows),
                    "matrix": info.get("matrix"),
                    "error": info.get("error"),
                }
            )
        return as_json({"fleets": out})

    def fleet(self, rest: list[str]) -> Answer:
        f = self.catalog.fleets.get(rest[0]) if rest else None
        if f is None:
            raise LookupError(f"no fleet {rest[0] if rest else ''!r} in the paths this viewer was given")
        for t in self.catalog.fleet_tracks(f.key):
            self.catalog.looked_at(t.key)
        return as_json(fleets.fleet_page(self.catalog, f))

    def compare(self, rest: list[str]) -> Answer:
        get = self.catalog.fleets.get
        if len(rest) == 3 and rest[0] == "fleets":
            fa, fb = get(rest[1]), get(rest[2])
            if fa is None or fb is None:
                raise LookupError(f"no fleet {rest[1] if fa is None else rest[2]!r}")
            return as_json(fleets.compare_fleets(self.catalog, fa, fb))
        if len(rest) == 5 and rest[0] == "group":
            f = get(rest[1])
            if f is None:
                raise LookupError(f"no fleet {rest[1]!r}")
            return as_json(fleets.compare_groups(self.catalog, f, rest[2], rest[3], rest[4]))
        raise LookupError("compare what? /api/compare/fleets/A/B or /api/compare/group/FLEET/COLUMN/A/B")

    def pair(self, rest: list[str]) -> Answer:
        if len(rest) != 3:
            raise LookupError("which runs? /api/pair/SESSION_A/SESSION_B/RUN (RUN from 1)")
        run = _int(rest[2], "run")
        if run < 1:
            raise LookupError("run 0: runs are counted from 1")
        for key in rest[:2]:
            if self.catalog.track(key) is not None:
                self.catalog.looked_at(key)
        return as_json(pairs.side_by_side(self.catalog, rest[0], rest[1], run))


def _version() -> str:
    try:
        return importlib.metadata.version("gamerig")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _short(verdict: dict | None) -> dict | None:
    return None if verdict is None else {k: v for k, v in verdict.items() if k != "findings"}


_ROUTES: dict[str, Callable[[Api, list[str]], Answer]] = {
    "meta": Api.meta,
    "sessions": Api.sessions,
    "session": Api.session,
    "fleets": Api.fleets_list,
    "fleet": Api.fleet,
    "compare": Api.compare,
    "pair": Api.pair,
}
