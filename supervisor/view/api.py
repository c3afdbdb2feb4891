"""The viewer's answers, by path: ``Api(catalog).answer("api/session/KEY/page/0")``.

The live server and the static bundle both call ``answer``, so a bundle holds exactly what the
server would have said. Which paths there are is ``routes.ROUTES`` (the one description the page
reads too): ``answer`` finds the route a path has the shape of and calls its handler here, one
per route (``HANDLERS``, by the route's name; a handler is named for what it answers).

An answer is ``Answer(status, content_type, body)``. A path that names nothing is a 404 with
a JSON error naming it; a refused interval is a 422 with the emulator code's own message; a
comparison of an arm with no session or no run is a 400 naming the arm (``compare.CompareError``);
a contact sheet or GIF asked of a bundle is a 409.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import urllib.parse
from collections.abc import Callable
from typing import Any, Final

from supervisor.fleet.compare import CompareError

from . import emulator, fleets, pairs, routes, sessions
from .catalog import Catalog, Fleet, public_verdict
from .routes import PAGE, Route
from .track import Track

JSON: Final = "application/json; charset=utf-8"
TYPES: Final = {"json": JSON, "png": "image/png", "gif": "image/gif"}


@dataclasses.dataclass(frozen=True)
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


@dataclasses.dataclass(frozen=True)
class Args:
    """A matched path's parameters (decoded), whole numbers already checked by ``Route.match``."""

    route: Route
    values: dict[str, str]

    def text(self, name: str) -> str:
        return self.values[name]

    def number(self, name: str) -> int:
        if not self.route.params.get(name):
            raise KeyError(f"{self.route.name} has no whole-number parameter {name!r}")
        return int(self.values[name])


Handler = Callable[["Api", Args], Answer]


