"""``python -m actors.recorder``: the recorder actor (started by the supervisor)."""

from actors.runtime.actor import ActorContext, run_actor

from .rules import Recorder
from .serve import RecorderServer


def main(ctx: ActorContext) -> int:
    RecorderServer(Recorder(ctx), ctx).serve()
    return 0


if __name__ == "__main__":
    run_actor("recorder", main)
