"""One headless PyBoy instance and nothing else: no recording, no policy.

The ROM goes in as bytes (``io.BytesIO``) so PyBoy never looks for ``.ram``/``.rtc`` files
beside a ROM path; battery RAM is handed in and out explicitly by the caller. ``window`` is
``"null"`` (unthrottled), sound is off unless asked, and the CGB mode is resolved here (from
the header when not forced) so the active mode is always known.
"""

from __future__ import annotations

import hashlib
import io
import time
import warnings
from pathlib import Path

from ..recording.errors import CheckpointDamaged, InvalidOption
from ..recording.rom import RAM_BANK, RomIdentity, battery_ram_size
from .battery import write_atomically
from .buttons import diff

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # PyBoy's SDL2 import warning: we never open a window
    from pyboy import PyBoy

WIDTH, HEIGHT = 160, 144
LCDC, LCD_ON = 0xFF40, 0x80
SETTLE_MAX_FRAMES = 240  # PyBoy's boot ROM turns the LCD on within a few frames


class Machine:
    """A PyBoy instance with the held-button set tracked explicitly."""

    def __init__(
        self,
        rom: bytes,
        *,
        cgb: bool | None = None,
        sound: bool = False,
        battery_ram: bytes | None = None,
        rtc: bytes | None = None,
    ):
        self.rom = bytes(rom)
        self.identity = RomIdentity.from_bytes(self.rom)
        self.cgb = self.identity.prefers_cgb if cgb is None else bool(cgb)
        self.sound = sound
        self.battery_size = battery_ram_size(self.rom)
        if battery_ram is not None and self.identity.battery and len(battery_ram) != self.battery_size:
            raise InvalidOption(
                "battery RAM",
                f"<{len(battery_ram):,} bytes>",
                f"{self.battery_size:,} bytes, this cartridge's battery RAM size",
            )
        ram_file = io.BytesIO(battery_ram) if battery_ram and self.identity.battery else None
        rtc_file = io.BytesIO(rtc) if rtc else None
        self._pyboy = PyBoy(
            io.BytesIO(self.rom),
            window="null",
            sound_emulated=sound,
            cgb=self.cgb,
            ram_file=ram_file,
            rtc_file=rtc_file,
            log_level="ERROR",
        )
        self.held: frozenset[str] = frozenset()
        self.closed = False
        self.ticked = False  # whether any frame has run on this instance
        self.wrapper_current = False  # whether PyBoy's game wrapper has updated since boot or a state load
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
        self.ticked = self.wrapper_current = True

    # ---- reads ---------------------------------------------------------------------------
    def rgba(self) -> bytes:
        """A copy of the current frame, 160x144 RGBA."""
        return self._pyboy.screen.ndarray.tobytes()

    def rgba_sha256(self) -> str:
        return hashlib.sha256(self._pyboy.screen.ndarray).hexdigest()

    def read(self, address: int, length: int = 1) -> bytes:
        return bytes(self._pyboy.memory[address : address + length])

    def read_value(self, address: int, width: int, bank: int | None = None) -> bytes:
        """``width`` bytes from ``address``: as the CPU sees them (``bank`` None), or from one
        bank (PyBoy's ``memory[bank, address]``: ROM, video RAM, cartridge RAM, work RAM;
        read a byte at a time, as PyBoy 2.8 refuses a banked slice reaching a region's end)."""
        if bank is None:
            return self.read(address, width)
        memory = self._pyboy.memory
        return bytes(memory[bank, a] for a in range(address, address + width))

    def wrapper_value(self, name: str):
        """An attribute of PyBoy's game wrapper for this cartridge (``PyBoy.game_wrapper``),
        called when it is a method (``game_over``). PyBoy updates a wrapper after each
        ``tick`` (``PyBoy._post_tick``), so before the first frame after boot or a state
        load its numbers are stale: that raises instead."""
        if not self.wrapper_current:
            raise ValueError("PyBoy's game wrapper has not run a frame since the state was loaded")
        value = getattr(self._pyboy.game_wrapper, name)
        return value() if callable(value) else value

    def battery_ram(self) -> bytes:
        """The cartridge's battery RAM as PyBoy saves it (every RAM bank), without stopping;
        empty for a cartridge without a battery."""
        if not self.identity.battery:
            return b""
        memory, out = self._pyboy.memory, bytearray()
        for bank in range(self.battery_size // RAM_BANK):
            # PyBoy 2.8 refuses a slice reaching 0xC000 (its bound check is off by one)
            out += bytes(memory[bank, 0xA000:0xBFFF])
            out.append(memory[bank, 0xBFFF])
        return bytes(out)

    @property
    def title(self) -> str:
        return self._pyboy.cartridge_title

    # ---- state ---------------------------------------------------------------------------
    def save_state(self) -> bytes:
        buf = io.BytesIO()
        self._pyboy.save_state(buf)
        return buf.getvalue()

    def load_state(self, state: bytes, source: object = "state") -> None:
        """Load ``state`` and verify that saving it again gives the same bytes.

        A fresh instance first settles its renderer (:meth:`settle_renderer`), so the
        frames after the load are the frames the original route showed."""
        if not self.ticked:
            self.settle_renderer()
        try:
            self._pyboy.load_state(io.BytesIO(state))
        except Exception as exc:  # PyBoy raises assorted errors for truncated/foreign states
            raise CheckpointDamaged(source, f"PyBoy could not load the state: {exc}") from exc
        if self.save_state() != state:
            raise CheckpointDamaged(source, "loaded state does not save back byte-identical")
        self.held = frozenset()
        self.wrapper_current = False

    def settle_renderer(self) -> None:
        """Bring the one piece of renderer state PyBoy keeps outside its save states to where
        every running instance has it.

        That piece is the window's internal line counter (``Renderer.ly_window`` in PyBoy
        2.8's ``core/lcd.py``): a new instance starts it at 0, and every frame drawn to its
        last line leaves it at -1. ``load_state`` does not touch it, so a state loaded into a
        new instance drew the window one line off in the first frame after the load -- the
        "glitched first render" after a restore or a crash resume, on any cartridge that
        uses the window. The boot ROM is run here until one frame has been drawn whole with
        the LCD on (on at the end of that frame and of the one before it); the state loaded
        next replaces everything else the boot ROM changed.
        """
        lcd_was_on = False
        for _ in range(SETTLE_MAX_FRAMES):
            self._pyboy.tick(1, True, False)
            lcd_on = bool(self._pyboy.memory[LCDC] & LCD_ON)
            if lcd_on and lcd_was_on:
                break
            lcd_was_on = lcd_on
        self.ticked = True

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
                write_atomically(path, data)  # the player's save: a power cut keeps the old or the new
                written += len(data)
        return written
