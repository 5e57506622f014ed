"""Aider digest benchmark: the digest of a chat history against reading the same file plainly.

Run:  python3 tests/bench/bench_aider_digest.py [FILE ...] [--reps 7] [--synthetic-mb 4]

The files are the real histories in ``tests/fixtures/agents/aider`` (small), any history given on the
command line (Aider's own ``tests/fixtures/chat-history.md``, 4 MB, say), and one synthetic history of
``--synthetic-mb`` MB: the real fixtures' sessions repeated, each copy started a minute later, in a
temporary folder deleted afterwards. Each is read as ``<folder>/.aider.chat.history.md``, the name
Aider writes. Printed per file: the plain read's CPU time (read the bytes, decode UTF-8, split the
lines: what any reader of a markdown file does), the digest's (``digest_file``: the format's records,
their pieces, the turns), and their ratio (digest / plain; issue 31's target: at most 2). Best of
``--reps``, the two interleaved, so a noisy shared machine hurts both alike.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from dreamtui.core.ingest.digest import digest_file  # noqa: E402
from dreamtui.core.ingest.formats import aider  # noqa: E402

REAL = REPO / "tests" / "fixtures" / "agents" / "aider"
_START = re.compile(rb"(?m)^(?=# aider chat started at )")


def plain(path: Path) -> int:
    """The baseline: read the file, decode it, split its lines."""
    return len(path.read_bytes().decode("utf-8", "replace").splitlines())


def digest(path: Path) -> int:
    return len(digest_file(path).turns)


def best(fn, path: Path, reps: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(reps):
        start = time.process_time()
        fn(path)
        times.append(time.process_time() - start)
    return min(times)


def synthetic(folder: Path, megabytes: float) -> Path:
    """The real fixtures' sessions over and over (each copy a minute later) up to ``megabytes`` MB."""
    sessions = [
        s
        for p in sorted(REAL.glob("*.chat.history.md"))
        for s in _START.split(p.read_bytes())
        if s.startswith(b"#")
    ]
    out = bytearray()
    minute = 0
    while len(out) < megabytes * 1_000_000:
        for s in sessions:
            minute += 1
            stamp = f"2030-01-{1 + minute // 1440:02d} {minute // 60 % 24:02d}:{minute % 60:02d}:00".encode()
            out += b"\n" + re.sub(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", stamp, s, count=1)
    path = folder / "synthetic" / aider.HISTORY_NAME
    path.parent.mkdir()
    path.write_bytes(bytes(out))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--synthetic-mb", type=float, default=4.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = []
        for src in [*sorted(REAL.glob("*.chat.history.md")), *args.files]:
            place = folder / src.name.replace(".", "-")
            place.mkdir()
            paths.append(Path(shutil.copy(src, place / aider.HISTORY_NAME)))
        if args.synthetic_mb > 0:
            paths.append(synthetic(folder, args.synthetic_mb))
        total_plain = total_digest = 0.0
        print(f"{'file':48} {'MB':>6} {'plain ms':>9} {'digest ms':>10} {'ratio':>6} {'turns':>6}")
        for path in paths:
            t_plain = best(plain, path, args.reps)
            t_digest = best(digest, path, args.reps)
            total_plain += t_plain
            total_digest += t_digest
            size = path.stat().st_size / 1e6
            name = path.parent.name[:48]
            print(
                f"{name:48} {size:6.2f} {t_plain * 1000:9.2f} {t_digest * 1000:10.2f} "
                f"{t_digest / t_plain:6.1f} {digest(path):6d}"
            )
        print(
            f"{'all':48} {'':6} {total_plain * 1000:9.2f} {total_digest * 1000:10.2f} {total_digest / total_plain:6.1f}"
        )


if __name__ == "__main__":
    main()
