"""Dream-cycle benchmark on copies of the real transcripts, and watcher latency.

Run:  python3 tests/bench/bench_cycle.py [--copies 20] [--corpus ../shared/corpus/projects]

The real project folders are copied ``--copies`` times (each copy a project of its own) into a
temporary folder that is deleted afterwards (never committed). Every time is also given as a ratio
to a baseline measured in the same run (the machine is shared and noisy):

- baseline: ``digest_session`` over every session (the code-only floor a first cycle cannot beat);
- a first full cycle with the offline extractor (light, deep, branch, gate, REM with review + briefing
  commits), then a cycle after one line was appended to one session, then a cycle with nothing new;
- watcher latency: from an append that says good night to ``on_goodnight``, inotify and polling.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from dreamtui.core.config import Config  # noqa: E402
from dreamtui.core.dream.run import run_cycle  # noqa: E402
from dreamtui.core.ingest.digest import digest_session  # noqa: E402
from dreamtui.core.ingest.transcripts import discover  # noqa: E402
from dreamtui.core.ingest.watch import Watcher  # noqa: E402
from dreamtui.core.ledger import Ledger  # noqa: E402

OLD = time.time() - 86_400


def build(corpus: Path, root: Path, copies: int) -> int:
    """Copy every project folder ``copies`` times; returns the bytes written."""
    total = 0
    for n in range(copies):
        for project in sorted(p for p in corpus.iterdir() if p.is_dir()):
            dest = root / f"{project.name}-copy{n}"
            shutil.copytree(project, dest)
    for p in root.rglob("*.jsonl"):
        os.utime(p, (OLD, OLD))
        total += p.stat().st_size
    return total


def baseline(root: Path) -> float:
    groups: dict[tuple[str, str], list[Path]] = {}
    for tf in discover(root):
        groups.setdefault((tf.project, tf.session), []).append(tf.path)
    t = time.perf_counter()
    for files in groups.values():
        digest_session(files)
    return time.perf_counter() - t


def timed_cycle(config: Config, ledger: Ledger, day: str) -> tuple[float, dict[str, object]]:
    t = time.perf_counter()
    record = run_cycle(config, ledger, date=day)
    return time.perf_counter() - t, record.stats.to_json()


def watch_latency(root: Path, poll: bool, rounds: int = 5) -> list[float]:
    folder = root / "-bench-watch"
    folder.mkdir(exist_ok=True)
    path = folder / "99999999-9999-4999-8999-999999999999.jsonl"
    path.write_text("")
    heard = threading.Event()
    out: list[float] = []
    with Watcher(root, on_goodnight=lambda _p: heard.set(), poll=poll, debounce=0.05, poll_interval=0.25):
        for i in range(rounds):
            heard.clear()
            line = {"type": "user", "uuid": f"w{i}", "message": {"role": "user", "content": "good night"}}
            t = time.perf_counter()
            with path.open("a") as fh:
                fh.write(json.dumps(line) + "\n")
            if heard.wait(10):  # the batch is delivered: the next line starts a new one
                out.append(time.perf_counter() - t)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus" / "projects")
    args = parser.parse_args()
    os.environ.pop("DREAMTUI_NOW", None)
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        os.environ.setdefault(var, "bench")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        os.environ.setdefault(var, "bench@localhost")
    with tempfile.TemporaryDirectory(prefix="dreamtui-bench-") as tmp:
        base = Path(tmp)
        root = base / "transcripts"
        root.mkdir()
        size = build(args.corpus, root, args.copies)
        config = Config(transcripts=root, memory=base / "memory", state=base / "state", extractor="heuristic")
        ledger = Ledger.open(config.state)
        floor = baseline(root)
        first, stats = timed_cycle(config, ledger, "2026-03-01")
        target = next(p for p in sorted(root.rglob("*.jsonl")) if "subagents" not in p.parts)
        with target.open("a") as fh:
            fh.write(
                json.dumps(
                    {
                        "type": "user",
                        "uuid": "bench-1",
                        "message": {
                            "role": "user",
                            "content": "Never run the benchmarks on battery power, the numbers are "
                            "useless then; plug the laptop in first.",
                        },
                    }
                )
                + "\n"
            )
        os.utime(target, (OLD, OLD))
        incremental, stats2 = timed_cycle(config, ledger, "2026-03-02")
        idle, stats3 = timed_cycle(config, ledger, "2026-03-03")
        ledger.close()
        mb = size / 1e6
        print(f"corpus: {args.copies} copies, {mb:.1f} MB, {stats['sessions_new']} sessions")
        print(f"baseline digest_session of every session: {floor:.2f} s ({mb / floor:.1f} MB/s)")
        print(
            f"first cycle: {first:.2f} s = {first / floor:.2f}x baseline; {stats['branches']} branches, "
            f"{stats['surfaced']} surfaced, {stats['kept']} kept, {stats['sessions_quiet']} quiet sessions "
            f"({stats['sessions_settled']} settled)"
        )
        print(
            f"cycle after a one-line append: {incremental:.3f} s = {incremental / floor:.3f}x baseline; "
            f"{stats2['sessions_new']} session(s) with new content, {stats2['branches']} branch(es)"
        )
        print(f"cycle with nothing new: {idle:.3f} s = {idle / floor:.3f}x baseline")
        for poll in (False, True):
            lat = watch_latency(root, poll)
            name = "polling (0.25 s)" if poll else "inotify"
            if lat:
                print(
                    f"watch latency, {name}, debounce 0.05 s: median {statistics.median(lat) * 1000:.0f} ms "
                    f"over {len(lat)} goodnights"
                )
            else:
                print(f"watch latency, {name}: no goodnight heard")


if __name__ == "__main__":
    main()
