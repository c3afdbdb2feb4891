"""Which ``vendor/sts2mcp`` sample a state answers to: ``classify(state) -> sample name``
(one classifier for the contract test, the campaign and ``supervisor capture coverage``: it
lives in ``supervisor/capture/coverage.py`` and is re-exported here).

Names are ``<state_type>[__<variant>]`` (vendor/sts2mcp/README.md), refined the way the mod's
``BuildGameState`` (McpMod.StateBuilder.cs) and its builders tell screens apart:

    menu                  menu__<menu_screen>; a main menu offering continue/abandon_run is
                          menu__main_saved_run; a popup whose body is null menu__popup_no_body
    monster|elite|boss    no battle: <kind>__combat_ended; battle {error}: monster__no_combat_state;
                          a monster fight on the enemy's turn: monster__enemy_turn
    hand_select           __selected once selected_cards is shown
    rest_site             __used once can_proceed is true
    shop, fake_merchant   __not_ready with an inventory error; fake_merchant __fight_started
    treasure              __loading / __opening by message, plain with relics, __claimed without
    crystal_sphere        __done once can_proceed is true
    event                 __ancient_dialogue while in_dialogue
    map                   __start without current_position
    card_select           card_select__<screen_type>
    unknown               __no_run_state without run; __room_type with a room_type string

``classify_compendium(body)`` names a ``GET /api/v1/compendium`` answer the same way
(``compendium``, ``compendium__no_run``, ``__run_no_save``, ``__run_parse_error``).

The pipeline's conformance campaign reuses ``classify``, ``sample_names``,
``required_samples`` and ``coverage_table(seen_counts)`` to print its coverage table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from supervisor.capture.coverage import classify

from .shapes import SAMPLES, load_variance_file

__all__ = ["classify", "classify_compendium", "coverage_table", "required_samples", "sample_names"]


def sample_names(kind: str = "state") -> list[str]:
    """Sample names of one kind: ``state`` (screens), ``reply`` or ``compendium``."""
    names = sorted(p.stem for p in SAMPLES.glob("*.json") if p.stem != "variance")
    if kind == "reply":
        return [n for n in names if n.startswith("reply__")]
    if kind == "compendium":
        return [n for n in names if n.startswith("compendium")]
    return [n for n in names if not n.startswith(("reply__", "compendium"))]


def required_samples() -> list[str]:
    """Every sample the built-in game must produce (variance.json lists the exceptions)."""
    optional = set(load_variance_file()["not_required_of_builtin"])
    names = sample_names("state") + sample_names("reply") + sample_names("compendium")
    return [n for n in names if n not in optional]


def coverage_table(seen: Mapping[str, int], names: Iterable[str] | None = None) -> str:
    """One line per sample: how many answers matched it; ``never`` marks the missing ones.
    Names seen that are no sample are listed last as ``(no sample)``."""
    names = list(names if names is not None else required_samples())
    width = max(map(len, [*names, *seen]), default=10)
    lines = [f"{n:<{width}}  {seen[n] if seen.get(n) else 'never'}" for n in names]
    lines += [
        f"{n:<{width}}  {c} (no sample)"
        for n, c in sorted(seen.items())
        if n not in names and not (SAMPLES / f"{n}.json").exists()
    ]
    return "\n".join(lines)


def classify_compendium(body: Any) -> str:
    """The sample name for one ``GET /api/v1/compendium`` answer (HTTP 200)."""
    if not isinstance(body, dict) or "current_run" not in body:
        return "reply__compendium_no_profile"
    current = body["current_run"]
    if current is None:
        return "compendium__no_run"
    if isinstance(current, dict) and "limitation" in current:
        return "compendium__run_no_save"
    if isinstance(current, dict) and "parse_error" in current:
        return "compendium__run_parse_error"
    return "compendium"
