"""Aider digest benchmark: the digest of a chat history against reading the same file plainly.

Run:  python3 tests/bench/bench_aider_digest.py [FILE ...] [--reps 7] [--synthetic-mb 4]

The files are the real histories in ``tests/fixtures/agents/aider`` (small), any history given on the
command line (Aider's own ``tests/fixtures/chat-history.md``, 4 MB, say), and one synthetic history of
``--synthetic-mb`` MB: the real fixtures' sessions repeated, each copy started a minute later, in a
temporary folder deleted afterwards. Each is read as ``<folder>/.aider.chat.history.md``, the name
Aider writes. Printed per file: the CPU time of three plain reads and of the digest, and the
digest's time over each (issue 31's target: at most 2):

- ``plain``: read the bytes, decode UTF-8, split the lines: what any reader of a markdown file does;
- ``orjson doc``: ``orjson.loads`` of the same text as one JSON string (a file written beside it);
- ``orjson lines``: ``orjson.loads`` of every line of the same text, each a JSON string (the JSON-lines
  formats' baseline, for text of the same size);
- ``digest``: ``digest_file``: the format's records, their pieces, the turns.

Best of ``--reps``, the four interleaved rep by rep, so a noisy shared machine hurts them alike.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import orjson

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


def as_json(path: Path) -> None:
    """The same text beside the history as one JSON string (``.json``) and as a JSON string a line
    (``.jsonl``)."""
    text = path.read_bytes().decode("utf-8", "replace")
    path.with_name("history.json").write_bytes(orjson.dumps(text))
    path.with_name("history.jsonl").write_bytes(b"\n".join(orjson.dumps(line) for line in text.splitlines()))


def orjson_doc(path: Path) -> int:
    return len(orjson.loads(path.with_name("history.json").read_bytes()))


def orjson_lines(path: Path) -> int:
    loads = orjson.loads
    return len([loads(line) for line in path.with_name("history.jsonl").read_bytes().split(b"\n")])


def best(fns: list, path: Path, reps: int) -> list[float]:  # type: ignore[type-arg]
    """The best CPU time of each of ``fns`` on ``path``, the runs interleaved."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(reps):
        for fn, runs in zip(fns, times, strict=True):
            start = time.process_time()
            fn(path)
            runs.append(time.process_time() - start)
    return [min(runs) for runs in times]


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
        fns = [plain, orjson_doc, orjson_lines, digest]
        totals = [0.0] * len(fns)
        print(
            f"{'file':44} {'MB':>5} {'plain ms':>9} {'orjson doc':>10} {'orjson lines':>12} {'digest ms':>9}"
            f" {'÷plain':>7} {'÷doc':>6} {'÷lines':>6} {'turns':>6}"
        )
        for path in paths:
            as_json(path)
            times = best(fns, path, args.reps)
            totals = [t + x for t, x in zip(totals, times, strict=True)]
            size = path.stat().st_size / 1e6
            t_plain, t_doc, t_lines, t_digest = times
            print(
                f"{path.parent.name[:44]:44} {size:5.2f} {t_plain * 1000:9.2f} {t_doc * 1000:10.2f} "
                f"{t_lines * 1000:12.2f} {t_digest * 1000:9.2f} {t_digest / t_plain:7.2f} "
                f"{t_digest / t_doc:6.2f} {t_digest / t_lines:6.2f} {digest(path):6d}"
            )
        t_plain, t_doc, t_lines, t_digest = totals
        print(
            f"{'all':44} {'':5} {t_plain * 1000:9.2f} {t_doc * 1000:10.2f} {t_lines * 1000:12.2f} "
            f"{t_digest * 1000:9.2f} {t_digest / t_plain:7.2f} {t_digest / t_doc:6.2f} {t_digest / t_lines:6.2f}"
        )
        print(f"Python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
