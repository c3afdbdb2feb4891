"""A pack changed with well-formed bytes, where zlib's own checksum cannot help: a segment
replaced by another valid segment (from another position of the same pack, or from another
session's pack), with the pack's layout mended so it opens; and a pack that is whole and
consistent in itself but belongs to another journal. Each is named damaged by ``capture verify``
(exit 4, at the observation it breaks) and refused by ``capture unpack`` (exit 4, nothing
written, the pack left as it was).

Packs here are written with 8 files per segment (``obspack.write(..., segment=8)``), then
finished by ``pack_session`` as after a crash, so that a demo session has several segments."""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from pathlib import Path

from protocol import obspack
from supervisor.capture.packing import pack_session
from tests.journal.conftest import codes, findings, fresh_copy, read_lines, verify
from tests.journal.test_pack import run

PER_SEGMENT = 8


def pack_small(sd: str) -> obspack.Pack:
    """Pack ``sd`` in segments of ``PER_SEGMENT`` files; the pack, opened."""
    obs = os.path.join(sd, obspack.DIRNAME)
    names = sorted(os.listdir(obs))
    obspack.write(
        os.path.join(sd, obspack.PACK),
        ((n, Path(os.path.join(obs, n)).read_bytes()) for n in names),
        segment=PER_SEGMENT,
    )
    assert pack_session(sd)["done"] == "packed"
    pack = obspack.Pack(os.path.join(sd, obspack.PACK))
    assert len(pack.segments) >= 3
    return pack


def segment_bytes(pack: obspack.Pack, n: int) -> bytes:
    offset, size, _ = pack.segments[n]
    with open(pack.path, "rb") as fh:
        fh.seek(offset)
        return fh.read(size)


def rewrite(pack: obspack.Pack, n: int, new: bytes, *, rehash_segment: bool) -> None:
    """Put ``new`` in place of segment ``n`` and mend the layout (every offset, the index, the
    footer) so the pack opens; the index's SHA-256 of that segment made to match too when
    ``rehash_segment``. The files' own entries are left as they were."""
    segments = [segment_bytes(pack, i) for i in range(len(pack.segments))]
    segments[n] = new
    out, table = bytearray(obspack.MAGIC), []
    for i, seg in enumerate(segments):
        digest = hashlib.sha256(seg).hexdigest() if (i != n or rehash_segment) else pack.segments[i][2]
        table.append([len(out), len(seg), digest])
        out += seg
    index = {"version": obspack.VERSION, "segments": table, "files": [list(pack.files[f]) for f in pack.order]}
    blob = zlib.compress(json.dumps(index, separators=(",", ":")).encode())
    at = len(out)
    out += blob + obspack.FOOTER.pack(at, len(blob), obspack.MAGIC)
    with open(pack.path, "wb") as fh:
        fh.write(out)
    obspack._open.cache_clear()


def first_line_of_segment(sd: str, pack: obspack.Pack, n: int) -> int:
    """The 1-based journal line of the first observation whose file is in segment ``n``."""
    in_segment = {name for name in pack.order if pack.files[name][1] == n}
    for i, line in enumerate(read_lines(sd), 1):
        row = json.loads(line)
        if row.get("event") == "observation" and os.path.basename(row["path"]) in in_segment:
            return i
    raise AssertionError(f"no observation row for segment {n}")


def refused_untouched(sd: str) -> str:
    """``capture unpack`` refuses with exit 4 and leaves the pack and the directory as they were."""
    path = os.path.join(sd, obspack.PACK)
    before, listing = Path(path).read_bytes(), sorted(os.listdir(sd))
    code, out = run("capture", "unpack", sd)
    assert code == 4 and "damaged pack" in out, out
    assert sorted(os.listdir(sd)) == listing and Path(path).read_bytes() == before
    return out


def test_a_segment_replaced_by_another_valid_segment_is_named_damaged_and_never_unpacked(demo_captures, tmp_path):
    _, other_sd = fresh_copy(demo_captures.dry_run.root, demo_captures.dry_run.session_dir, str(tmp_path / "other"))
    foreign = segment_bytes(pack_small(other_sd), 0)
    cases = [
        ("another position", 1, None, False),
        ("another position", 1, None, True),
        ("another pack", 1, foreign, False),
        ("another pack", 1, foreign, True),
    ]
    for i, (source, n, new, rehash) in enumerate(cases):
        _, sd = fresh_copy(demo_captures.normal.root, demo_captures.normal.session_dir, str(tmp_path / f"c{i}"))
        pack = pack_small(sd)
        new = segment_bytes(pack, 2) if new is None else new
        assert zlib.decompress(new) and new != segment_bytes(pack, n)  # well-formed, and other
        rewrite(pack, n, new, rehash_segment=rehash)
        reopened = obspack.Pack(pack.path)  # the forged pack opens: only its contents are wrong
        assert reopened.names() == pack.names()
        code, report = verify(sd)
        assert code == 4 and "observation_unreadable" in codes(report, "damaged"), (source, rehash, findings(report))
        found = [f for f in findings(report) if f["code"] == "observation_unreadable"]
        assert found[0]["line"] == first_line_of_segment(sd, pack, n), (source, rehash, found[0])
        said = "segment 1 " if not rehash else "does not match its index entry"
        assert said in found[0]["message"], (source, rehash, found[0]["message"])
        assert len(found) == PER_SEGMENT  # every observation of that segment, none of the others
        refused_untouched(sd)


