"""Tests of the session journal (schema v1) in the real pipeline, and of its verifier."""
