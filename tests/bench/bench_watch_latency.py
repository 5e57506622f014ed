"""Watch latency benchmark: for every registered format (``formats.FORMATS``), and OpenCode's older
``storage/`` layout besides its database, how soon a person's good night written into a live session
is noticed and queued by ``dreamtui watch``, through real watchdog events (inotify; ``--poll``: the
polling observer), against the debounce.

Run:  python3 tests/bench/bench_watch_latency.py [--writes 5] [--debounce 1.0] [--poll]

A temporary HOME is laid out as each agent lays its files (``tests/fakes/every_agent.py``: Claude Code's
project folder, Codex's date-nested rollouts, Gemini CLI's and Copilot CLI's folders, OpenCode's
database and its older ``storage/`` files in one data folder, Cursor CLI's ``store.db``, Aider's history
at the top of the git repository every session ran in). The watch daemon ``dreamtui watch`` runs
(``services.dreaming.daemon`` over a real workspace: the same watcher, folders and files watched, good
nights told to its event queue) is started with a rescan interval far longer than the run, so only
events can deliver; its loop is not run, so nothing is dreamed: what is measured is the queueing.

For each format, ``--writes`` times, the person says a new good night as its agent writes it (lines
appended; Gemini's whole JSON document rewritten in place, then atomically by a rename, in turn; rows
committed through a second connection in WAL mode, checkpoints off; OpenCode's older layout: the
message's file, then its part's; Aider's markdown appended). From the write's return, two times:

- *noticed*: the watcher delivers a batch naming the session's file (or its WAL);
- *queued*: the daemon's event queue gets ``("goodnight", project)`` (what starts the dream).

Each write is its own burst: the next waits until the watcher has been idle a while. Prints per
format the median and the p95 of each (nearest rank; the max with 5 writes), the ratio queued /
debounce (1.00 = the debounce exactly: the target is the debounce plus a small overhead, never a
rescan's wait), and how many deliveries named the file per write (1: one per burst). A write not
queued within 30 s counts as missed. Nothing is committed; nothing is written outside a temporary
folder.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from fakes.every_agent import agent_env, goodnight_writers  # noqa: E402

from dreamtui.core.config import Config  # noqa: E402
from dreamtui.core.ingest.formats import gemini  # noqa: E402
from dreamtui.core.ingest.watch import DEFAULT_DEBOUNCE  # noqa: E402
from dreamtui.services import dreaming  # noqa: E402
from dreamtui.services.workspace import Workspace  # noqa: E402

LESSON = "Always run the database migrations against the throwaway container before touching them."
MISSED_AFTER = 30.0
"""Seconds after which a write not queued counts as missed (a rescan would be its only way)."""


class Stamps:
    """Each call's time and value, from the watcher's thread (deliveries, good nights told)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.calls: list[tuple[float, object]] = []

    def add(self, value: object) -> None:
        now = time.monotonic()
        with self.cond:
            self.calls.append((now, value))
            self.cond.notify_all()

    def first(self, since: int, ok, timeout: float) -> float | None:  # type: ignore[no-untyped-def]
        """When the first call after call ``since`` whose value is ``ok`` came (None: not in ``timeout``)."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for at, value in self.calls[since:]:
                    if ok(value):
                        return at
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def last(self) -> float:
        with self.cond:
            return self.calls[-1][0] if self.calls else 0.0


def names(path: Path, paths: object) -> bool:
    """Whether a delivered batch names the session file ``path`` or its write-ahead log."""
    return isinstance(paths, list) and any(p in (path, Path(f"{path}-wal")) for p in paths)


def p95(values: list[float]) -> float:
    """The nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


class Result:
    def __init__(self) -> None:
        self.noticed: dict[str, list[float]] = {}
        self.queued: dict[str, list[float]] = {}
        self.deliveries: dict[str, list[int]] = {}
        self.ways: dict[str, str] = {}
        self.rescans = 0


