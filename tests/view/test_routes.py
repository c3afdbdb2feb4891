"""The page and the server agree on the API: one description (``supervisor/view/routes.py``)
that the server routes by, the bundle names its files by, and the page reads as
``static/api.js``.

The page's own functions (``apiPath``, ``bundleName`` in common.js) are run in a real Chromium on
awkward values and must give what the server's side gives for every route; no page script
(every ``static/*.js``, each loaded by index.html after api.js) may hold an answer path or a
bundle file name of its own; every route must have its handler, and every route's path must
find that route again.
"""

from __future__ import annotations

import os
import re
import urllib.parse

import pytest

from supervisor.view import api, routes
from supervisor.view.server import STATIC

from .helpers import Viewer
from .test_browser import wait

#: values a path segment may hold: separators, escapes, spaces, non-ASCII, an astral character,
#: the characters encodeURIComponent leaves alone, and the bundle's own escape character
AWKWARD = ["plain", "a/b", "a b", "x=1 y=2", "100%", "_5f_", "é", "\U0001d11e", "!~*'()", "a.b-c_d", "?#&+"]
NUMBERS = [0, 7, 1000]


def sample(route: routes.Route, n: int) -> dict[str, str | int]:
    return {
        name: (NUMBERS[n % len(NUMBERS)] if whole else AWKWARD[(n + i) % len(AWKWARD)])
        for i, (name, whole) in enumerate(route.params.items())
    }


def test_every_route_has_its_handler_and_every_path_finds_its_own_route():
    assert set(api.HANDLERS) == {r.name for r in routes.ROUTES}
    for r in routes.ROUTES:
        for n in range(len(AWKWARD)):
            path = r.path(**sample(r, n))
            parts = [urllib.parse.unquote(p) for p in path.split("/")]
            found = routes.find(parts)
            assert found is not None and found[0] is r, (r.name, path, found)


def test_the_server_routes_by_the_description_and_names_what_is_under_a_path():
    a = api.Api(catalog=None, mode="bundle")  # type: ignore[arg-type]   # a path no route has never reaches it
    for path in ("api/nothing", "api/session", "api/session/KEY/nope", "api/compare/group/F/C/A"):
        answer = a.answer(path)
        assert answer.status == 404 and b"no such answer" in answer.body, (path, answer)
    near = a.answer("api/session/KEY/nope").body.decode()
    assert "/api/session/{key}/step/{index:int}" in near, near
    assert b"is not a whole number" in a.answer("api/pair/A/B/one").body


def page_scripts(html: str) -> list[str]:
    """The page's own scripts in the order index.html loads them (not uPlot, not api.js)."""
    loaded = re.findall(r'<script src="static/([^"]+)"></script>', html)
    return [name for name in loaded if not name.startswith("vendor/") and name != "api.js"]


def test_no_page_script_keeps_an_answer_path_or_a_bundle_name_of_its_own():
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    scripts = page_scripts(html)
    on_disk = sorted(c.name for c in STATIC.iterdir() if c.name.endswith(".js"))
    assert sorted(scripts) == on_disk, f"index.html loads {scripts}; static/ holds {on_disk}"
    assert scripts[-1] == "app.js", scripts  # the router starts the page once every page is defined
    for name in scripts:
        assert html.index('src="static/api.js"') < html.index(f'src="static/{name}"'), name
        source = (STATIC / name).read_text(encoding="utf-8")
        hand_made = re.findall(r"""["'`](?:/?api/|data/)[^"'`]*""", source)
        assert not hand_made, f"{name} builds these by hand instead of from gamerigApi: {hand_made}"


@pytest.fixture
def viewer(tmp_path):
    capture = tmp_path / "capture"
    os.makedirs(capture / "sessions")
    v = Viewer(str(capture))
    yield v
    v.close()


def test_the_page_builds_every_path_and_bundle_file_name_as_the_server_does(viewer, driver):
    status, ctype, body = viewer.get("static/api.js")
    assert status == 200 and ctype.startswith("text/javascript") and body == routes.script()
    driver.get(viewer.url)
    wait(
        driver,
        lambda d: d.execute_script("return typeof apiPath === 'function' && !!window.gamerigApi"),
        "the page and its description loaded",
    )
    cases = [(r.name, sample(r, n)) for r in routes.ROUTES for n in range(len(AWKWARD))]
    page = driver.execute_script(
        "return arguments[0].map(([name, params]) => { const p = apiPath(name, params); return [p, bundleName(p)]; });",
        cases,
    )
    server = [[routes.route(name).path(**params), None] for name, params in cases]
    for row in server:
        row[1] = routes.bundle_name(row[0])
    assert page == server
    odd = ["api/x/" + s for s in AWKWARD] + ["", "_", "\U0001d11e\u00e9", "api/meta"]
    assert driver.execute_script("return arguments[0].map(bundleName)", odd) == [routes.bundle_name(s) for s in odd]
    # the page refuses a path the description does not have, or with the wrong parameters
    refused = driver.execute_script(
        """
        const out = [];
        for (const [name, params] of arguments[0]) {
          try { apiPath(name, params); out.push(null); } catch (e) { out.push(e.message); }
        }
        return out;""",
        [["nope", {}], ["step", {"key": "k"}], ["meta", {"key": "k"}]],
    )
    assert all(refused), refused
