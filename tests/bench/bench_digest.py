"""Digest benchmark on a >= 200 MB corpus built from the real transcripts (ids rewritten per copy).

Run:  python3 tests/bench/bench_digest.py [--mb 200] [--corpus ../shared/corpus/projects] [--keep DIR]

Prints, from one run (the machine is shared and noisy, so every speed is also given as a ratio to a
baseline measured in the same run):
- digest throughput in MB/s, and its ratio to a loop that only runs ``orjson.loads`` on every line;
- peak RSS of a process that digests the whole corpus (measured in a child process);
- time to digest a 100 MB file incrementally after 1 KB was appended (the tailer reads only it).
The corpus lives in a temporary directory and is deleted afterwards (never committed).
"""

from __future__ import annotations

import argparse
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

from dreamtui.core.ingest.digest import digest_file, digest_increment  # noqa: E402
from dreamtui.core.ingest.tail import Tailer  # noqa: E402
from dreamtui.core.ledger import Ledger  # noqa: E402

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
    out = subprocess.run([sys.executable, "-c", code + _PROBE], check=True, cwd=REPO,
                         capture_output=True, text=True)
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
        line = orjson.dumps({"type": "user", "uuid": f"bench-{i}", "timestamp": f"2026-03-01T11:00:{i:02d}Z",
                             "message": {"role": "user", "content": prompt[:950]}}) + b"\n"
        with big.open("ab") as fh:
            fh.write(line)
        t0 = time.perf_counter()
        d, read, _ = digest_increment(led, big, tailer=tailer)
        times.append(time.perf_counter() - t0)
        assert len(d.turns) == 1 and read.bytes_read == len(line), (len(d.turns), read.bytes_read)
    led.close()
    return first, statistics.median(times), len(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus" / "projects")
    ap.add_argument("--mb", type=int, default=200, help="corpus size to build (MB)")
    ap.add_argument("--big-mb", type=int, default=100, help="size of the file for the incremental test")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="build in this folder and keep it")
    args = ap.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="dreamtui-bench-"))
    try:
        t0 = time.perf_counter()
        files = build_corpus(args.corpus, tmp / "projects", args.mb)
        size = sum(f.stat().st_size for f in files)
        print(f"corpus: {len(files)} files, {size / 1e6:.1f} MB (built in {time.perf_counter() - t0:.1f} s)")
        orjson_loop(files)  # warm the page cache
        t_base, t_digest = best_of_interleaved([orjson_loop, digest_all], files, args.reps)
        turns = digest_all(files)
        print(f"orjson.loads on every line: {size / 1e6 / t_base:8.1f} MB/s ({t_base:.2f} s)")
        print(f"digest:                     {size / 1e6 / t_digest:8.1f} MB/s ({t_digest:.2f} s, {turns} turns)")
        print(f"digest / orjson-loop throughput ratio: {t_base / t_digest:.2f}  (target >= 1.0)")
        listing = tmp / "files.txt"
        listing.write_text("\n".join(map(str, files)))
        code_digest = ("import sys; from pathlib import Path; from dreamtui.core.ingest.digest import digest_file\n"
                       f"files = Path({str(listing)!r}).read_text().split('\\n')\n"
                       "sum(len(digest_file(f).turns) for f in files)\n")
        code_import = "import dreamtui.core.ingest.digest"
        rss_import = peak_rss_mb(code_import)
        rss = peak_rss_mb(code_digest)
        print(f"peak RSS digesting the whole corpus: {rss:.1f} MB  (target < 150; "
              f"the interpreter with dreamtui imported: {rss_import:.1f} MB)")
        big = build_big_file(args.corpus, tmp / "projects", args.big_mb)
        first, again, appended = incremental(big, tmp / "state", max(args.reps, 5))
        big_mb = big.stat().st_size / 1e6
        print(f"incremental: first digest of a {big_mb:.0f} MB file through the tailer {first:.2f} s; "
              f"after {appended} bytes appended: {again * 1000:.1f} ms (median; target < 50 ms)")
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
