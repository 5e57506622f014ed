"""The digest's fast path (deciding from the bytes which lines to decode) never changes a digest.

Every file of the real corpus in ``../shared``, and generated metadata-heavy sessions (queue
operations, file-history snapshots, progress and hook records), are digested twice: with the byte
test (``digest_file(path)``) and decoding every line (``cheap=False``). Turns and stats must be equal,
in the order Claude Code writes keys and in other key orders of every record at every depth
(reversed, sorted, ``type`` last, shuffled), since another writer may order keys differently.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dreamtui.core.ingest.digest import DigestState, digest_file
from tests.transcript_synth import reorder, session_records, write_jsonl

ORDERS: dict[str, Callable[[list[str]], list[str]]] = {
    "reversed": lambda keys: keys[::-1],
    "sorted": sorted,
    "type-last": lambda keys: [k for k in keys if k != "type"] + [k for k in keys if k == "type"],
    "type-first": lambda keys: [k for k in keys if k == "type"] + [k for k in keys if k != "type"],
}


def _shuffled(seed: int) -> Callable[[list[str]], list[str]]:
    rng = random.Random(seed)

    def order(keys: list[str]) -> list[str]:
        rng.shuffle(keys)
        return keys

    return order


def rewrite_keys(data: bytes, order: Callable[[list[str]], list[str]]) -> bytes:
    """Every line of ``data`` that is JSON re-written with its keys in ``order``; other lines as they were."""
    out = []
    for raw in data.split(b"\n"):
        try:
            out.append(orjson.dumps(reorder(orjson.loads(raw), order)))
        except orjson.JSONDecodeError:
            out.append(raw)
    return b"\n".join(out)


def assert_same_digest(path: Path) -> int:
    """Fast and decode-everything digests of ``path`` are equal; returns the number of turns."""
    fast, full = digest_file(path), digest_file(path, cheap=False)
    assert fast.turns == full.turns, path
    assert fast.stats == full.stats, path
    assert fast.cwd == full.cwd, path
    return len(full.turns)


def test_fast_path_equals_decoding_everything_on_every_corpus_file_in_every_key_order(
    corpus: Path, tmp_path: Path
) -> None:
    files = sorted(corpus.rglob("*.jsonl"))
    assert files
    kept = 0
    for src in files:
        data = src.read_bytes()
        kept += assert_same_digest(src)
        variants = {**ORDERS, "shuffled": _shuffled(len(data))}
        for name, order in variants.items():
            dest = tmp_path / name / src.relative_to(corpus)  # same layout: main, sub-agent, compact
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(rewrite_keys(data, order))
            assert_same_digest(dest)
    assert kept > 50  # the corpus really has turns: an empty digest cannot pass by accident


@pytest.mark.parametrize("order", ["as-written", *ORDERS])
def test_fast_path_equals_decoding_everything_on_metadata_heavy_sessions(tmp_path: Path, order: str) -> None:
    records = session_records(random.Random(5), 3000)
    if order != "as-written":
        records = [reorder(r, ORDERS[order]) for r in records]
    path = tmp_path / "-home-kim-shapes" / "11111111-2222-4333-8444-555555555555.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(write_jsonl(records))
    turns = assert_same_digest(path)
    assert turns > 200  # prompts, replies and queued text are found among the metadata
    sub = path.parent / "11111111-2222-4333-8444-555555555555" / "subagents" / "agent-a1b2c3.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_bytes(write_jsonl(records[:500]))
    assert_same_digest(sub)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 120))
def test_fast_path_equals_decoding_everything_for_any_key_order(tmp_path: Path, seed: int, n: int) -> None:
    rng = random.Random(seed)
    records = [reorder(r, _shuffled(rng.getrandbits(32))) for r in session_records(rng, n)]
    path = tmp_path / f"-p-{seed}" / "11111111-2222-4333-8444-555555555555.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(write_jsonl(records))
    assert_same_digest(path)


# -- the decoded shape: msgspec reads only some fields; any other shape takes the exact path -------

_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.sampled_from(
        [
            "",
            "text",
            "user",
            "assistant",
            "tool_result",
            "enqueue",
            "<synthetic>",
            "[Request interrupted by user]",
            "<command-name>/x</command-name>",
            "Error: x",
            "2026-03-01T10:00:00.000Z",
        ]
    ),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["type", "text", "content", "is_error", "id"]), inner, max_size=3)
    ),
    max_leaves=6,
)
# the paths the fast path reads, and a few it does not
_PATHS = [
    ("type",),
    ("message",),
    ("message", "content"),
    ("message", "id"),
    ("message", "model"),
    ("uuid",),
    ("timestamp",),
    ("cwd",),
    ("isSidechain",),
    ("isMeta",),
    ("isCompactSummary",),
    ("isVisibleInTranscriptOnly",),
    ("isApiErrorMessage",),
    ("toolUseResult",),
    ("operation",),
    ("content",),
    ("message", "content", 0),
    ("message", "content", 0, "type"),
    ("message", "content", 0, "text"),
    ("message", "content", 0, "is_error"),
    ("message", "content", 0, "content"),
    ("data",),
    ("snapshot",),
]


def _set(record: dict, path: tuple, value: object) -> None:
    """``record`` with the value at ``path`` replaced (where the path exists up to its last step)."""

    def has(cur: object, step: object) -> bool:
        return (
            isinstance(cur, dict)
            and isinstance(step, str)
            or isinstance(cur, list)
            and isinstance(step, int)
            and step < len(cur)
        )

    cur: Any = record
    for step in path[:-1]:
        if not has(cur, step) or isinstance(cur, dict) and step not in cur:
            return
        cur = cur[step]
    if has(cur, path[-1]):
        cur[path[-1]] = value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 2**32 - 1),
    changes=st.lists(st.tuples(st.integers(0, 59), st.sampled_from(_PATHS), _JSON_VALUES), max_size=25),
)
def test_fast_path_equals_decoding_everything_for_records_of_any_shape(
    tmp_path: Path, seed: int, changes: list
) -> None:
    records = session_records(random.Random(seed), 60)
    for index, path, value in changes:
        _set(records[index], path, value)
    path = tmp_path / f"-p-{seed}" / "11111111-2222-4333-8444-555555555555.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(write_jsonl(records))
    assert_same_digest(path)


PROMPT = (
    b'{"type":"user","message":{"role":"user","content":"keep the deploy log terse %d"},'
    b'"uuid":"u1","timestamp":"2026-03-01T10:00:0%d.000Z","cwd":"/w"%s}'
)
REPLY = (
    b'{"type":"assistant","message":{"id":"m%d","role":"assistant","content":[{"type":"text",'
    b'"text":"Done, it is terse now."}]},"uuid":"u2","timestamp":"2026-03-01T10:00:01.000Z"%s}'
)
QUEUED = b'{"type":"queue-operation","operation":"enqueue","content":"and the staging one","timestamp":"t"%s}'


@pytest.mark.parametrize(
    "extra",
    [
        b',"version":"\xff\xfe"',  # bad bytes in a field the fast path skips: repaired and counted as replaced
        b',"\xc3(":1',  # in a key it skips
        b',"version":"\\udcff"',  # a lone surrogate (as JavaScript writes half an emoji)
        b',"version":"\xed\xa0\x80"',  # a surrogate written as UTF-8 bytes
        b',"uuid":"u9"',  # a key twice: the last one counts, as orjson reads it
        b',"isMeta":true',
        b',"is\\u004deta":true',  # a key spelled with an escape
        b',"toolUseResult":null',
        b',"isSidechain":true',
        b',"version":NaN',
        b',"n":123456789012345678901234567890',
        b',"message":"not an object"',
        b',"uuid":7',
        b',"isApiErrorMessage":true',
    ],
)
def test_fast_path_treats_odd_and_broken_lines_as_decoding_everything_does(
    tmp_path: Path, extra: bytes
) -> None:
    path = tmp_path / "-p" / "11111111-2222-4333-8444-555555555555.jsonl"
    path.parent.mkdir(parents=True)
    lines = [
        b"\xef\xbb\xbf" + PROMPT % (1, 1, b""),
        PROMPT % (2, 2, extra),
        REPLY % (1, extra),
        QUEUED % extra,
        REPLY % (2, b""),
        b'{"type":"user","message":{"content":"half',
        b"",
        b"[1]",
    ]
    path.write_bytes(b"\n".join(lines) + b"\n" + PROMPT % (3, 3, extra))  # the last line without its newline
    fast, full = digest_file(path), digest_file(path, cheap=False)
    assert fast.turns == full.turns
    assert fast.stats == full.stats
    assert fast.stats.partial_tail and fast.stats.malformed == 2
    assert len(full.turns) >= 2  # the good prompt and reply, whatever happens to the odd lines


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"assistant","message":{"id":"m","content":[{"type":"thinking","text":"not prose"}]},"uuid":"u"}',
        b'{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"a"},{"type":"text","text":"a"},'
        b'{"type":"tool_use","text":"b"},{"type":"text","text":"c"}]},"uuid":"u"}',
        b'{"type":"assistant","message":{"id":"","content":"plain prose"},"uuid":"u"}',
        b'{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"x"}]}}',
        b'{"type":"assistant","message":{"content":[{"type":"text","text":"  "}]}}',
        b'{"type":"assistant","message":{"content":[]}}',
        b'{"type":"assistant","message":{"content":["a string block"]}}',
        b'{"type":"user","message":{"content":[{"type":"text","text":"first"},{"type":"text","text":"second"}]},'
        b'"timestamp":"t1"}',
        b'{"type":"user","message":{"content":[{"type":"tool_result","content":"out"},{"type":"text","text":"hi"}]},'
        b'"timestamp":"t2"}',
        b'{"type":"user","message":{"content":"typed"},"toolUseResult":{"stdout":"x"},"timestamp":"t3"}',
        b'{"type":"user","message":{"content":"<bash-stdout>ok</bash-stdout>"},"timestamp":"t4"}',
        b'{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":[{"type":"text",'
        b'"text":"failed"}]}]},"timestamp":"t5"}',
        b'{"type":"queue-operation","operation":"popAll","content":[{"type":"text","text":"q1"},"q2",{"x":1}]}',
        b'{"type":"queue-operation","operation":"remove","content":"not kept"}',
        b'{"type":"queue-operation","operation":"enqueue","content":{"not":"a list"}}',
    ],
)
def test_fast_path_reads_every_block_shape_as_decoding_everything_does(tmp_path: Path, line: bytes) -> None:
    path = tmp_path / "-p" / "11111111-2222-4333-8444-555555555555.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join([line, line.replace(b'"t', b'"x'), REPLY % (5, b"")]) + b"\n")
    assert_same_digest(path)


def test_dedup_in_memory_keeps_what_hashed_keys_keep_and_stores_the_same_keys(tmp_path: Path) -> None:
    """Without a ledger the dedup keys stay in memory (texts compared, never hashed); with one they are
    hashed (``seen_blocks``): the same turns either way, and the same keys to store."""
    records = session_records(random.Random(9), 800)
    rng = random.Random(3)
    again = []
    for r in records:
        again.append(r)
        if r.get("type") in ("assistant", "user") and rng.random() < 0.3:  # a rewrite, with a new uuid
            again.append({**r, "uuid": f"{r.get('uuid')}-again"})
    path = tmp_path / "-p" / "11111111-2222-4333-8444-555555555555.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(write_jsonl(again))
    memory, hashed = DigestState(), DigestState(lookup=lambda key: False)
    in_memory = digest_file(path, state=memory)
    with_hashes = digest_file(path, state=hashed)
    assert in_memory.turns == with_hashes.turns == digest_file(path, cheap=False).turns
    assert len(in_memory.turns) < len([r for r in again if r.get("type") in ("assistant", "user")])
    assert memory.pending() == hashed.pending() and all(isinstance(k, str) for k in hashed.pending())


# -- reading: a small file is read whole (one system call), a larger one in chunks: the same digest ----


@pytest.mark.parametrize("tail", [b"", b"\n", PROMPT % (4, 4, b""), b"\n\n" + PROMPT % (5, 5, b"")])
@pytest.mark.parametrize(
    "body",
    [
        b"",
        PROMPT % (1, 1, b""),
        b"\n".join([PROMPT % (1, 1, b""), b"", REPLY % (1, b""), b"  ", QUEUED % b"", b'{"half']),
    ],
)
def test_reading_a_file_whole_gives_what_reading_it_in_chunks_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: bytes, tail: bytes
) -> None:
    """Empty files, blank lines, a last line without its newline (not consumed: ``partial_tail``), a file
    of one partial line: read whole, through the line scanner, and decoding everything, alike."""
    from dreamtui.core.ingest import digest as digest_module
    from dreamtui.core.ingest.formats import claude_code

    path = tmp_path / "-p" / "11111111-2222-4333-8444-555555555555.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(body + tail)
    whole = digest_file(path)
    monkeypatch.setattr(claude_code, "_BLOCK", 2)  # lines decoded two at a time
    blocks = digest_file(path)
    monkeypatch.setattr(digest_module, "_WHOLE_FILE", 0)  # every file through the line scanner
    chunked = digest_file(path)
    full = digest_file(path, cheap=False)
    assert whole.turns == blocks.turns == chunked.turns == full.turns
    assert whole.stats == blocks.stats == chunked.stats == full.stats
    assert whole.cwd == blocks.cwd == chunked.cwd == full.cwd
    assert whole.stats.partial_tail == (not (body + tail).endswith(b"\n") and bool(body + tail))


def test_a_file_over_the_whole_read_size_is_read_in_chunks_with_the_same_digest(tmp_path: Path) -> None:
    from dreamtui.core.ingest import digest as digest_module

    records = session_records(random.Random(11), 4000)
    path = tmp_path / "-p" / "11111111-2222-4333-8444-555555555555.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(write_jsonl(records))
    assert path.stat().st_size > digest_module._WHOLE_FILE  # the chunked path
    assert_same_digest(path)
    small = path.with_name("22222222-2222-4333-8444-555555555555.jsonl")
    small.write_bytes(write_jsonl(records[:300]))
    assert small.stat().st_size <= digest_module._WHOLE_FILE  # read whole
    assert_same_digest(small)


def test_a_fifo_or_folder_named_like_a_transcript_is_refused_in_one_line(tmp_path: Path) -> None:
    from dreamtui.core.errors import TranscriptError

    fifo = tmp_path / "11111111-2222-4333-8444-555555555555.jsonl"
    os.mkfifo(fifo)
    folder = tmp_path / "22222222-2222-4333-8444-555555555555.jsonl"
    folder.mkdir()
    for path, words in (
        (fifo, "a FIFO"),
        (folder, "directory"),
        (tmp_path / "missing.jsonl", "does not exist"),
    ):
        with pytest.raises(TranscriptError, match=words):
            digest_file(path)


@pytest.mark.parametrize("bad", [b"\xff\xfe", b"\xed\xa0\x80", b"\xc3("])
def test_a_reply_with_bad_bytes_after_the_first_turns_is_repaired_and_counted(
    tmp_path: Path, bad: bytes
) -> None:
    """Replies and prompts made into turns inline (once the first turn has set ``cwd``) are still checked
    for bytes that are not UTF-8 in the fields msgspec skips: repaired and counted as decoding everything
    does, while valid non-ASCII lines are kept as they are."""
    path = tmp_path / "-p" / "11111111-2222-4333-8444-555555555555.jsonl"
    path.parent.mkdir(parents=True)
    reply = (
        b'{"type":"assistant","message":{"id":"m%d","role":"assistant","content":[{"type":"text",'
        b'"text":"%s"}]},"uuid":"u%d","timestamp":"2026-03-01T10:00:%02d.000Z","version":"%s"}'
    )
    lines = [
        PROMPT % (1, 1, b""),
        reply % (1, b"first", 1, 1, b"2.0"),
        reply % (2, "d\u00e9j\u00e0 vu \U0001f600".encode(), 2, 2, b"2.0"),
        reply % (3, b"bad bytes beside me", 3, 3, bad),
        PROMPT % (2, 4, b',"version":"' + bad + b'"'),
        reply % (4, "\u6e2c\u8a66".encode(), 4, 5, b"2.0"),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    fast, full = digest_file(path), digest_file(path, cheap=False)
    assert fast.turns == full.turns
    assert fast.stats == full.stats
    assert fast.stats.replaced == 2
    assert [t.text for t in fast.turns][-4:] == [
        "d\u00e9j\u00e0 vu \U0001f600",
        "bad bytes beside me",
        "keep the deploy log terse 2",
        "\u6e2c\u8a66",
    ]
