"""Codex CLI digest benchmark: the digest of a rollout against ``orjson.loads`` on each of its lines.

Run:  python3 tests/bench/bench_codex_digest.py [FILE ...] [--reps 7] [--synthetic-mb 20]

The files are the real rollouts in ``tests/fixtures/agents/codex``, any rollout given on the command
line (a real one of your own, say), and one synthetic rollout of ``--synthetic-mb`` MB built from
``tests/fakes/codex_rollout.py``'s shape (typed messages, replies, reasoning, and shell calls whose
output is a few KB, as real sessions have) in a temporary folder deleted afterwards. Printed per file
and for all of them: orjson's CPU time, the digest's, and their ratio (digest / orjson; issue 31's target:
at most 2). Best of ``--reps``, the two interleaved, so a noisy shared machine hurts both alike.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from fakes.codex_rollout import rollout_lines  # noqa: E402

from dreamtui.core.ingest.digest import digest_file  # noqa: E402

REAL = REPO / "tests" / "fixtures" / "agents" / "codex"


def orjson_lines(path: Path) -> int:
    """The baseline: read the file and decode every line with orjson."""
    n = 0
    with path.open("rb") as fh:
        for line in fh:
            if line.strip():
                orjson.loads(line)
                n += 1
    return n


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
    """A rollout of about ``megabytes`` MB: turns of a person's message, a shell call with 4 KB of
    output, reasoning, and a reply, as ``fakes.codex_rollout`` writes them."""
    path = folder / "rollout-2026-03-10T21-00-00-019e0000-0000-7000-8000-00000000beef.jsonl"
    output = "\n".join(
        f"src/module_{i}.py:{i}: def handler_{i}(request): return respond(request)" for i in range(60)
    )
    turn = rollout_lines(
        "/home/kim/src/spotter",
        [
            ("person", "Please make the importer skip the empty rows and keep the rest."),
            ("assistant", "Done: empty rows are skipped now."),
        ],
    )[6:]
    lines = rollout_lines("/home/kim/src/spotter", [])
    size = sum(map(len, lines))
    i = 0
    while size < megabytes * 1_000_000:
        i += 1
        for raw in turn:
            obj = json.loads(raw)
            if obj["payload"].get("type") == "function_call_output":
                obj["payload"]["output"] = f"run {i}\n{output}"
            if obj["payload"].get("type") == "message" or obj["payload"].get("type") in (
                "user_message",
                "agent_message",
            ):
                obj["timestamp"] = f"2026-03-10T21:00:00.{i:06d}Z"
            line = json.dumps(obj, separators=(",", ":")).replace("empty rows", f"empty rows ({i})")
            lines.append(line)
            size += len(line) + 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--synthetic-mb", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = sorted(REAL.glob("rollout-*.jsonl")) + list(args.files)
        if args.synthetic_mb > 0:
            files.append(synthetic(Path(tmp), args.synthetic_mb))
        total_base = total_digest = 0.0
        print(f"{'file':<60} {'MB':>6} {'orjson s':>9} {'digest s':>9} {'digest/orjson':>13}")
        for path in files:
            base = best(orjson_lines, path, args.reps)
            took = best(digest, path, args.reps)
            total_base, total_digest = total_base + base, total_digest + took
            mb = path.stat().st_size / 1e6
            print(f"{path.name[-60:]:<60} {mb:6.2f} {base:9.4f} {took:9.4f} {took / base:13.2f}")
        print(
            f"{'all files':<60} {'':>6} {total_base:9.4f} {total_digest:9.4f} {total_digest / total_base:13.2f}"
        )


if __name__ == "__main__":
    main()
