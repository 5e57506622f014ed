"""Benchmark quote verification on a ~200 MB corpus built from the real transcripts.

Usage: ``python tests/bench/bench_verify.py [--mb 200] [--quotes 40] [--keep DIR]``

The real files in ``../shared/corpus/projects`` are copied into a temporary folder again and again,
each copy with fresh uuids and session ids, until the copies reach ``--mb`` megabytes. Real quotes
(8 to 14 word runs of person and assistant text) and false ones (the same runs with one word changed)
are then verified against every file, and the same quotes are searched with a plain ``bytes.find``
of their JSON-escaped form over the same bytes (every occurrence, same mmap reads): the baseline.
The machine is shared and noisy, so the result is a ratio measured in the same run, the two
interleaved quote by quote.
"""

from __future__ import annotations

import argparse
import json
import mmap
import random
import re
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

from dreamtui.core.gate.verify import verify_quote
from dreamtui.core.ingest import records

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "projects"
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def build_corpus(dest: Path, target_bytes: int) -> list[Path]:
    """Copies of the real transcripts with rewritten ids, until ``target_bytes`` are written."""
    sources = sorted(CORPUS.rglob("*.jsonl"))
    if not sources:
        sys.exit(f"no corpus at {CORPUS}")
    out: list[Path] = []
    total, copy = 0, 0
    while total < target_bytes:
        mapping: dict[bytes, bytes] = {}

        def fresh(m: re.Match[bytes], mapping: dict[bytes, bytes] = mapping) -> bytes:
            return mapping.setdefault(m.group(0), str(uuid.uuid4()).encode())

        for src in sources:
            data = _UUID.sub(fresh, src.read_bytes())
            path = dest / f"copy{copy:03d}-{src.parent.name[-20:]}-{src.name}"
            path.write_bytes(data)
            out.append(path)
            total += len(data)
        copy += 1
    return out


def pick_quotes(n: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """``n`` real quotes from person/assistant text, and ``n // 2`` altered ones."""
    pool: list[str] = []
    for src in sorted(CORPUS.rglob("*.jsonl")):
        for raw in src.read_bytes().splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            for piece in records.pieces(obj):
                if piece.role in ("person", "assistant") and piece.text == _raw_text(obj, piece.path):
                    words = piece.text.split(" ")
                    if len(words) >= 16:
                        pool.append(piece.text)
    real: list[str] = []
    while len(real) < n:
        text = rng.choice(pool)
        words = text.split(" ")
        size = rng.randint(8, 14)
        start = rng.randrange(0, len(words) - size)
        real.append(" ".join(words[start:start + size]))
    false: list[str] = []
    for q in real[: n // 2]:
        words = q.split(" ")
        i = rng.randrange(len(words))
        words[i] = words[i] + "zq"
        false.append(" ".join(words))
    return real, false


def _raw_text(obj: object, path: tuple) -> object:
    cur = obj
    for key in path:
        try:
            cur = cur[key]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return None
    return cur


def baseline(quote: str, files: list[Path]) -> int:
    """Occurrences of the JSON-escaped quote, by ``bytes.find`` over every file (mmap, like verify)."""
    needle = json.dumps(quote, ensure_ascii=False)[1:-1].encode()
    hits = 0
    for path in files:
        with path.open("rb") as fh:
            try:
                data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:
                continue
            with data:
                pos = data.find(needle)
                while pos >= 0:
                    hits += 1
                    pos = data.find(needle, pos + 1)
    return hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--quotes", type=int, default=40)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="build (or reuse) the corpus in this folder")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="dreamtui-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        files = sorted(tmp.glob("*.jsonl")) if args.keep and any(tmp.glob("*.jsonl")) else \
            build_corpus(tmp, args.mb * 1_000_000)
        size = sum(p.stat().st_size for p in files)
        real, false = pick_quotes(args.quotes, rng)
        quotes = real + false
        print(f"corpus: {size / 1e6:.1f} MB in {len(files)} files; {len(real)} real and {len(false)} false quotes")
        # warm the page cache once so neither side pays the first read
        for q in quotes[:1]:
            baseline(q, files)

        # interleave the two per quote so the noise of a shared machine hits both alike
        t_base = t_verify = 0.0
        base_hits: list[int] = []
        results = []
        for q in quotes:
            t0 = time.perf_counter()
            base_hits.append(baseline(q, files))
            t1 = time.perf_counter()
            results.append(verify_quote(q, files))
            t2 = time.perf_counter()
            t_base += t1 - t0
            t_verify += t2 - t1

        ok_real = sum(r.verified for r in results[: len(real)])
        ok_false = sum(r.verified for r in results[len(real):])
        places = sum(len(r.matches) for r in results)
        print(f"verified: {ok_real}/{len(real)} real, {ok_false}/{len(false)} false; {places} places reported")
        print(f"baseline bytes.find found {sum(1 for h in base_hits[: len(real)] if h)}/{len(real)} real quotes")
        print(f"verify_quote:   {len(quotes) / t_verify:8.2f} quotes/s  ({t_verify:.2f} s, "
              f"{size * len(quotes) / t_verify / 1e9:.2f} GB/s searched)")
        print(f"bytes.find:     {len(quotes) / t_base:8.2f} quotes/s  ({t_base:.2f} s, "
              f"{size * len(quotes) / t_base / 1e9:.2f} GB/s searched)")
        print(f"ratio verify / bytes.find throughput: {t_base / t_verify:.2f}")
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
