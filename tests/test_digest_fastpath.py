"""The digest's fast path (deciding from the bytes which lines to decode) never changes a digest.

Every file of the real corpus in ``../shared``, and generated metadata-heavy sessions (queue
operations, file-history snapshots, progress and hook records), are digested twice: with the byte
test (``digest_file(path)``) and decoding every line (``cheap=False``). Turns and stats must be equal,
in the order Claude Code writes keys and in other key orders of every record at every depth
(reversed, sorted, ``type`` last, shuffled), since another writer may order keys differently.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dreamtui.core.ingest.digest import digest_file
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
        corpus: Path, tmp_path: Path) -> None:
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
