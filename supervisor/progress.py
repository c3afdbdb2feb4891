"""The one-line live progress display of ``supervisor start``.

On a terminal the line is redrawn in place; otherwise (piped, CI) a plain line is printed
every few seconds. ``supervisor.progress: off`` silences it.
"""

from __future__ import annotations

import sys
import time

from supervisor.capture.modeluse import short_count


class Progress:
    def __init__(self, mode: str = "auto", stream=None):
        self.stream = stream or sys.stderr
        tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.mode = ("line" if tty else "plain") if mode == "auto" else mode
        self.started = time.monotonic()
        self._last = 0.0
        self._width = 0

    def update(self, watch, restarts: int, force: bool = False, emulator: dict | None = None) -> None:
        """``emulator``: the emulator actor's status (``frames_run``, ``frame_budget``), shown
        as ``frames N/BUDGET`` -- reaching the budget (``maxFrames``) ends the session."""
        if self.mode == "off":
            return
        now = time.monotonic()
        every = 0.2 if self.mode == "line" else 5.0
        if not force and now - self._last < every:
            return
        self._last = now
        o = watch.outcomes
        text = (
            f"steps {watch.steps}  accepted {o['accepted']}  rejected {o['rejected']}  "
            f"unknown {o['unknown']}  restarts {restarts}  "
            f"screen {watch.last_state_type or '-'}{_frames(emulator)}{_model(watch)}  "
            f"elapsed {now - self.started:6.1f}s"
        )
        if self.mode == "line":
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self._width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.mode == "line" and self._width:
            self.stream.write("\n")
            self.stream.flush()


def _model(watch) -> str:
    """``  model 12 ok 0 err 2 fallback 41k tok $0.0123``: answers, errors, fallbacks (when
    any), reported tokens and the known
    cost (``$?`` when no call's cost is known, ``$0.0123+?`` when some are not), once the
    session asked a model."""
    m = watch.model
    if not (m.answers or m.errors):
        return ""
    tokens = short_count(m.total_tokens) if m.total_tokens or m.priced_calls else "?"
    spent = f" {tokens} tok {m.cost_short()}" if m.priced_calls or m.cost_unknown_calls else ""
    fell = f" {m.fallbacks} fallback" if m.fallbacks else ""  # decisions the model's answer did not make
    return f"  model {m.answers} ok {m.errors} err{fell}{spent}"


def _frames(emulator: dict | None) -> str:
    """``  frames 12,345/216,000 (6%)``: native frames the emulator ran against its budget."""
    if not emulator or not isinstance(emulator.get("frames_run"), int):
        return ""
    run, budget = emulator["frames_run"], emulator.get("frame_budget")
    if not isinstance(budget, int) or budget <= 0:
        return f"  frames {run:,}"
    return f"  frames {run:,}/{budget:,} ({100 * run // budget}%)"
