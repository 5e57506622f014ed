"""Digest benchmark: the digest against ``orjson.loads`` on every line, per file and mixed.

Run:  python3 tests/bench/bench_digest.py [--corpus DIR ...] [--synthetic 6] [--reps 5] [--scale-mb 200]

Prints, from one run (the machine is shared and noisy, so every figure is a ratio to the baseline
measured in the same run, CPU time, best of ``--reps``, baseline and digest interleaved per file):
- per file: baseline time / digest time (above 1: the digest is faster), worst files first, and the
  worst file of 100 KB or more named;
- the mixed ratio: all files' baseline time over all files' digest time.
The files are every transcript under each ``--corpus`` (default: the real corpus in ``../shared``;
give a folder of other real sessions too) plus ``--synthetic`` generated metadata-heavy sessions
(queue operations, file-history snapshots, progress and hook records; ``tests/transcript_synth.py``).
``--scale-mb N`` also builds an N MB corpus from copies of the ``../shared`` files (ids rewritten per
copy) in a temporary folder and reports throughput, peak RSS and the incremental re-digest time.
Nothing is committed: generated files live in a temporary folder deleted afterwards.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
SHARED_CORPUS = Path(os.environ.get("DREAMTUI_TEST_SHARED", REPO.parent / "shared")) / "corpus" / "projects"

from dreamtui.core.ingest.digest import digest_file, digest_increment  # noqa: E402
from dreamtui.core.ingest.tail import Tailer  # noqa: E402
from dreamtui.core.ledger import Ledger  # noqa: E402
from tests.transcript_synth import reorder, session_records, write_jsonl  # noqa: E402

UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
MSG_ID = re.compile(rb'"(msg_|req_|toolu_)([A-Za-z0-9]+)"')


def rewrite(data: bytes, copy: int) -> bytes:
    """The same transcript with every uuid/sessionId and message/request/tool id made unique to ``copy``."""
    tag = b"%08x" % copy
    data = UUID.sub(lambda m: m.group(0)[:-8] + tag, data)
    return MSG_ID.sub(lambda m: b'"' + m.group(1) + m.group(2) + b"x" + tag + b'"', data)


def build_corpus(src: Path, dest: Path, target_mb: int) -> list[Path]:
    """Copies of every source transcript, ids rewritten, until ``target_mb`` MB are written."""
    sources = sorted(p for p in src.rglob("*.jsonl"))
    if not sources:
        sys.exit(f"no transcripts under {src}")
    blobs = [(p, p.read_bytes()) for p in sources]
    out: list[Path] = []
    written, copy = 0, 0
    while written < target_mb * 1_000_000:
        copy += 1
        for p, data in blobs:
            project = dest / f"-bench-{copy:04d}-{p.parent.name.strip('-')}"
            project.mkdir(parents=True, exist_ok=True)
            target = project / p.name.replace(".jsonl", f"-{copy:04d}.jsonl")
            target.write_bytes(rewrite(data, copy))
            out.append(target)
            written += len(data)
    return out


def build_big_file(src: Path, dest: Path, target_mb: int) -> Path:
    """One main-session file of about ``target_mb`` MB (rewritten copies of the main files)."""
    mains = [p for p in sorted(src.rglob("*.jsonl")) if not p.name.startswith("agent-")]
    big = dest / "-bench-big" / "big.jsonl"
    big.parent.mkdir(parents=True)
    written, copy = 0, 0
    with big.open("wb") as fh:
        while written < target_mb * 1_000_000:
            for p in mains:
                copy += 1
                data = rewrite(p.read_bytes(), 100_000 + copy)
                fh.write(data)
                written += len(data)
    return big


def orjson_loop(files: list[Path]) -> int:
    """The baseline: decode every line of every file with orjson, nothing else."""
    n = 0
    for f in files:
        with f.open("rb") as fh:
            for line in fh:
                orjson.loads(line)
                n += 1
    return n


def digest_all(files: list[Path]) -> int:
    """Digest every file; returns the number of turns kept."""
    return sum(len(digest_file(f).turns) for f in files)


def best_of_interleaved(fns: list, arg, reps: int) -> list[float]:
    """The best wall time of each function, runs interleaved so load changes hit them alike."""
    best = [float("inf")] * len(fns)
    for _ in range(reps):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn(arg)
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


_PROBE = """
import resource
try:  # VmHWM restarts at exec; ru_maxrss would include the parent's size before the exec
    with open("/proc/self/status") as fh:
        print(next(int(x.split()[1]) for x in fh if x.startswith("VmHWM:")))
