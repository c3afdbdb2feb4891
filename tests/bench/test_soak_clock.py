"""``bench/soak.py`` times a recorder's resume from the new process's start: that start must
be read on the same clock as the journal's stamps. psutil's ``create_time()`` is not (it adds
the start ticks to ``/proc/stat``'s whole-second boot time and reads up to 1 s early), so the
soak reads the kernel's start ticks on a boot time taken from ``/proc/uptime``."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.harness import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))

import soak

TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def test_a_process_start_lies_between_the_spawn_and_the_child_s_first_clock_read():
    before = time.time()
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; print(repr(time.time())); sys.stdout.flush(); sys.stdin.read()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        first_read = float(child.stdout.readline())
        start = soak.started_at(child.pid)
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    # the kernel counts whole ticks, and /proc/uptime has 10 ms steps: two ticks of slack
    assert before - 2 * TICK_S <= start <= first_read + 2 * TICK_S, (before, start, first_read)


def test_the_start_of_this_process_is_before_now_and_after_the_boot():
    start = soak.started_at(os.getpid())
    with open("/proc/uptime") as fh:
        boot = time.time() - float(fh.read().split()[0])
    assert boot - TICK_S <= start <= time.time()
