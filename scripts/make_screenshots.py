"""Make ``screenshots/*.svg``: every screen of the real app on the demo data.

    python scripts/make_screenshots.py [--out screenshots] [--size 150x45]

The demo is prepared in a temporary folder (one dream cycle with the offline extractor), then the app
is driven with Textual's Pilot and each screen saved as SVG. Clock and git dates are pinned, so the
images only change when the app does.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import shutil
import time
from pathlib import Path

FIXED_NOW = "2026-11-28T18:30:00Z"
DEMO_ROOT = Path("/tmp/dreamtui-snapshot-demo")
"""Where each shot's demo is prepared, as tests/test_tui_snapshots.py prepares it (and under its lock):
Aider names a session after the folder its history lies in, and the queue orders one cycle's proposals
by an id made from the session, so a fixed folder keeps the pictures the same from run to run."""
# (file name, keys pressed from the queue, what it shows)
SHOTS: list[tuple[str, list[str], str]] = [
    ("queue", [], "the queue and the evidence of the highlighted proposal"),
    ("queue-duplicate", ["j"] * 4, "a suspected duplicate beside the existing memory"),
    ("queue-untrusted", ["j"] * 9, "a proposal whose quote is only in tool output"),
    ("queue-markup", ["j", "j"], "Rich markup and an ANSI escape shown literally"),
    ("queue-grouped", ["o"], "the queue grouped by project, a header line per group"),
    ("accept-untrusted", ["j"] * 9 + ["a"], "accepting tool output takes an explicit yes"),
    ("reject", ["r"], "the reject dialog"),
    ("edit", ["e"], "edit, then accept"),
    ("sessions", ["2", "j"], "projects and sessions: one project's sessions of four agents"),
    ("cycles", ["3"], "dream cycles with their waking messages"),
    ("briefings", ["4"], "the proposed briefing as a diff, with accept and reject"),
    (
        "stats",
        ["a", "j", "r", "3", "enter", "a", "s", "a", "5"],
        "accept rate and the rest, after five decisions",
    ),
    ("memory", ["a", "6", "j"], "the memory repo after one accept, the index gauge"),
    ("promotion", ["7"], "the promotion gates as a checklist"),
    ("help", ["question_mark"], "the help: every key of the queue and the global ones"),
]


def pin_environment() -> None:
    """Fixed clock and git identity/dates, so every run draws the same pictures."""
    os.environ["DREAMTUI_NOW"] = FIXED_NOW
    os.environ["TZ"] = "UTC"  # the evidence shows local times
    time.tzset()
    for who in ("AUTHOR", "COMMITTER"):
        os.environ[f"GIT_{who}_NAME"] = "Demo Person"
        os.environ[f"GIT_{who}_EMAIL"] = "demo@example.com"
        os.environ[f"GIT_{who}_DATE"] = "2026-11-28T18:30:00+00:00"


async def shoot(out: Path, size: tuple[int, int]) -> list[Path]:
    from dreamtui.core.ledger import Ledger
    from dreamtui.demo import prepare_demo
    from dreamtui.tui.app import DreamApp

    written: list[Path] = []
    for name, keys, _what in SHOTS:
        with open(f"{DEMO_ROOT}.lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            shutil.rmtree(DEMO_ROOT, ignore_errors=True)
            cfg = prepare_demo(DEMO_ROOT)
            ledger = Ledger.open(cfg.state)
            with ledger.write() as c:
                c.execute("UPDATE dream_cycles SET stats = json_set(stats, '$.seconds', 0.42)")
            app = DreamApp(cfg, ledger, watch=False)
            async with app.run_test(size=size) as pilot:
                await pilot.pause(0.3)
                for key in keys:
                    await pilot.press(key)
                    while app.decisions_waiting:  # let each decision land before the next key
                        await pilot.pause(0.05)
                await pilot.pause(0.4)
                path = out / f"{name}.svg"
                path.write_text(app.export_screenshot(title=f"dreamtui — {name}"), encoding="utf-8")
                written.append(path)
            ledger.close()
            shutil.rmtree(DEMO_ROOT, ignore_errors=True)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "screenshots")
    parser.add_argument("--size", default="150x45", help="terminal WIDTHxHEIGHT")
    args = parser.parse_args()
    width, height = (int(x) for x in args.size.lower().split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    pin_environment()
    for path in asyncio.run(shoot(args.out, (width, height))):
        print(path)


if __name__ == "__main__":
    main()
