"""The built-in game: a small, invented, seeded Slay-the-Spire-like game served over HTTP
with the exact shape of the STS2MCP mod's API (see docs/game.md).

Modules:
    knobs         ``Knobs`` — the hostile knobs, all off by default.
    errors        the exception tree (``GameError`` › ``ActionRefused`` / ``ParamTypeError``).
    rng           named, seeded ``random.Random`` streams (no global random anywhere).
    content       cards, relics, potions, characters (data only).
    bestiary      monsters, their moves and the encounters of the act.
    mapgen        the act map: nodes, children, node types.
    model         run-time records: card instances, the run, rooms.
    combat        combat rules: energy, block, statuses, intents, enemy turns.
    views         JSON builders shared by screens (cards, player, relics, potions).
    registry      the action registry: lazy parameter reads and ``@action`` handlers.
    world         ``World``: what screens, run flow, progress and identity may use of
                  the game (a Protocol; ``engine.Game`` implements it, screens never
                  import the engine).
    engine        ``Game``: screen detection, the queued-effect model, read timers.
    render        the rendering rule: a screen's block, or ``TopLevel`` fields.
    progress      the profile's progress: ``/api/v1/profile`` and the compendium.
    runflow       run start, entering map nodes, the next act (screens register the
                  room builders in ``runflow.HOOKS``).
    identity      compendium ``current_run`` (run identity from "save metadata").
    markdown      the ``?format=markdown`` rendering of a state.
    endpoints     the non-gameplay endpoints: ``/``, compendium, profile, profiles,
                  the multiplayer route's view.
    wiki          ``/api/v1/wiki``: fuzzy search over the profile's discovered cards/relics.
    intent_check  journal-backed check that each POST was recorded before it arrived.
    http          ``start_server`` and the ThreadingHTTPServer request handler.
    cli           ``main(argv)``: the standalone command line.
    __main__      ``python -m actors.game``: the supervised game actor, or ``cli.main``.
    screens/      one module per screen: its state block and its actions.
"""
