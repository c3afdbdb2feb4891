"""Tests of attached taps: attach/detach, snapshot+stream, drops, access control, metrics."""