def test_unpack_refuses_a_journal_that_does_not_match_the_pack(demo_captures, tmp_path):
    # a whole, self-consistent pack of another session beside this journal
    _, other_sd = fresh_copy(demo_captures.dry_run.root, demo_captures.dry_run.session_dir, str(tmp_path / "other"))
    pack_small(other_sd)
    _, sd = fresh_copy(demo_captures.normal.root, demo_captures.normal.session_dir, str(tmp_path / "a"))
    pack_small(sd)
    os.replace(os.path.join(other_sd, obspack.PACK), os.path.join(sd, obspack.PACK))
    obspack._open.cache_clear()
    code, report = verify(sd)
    assert code == 4 and "observation_changed" in codes(report, "damaged"), findings(report)
    assert "does not hash to the sha256 its journal row pins" in refused_untouched(sd)

    # this session's own pack with two observations swapped: every hash in the pack agrees with it
    _, sd = fresh_copy(demo_captures.normal.root, demo_captures.normal.session_dir, str(tmp_path / "b"))
    obs = os.path.join(sd, obspack.DIRNAME)
    names = sorted(os.listdir(obs))
    blobs = [Path(os.path.join(obs, n)).read_bytes() for n in names]
    assert blobs[0] != blobs[9]
    blobs[0], blobs[9] = blobs[9], blobs[0]
    pack_small(sd)  # the honest pack, then the swapped one in its place
    obspack.write(os.path.join(sd, obspack.PACK), zip(names, blobs), segment=PER_SEGMENT)
    obspack._open.cache_clear()
    code, report = verify(sd)
    assert code == 4 and "observation_changed" in codes(report, "damaged"), findings(report)
    out = refused_untouched(sd)
    assert names[0] in out and "journal row pins" in out, out

    # the journal naming an observation the pack does not hold
    _, sd = fresh_copy(demo_captures.normal.root, demo_captures.normal.session_dir, str(tmp_path / "c"))
    obs = os.path.join(sd, obspack.DIRNAME)
    names = sorted(os.listdir(obs))
    blobs = [Path(os.path.join(obs, n)).read_bytes() for n in names]
    pack_small(sd)  # the honest pack, then one without the last observation in its place
    obspack.write(os.path.join(sd, obspack.PACK), zip(names[:-1], blobs[:-1]), segment=PER_SEGMENT)
    obspack._open.cache_clear()
    assert verify(sd)[0] == 4
    out = refused_untouched(sd)
    assert "in neither the pack nor observations/" in out and names[-1] in out, out


def test_an_index_that_does_not_describe_the_pack_is_named_damaged(demo_captures, tmp_path):
    """An index rewritten as valid zlib and JSON, but naming a segment that does not exist or
    leaving out the segment table: the pack is damaged, not a reader's crash."""

    def no_such_segment(index: dict) -> None:
        index["files"][0][1] = len(index["segments"]) + 5

    def no_segment_table(index: dict) -> None:
        del index["segments"]

    def not_a_table(index: dict) -> None:
        index["files"] = {"000001.json": 0}

    for i, change in enumerate((no_such_segment, no_segment_table, not_a_table)):
        _, sd = fresh_copy(demo_captures.normal.root, demo_captures.normal.session_dir, str(tmp_path / f"i{i}"))
        pack = pack_small(sd)
        raw = Path(pack.path).read_bytes()
        at, length, _ = obspack.FOOTER.unpack(raw[-obspack.FOOTER.size :])
        index = json.loads(zlib.decompress(raw[at : at + length]))
        change(index)
        blob = zlib.compress(json.dumps(index).encode())
        with open(pack.path, "wb") as fh:
            fh.write(raw[:at] + blob + obspack.FOOTER.pack(at, len(blob), obspack.MAGIC))
        obspack._open.cache_clear()
        code, report = verify(sd)
        assert code == 4 and "observation_unreadable" in codes(report, "damaged"), (change.__name__, report)
        assert "index" in refused_untouched(sd), change.__name__
