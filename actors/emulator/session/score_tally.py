"""What a run reports of its score: :class:`ScoreTally` folds the score evidence blocks
(``ScoreSpec.evaluate`` in ``score.py``), in journal order, into the final and best score, the
frame each milestone was first seen reached, the frame game over was first seen and how often it
began. The recorder (``session.json``) and ``supervisor.capture.facts.CapturedSession`` both
count with it.
"""

from __future__ import annotations

from typing import Any

from protocol.journal import is_int


class ScoreTally:
    """Score evidence folded in journal order (each ``emulator_stepped`` reply's ``score``,
    as an ``action_result`` row's ``response`` keeps it): ``final`` (the last score read,
    None when that read failed), ``best`` (the highest read), ``milestones`` (name -> the
    frame of the first evidence in which it held), ``game_over_frame`` (the first frame game
    over held) and ``game_overs`` (how often it began: from not holding to holding). A frame
    is a step's last frame: a milestone reached during a step of N frames was reached up to
    N - 1 frames earlier.

    The state is a JSON object (``state``), so the recorder keeps it in its checkpoint."""

    def __init__(self, state: dict | None = None):
        self.state: dict = state if state is not None else {}

    def add(self, block: Any, frame: Any) -> None:
        if not isinstance(block, dict) or not is_int(frame):
            return
        s = self.state
        s["evidence"] = s.get("evidence", 0) + 1
        score = block.get("score")
        s["final"] = score if is_int(score) else None
        if is_int(score) and (s.get("best") is None or score > s["best"]):
            s["best"] = score
        reached = s.setdefault("milestones", {})
        for name in block.get("milestones") or ():
            if isinstance(name, str) and name not in reached:
                reached[name] = frame
        over = block.get("game_over")
        if over is True:
            if s.get("game_over_frame") is None:
                s["game_over_frame"] = frame
            if not s.get("over"):
                s["game_overs"] = s.get("game_overs", 0) + 1
        s["over"] = over is True

    def add_row(self, row: dict) -> None:
        """An ``action_result`` row (others are ignored): its response's ``score`` at its ``frame``."""
        response = row.get("response")
        if isinstance(response, dict) and "score" in response:
            self.add(response["score"], response.get("frame"))

    @property
    def read(self) -> bool:
        return bool(self.state.get("evidence"))

    def as_dict(self) -> dict | None:
        """What ``session.json`` says as ``score``; None when nothing was read."""
        s = self.state
        if not s.get("evidence"):
            return None
        return {
            "final": s.get("final"),
            "best": s.get("best"),
            "milestones": dict(s.get("milestones") or {}),
            "game_over_frame": s.get("game_over_frame"),
            "game_overs": s.get("game_overs", 0),
            "evidence": s["evidence"],
        }

    def line(self) -> str:
        """``score 55 (best 55); got_key at frame 262, won at frame 534; game over at frame 534``;
        empty when nothing was read."""
        d = self.as_dict()
        if d is None:
            return ""
        final = "unread" if d["final"] is None else str(d["final"])
        text = f"score {final} (best {'-' if d['best'] is None else d['best']})"
        if d["milestones"]:
            text += "; " + ", ".join(f"{name} at frame {frame}" for name, frame in d["milestones"].items())
        if d["game_over_frame"] is not None:
            again = f", {d['game_overs']} times" if d["game_overs"] > 1 else ""
            text += f"; game over at frame {d['game_over_frame']}{again}"
        return text

    def facts(self) -> dict:
        """The scalar columns of a results row: None each when the session read no score."""
        d = self.as_dict()
        if d is None:
            return {"score_final": None, "score_best": None, "milestones_reached": None, "game_over_frame": None}
        return {
            "score_final": d["final"],
            "score_best": d["best"],
            "milestones_reached": len(d["milestones"]),
            "game_over_frame": d["game_over_frame"],
        }
