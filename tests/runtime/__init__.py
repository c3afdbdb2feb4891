"""Unit tests of the runtime shared by actors and supervisor (actors/runtime/).

test_journal_actor.py    the one journal-driven loop, its pacing rule and max_steps,
                         driven through the in-memory follower
test_recorder_client.py  every recorder request against a real recorder
live.py                  a real recorder and built-in game in a running session, and
                         contexts for actors built in the test process
"""
