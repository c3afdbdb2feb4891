"""Shared hypothesis strategies: JSON-like and YAML-like values, hostile leaves included."""

from __future__ import annotations

from hypothesis import strategies as st

#: Leaves that break naive readers: non-finite floats, huge ints, odd text, bytes.
HOSTILE_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["", "\x00", "NaN", "-1", "1e400"])
)


#: The keys of ``trees``' maps by default: short text, empty and odd characters included.
SHORT_KEYS = st.text(max_size=10)


def trees(leaves=HOSTILE_LEAVES, keys=SHORT_KEYS, max_leaves: int = 25):
    """Nested lists and string-keyed maps of ``leaves``."""
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
        max_leaves=max_leaves,
    )


def deep_nesting(depth: int, opener: str = "[", closer: str = "]") -> str:
    """A value nested ``depth`` levels deep (deeper than Python's recursion limit)."""
    return opener * depth + closer * depth
