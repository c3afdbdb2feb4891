"""The quick variant of ``bench/codec.py`` (docs/performance.md, the codec row), run as its users run
it: a demo session, then each hot message type's encode and decode against plain msgpack;
and ``--base`` comparing a commit's protocol package with this tree's."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.harness import REPO

pytestmark = pytest.mark.timeout(180)

TYPES = [
    "store_observation",
    "observation_stored",
    "follow",
    "rows",
    "record_proposal",
    "proposal_recorded",
    "await_intent",
    "intent_ack",
    "record_result",
    "recorded",
]


def run(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "bench/codec.py", *args], cwd=REPO, capture_output=True, text=True, timeout=170
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_the_bench_prints_every_hot_type_beside_plain_msgpack(tmp_path):
    out = run("--n", "30", "--rounds", "1", "--json", str(tmp_path / "codec.json"))
    lines = {ln.split()[0]: ln.split()[1:] for ln in out.splitlines()[1:-1]}
    assert list(lines) == TYPES
    for name, (size, enc, packb, enc_x, dec, unpackb, dec_x) in lines.items():
        assert int(size) > 100 and float(packb) > 0 and float(unpackb) > 0, name
        # the ratio is of the unrounded times: the printed ones are rounded to 0.01 us
        assert float(enc_x) == pytest.approx(float(enc) / float(packb), rel=0.05, abs=0.02)
        assert float(dec_x) == pytest.approx(float(dec) / float(unpackb), rel=0.05, abs=0.02)
    assert int(lines["rows"][0]) > int(lines["recorded"][0])  # the rows carry the state
    assert re.search(r"beyond msgpack, one frame of each type: encode -?[\d.]+ us, decode -?[\d.]+ us", out)
    saved = json.loads((tmp_path / "codec.json").read_text())
    assert list(saved) == TYPES and saved["rows"]["bytes"] == int(lines["rows"][0])


def test_base_compares_a_commit_with_this_tree():
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip(f"not a git checkout, so no commit to compare with: {head.stderr.strip()}")
    out = run("--base", head.stdout.strip(), "--pairs", "1", "--n", "30", "--rounds", "1")
    assert out.splitlines()[0].startswith(f"{head.stdout.strip()} -> this tree")
    assert [ln.split()[0] for ln in out.splitlines()[2:-1]] == TYPES
    assert re.search(r"encode -?[\d.]+ -> -?[\d.]+ us \(([\d.]+x|n/a)\), decode -?[\d.]+ -> -?[\d.]+ us", out)