def measure(writes: int, debounce: float, poll: bool) -> Result:
    with tempfile.TemporaryDirectory(prefix="dreamtui-watch-bench-") as folder:
        tmp = Path(folder)
        for key, value in agent_env(tmp).items():
            os.environ[key] = value
        gemini._resolved.clear()
        repo = (tmp / "src" / "spotter").resolve()
        repo.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)  # Aider writes at the repository's top
        transcripts = tmp / "transcripts"
        transcripts.mkdir()
        writers = goodnight_writers(tmp, repo, transcripts, LESSON)
        config = Config(
            transcripts=transcripts,
            memory=tmp / "memory",
            state=tmp / "state",
            extractor="heuristic",
            rescan_seconds=24 * 3600,  # far longer than the run: only events deliver
        )
        out = Result()
        changed, told = Stamps(), Stamps()
        with Workspace(config) as ws:
            daemon = dreaming.daemon(
                ws, poll=poll, schedule=None, debounce=debounce, say=lambda _t: None, on_wake=lambda _r: None
            )
            watcher = daemon.watcher
            watcher.poll_interval = 0.1
            watcher.on_change = changed.add
            queue_goodnight = watcher.on_goodnight
            assert queue_goodnight is not None

            def goodnight(project: str) -> None:
                queue_goodnight(project)  # the daemon's own: onto its event queue, as under `dreamtui watch`
                told.add(project)

            watcher.on_goodnight = goodnight
            daemon.start()
            try:
                watcher.primed.wait(30)
                n = 0
                for name, writer in writers.items():
                    ways = writer.ways
                    out.ways[name] = "/".join(w.__name__ for w in ways)
                    for i in range(writes):
                        n += 1
                        quiet(changed, debounce)
                        since_change, since_told = len(changed.calls), len(told.calls)
                        ways[i % len(ways)](n)
                        written = time.monotonic()
                        at_told = told.first(since_told, lambda _p: True, MISSED_AFTER)
                        at_change = changed.first(since_change, lambda v, p=writer.path: names(p, v), 0.1)
                        out.queued.setdefault(name, []).append(
                            math.inf if at_told is None else at_told - written
                        )
                        out.noticed.setdefault(name, []).append(
                            math.inf if at_change is None else at_change - written
                        )
                        quiet(changed, debounce)  # the burst's later deliveries, if any, are counted too
                        with changed.cond:
                            named = sum(1 for _, v in changed.calls[since_change:] if names(writer.path, v))
                        out.deliveries.setdefault(name, []).append(named)
                        while not daemon.events.empty():  # the loop is not run: nothing is dreamed
                            daemon.events.get_nowait()
                out.rescans = watcher.rescans
            finally:
                daemon.close()
        return out


def quiet(got: Stamps, debounce: float) -> None:
    """Wait until no delivery came for the debounce plus a margin (the burst is over), at most
    ``5 + 5 × debounce`` seconds (deliveries that never stop show as many deliveries per write)."""
    still, end = debounce + 0.3, time.monotonic() + 5 + 5 * debounce
    while (left := min(got.last() + still, end) - time.monotonic()) > 0:
        time.sleep(left)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=5, help="good nights written per format (default 5)")
    parser.add_argument(
        "--debounce",
        type=float,
        default=DEFAULT_DEBOUNCE,
        help=f"seconds (default {DEFAULT_DEBOUNCE:g}, the watch's)",
    )
    parser.add_argument("--poll", action="store_true", help="the polling observer (0.1 s) instead of inotify")
    args = parser.parse_args()
    load = os.getloadavg()
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"{'polling (0.1 s)' if args.poll else 'inotify'}; debounce {args.debounce:g} s; "
        f"{args.writes} good nights per format; rescans off"
    )
    got = measure(args.writes, args.debounce, args.poll)
    print(
        f"{'format':<20} {'change':<38} {'noticed med/p95 s':>18} {'queued med/p95 s':>17} "
        f"{'queued/debounce':>16} {'deliveries':>10}"
    )
    worst = 0.0
    for name, queued in got.queued.items():
        done = [t for t in queued if t != math.inf]
        seen = [t for t in got.noticed[name] if t != math.inf]
        missed = f"  ({len(queued) - len(done)} of {len(queued)} missed)" if len(done) < len(queued) else ""
        per = "/".join(map(str, sorted(set(got.deliveries[name]))))
        if not done:
            print(f"{name:<20} {got.ways[name]:<38} {'':>18} {'missed every write':>17} {'':>16} {per:>10}")
            worst = math.inf
            continue
        notice = f"{statistics.median(seen):.3f}/{p95(seen):.3f}" if seen else "never"
        med, top = statistics.median(done), p95(done)
        worst = max(worst, top / args.debounce if len(done) == len(queued) else math.inf)
        ratio = f"{med / args.debounce:.2f}/{top / args.debounce:.2f}" if args.debounce else "-"
        print(
            f"{name:<20} {got.ways[name]:<38} {notice:>18} {f'{med:.3f}/{top:.3f}':>17} {ratio:>16} {per:>10}{missed}"
        )
    load = os.getloadavg()
    print(
        f"worst p95 queued/debounce: {worst:.2f} (target: the debounce plus a small overhead); "
        f"rescans during the run: {got.rescans} (0: every good night came by an event); load after {load[0]:.2f}"
    )


if __name__ == "__main__":
    main()
