"""``supervisor capture pack`` / ``unpack`` on real demo captures: the files come back byte for
byte, every reader (verify, audit, coverage, the fleet's facts, the viewer's step detail) reads a
packed session as an unpacked one, a damaged or cut-short pack is reported at the observation it
breaks and never unpacked, an unfinished session is refused, and a pack interrupted before the
files went is finished by packing again."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os

from protocol import obspack
from supervisor import cli
from supervisor.capture.packing import pack_session
from supervisor.fleet.results import journal_facts
from supervisor.view.track import Track
from tests.journal.conftest import codes, findings, fresh_copy, line_of, read_lines, verify, write_lines


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(list(argv))
    return code, out.getvalue()


def tree(path: str) -> dict[str, str]:
    return {
        os.path.relpath(os.path.join(d, f), path): hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest()
        for d, _, fs in os.walk(path)
        for f in fs
    }


def test_pack_then_unpack_gives_back_every_file_and_readers_see_no_difference(demo_captures, tmp_path):
    root, sd = fresh_copy(demo_captures.normal.root, demo_captures.normal.session_dir, str(tmp_path / "c"))
    before = tree(root)
    readings = [
        run("capture", "coverage", root, "--json")[1],
        run("capture", "audit", root, "--json")[1],
        json.dumps(journal_facts(sd), sort_keys=True),
    ]
    files = len(os.listdir(os.path.join(sd, "observations")))
    code, out = run("capture", "pack", root, "--json")
    assert code == 0, out
    packed = {r["session"]: r for r in json.loads(out)["sessions"]}
    assert packed[os.path.basename(sd)]["observations"] == files > 50
    assert not os.path.exists(os.path.join(sd, "observations")) and os.path.isfile(os.path.join(sd, obspack.PACK))
    assert sorted(os.listdir(sd)) == ["events.jsonl", obspack.PACK, "session.json"]
    assert os.path.getsize(os.path.join(sd, obspack.PACK)) * 5 < sum(
        os.path.getsize(os.path.join(demo_captures.normal.session_dir, "observations", n))
        for n in os.listdir(os.path.join(demo_captures.normal.session_dir, "observations"))
    )
    assert verify(root)[0] == 0
    assert [
        run("capture", "coverage", root, "--json")[1],
        run("capture", "audit", root, "--json")[1],
        json.dumps(journal_facts(sd), sort_keys=True),
    ] == readings
    track = Track("k", sd, root)
    obs_row = next(json.loads(line) for line in read_lines(sd) if b'"event":"observation"' in line)
    state, problem = track.observation_state(obs_row)
    assert problem is None and state["state_type"] == obs_row["state_type"]
    assert run("capture", "pack", sd)[0] == 0  # again: already packed
    code, out = run("capture", "unpack", root)
    assert code == 0, out
    assert tree(root) == before  # byte for byte, and nothing else left behind


def test_a_damaged_or_cut_short_pack_is_named_at_the_observation_and_never_unpacked(demo_captures, tmp_path):
    for how in ("flip", "cut"):
        root, sd = fresh_copy(demo_captures.normal.root, demo_captures.normal.session_dir, str(tmp_path / how))
        assert pack_session(sd)["done"] == "packed"
        path = os.path.join(sd, obspack.PACK)
        data = bytearray(open(path, "rb").read())
        if how == "flip":
            data[len(obspack.MAGIC) + 40] ^= 0xFF  # inside the first segment
        else:
            data = data[: len(data) // 2]
        open(path, "wb").write(bytes(data))
        obspack._open.cache_clear()
        code, report = verify(sd)
        assert code == 4 and "observation_unreadable" in codes(report, "damaged"), report
        first = line_of(sd, lambda r: r.get("event") == "observation")
        found = [f for f in report["sessions"][0]["findings"] if f["code"] == "observation_unreadable"]
        assert found[0]["line"] == first and ("segment 0" in found[0]["message"] or "cut short" in found[0]["message"])
        code, out = run("capture", "unpack", sd)
        assert code == 4 and "damaged pack" in out, out
        assert not os.path.exists(os.path.join(sd, "observations"))  # nothing written
        assert open(path, "rb").read() == bytes(data)  # the pack left as it was


def test_an_unfinished_session_is_refused_and_an_interrupted_pack_is_finished_by_packing_again(demo_captures, tmp_path):
    root, sd = fresh_copy(demo_captures.normal.root, demo_captures.normal.session_dir, str(tmp_path / "u"))
    lines = read_lines(sd)
    write_lines(sd, lines[:-1])  # no session_end: as if still running or cut short
    code, out = run("capture", "pack", sd)
    assert code == 1 and "no session_end row" in out, out
    assert os.path.isdir(os.path.join(sd, "observations")) and not os.path.exists(os.path.join(sd, obspack.PACK))
    write_lines(sd, lines)
    # a crash after the pack became durable, before the files were removed: both are there
    names = sorted(os.listdir(os.path.join(sd, "observations")))
    obspack.write(
        os.path.join(sd, obspack.PACK), ((n, open(os.path.join(sd, "observations", n), "rb").read()) for n in names)
    )
    assert verify(sd)[0] == 0
    assert pack_session(sd)["done"] == "packed" and not os.path.exists(os.path.join(sd, "observations"))
    assert verify(sd)[0] == 0


def test_a_lost_tail_observation_of_an_unfinished_session_is_incomplete_and_an_earlier_one_damaged(
    demo_captures, tmp_path
):
    """What a power cut may leave: the journal's last rows on disk, the newest observation file's
    name not (it is made durable with the next intent). An earlier file, with an intent after it,
    was durable: its loss is damage."""
    root, sd = fresh_copy(demo_captures.normal.root, demo_captures.normal.session_dir, str(tmp_path / "cut"))
    lines = read_lines(sd)
    rows = [json.loads(line) for line in lines]
    last_obs = max(i for i, r in enumerate(rows) if r["event"] == "observation")
    write_lines(sd, lines[: last_obs + 1])  # the session cut right after its newest observation row,
    os.unlink(os.path.join(sd, "session.json"))  # long before its finalization
    os.unlink(os.path.join(root, rows[last_obs]["path"]))
    code, report = verify(sd)
    assert code == 3 and "observation_not_durable" in codes(report, "incomplete"), [
        (f["severity"], f["code"], f["message"][:120]) for f in findings(report)
    ]
    first_obs = next(r for r in rows if r["event"] == "observation")
    os.unlink(os.path.join(root, first_obs["path"]))
    code, report = verify(sd)
    assert code == 4 and "observation_missing" in codes(report, "damaged"), report
