"""Menu, tutorial/popup and game-over rules of the built-in STS2MCP policy.

The mod puts a menu's fields at the top level of the state (McpMod.StateBuilder.cs
``BuildGameState``): ``menu_screen``, ``message``, ``options`` (strings on the main menu,
``{name, enabled}`` objects elsewhere), ``blocked_options``, ``characters``, ``body``.
Tutorial and popup states (McpMod.Helpers.cs ``BuildVisibleFtueState`` /
``BuildVisiblePopupState``) replace the whole state, mid-run too; ``menu_select`` with one of
their advertised options is the only action they accept (McpMod.Actions.cs
``ExecuteMenuSelect``).
"""

from __future__ import annotations

from .base import Proposal

# a popup we did not ask for: the mildest answer first (an informational "ok" closes it;
# "no"/"cancel" refuse whatever it proposes)
POPUP_PREFERENCE = (
    "ok",
    "okay",
    "close",
    "got_it",
    "continue",
    "proceed",
    "confirm",
    "accept",
    "no",
    "cancel",
    "back",
    "yes",
)
LEAVE = ("back", "close", "cancel", "no")


def option_name(option) -> str:
    return option if isinstance(option, str) else str((option or {}).get("name", ""))


def enabled_names(options) -> list[str]:
    """Names of the options that can be chosen (strings always; objects when ``enabled``)."""
    return [
        option_name(o) for o in options or [] if isinstance(o, str) or (isinstance(o, dict) and o.get("enabled", True))
    ]


def pick(name: str, reason: str, **extra) -> Proposal:
    return Proposal("menu_select", {"option": name}, reason, extra=dict(extra))


def menu(policy, st: dict, _block: dict) -> list[Proposal]:
    screen = st.get("menu_screen")
    names = enabled_names(st.get("options"))
    if screen in ("tutorial_prompt", "tutorial", "popup"):
        return blocking_popup(policy, screen, names)
    if screen == "character_select":
        return character_select(policy, st, names)
    if screen == "main":
        return main_menu(policy, names)
    if screen == "singleplayer":
        if "standard" in names:
            return [pick("standard", "singleplayer: a standard run")]
        return (
            [pick("back", "singleplayer: no standard run offered")]
            if "back" in names
            else [Proposal.wait(f"singleplayer menu without a standard run ({names})")]
        )
    if screen == "profile_select":
        profiles = [n for n in names if n.startswith("profile_")]
        return (
            [pick(profiles[0], "choose the first profile")]
            if profiles
            else [Proposal.wait(f"profile select without a profile ({names})")]
        )
    leave = [pick(n, f"menu {screen!r}: leave towards the main menu") for n in LEAVE if n in names]
    return leave or [Proposal.wait(f"menu {screen!r}: {st.get('message') or 'no way into a run'} ({names})")]


def blocking_popup(policy, screen: str, names: list[str]) -> list[Proposal]:
    """Tutorials and popups: dismissed with an advertised option; the run's memory waits."""
    if screen == "tutorial_prompt":  # no tutorials for a bot, unless asked (settings.tutorials)
        order = ("yes", "no") if policy.settings.get("tutorials") else ("no", "yes")
    elif screen == "tutorial":
        order = ("advance", "proceed")
    elif policy.ctx.abandon_requested:
        # the abandon we asked for: "yes", else the popup's first option - the Yes button is
        # listed first whatever its label (McpMod.Helpers.cs GetPopupOptions)
        agree = [n for n in ("yes", "confirm", "ok") if n in names] or names[:1]
        order = tuple(agree) + POPUP_PREFERENCE
    else:
        order = POPUP_PREFERENCE
    ranked = [n for n in order if n in names] + [n for n in names if n not in order]
    out = [pick(n, f"dismiss the {screen} with {n!r}", popup_screen=screen) for n in ranked]
    return out or [Proposal.wait(f"{screen} without an enabled option: read again")]


def main_menu(policy, names: list[str]) -> list[Proposal]:
    saved = policy.settings.get("saved_run", "continue")
    if "continue" in names and saved != "abandon":
        return [
            pick(
                "continue",
                "a saved run: continue it (joining the run in progress)",
                session_join={"how": "continue_saved_run"},
            )
        ]
    if "abandon_run" in names and saved == "abandon":
        return [pick("abandon_run", "a saved run: abandon it (policy.settings.saved_run: abandon)", abandon_run=True)]
    if "singleplayer" in names:
        return [pick("singleplayer", "main menu: singleplayer")]
    return [Proposal.wait(f"main menu without singleplayer ({names})")]


