"""``supervisor view --bundle OUT PATH...``: the viewer's pages as a static folder.

The bundle holds the page (``index.html`` marked ``data-mode="bundle"``), its static files,
and every answer the pages ask for (the side-by-side runs of every pair a comparison lists
among them), each as ``data/<routes.bundle_name(path)>.js`` calling
``gamerigData(path, answer)`` (a script, not a fetched file, so the folder opens from disk
as well as from any static server), and every retained frame as its PNG; the paths are built
and the files named by ``routes`` (``Route.path``, ``bundle_name``, ``BUNDLE``), the same
description the page reads. The answers are
the live server's own (``api.Api.answer``) once every journal was followed to its end, every
observation figure read and every session verified.

What a bundle leaves out: step details past ``max_steps`` steps of a session (the timeline
and charts still cover every step; the page says a step is not in the bundle), and contact
sheets and GIFs of intervals, which are made on request by the live viewer.

OUT must be new or empty, and outside every given path: a bundle never writes into a capture.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable

from .api import Api
from .catalog import Catalog, Verifier
from .fleets import all_group_pairs
from .routes import BUNDLE, PAGE, bundle_name, route
from .server import static_files

DEFAULT_MAX_STEPS = 5000


class BundleError(Exception):
    pass


def check_out(out: str, catalog: Catalog) -> str:
    out = os.path.abspath(out)
    real = os.path.realpath(out)
    for given in catalog.allowed:
        if real == given or real.startswith(given + os.sep):
            raise BundleError(
                f"{out} is inside {given}: a bundle never writes into a capture; choose a folder outside it"
            )
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise BundleError(f"{out} exists and is not an empty folder: choose a new one")
    return out


def settle(catalog: Catalog, progress: Callable[[str], None]) -> None:
    """Follow every journal to its end, read every figure, verify every session."""
    for t in catalog.all_tracks():
        catalog.looked_at(t.key)
    while True:
        read = catalog.follow_all(max_lines=50000)
        for t in catalog.all_tracks():
            catalog.looked_at(t.key)
        figures = catalog.read_figures(limit=5000)
        pending = sum(t.steps - t.figures_read for t in catalog.all_tracks())
        progress(f"reading journals and observations: {pending} observations left")
        if not read and not figures:
            break
    verifier = Verifier(catalog)
    tracks = catalog.all_tracks()
    for n, t in enumerate(tracks, 1):
        progress(f"verifying {n}/{len(tracks)}: {t.id}")
        verifier.verify(t)


def paths(catalog: Catalog, api: Api, max_steps: int) -> Iterable[str]:
    yield route("meta").path()
    yield route("sessions").path()
    yield route("fleets").path()
    for t in catalog.all_tracks():
        key = t.key
        yield route("session").path(key=key)
        yield route("series").path(key=key)
        yield route("verify").path(key=key)
        for offset in range(0, max(1, t.steps), PAGE):
            yield route("page").path(key=key, offset=offset)
        for i in range(min(t.steps, max_steps)):
            yield route("step").path(key=key, index=i)
        if t.emulator is not None:
            yield route("emulator").path(key=key)
    keys = list(catalog.fleets)
    compared = []
    group = route("compare_group")
    for k in keys:
        yield route("fleet").path(key=k)
        for column, va, vb in all_group_pairs(catalog.fleets[k]):
            compared += [group.path(fleet=k, column=column, a=va, b=vb), group.path(fleet=k, column=column, a=vb, b=va)]
    compared += [route("compare_fleets").path(a=a, b=b) for a in keys for b in keys if a != b]
    sides: dict[str, None] = {}
    for path in compared:
        yield path
        for pair in pairs_of(api, path):
            sides[pair] = None
    yield from sides


def pairs_of(api: Api, compare_path: str) -> list[str]:
    """The side-by-side answers a comparison's page links to (its pairs' first runs)."""
    a = api.answer(compare_path)
    if a.status != 200:
        return []
    arms = json.loads(a.body).get("arms") or {}
    return [
        route("pair").path(a=p["a"]["session"], b=p["b"]["session"], run=1)
        for p in arms.get("pair_list") or ()
        if p["a"].get("session") and p["b"].get("session")
    ]


def frames(catalog: Catalog, api: Api) -> Iterable[str]:
    for t in catalog.all_tracks():
        if t.emulator is None:
            continue
        info = json.loads(api.answer(route("emulator").path(key=t.key)).body)
        names = {s["png"] for s in info.get("samples") or [] if s.get("png")}
        frames_dir = os.path.join(t.dir, "recording", "frames")
        try:
            names |= {n for n in os.listdir(frames_dir) if n.endswith(".png")}
        except OSError:
            pass
        for name in sorted(names):
            yield route("frame").path(key=t.key, name=name)


def write(
    out: str,
    paths_: list[str] | None = None,
    *,
    catalog: Catalog,
    max_steps: int = DEFAULT_MAX_STEPS,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Write the bundle; return counts."""
    say = progress or (lambda _msg: None)
    out = check_out(out, catalog)
    settle(catalog, say)
    api = Api(catalog, "bundle")
    folder = os.path.join(out, BUNDLE["folder"])
    os.makedirs(folder, exist_ok=True)
    files = static_files()
    for name, data in files.items():
        if name == "index.html":
            data = data.replace(b'data-mode="live"', b'data-mode="bundle"')
        target = os.path.join(out, "index.html" if name == "index.html" else os.path.join("static", name))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(data)
    answers, size, started = 0, 0, time.monotonic()
    for path in paths(catalog, api, max_steps):
        a = api.answer(path)
        body = BUNDLE["callback"].encode() + b"(" + json.dumps(path).encode() + b"," + a.body + b");\n"
        with open(os.path.join(folder, bundle_name(path) + BUNDLE["script"]), "wb") as fh:
            fh.write(body)
        answers += 1
        size += len(body)
        if answers % 500 == 0:
            say(f"writing answers: {answers}")
    images = 0
    for path in frames(catalog, api):
        a = api.answer(path)
        if a.status != 200:
            continue
        with open(os.path.join(folder, bundle_name(path)), "wb") as fh:
            fh.write(a.body)
        images += 1
        size += len(a.body)
    return {
        "out": out,
        "sessions": len(catalog.all_tracks()),
        "fleets": len(catalog.fleets),
        "answers": answers,
        "frames": images,
        "bytes": size,
        "seconds": round(time.monotonic() - started, 2),
    }


def tty_progress(stream=sys.stderr) -> Callable[[str], None]:
    if not stream.isatty():
        return lambda _msg: None

    def say(msg: str) -> None:
        stream.write("\r\x1b[K" + msg[:100])
        stream.flush()

    return say
