"""A child for the supervisor's unit tests: a real process. With no argument it does nothing
until it is killed (or 60 s pass), so a ``Child`` has a pid an actor's ``hello`` can match;
``idle.py CODE`` prints its start count and exits with CODE at once."""

import os
import sys
import time

if __name__ == "__main__":
    if len(sys.argv) > 1:
        print("start", os.environ.get("GAMERIG_START_COUNT"), os.environ.get("GAMERIG_ACTOR"), flush=True)
        sys.exit(int(sys.argv[1]))
    time.sleep(60)
