"""Benchmark quote verification the way the gate uses it: many quotes against one session's files.

Usage: ``python3 tests/bench/bench_verify.py [--corpus DIR ...] [--files 17] [--quotes 600] [--reps 3]``

The files are the transcripts under ``--corpus`` (default: the real corpus in ``../shared``; give a
session folder of real transcripts for a bigger set), at most ``--files`` of them. Two thirds of the
quotes are real (8 to 14 word runs of person and assistant text from those files), one third the same
runs with one word changed. Three ways are timed in one run (CPU time, best of ``--reps``, interleaved
so the noise of a shared machine hits them alike):

- ``verify_quotes``: every quote in one pass (what the gate does);
- ``verify_quote`` one by one;
- a plain ``bytes.find`` of each quote's JSON-escaped form in every file (the baseline: fast, and
  wrong whenever the transcript wrote the text differently).
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from dreamtui.core.gate.verify import normalize, refusal, safe_pieces, verify_quote, verify_quotes  # noqa: E402
from dreamtui.core.ingest.formats import claude_code as records  # noqa: E402

CORPUS = Path(os.environ.get("DREAMTUI_TEST_SHARED", REPO.parent / "shared")) / "corpus" / "projects"


def pick_quotes(files: list[Path], n: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """``2n/3`` real quotes from person/assistant text of ``files``, and ``n/3`` altered ones."""
    pool: list[str] = []
    for src in files:
        for raw in src.read_bytes().splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            for piece in records.pieces(obj):
                if (
                    piece.role in ("person", "assistant")
                    and piece.text == _raw_text(obj, piece.path)
                    and len(piece.text.split(" ")) >= 16
                ):
                    pool.append(piece.text)
    if not pool:
        sys.exit("no person or assistant text of 16 words or more in these files")
    n_real = n - n // 3
    real: list[str] = []
    while len(real) < n_real:
        words = rng.choice(pool).split(" ")
        size = rng.randint(8, 14)
        start = rng.randrange(0, len(words) - size)
        quote = " ".join(words[start : start + size])
        if refusal(quote) is None:  # runs of indentation are not words: such a run is refused, not searched
            real.append(quote)
    false: list[str] = []
    for q in real[: n // 3]:
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


def baseline(quotes: list[str], files: list[Path]) -> list[int]:
    """Occurrences of each JSON-escaped quote, by ``bytes.find`` over every file (mmap, like verify)."""
    hits = []
    for quote in quotes:
        needle = json.dumps(quote, ensure_ascii=False)[1:-1].encode()
        n = 0
        for path in files:
            with path.open("rb") as fh:
                try:
                    data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                except ValueError:
                    continue
                with data:
                    pos = data.find(needle)
                    while pos >= 0:
                        n += 1
                        pos = data.find(needle, pos + 1)
        hits.append(n)
    return hits


def one_by_one(quotes: list[str], files: list[Path]) -> list:
    """``verify_quote`` for each quote: every file searched once per quote."""
    return [verify_quote(q, files) for q in quotes]


def best_cpu(fns: list, quotes: list[str], files: list[Path], reps: int) -> tuple[list[float], list]:
    """Best CPU time of each function over ``reps`` interleaved rounds, and each one's last result."""
    best = [float("inf")] * len(fns)
    out: list = [None] * len(fns)
    for _ in range(reps):
        for i, fn in enumerate(fns):
            t0 = time.process_time()
            out[i] = fn(quotes, files)
            best[i] = min(best[i], time.process_time() - t0)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, action="append", default=None)
    parser.add_argument("--files", type=int, default=17)
    parser.add_argument("--quotes", type=int, default=600)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    files = sorted(p for d in (args.corpus or [CORPUS]) for p in d.rglob("*.jsonl"))[: args.files]
    if not files:
        sys.exit(f"no transcripts under {args.corpus or CORPUS}")
    size = sum(p.stat().st_size for p in files)
    real, false = pick_quotes(files, args.quotes, random.Random(args.seed))
    quotes = real + false
    print(f"{len(files)} files, {size / 1e6:.1f} MB; {len(real)} real and {len(false)} altered quotes")
    wordless = sum(1 for q in quotes if not any(p.isascii() for p in safe_pieces(normalize(q))))
    beyond = sum(1 for q in quotes if not normalize(q).isascii())
    print(
        f"quotes beyond ASCII: {beyond}; without an ASCII piece to index (Chinese, Japanese...): {wordless}"
    )
    baseline(quotes[:1], files)  # warm the page cache
    (t_batch, t_one, t_base), (batch, single, hits) = best_cpu(
        [verify_quotes, one_by_one, baseline], quotes, files, args.reps
    )
    same = [(a.verified, a.matches, a.reason) for a in batch] == [
        (b.verified, b.matches, b.reason) for b in single
    ]
    ok_real = sum(r.verified for r in batch[: len(real)])
    ok_false = sum(r.verified for r in batch[len(real) :])
    base_real = sum(1 for h in hits[: len(real)] if h)
    base_false = sum(1 for h in hits[len(real) :] if h)
    print(f"verify_quotes (one pass): {len(quotes) / t_batch:9.0f} quotes/s  ({t_batch:.3f} s CPU)")
    print(f"verify_quote one by one:  {len(quotes) / t_one:9.0f} quotes/s  ({t_one:.3f} s CPU)")
    print(f"bytes.find of the escaped quote: {len(quotes) / t_base:9.0f} quotes/s  ({t_base:.3f} s CPU)")
    print(f"batch / one-by-one: {t_one / t_batch:.1f}x; batch / bytes.find: {t_base / t_batch:.2f}x")
    print(
        f"verified: {ok_real}/{len(real)} real, {ok_false}/{len(false)} altered; "
        f"bytes.find found {base_real}/{len(real)} real, {base_false}/{len(false)} altered"
    )
    print(f"batch and one-by-one results identical: {same}")


if __name__ == "__main__":
    main()
