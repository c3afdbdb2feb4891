"""docs/policy.md shows the example policy verbatim, and it stays under 60 lines."""

import os

from tests.harness import REPO


def test_the_documented_example_is_the_tested_file_and_under_60_lines():
    path = os.path.join(REPO, "actors", "policy", "example_first_choice.py")
    source = open(path, encoding="utf-8").read()
    assert len(source.splitlines()) < 60
    doc = open(os.path.join(REPO, "docs", "policy.md"), encoding="utf-8").read()
    assert source.rstrip() in doc
