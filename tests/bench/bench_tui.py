"""Benchmark the review app on a big ledger: 10,000 pending candidates over 2,000 sessions.

    python tests/bench/bench_tui.py [--candidates 10000] [--sessions 2000]

Prints the time from start to the first screen (the queue filled and painted) and from a key press
to the repaint (move down with ``j``; accept with ``a``, which removes the row and highlights the
next one), as medians over several presses. Targets: first screen < 1 s, key to repaint < 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from fakes.tui import make_config  # noqa: E402
from fakes.waiting import pause_until  # noqa: E402
from textual.screen import Screen  # noqa: E402

from dreamtui.core.ledger import Ledger  # noqa: E402
from dreamtui.tui.app import DreamApp  # noqa: E402
from dreamtui.tui.widgets.queue_table import QueueTable  # noqa: E402


def populate(ledger: Ledger, transcripts: Path, n_candidates: int, n_sessions: int) -> None:
    """Fill the ledger with ``n_sessions`` files rows and ``n_candidates`` pending candidates.

    Every candidate points at a line of a real demo transcript (so the evidence view has work to do).
    """
    demo = next(transcripts.rglob("*.jsonl"))
    now = "2026-11-28T12:00:00Z"
    with ledger.write() as c:
        for s in range(n_sessions):
            project = f"-home-kim-src-project-{s % 40:02d}"
            c.execute(
                "INSERT INTO files(path, project, session, size, offset, lines, dreamed_offset, "
                "dreamed_lines, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    f"/nowhere/{project}/session-{s:05d}.jsonl",
                    project,
                    f"session-{s:05d}",
                    50_000,
                    50_000,
                    120,
                    40_000 if s % 3 else 50_000,
                    100,
                    now,
                ),
            )
        rows = []
        for i in range(n_candidates):
            s = i % n_sessions
            match = [
                {
                    "file": str(demo),
                    "line": 10,
                    "uuid": None,
                    "timestamp": now,
                    "provenance": "person",
                    "copy": False,
                }
            ]
            rows.append(
                (
                    f"c{i:011d}",
                    f"session-{s:05d}",
                    f"-home-kim-src-project-{s % 40:02d}",
                    str(demo),
                    f"Lesson number {i}: never do thing {i} without checking the {i % 17} other things",
                    "Because it broke before.",
                    "Check first.",
                    ("feedback", "project", "user")[i % 3],
                    "global",
                    "No, don't use unittest.mock for the database here",
                    "heuristic",
                    "pending",
                    "person",
                    json.dumps(match),
                    None if i % 7 else "x.md",
                    "[]",
                    i % 5,
                    f"2026-11-{1 + i % 28:02d}T12:00:00Z",
                    now,
                )
            )
        c.executemany(
            "INSERT INTO candidates(id, session, project, transcript, claim, why, how_to_apply, type, scope, "
            "quote, extractor, status, provenance, matches, duplicate_of, secrets, corroborated, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


class Probe:
    """Timestamps of compositor refreshes (a repaint reaching the terminal) and of finished actions."""

    def __init__(self) -> None:
        self.refreshes: list[float] = []
        original = Screen._compositor_refresh

        def refresh(screen: Screen) -> None:
            original(screen)
            self.refreshes.append(time.perf_counter())

        Screen._compositor_refresh = refresh  # type: ignore[method-assign]

    def first_after(self, t: float) -> float | None:
        return next((r for r in self.refreshes if r >= t), None)


async def press_to_repaint(pilot, probe: Probe, key: str, done: list[tuple[float, float]]) -> float:
    """Seconds from the key's action starting to the first repaint after it finished.

    (Pilot's own key simulation and idle waits are not counted: Textual dispatches a real key
    press to its binding's action in well under a millisecond.)
    """
    done.clear()
    await pilot.press(key)
    await pause_until(pilot, lambda: bool(done) and probe.first_after(done[-1][1]) is not None, what=key)
    start, end = done[-1]
    painted = probe.first_after(end)
    assert painted is not None, f"no repaint after {key!r}"
    return painted - start


async def measure(cfg, ledger: Ledger, n_candidates: int, presses: int) -> dict[str, float]:
    probe = Probe()
    t0 = time.perf_counter()
    app = DreamApp(cfg, ledger, watch=False, reconcile=False)
    async with app.run_test(size=(150, 45)) as pilot:
        table = app.query_one(QueueTable)
        await pause_until(pilot, lambda: table.row_count > 0, what="the queue's rows")
        filled = time.perf_counter()
        await pause_until(pilot, lambda: probe.first_after(filled) is not None, what="the first paint")
        first = probe.first_after(filled) - t0
        screen = app.screen
        done: list[tuple[float, float]] = []
        for name in ("action_down", "action_accept", "action_filter", "apply"):
            original = getattr(screen, name)

            def timed(original=original) -> None:
                start = time.perf_counter()
                original()
                done.append((start, time.perf_counter()))

            setattr(screen, name, timed)
        app.decide = lambda *a, **k: None  # time the UI only: the git commit runs in the decision worker
        moves = [await press_to_repaint(pilot, probe, "j", done) for _ in range(presses)]
        accepts = [await press_to_repaint(pilot, probe, "a", done) for _ in range(presses)]
        await press_to_repaint(pilot, probe, "slash", done)
        filter_s = await press_to_repaint(pilot, probe, "9", done)  # filter 10,000 rows on a keystroke
        rows_loaded = table.row_count
    return {
        "first_screen_s": first,
        "move_median_ms": 1000 * statistics.median(moves),
        "move_max_ms": 1000 * max(moves),
        "accept_median_ms": 1000 * statistics.median(accepts),
        "accept_max_ms": 1000 * max(accepts),
        "filter_keystroke_ms": 1000 * filter_s,
        "rows_after_filter_9": rows_loaded,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=2_000)
    parser.add_argument("--presses", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = make_config(Path(tmp))
        ledger = Ledger.open(cfg.state)
        populate(ledger, cfg.transcripts, args.candidates, args.sessions)
        result = asyncio.run(measure(cfg, ledger, args.candidates, args.presses))
        ledger.close()
    print(f"{args.candidates:,} candidates, {args.sessions:,} sessions")
    for key, value in result.items():
        print(f"  {key:22} {value:8.3f}")


if __name__ == "__main__":
    main()