except (OSError, StopIteration):
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_rss_mb(code: str) -> float:
    """Peak RSS (MB) of a child Python process running ``code``, as the child itself saw it."""
    out = subprocess.run(
        [sys.executable, "-c", code + _PROBE], check=True, cwd=REPO, capture_output=True, text=True
    )
    return int(out.stdout.split()[-1]) / 1024  # KiB on Linux


def incremental(big: Path, state: Path, reps: int) -> tuple[float, float, int]:
    """First digest of ``big`` through the tailer, then the median time to digest 1 KB appended."""
    led = Ledger.open(state)
    tailer = Tailer(led)
    t0 = time.perf_counter()
    while True:
        _, read, _ = digest_increment(led, big, tailer=tailer, max_bytes=32 * 1024 * 1024)
        if not read.more:
            break
    first = time.perf_counter() - t0
    prompt = "please keep the deploy log terse " * 28
    times = []
    for i in range(reps):
        line = (
            orjson.dumps(
                {
                    "type": "user",
                    "uuid": f"bench-{i}",
                    "timestamp": f"2026-03-01T11:00:{i:02d}Z",
                    "message": {"role": "user", "content": prompt[:950]},
                }
            )
            + b"\n"
        )
        with big.open("ab") as fh:
            fh.write(line)
        t0 = time.perf_counter()
        d, read, _ = digest_increment(led, big, tailer=tailer)
        times.append(time.perf_counter() - t0)
        assert len(d.turns) == 1 and read.bytes_read == len(line), (len(d.turns), read.bytes_read)
    led.close()
    return first, statistics.median(times), len(line)


def orjson_file(path: Path) -> None:
    """The baseline for one file: ``orjson.loads`` on every line (a bad line is passed over)."""
    with path.open("rb") as fh:
        for line in fh:
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                pass


def digest_one(path: Path) -> None:
    """The digest of one file, as ``dreamtui digest FILE`` makes it."""
    digest_file(path)


