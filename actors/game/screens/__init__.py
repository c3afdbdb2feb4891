"""One module per screen: its state block, its rules and its actions.

    menu            main menu, submenus, character select, timeline; ``menu_select``
    popups          tutorial prompt, first-time tutorials, popups (whole-state, blocking)
    saves           embark, saved runs (continue / abandon_run), start knobs, epochs
    mapscreen       map block, choose_map_node
    battle          monster/elite/boss, hand_select; play_card, end_turn; fights' ends
    potions         use_potion, discard_potion (in and out of combat)
    rewards         rewards, card_reward
    gameover        game_over ({message, options}), finish_run
    proceed         the shared ``proceed`` action
    overlay         the catch-all ``overlay``
    event           event screen, dialogue, options
    fakemerchant    fake_merchant (an event room shown as a relic shop)
    events_content  the invented events
    rooms           which room a map node builds
    cardselect      card_select (transform, upgrade, select, simple_select, choose)
    selects         bundle_select, relic_select
    crystal         crystal_sphere
    shop            shop (with card removal)
    rest            rest_site
    treasure        treasure

Importing this package registers every action in ``registry.ACTIONS``.
"""

from . import (  # noqa: F401
    battle,
    cardselect,
    crystal,
    event,
    fakemerchant,
    gameover,
    mapscreen,
    menu,
    overlay,
    potions,
    proceed,
    rest,
    rewards,
    rooms,
    selects,
    shop,
    treasure,
)
