"""Benchmark the plugin's hooks the way Claude Code runs them: wall time from start to exit.

Usage: ``python3 tests/bench/bench_hooks.py [--runs 30] [--pending 25]``

Each run starts the hook's command line from ``hooks/hooks.json`` in ``/bin/sh`` with
``CLAUDE_PLUGIN_ROOT`` set and the event's JSON on stdin, and waits for it to exit (what Claude Code
waits for; it gives every SessionEnd hook 1.5 s together). Timed, interleaved so the noise of a shared
machine hits them alike, median and 95th percentile:

- ``session-end``: records the ended session (``<state>/ended/<id>.json``), a new session id per run;
- ``session-start``: counts the pending proposals of a ledger holding ``--pending`` of them;
- ``python3 -c pass`` and ``python3 -S -c pass``: the floor, starting the interpreter and nothing else
  (the hooks run ``python3 -S``: no site-packages, so no ``.pth`` file is read);
- ``dreamtui --version``: what a hook that imported the dreamtui package would cost at least.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from fakes.candidates import make  # noqa: E402

from dreamtui.core.ledger import Ledger  # noqa: E402


def command(event: str) -> str:
    (group,) = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"][event]
    return str(group["hooks"][0]["command"])


def timed(argv: list[str], stdin: bytes, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.returncode} {done.stderr!r}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pending", type=int, default=25)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dreamtui-bench-hooks-"))
    try:
        state = work / "state"
        with Ledger.open(state) as ledger:
            for n in range(args.pending):
                make(ledger, n)
        env = {**os.environ, "CLAUDE_PLUGIN_ROOT": str(REPO), "DREAMTUI_STATE": str(state)}
        dreamtui = [sys.executable, "-m", "dreamtui", "--version"]
        env["PYTHONPATH"] = str(REPO)
        cases = {
            "session-end": lambda: timed(
                ["/bin/sh", "-c", command("SessionEnd")],
                json.dumps(
                    {
                        "session_id": str(uuid.uuid4()),
                        "transcript_path": str(work / "t.jsonl"),
                        "cwd": str(work),
                        "hook_event_name": "SessionEnd",
                        "reason": "prompt_input_exit",
                    }
                ).encode(),
                env,
            ),
            "session-start": lambda: timed(
                ["/bin/sh", "-c", command("SessionStart")],
                json.dumps(
                    {"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"}
                ).encode(),
                env,
            ),
            "python3 -c pass": lambda: timed(["python3", "-c", "pass"], b"", env),
            "python3 -S -c pass": lambda: timed(["python3", "-S", "-c", "pass"], b"", env),
            "dreamtui --version": lambda: timed(dreamtui, b"", env),
        }
        results: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, run in cases.items():
                results[name].append(run())
        print(f"{args.runs} runs each, wall time from start to exit (ms), load {os.getloadavg()[0]:.1f}")
        for name, times in results.items():
            ms = sorted(t * 1000 for t in times)
            p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
            print(f"  {name:20s} median {statistics.median(ms):7.1f}  p95 {p95:7.1f}  max {ms[-1]:7.1f}")
        print(f"  records written: {len(list((state / 'ended').iterdir()))}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
