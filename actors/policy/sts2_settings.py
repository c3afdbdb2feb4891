"""``policy.settings`` of the built-in STS2MCP policy, checked when the policy is built: an
unknown key or a value of the wrong kind is refused with an error naming the key, what was
expected and what was given (docs/policy.md lists them)."""

from __future__ import annotations

from typing import Any

NUMBER = (int, float)
# key: (accepted types or values, default, what the error says is expected)
KNOWN: dict[str, tuple[Any, Any, str]] = {
    "character": ((str, type(None)), None, "a character id"),
    "saved_run": (("continue", "abandon"), "continue", "'continue' or 'abandon'"),
    "take_card_rewards": ((bool,), True, "true or false"),
    "tutorials": ((bool,), False, "true or false"),
    "consult_model": ((bool,), True, "true or false"),
    "model_deadline_s": ((*NUMBER, type(None)), None, "a number of seconds"),
    "no_effect_reads": ((int,), 4, "a whole number of reads >= 1"),
    "no_effect_seconds": (NUMBER, 5.0, "a number of seconds >= 0"),
    "stall_reads": ((int,), 10, "a whole number of reads >= 1"),
    "stall_after_seconds": ((*NUMBER, type(None)), None, "a number of seconds >= 0"),
    "run_seed": ((str, int, type(None)), None, "a seed: non-blank text or a whole number >= 1"),
}


def read_settings(settings: dict) -> dict:
    """The settings with their defaults; ``ValueError`` names the first bad one."""
    if not isinstance(settings, dict):
        raise ValueError(f"policy.settings: expected a mapping, got {settings!r}")
    unknown = sorted(set(settings) - set(KNOWN))
    if unknown:
        raise ValueError(
            f"policy.settings.{unknown[0]}: unknown setting of the sts2 policy (known: {', '.join(sorted(KNOWN))})"
        )
    out = {}
    for key, (accepted, default, expected) in KNOWN.items():
        value = settings.get(key, default)
        blank_seed = key == "run_seed" and isinstance(value, str) and not value.strip()
        if not _fits(value, accepted) or blank_seed:  # the mod takes a blank seed for none
            raise ValueError(f"policy.settings.{key}: expected {expected}, got {value!r}")
        out[key] = value
    return out


def _fits(value, accepted) -> bool:
    if all(isinstance(a, str) for a in accepted):
        return value in accepted
    if isinstance(value, bool):
        return bool in accepted
    if not isinstance(value, accepted):
        return False
    if isinstance(value, NUMBER):  # counts of reads start at 1, seconds at 0
        return value >= (0 if float in accepted else 1)
    return True
