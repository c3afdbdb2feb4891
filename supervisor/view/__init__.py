"""``supervisor view``: a read-only web app over captures, sessions and fleets.

    catalog.py   what was given (resolved as ``capture verify`` resolves a PATH), the sessions
                 and fleets found in it, kept current; the background verifier
    track.py     one session's journal followed as it grows: a few numbers per step, rows
                 read back by offset
    metrics.py   the chart figures of one observation (HP, gold, floor, act, deck, frame)
    sessions.py  the JSON answers about sessions: list entry, summary, a page of steps, the
                 chart series, one step's evidence
    emulator.py  an emulator session's recording: status, checkpoints, branches, frames;
                 an interval's contact sheet and GIF through the review and clip code
    fleets.py    a fleet's matrix and aggregates (``supervisor.fleet.report.group_rows``),
                 comparisons (``supervisor.fleet.stats``)
    routes.py    the API described once, as data: every answer's path, the page size, how a
                 bundle names its files; the server routes by it, the bundle names files by
                 it, and the page reads it (``static/api.js``, made from it)
    api.py       the answers by path (one handler per route), shared by the server and the bundle
    server.py    the HTTP server on loopback (standard library), its Host check and headers
    bundle.py    ``--bundle``: the same answers as a static folder
    static/      the page: index.html, its scripts (common.js shared helpers, sessions.js and
                 fleets.js the pages, app.js the router), app.css, and uPlot (vendor/uplot,
                 MIT); the server adds api.js (``routes.script``)

It imports the capture tools, the fleet's results and the emulator's reader, review and clip
code; nothing imports it but ``supervisor/commands/view.py``. Nothing here writes into a
capture.
"""
