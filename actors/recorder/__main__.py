"""``python -m actors.recorder``: the recorder actor (started by the supervisor)."""
from actors.runtime.actor import ActorContext, run_actor


def main(ctx: ActorContext) -> int:
    from .service import Recorder
    Recorder(ctx).serve()
    return 0


if __name__ == "__main__":
    run_actor("recorder", main)