class Api:
    def __init__(self, catalog: Catalog, mode: str = "live") -> None:
        self.catalog = catalog
        self.mode = mode

    def answer(self, path: str) -> Answer:
        shown = "/" + path.strip("/")
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        try:
            found = routes.find(parts)
            if found is None:
                near = routes.under(parts)
                raise LookupError(f"no such answer: {shown}" + (f" (there are {', '.join(near)})" if near else ""))
            route, values = found
            return HANDLERS[route.name](self, Args(route, values))
        except CompareError as exc:
            return error(400, str(exc), "bad_compare")
        except LookupError as exc:
            return error(404, str(exc).strip("'\""))

    # -- sessions ---------------------------------------------------------------------------
    def meta(self, args: Args) -> Answer:
        return as_json(
            {
                "mode": self.mode,
                "version": _version(),
                "given": [{"kind": k, "path": sessions.shown_path(p)} for k, p in self.catalog.given],
            }
        )

    def session_list(self, args: Args) -> Answer:
        out = [sessions.entry(t, public_verdict(self.catalog.verdict(t.key))) for t in self.catalog.all_tracks()]
        out.sort(key=lambda e: str(e.get("started") or ""), reverse=True)
        return as_json({"sessions": out})

    def _track(self, args: Args) -> Track:
        """The session ``args`` names, marked looked at (it is read first), its journal begun."""
        key = args.text("key")
        track = self.catalog.track(key)
        if track is None:
            raise LookupError(f"no session {key!r} in the paths this viewer was given")
        self.catalog.looked_at(track.key)
        if track.offset == 0:  # asked before the background thread reached it
            track.follow()
        return track

    def _verdict(self, track: Track) -> dict[str, Any] | None:
        return public_verdict(self.catalog.verdict(track.key))

    def session(self, args: Args) -> Answer:
        track = self._track(args)
        return as_json(sessions.summary(track, _short(self._verdict(track))))

    def page(self, args: Args) -> Answer:
        return as_json(sessions.page(self._track(args), args.number("offset"), PAGE))

    def series(self, args: Args) -> Answer:
        return as_json(sessions.series(self._track(args)))

    def series_range(self, args: Args) -> Answer:
        return as_json(sessions.series(self._track(args), args.number("first"), args.number("last")))

    def step(self, args: Args) -> Answer:
        track = self._track(args)
        detail = sessions.step_detail(track, args.number("index"))
        if detail is None:
            raise LookupError(f"session {track.key} has no step index {args.text('index')} (it has {track.steps})")
        return as_json(detail)

    def verify(self, args: Args) -> Answer:
        track = self._track(args)
        return as_json(self._verdict(track) or {"state": "waiting"})

    def recording(self, args: Args) -> Answer:
        return as_json(emulator.info(self._track(args)))

    def frame(self, args: Args) -> Answer:
        track = self._track(args)
        path = emulator.frame_file(track, args.text("name"))
        if path is None:
            raise LookupError(f"no retained frame {args.text('name')!r} in session {track.key}")
        with open(path, "rb") as fh:
            return Answer(200, TYPES[args.route.holds], fh.read())

    def sheet(self, args: Args) -> Answer:
        track = self._track(args)
        return self._interval(
            args, lambda: emulator.sheet(track, args.text("branch"), args.number("first"), args.number("last"), 8)[1]
        )

    def gif(self, args: Args) -> Answer:
        track = self._track(args)
        branch = args.text("branch")
        return self._interval(
            args,
            lambda: emulator.gif(track, branch if branch != "-" else None, args.number("start"), args.number("end"))[1],
        )

    def _interval(self, args: Args, make: Callable[[], bytes]) -> Answer:
        if self.mode != "live":
            return error(409, "contact sheets and GIFs are made by the live viewer", "bundle")
        try:
            return Answer(200, TYPES[args.route.holds], make())
        except emulator.Refused as exc:
            return error(422, str(exc), exc.code)

    # -- fleets ----------------------------------------------------------------------------
    def fleet_list(self, args: Args) -> Answer:
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

    def _fleet(self, key: str) -> Fleet:
        f = self.catalog.fleets.get(key)
        if f is None:
            raise LookupError(f"no fleet {key!r} in the paths this viewer was given")
        return f

    def fleet(self, args: Args) -> Answer:
        f = self._fleet(args.text("key"))
        for t in self.catalog.fleet_tracks(f.key):
            self.catalog.looked_at(t.key)
        return as_json(fleets.fleet_page(self.catalog, f))

    def compare_fleets(self, args: Args) -> Answer:
        fa, fb = self._fleet(args.text("a")), self._fleet(args.text("b"))
        return as_json(fleets.compare_fleets(self.catalog, fa, fb))

    def compare_group(self, args: Args) -> Answer:
        f = self._fleet(args.text("fleet"))
        return as_json(fleets.compare_groups(self.catalog, f, args.text("column"), args.text("a"), args.text("b")))

    def pair(self, args: Args) -> Answer:
        run = args.number("run")
        if run < 1:
            raise LookupError("run 0: runs are counted from 1")
        a, b = args.text("a"), args.text("b")
        for key in (a, b):
            if self.catalog.track(key) is not None:
                self.catalog.looked_at(key)
        return as_json(pairs.side_by_side(self.catalog, a, b, run))


def _version() -> str:
    try:
        return importlib.metadata.version("gamerig")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _short(verdict: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if verdict is None else {k: v for k, v in verdict.items() if k != "findings"}


#: every route's handler, by the route's name (``routes.ROUTES``); a route without one, or a
#: handler without a route, stops the import
HANDLERS: Final[dict[str, Handler]] = {
    "meta": Api.meta,
    "sessions": Api.session_list,
    "session": Api.session,
    "page": Api.page,
    "series": Api.series,
    "series_range": Api.series_range,
    "step": Api.step,
    "verify": Api.verify,
    "emulator": Api.recording,
    "frame": Api.frame,
    "sheet": Api.sheet,
    "gif": Api.gif,
    "fleets": Api.fleet_list,
    "fleet": Api.fleet,
    "compare_fleets": Api.compare_fleets,
    "compare_group": Api.compare_group,
    "pair": Api.pair,
}
if set(HANDLERS) != set(routes.BY_NAME):
    raise ImportError(
        f"routes without a handler: {sorted(set(routes.BY_NAME) - set(HANDLERS))}; "
        f"handlers without a route: {sorted(set(HANDLERS) - set(routes.BY_NAME))}"
    )