def per_file(files: list[Path], reps: int) -> list[tuple[float, float, Path]]:
    """``(baseline CPU s, digest CPU s, path)`` per file: best of ``reps``, the two interleaved, each
    timing repeated until it covers about 2 MB so small files are measured above the clock's noise."""
    out = []
    for path in files:
        size = max(path.stat().st_size, 1)
        inner = max(1, 2_000_000 // size)
        best = [float("inf"), float("inf")]
        for _ in range(reps):
            for i, fn in enumerate((orjson_file, digest_one)):
                t0 = time.process_time()
                for _ in range(inner):
                    fn(path)
                best[i] = min(best[i], (time.process_time() - t0) / inner)
        out.append((best[0], best[1], path))
    return out


def fixed_cost(dest: Path, reps: int) -> None:
    """The cost of a file itself: an empty transcript and one of a single short prompt, in µs."""
    folder = dest / "-bench-fixed"
    folder.mkdir(parents=True)
    empty = folder / "00000000-0000-4000-8000-000000000000.jsonl"
    empty.write_bytes(b"")
    one = folder / "00000000-0000-4000-8000-000000000001.jsonl"
    one.write_bytes(
        orjson.dumps(
            {
                "type": "user",
                "uuid": "u",
                "timestamp": "2026-03-01T10:00:00Z",
                "cwd": "/w",
                "message": {"role": "user", "content": "keep the log terse"},
            }
        )
        + b"\n"
    )
    for name, path in (("empty file", empty), ("one-line file", one)):
        best = [float("inf"), float("inf")]
        for _ in range(reps):
            for i, fn in enumerate((orjson_file, digest_one)):
                t0 = time.process_time()
                for _ in range(2000):
                    fn(path)
                best[i] = min(best[i], (time.process_time() - t0) / 2000)
        print(f"fixed cost, {name}: orjson-every-line {best[0] * 1e6:.1f} µs, digest {best[1] * 1e6:.1f} µs")


def synthetic(dest: Path, n: int) -> list[Path]:
    """``n`` metadata-heavy sessions of 150 KB to 1.5 MB, half with their keys in another order."""
    out = []
    for i in range(n):
        rng = random.Random(1000 + i)
        records = session_records(rng, rng.randint(300, 3000))
        if i % 2:
            records = [reorder(r, lambda keys: keys[::-1]) for r in records]
        path = dest / "-bench-synthetic" / f"{i:08d}-2222-4333-8444-555555555555.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(write_jsonl(records))
        out.append(path)
    return out


def report(rows: list[tuple[float, float, Path]], roots: list[Path], show: int) -> None:
    """Print the per-file ratios (worst first), the worst big file, and the mixed ratio."""

    def name(p: Path) -> str:
        for root in roots:
            if p.is_relative_to(root):
                return str(p.relative_to(root))
        return str(p)

    rows = sorted(rows, key=lambda r: r[0] / r[1])
    print(f"{'ratio':>6} {'KB':>7}  file (worst first)")
    for base, dig, path in rows[:show]:
        print(f"{base / dig:6.2f} {path.stat().st_size / 1000:7.0f}  {name(path)}")
    big = [r for r in rows if r[2].stat().st_size >= 100_000]
    small = [r for r in rows if r[2].stat().st_size < 100_000]
    if big:
        b, d, p = big[0]
        under = sum(1 for r in big if r[0] < r[1])
        print(
            f"worst file of 100 KB or more: {b / d:.2f}  {name(p)} ({p.stat().st_size / 1000:.0f} KB); "
            f"{under} of {len(big)} such files under 1.0"
        )
    if small:
        print(
            f"files under 100 KB ({len(small)}): {sum(r[0] for r in small) / sum(r[1] for r in small):.2f} "
            f"together, worst {small[0][0] / small[0][1]:.2f}"
        )
    total = sum(r[2].stat().st_size for r in rows)
    t_base, t_dig = sum(r[0] for r in rows), sum(r[1] for r in rows)
    print(
        f"mixed: {len(rows)} files, {total / 1e6:.1f} MB: orjson-every-line {total / 1e6 / t_base:.0f} MB/s, "
        f"digest {total / 1e6 / t_dig:.0f} MB/s, ratio {t_base / t_dig:.2f}"
    )


def scale(src: Path, tmp: Path, mb: int, reps: int) -> None:
    """The throughput, peak RSS and incremental figures on an ``mb`` MB corpus of copies."""
    t0 = time.perf_counter()
    files = build_corpus(src, tmp / "projects", mb)
    size = sum(f.stat().st_size for f in files)
    print(
        f"scaled corpus: {len(files)} files, {size / 1e6:.1f} MB (built in {time.perf_counter() - t0:.1f} s)"
    )
    orjson_loop(files)  # warm the page cache
    t_base, t_digest = best_of_interleaved([orjson_loop, digest_all], files, reps)
    print(
        f"orjson.loads on every line: {size / 1e6 / t_base:8.1f} MB/s; digest {size / 1e6 / t_digest:8.1f} MB/s; "
        f"ratio {t_base / t_digest:.2f}"
    )
    listing = tmp / "files.txt"
    listing.write_text("\n".join(map(str, files)))
    code_digest = (
        "import sys; from pathlib import Path; from dreamtui.core.ingest.digest import digest_file\n"
        f"files = Path({str(listing)!r}).read_text().split('\\n')\n"
        "sum(len(digest_file(f).turns) for f in files)\n"
    )
    rss_import = peak_rss_mb("import dreamtui.core.ingest.digest")
    rss = peak_rss_mb(code_digest)
    print(
        f"peak RSS digesting the whole corpus: {rss:.1f} MB  (target < 150; "
        f"the interpreter with dreamtui imported: {rss_import:.1f} MB)"
    )
    big = build_big_file(src, tmp / "projects", min(100, mb))
    first, again, appended = incremental(big, tmp / "state", max(reps, 5))
    print(
        f"incremental: first digest of a {big.stat().st_size / 1e6:.0f} MB file through the tailer {first:.2f} s; "
        f"after {appended} bytes appended: {again * 1000:.1f} ms (median; target < 50 ms)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, action="append", default=None, help="a folder of real transcripts")
    ap.add_argument("--synthetic", type=int, default=6, help="generated metadata-heavy sessions to add")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--show", type=int, default=12, help="how many of the worst files to list")
    ap.add_argument("--scale-mb", type=int, default=0, help="also measure an N MB corpus of copies")
    args = ap.parse_args()
    roots = args.corpus or [SHARED_CORPUS]
    tmp = Path(tempfile.mkdtemp(prefix="dreamtui-bench-"))
    try:
        files = sorted(p for root in roots for p in root.rglob("*.jsonl"))
        if not files:
            sys.exit(f"no transcripts under {', '.join(map(str, roots))}")
        made = synthetic(tmp, args.synthetic)
        print(
            f"{len(files)} real files under {', '.join(map(str, roots))}; {len(made)} synthetic metadata-heavy"
        )
        for f in files + made:
            f.read_bytes()  # warm the page cache
        real = per_file(files, args.reps)
        print("\n-- real transcripts")
        report(real, roots, args.show)
        fixed_cost(tmp, args.reps)
        if made:
            synth = per_file(made, args.reps)
            print("\n-- synthetic metadata-heavy sessions")
            report(synth, [tmp], args.show)
            print("\n-- real and synthetic together")
            report(real + synth, roots + [tmp], 0)
        if args.scale_mb:
            print()
            scale(SHARED_CORPUS, tmp, args.scale_mb, min(args.reps, 3))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
