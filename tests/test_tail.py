"""Tailing: read only what was appended, once, whatever happens to the file."""

from __future__ import annotations

import os
import tempfile
import tracemalloc
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dreamtui.core.errors import TranscriptError
from dreamtui.core.ingest import tail as tail_module
from dreamtui.core.ingest.tail import HEAD_BYTES, LineScanner, Tailer, decode_line
from dreamtui.core.ledger import Ledger

FIX = Path(__file__).parent / "fixtures" / "transcripts"
MAIN = FIX / "-home-kim-shapes" / "11111111-2222-4333-8444-555555555555.jsonl"


def rec(i: int, pad: int = 0) -> bytes:
    return b'{"type":"user","n":%d,"pad":"%s"}\n' % (i, b"x" * pad)


def tail_once(tailer: Tailer, path: Path) -> list[tuple[int, int, bytes]]:
    read = tailer.read(path, "p", "s")
    assert tailer.commit(read)
    return read.lines


def test_reads_appended_lines_once_with_right_line_numbers_and_offsets(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    f.write_bytes(rec(1) + rec(2))
    t = Tailer(ledger)
    assert [(n, o) for n, o, _ in tail_once(t, f)] == [(1, 0), (2, len(rec(1)))]
    assert tail_once(t, f) == []
    with f.open("ab") as fh:
        fh.write(rec(3))
    assert tail_once(t, f) == [(3, len(rec(1) + rec(2)), rec(3)[:-1])]
    state = t.state(f)
    assert state is not None
    assert (state.offset, state.lines, state.project) == (f.stat().st_size, 3, "p")


def test_a_partial_last_line_waits_for_its_newline(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    whole = rec(1) + rec(2)
    f.write_bytes(whole[:-5])
    t = Tailer(ledger)
    read = t.read(f)
    assert [n for n, _, _ in read.lines] == [1] and read.partial
    assert t.commit(read)
    f.write_bytes(whole)
    assert tail_once(t, f) == [(2, len(rec(1)), rec(2)[:-1])]


def test_read_without_commit_consumes_nothing_and_a_stale_commit_is_refused(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    f.write_bytes(rec(1))
    t = Tailer(ledger)
    first = t.read(f)
    again = t.read(f)
    assert first.lines == again.lines  # nothing was committed: the same lines come back
    assert t.commit(first)
    assert not t.commit(again)  # another reader already stored this range: refused
    assert t.read(f).lines == []


def test_restart_continues_where_the_last_commit_stopped(config, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    f.write_bytes(rec(1) + rec(2))
    led = Ledger.open(config.state)
    assert len(tail_once(Tailer(led), f)) == 2
    led.close()
    with f.open("ab") as fh:
        fh.write(rec(3))
    led2 = Ledger.open(config.state)
    assert [n for n, _, _ in tail_once(Tailer(led2), f)] == [3]
    led2.close()


def test_truncation_rereads_from_zero_once(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    f.write_bytes(rec(1) + rec(2) + rec(3))
    t = Tailer(ledger)
    tail_once(t, f)
    f.write_bytes(rec(7))  # same inode, shorter than the offset
    read = t.read(f)
    assert read.reset and read.reset_reason == "truncated"
    assert [(n, raw) for n, _, raw in read.lines] == [(1, rec(7)[:-1])]
    assert t.commit(read)
    again = t.read(f)
    assert not again.reset and again.lines == []
    assert getattr(t.state(f), "resets", None) == 1


def test_replaced_file_rereads_once(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    f.write_bytes(rec(1) + rec(2))
    t = Tailer(ledger)
    tail_once(t, f)
    new = tmp_path / "new.jsonl"
    new.write_bytes(rec(1) + rec(2) + rec(3) + rec(4))
    os.replace(new, f)  # a new inode under the same name
    read = t.read(f)
    assert read.reset and read.reset_reason == "replaced"
    assert [n for n, _, _ in read.lines] == [1, 2, 3, 4]
    assert t.commit(read)
    assert t.read(f).lines == []


def test_inode_reuse_with_a_different_head_rereads(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    f.write_bytes(rec(1) + rec(2))
    t = Tailer(ledger)
    tail_once(t, f)
    # same device and inode, longer than the stored offset, but other content: a reused inode
    with f.open("r+b") as fh:
        fh.write(rec(8) + rec(9) + rec(10))
    read = t.read(f)
    assert read.reset and read.reset_reason == "rewritten"
    assert [raw for _, _, raw in read.lines] == [rec(8)[:-1], rec(9)[:-1], rec(10)[:-1]]


def test_rewrite_after_the_head_is_caught_by_the_bytes_before_the_offset(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    head = rec(0, pad=HEAD_BYTES)  # the first 4 KiB stay identical
    f.write_bytes(head + rec(1))
    t = Tailer(ledger)
    tail_once(t, f)
    f.write_bytes(head + rec(5) + rec(6))
    read = t.read(f)
    assert read.reset and [n for n, _, _ in read.lines] == [1, 2, 3]


def test_huge_lines_are_skipped_counted_and_never_held(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    huge = b'{"type":"user","blob":"' + b"A" * (20 * 1024 * 1024) + b'"}\n'
    f.write_bytes(rec(1) + huge + rec(3))
    t = Tailer(ledger, max_line=64 * 1024)
    tracemalloc.start()
    read = t.read(f)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 6 * 1024 * 1024  # the 20 MiB line was never held in memory
    assert [n for n, _, _ in read.lines] == [1, 3]
    assert read.oversized == [2]
    assert read.end_offset == f.stat().st_size
    assert t.commit(read)
    assert getattr(t.state(f), "skipped", None) == 1


def test_a_huge_partial_line_at_the_end_is_not_consumed(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    f.write_bytes(rec(1) + b'{"blob":"' + b"B" * 300_000)
    t = Tailer(ledger, max_line=1000)
    read = t.read(f)
    assert [n for n, _, _ in read.lines] == [1] and read.partial and read.oversized == []
    assert t.commit(read)
    with f.open("ab") as fh:
        fh.write(b'"}\n' + rec(3))
    read = t.read(f)
    assert read.oversized == [2] and [n for n, _, _ in read.lines] == [3]


def test_lines_over_a_chunk_but_under_the_limit_are_kept(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    big = rec(2, pad=3 * 1024 * 1024)  # an image-sized line spanning several read chunks
    f.write_bytes(rec(1) + big + rec(3))
    read = Tailer(ledger).read(f)
    assert [raw for _, _, raw in read.lines] == [rec(1)[:-1], big[:-1], rec(3)[:-1]]


def test_max_bytes_reads_in_pieces_that_add_up(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    f.write_bytes(b"".join(rec(i, pad=100) for i in range(1, 51)))
    t = Tailer(ledger, max_bytes=1000)
    got = []
    while True:
        read = t.read(f)
        got += [n for n, _, _ in read.lines]
        assert t.commit(read)
        if not read.more:
            break
    assert got == list(range(1, 51))


def test_bad_lines_are_returned_raw_and_decode_line_says_why(ledger: Ledger):
    read = Tailer(ledger).read(FIX / "-home-kim-bad" / "bad.jsonl")
    reasons = [decode_line(raw)[1] for _, _, raw in read.lines]
    # the line with bad bytes is kept, its bytes decoded as U+FFFD ("replaced"), not dropped
    assert reasons == [None, "malformed", "replaced", "empty", "not_object", None]
    assert read.partial


def test_missing_file_or_directory_is_a_clear_error(ledger: Ledger, tmp_path: Path):
    with pytest.raises(TranscriptError, match="no such transcript"):
        Tailer(ledger).read(tmp_path / "absent.jsonl")
    with pytest.raises(TranscriptError, match="is a directory"):
        Tailer(ledger).read(tmp_path)


def test_line_scanner_counts_lines_after_an_offset(tmp_path: Path):
    f = tmp_path / "t.jsonl"
    f.write_bytes(rec(1) + rec(2) + rec(3))
    with f.open("rb") as fh:
        scanner = LineScanner(fh, len(rec(1)), 1)
        assert [n for n, _, _ in scanner] == [2, 3]
        assert scanner.offset == f.stat().st_size and scanner.line == 3


# -- the property: any sequence of appends, tailed after each, gives exactly one whole read ------

DATA = MAIN.read_bytes() + (FIX / "-home-kim-bad" / "bad.jsonl").read_bytes() + b"\n" + rec(99)


def _whole_read(path: Path, state: Path) -> list[tuple[int, int, bytes]]:
    led = Ledger.open(state)
    try:
        return Tailer(led).read(path).lines
    finally:
        led.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cuts=st.lists(st.integers(0, len(DATA)), max_size=12),
    restarts=st.lists(st.booleans(), min_size=13, max_size=13),
    chunk=st.sampled_from([None, 64, 4096]),
)
def test_any_sequence_of_appends_gives_the_records_of_one_whole_read(cuts, restarts, chunk):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        f = root / "grow.jsonl"
        f.write_bytes(b"")
        expected = _whole_read_of(root, DATA)
        led = Ledger.open(root / "state")
        tailer = Tailer(led, max_bytes=chunk)
        got: list[tuple[int, int, bytes]] = []
        written = 0
        for step, cut in enumerate([*sorted(cuts), len(DATA)]):
            with f.open("ab") as fh:
                fh.write(DATA[written:cut])
            written = max(written, cut)
            if restarts[step]:  # a restart: a new database connection and a new Tailer
                led.close()
                tailer = Tailer(led, max_bytes=chunk)
            while True:
                read = tailer.read(f, "p", "s")
                assert not read.reset
                got += read.lines
                assert tailer.commit(read)
                if not read.more:
                    break
        led.close()
        assert got == expected
        assert len({n for n, _, _ in got}) == len(got)  # nothing read twice
        reopened = Ledger.open(root / "state")  # after a full restart, nothing is left to read
        assert Tailer(reopened).read(f).lines == []
        reopened.close()


def _whole_read_of(root: Path, data: bytes) -> list[tuple[int, int, bytes]]:
    whole = root / "whole.jsonl"
    whole.write_bytes(data)
    return _whole_read(whole, root / "whole-state")


def test_a_keep_filter_returns_only_wanted_lines_but_consumes_all(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "t.jsonl"
    f.write_bytes(rec(1) + b'{"type":"progress"}\n' + rec(3))
    t = Tailer(ledger)
    read = t.read(f, keep=lambda buf, start, end: buf.startswith(b'{"type":"user"', start, end))
    assert [n for n, _, _ in read.lines] == [1, 3]
    assert read.end_offset == f.stat().st_size and read.end_line == 3
    assert t.commit(read)
    assert t.read(f).lines == []


def _reference(data: bytes, max_line: int):
    """Lines of ``data`` as a plain split would give them: kept lines, oversized line numbers."""
    kept, oversized, offset = [], [], 0
    parts = data.split(b"\n")
    for n, raw in enumerate(parts[:-1], 1):
        (oversized.append(n) if len(raw) > max_line else kept.append((n, offset, raw)))
        offset += len(raw) + 1
    return kept, oversized, offset, len(parts) - 1


@settings(max_examples=120, deadline=None)
@given(
    lines=st.lists(st.integers(0, 300), max_size=30),
    tail=st.integers(0, 400),
    max_line=st.integers(1, 200),
    chunk=st.integers(1, 64),
    limit=st.none() | st.integers(1, 500),
)
def test_line_scanner_matches_a_plain_split_whatever_the_chunk_and_limit(lines, tail, max_line, chunk, limit):
    data = b"".join(b"x" * n + b"\n" for n in lines) + b"y" * tail
    kept, oversized, end_offset, end_line = _reference(data, max_line)
    got, got_over = [], []
    offset = line = 0
    with tempfile.TemporaryDirectory() as tmp, patch.object(tail_module, "CHUNK", chunk):
        f = Path(tmp) / "t.jsonl"
        f.write_bytes(data)
        with f.open("rb") as fh:
            for _ in range(len(data) + 2):
                scanner = LineScanner(fh, offset, line, max_line=max_line, limit=limit)
                got += list(scanner)
                got_over += scanner.oversized
                offset, line = scanner.offset, scanner.line
                if not scanner.more:
                    break
    assert got == kept
    assert got_over == oversized
    assert (offset, line) == (end_offset, end_line)
    assert scanner.partial == (tail > 0)


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(st.integers(0, 300), max_size=30),
    tail=st.integers(0, 400),
    max_line=st.integers(1, 400),
    chunk=st.integers(1, 96),
    start=st.integers(0, 5),
)
def test_batches_match_a_plain_split_whatever_the_chunk_and_limit(lines, tail, max_line, chunk, start):
    data = b"".join(b"x" * n + b"\n" for n in lines) + b"y" * tail
    kept, oversized, end_offset, end_line = _reference(data, max_line)
    skip = min(start, len(kept))  # start after a few lines, as a resumed read would
    offset = sum(len(raw) + 1 for _, _, raw in kept[:skip]) if not oversized or skip == 0 else 0
    first = kept[skip - 1][0] if skip and offset else 0
    with tempfile.TemporaryDirectory() as tmp, patch.object(tail_module, "CHUNK", chunk):
        f = Path(tmp) / "t.jsonl"
        f.write_bytes(data)
        with f.open("rb") as fh:
            scanner = LineScanner(fh, offset, first, max_line=max_line)
            got = [(n, raw) for batch in scanner.batches() for n, raw in batch]
    # every line ends in its newline; numbers and bytes as the plain split gives them
    assert all(raw.endswith(b"\n") for _, raw in got)
    assert [(n, raw[:-1]) for n, raw in got] == [(n, raw) for n, _, raw in kept if n > first]
    assert scanner.oversized == [n for n in oversized if n > first]
    assert (scanner.offset, scanner.line) == (end_offset, end_line)
    assert scanner.partial == (tail > 0)
    assert scanner.head == (data[:chunk] if offset == 0 and data else scanner.head)
