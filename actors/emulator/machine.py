"""One headless PyBoy instance and nothing else: no recording, no policy.

The ROM goes in as bytes (``io.BytesIO``) so PyBoy never looks for ``.ram``/``.rtc`` files
beside a ROM path; battery RAM is handed in and out explicitly by the caller. ``window`` is
``"null"`` (unthrottled), sound is off unless asked, and the CGB mode is resolved here (from
the header when not forced) so the active mode is always known.
"""

from __future__ import annotations

import hashlib
import io
import os
import time
import warnings
from pathlib import Path

from .buttons import diff
from .errors import CheckpointDamaged
from .rom import RomIdentity

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # PyBoy's SDL2 import warning: we never open a window
    from pyboy import PyBoy

WIDTH, HEIGHT = 160, 144


class Machine:
    """A PyBoy instance with the held-button set tracked explicitly."""

    def __init__(self, rom: bytes, *, cgb: bool | None = None, sound: bool = False,
                 battery_ram: bytes | None = None, rtc: bytes | None = None):
        self.rom = bytes(rom)
        self.identity = RomIdentity.from_bytes(self.rom)
        self.cgb = self.identity.prefers_cgb if cgb is None else bool(cgb)
        self.sound = sound
        ram_file = io.BytesIO(battery_ram) if battery_ram and self.identity.battery else None
        rtc_file = io.BytesIO(rtc) if rtc else None
        self._pyboy = PyBoy(io.BytesIO(self.rom), window="null", sound_emulated=sound,
                            cgb=self.cgb, ram_file=ram_file, rtc_file=rtc_file, log_level="ERROR")
        self.held: frozenset[str] = frozenset()
        self.closed = False
        self.run_s = 0.0  # wall time inside PyBoy's tick (emulator_stats)

    # ---- input and time ------------------------------------------------------------------
    def hold(self, wanted: frozenset[str]) -> tuple[list[str], list[str]]:
        """Make ``wanted`` the held set; return (pressed, released)."""
        pressed, released = diff(self.held, wanted)
        for name in released:
            self._pyboy.button_release(name)
        for name in pressed:
            self._pyboy.button_press(name)
        self.held = wanted
        return pressed, released

    def run(self, frames: int) -> None:
        """Advance ``frames`` native frames; only the last one is rendered."""
        started = time.perf_counter()
        self._pyboy.tick(frames, True, self.sound)
        self.run_s += time.perf_counter() - started

    # ---- reads ---------------------------------------------------------------------------
    def rgba(self) -> bytes:
        """A copy of the current frame, 160x144 RGBA."""
        return self._pyboy.screen.ndarray.tobytes()

    def rgba_sha256(self) -> str:
        return hashlib.sha256(self._pyboy.screen.ndarray).hexdigest()

    def read(self, address: int, length: int = 1) -> bytes:
        return bytes(self._pyboy.memory[address:address + length])

    @property
    def title(self) -> str:
        return self._pyboy.cartridge_title

    # ---- state ---------------------------------------------------------------------------
    def save_state(self) -> bytes:
        buf = io.BytesIO()
        self._pyboy.save_state(buf)
        return buf.getvalue()

    def load_state(self, state: bytes, source: object = "state") -> None:
        """Load ``state`` and verify that saving it again gives the same bytes."""
        try:
            self._pyboy.load_state(io.BytesIO(state))
        except Exception as exc:  # PyBoy raises assorted errors for truncated/foreign states
            raise CheckpointDamaged(source, f"PyBoy could not load the state: {exc}") from exc
        if self.save_state() != state:
            raise CheckpointDamaged(source, "loaded state does not save back byte-identical")
        self.held = frozenset()

    def close(self, battery_path: Path | None = None) -> int:
        """Stop PyBoy; write battery RAM (and RTC) beside ``battery_path`` when the cart has it.

        Returns the number of bytes written. Files are replaced atomically.
        """
        if self.closed:
            return 0
        self.closed = True
        if battery_path is None or not self.identity.battery:
            self._pyboy.stop(save=False)
            return 0
        ram, rtc = io.BytesIO(), io.BytesIO()
        self._pyboy.stop(save=True, ram_file=ram, rtc_file=rtc)
        written = 0
        for path, data in ((battery_path, ram.getvalue()), (battery_path.with_suffix(".rtc"), rtc.getvalue())):
            if data:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(path.name + ".tmp")
                tmp.write_bytes(data)
                os.replace(tmp, path)
                written += len(data)
        return written
