"""Frame PNGs: whatever the palette path, the stored PNG decodes to exactly the recorded pixels."""

from __future__ import annotations

import numpy as np
import pytest

from actors.emulator.recording.frames import HEIGHT, WIDTH, PngEncoder, decode_rgba


def frame(colours: int, seed: int = 0, alpha: int = 255) -> bytes:
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 256, size=(colours, 3), dtype=np.uint8)
    picks = rng.integers(0, colours, size=WIDTH * HEIGHT)
    rgba = np.empty((WIDTH * HEIGHT, 4), np.uint8)
    rgba[:, :3] = table[picks]
    rgba[:, 3] = alpha
    return rgba.tobytes()


@pytest.mark.parametrize("colours", [1, 4, 8, 9, 200, 256, 257, 4000])
def test_every_palette_size_round_trips_exactly(colours):
    rgba = frame(colours)
    png = PngEncoder().encode(rgba)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert decode_rgba(png) == rgba


def test_a_cached_palette_that_no_longer_fits_is_replaced_not_misused():
    encoder = PngEncoder()
    first, second, third = frame(4, seed=1), frame(4, seed=2), frame(30, seed=3)
    for rgba in (first, second, first, third, first):  # each one changes the cached palette
        assert decode_rgba(encoder.encode(rgba)) == rgba


def test_translucent_pixels_keep_their_alpha():
    rgba = frame(4, alpha=128)
    assert decode_rgba(PngEncoder().encode(rgba)) == rgba