def character_select(policy, st: dict, names: list[str]) -> list[Proposal]:
    if policy.ctx.character_picked:
        ready = [n for n in ("embark", "confirm") if n in names]
        if ready:
            # the run's seed, while one is asked and the game has not refused it (run_state.RunSeed)
            seed = policy.run.seed.embark_parameters()
            why = f", seed {seed['seed']!r} (policy.settings.run_seed)" if seed else ""
            return [Proposal("menu_select", {"option": ready[0], **seed}, f"{ready[0]} with the picked character{why}")]
        return [Proposal.wait("character picked; awaiting embark to be enabled")]
    chars = [c for c in st.get("characters") or [] if isinstance(c, dict) and not c.get("locked")]
    ids = [c.get("id") for c in chars if c.get("id") in names] or [
        n for n in names if n not in ("confirm", "embark", "back", "unready")
    ]
    want = str(policy.settings.get("character") or "").lower()  # the mod matches case-insensitively
    cid = next((i for i in ids if str(i).lower() == want), ids[0] if ids else None)
    if cid is None:
        return [Proposal.wait(f"no unlocked character to pick ({names})")]
    return [Proposal("menu_select", {"option": cid}, f"pick character {cid}", extra={"character_pick": True})]


def game_over(policy, st: dict, block: dict) -> list[Proposal]:
    """``game_over`` is exactly ``{message, options}``: the outcome is not in it. It is inferred
    from the player's hp (0: defeat) and recorded as inferred."""
    names = enabled_names(block.get("options")) or ["main_menu"]
    outcome = infer_outcome(st)
    stop = policy.session.get("stop_on_run_end", True)
    return [
        Proposal(
            "menu_select",
            {"option": names[0]},
            f"run over ({outcome['outcome']}, inferred from {outcome['inferred_from']}): dismiss",
            then_stop="run_ended" if stop else None,
            source="stop_on_run_end" if stop else "policy",
            extra={"run_outcome": outcome},
        )
    ]


def infer_outcome(st: dict) -> dict:
    player = st.get("player") if isinstance(st.get("player"), dict) else {}
    hp = player.get("hp")
    if not isinstance(hp, (int, float)):
        return {"outcome": "unknown", "inferred_from": "no player hp in the game-over state", "hp": None}
    return {
        "outcome": "defeat" if hp <= 0 else "victory",
        "inferred_from": "player.hp",
        "hp": hp,
        "act": (st.get("run") or {}).get("act"),
        "floor": (st.get("run") or {}).get("floor"),
    }


def menu_escapes(policy, st: dict, _block: dict) -> list[Proposal]:
    """The advertised options, then the options the game's own refusals name.

    ``ExecuteMenuSelect`` routes by what is on screen, in its own order: a game-over screen
    first, then tutorials and popups (McpMod.Actions.cs). So a popup shown over the game over
    advertises ``yes``/``no`` while every ``menu_select`` is answered "Unknown game over option:
    yes. Use: main_menu" — the only way out is the option the refusal names."""
    names = enabled_names(st.get("options"))
    extra = (
        {"popup_screen": st.get("menu_screen")}
        if st.get("menu_screen") in ("tutorial_prompt", "tutorial", "popup")
        else {}
    )
    suggested = [n for n in suggested_options(policy.stall.history) if n not in names]
    return [pick(n, f"option {n!r}", **extra) for n in names] + [
        pick(n, f"option {n!r}, named by the game's refusal", **extra) for n in suggested
    ]


def suggested_options(history) -> list[str]:
    """Options named by ``Use: a, b`` in the game's recent refusal texts, newest first."""
    out: list[str] = []
    for entry in reversed(list(history)):
        text = str(entry.get("error") or "")
        if "Use: " not in text:
            continue
        for name in text.rsplit("Use: ", 1)[1].split(","):
            name = name.strip().rstrip(".")
            if name and " " not in name and name not in out:
                out.append(name)
    return out


def game_over_escapes(policy, st: dict, block: dict) -> list[Proposal]:
    return [pick("main_menu", "back to the main menu")]


__all__ = [
    "menu",
    "game_over",
    "menu_escapes",
    "game_over_escapes",
    "enabled_names",
    "option_name",
    "infer_outcome",
    "suggested_options",
]
