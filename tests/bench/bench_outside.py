"""Benchmark: the outside scan on a 10,000-file memory repository, against ``git status`` of the same
repository measured in the same run (the machine is shared and noisy, so only the ratio means
something).

Three runs: 10,000 changes seen for the first time (4,000 edits, 2,000 deletions, 2,000 new files,
1,000 exact renames, 1,000 renames with an edit); a start with nothing new while those 10,000 items
wait; a start with nothing new in a clean 10,000-file repository.

    python3 tests/bench/bench_outside.py [FILES]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: fakes.waiting

from fakes.waiting import past_racy_window

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import outside


def _text(i: int, edit: str = "") -> str:
    return f"---\nname: memory {i}\ndescription: lesson {i}\ntype: feedback\n---\n\nLesson {i}: {'w' * (i % 80)}{edit}\n"


def make_repo(root: Path, n: int) -> None:
    """``n`` committed topic files in 100 folders."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for i in range(n):
        path = root / f"d{i % 100:02d}" / f"m{i:05d}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(_text(i))
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", "seed"], check=True)


def change(root: Path, n: int) -> int:
    """The 10,000 changes (scaled to ``n``); how many items they make."""
    k = n // 10
    for i in range(n):
        path = root / f"d{i % 100:02d}" / f"m{i:05d}.md"
        if i < 4 * k:
            path.write_text(_text(i, " (edited by auto dream)"))
        elif i < 6 * k:
            path.unlink()
        elif i < 7 * k:
            path.rename(path.with_name(f"r{i:05d}.md"))
        elif i < 8 * k:
            path.unlink()
            path.with_name(f"e{i:05d}.md").write_text(_text(i, " and a small edit"))
    for i in range(2 * k):
        path = root / f"d{i % 100:02d}" / f"new{i:05d}.md"
        path.write_text(f"A brand new note {i * 7919}, nothing like the others {'z' * (i % 70)}\n")
    return 4 * k + 2 * k + 2 * k + 2 * k


def git_status(root: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def timed_scan(cfg: Config, ledger: Ledger) -> tuple[float, outside.ScanReport]:
    started = time.perf_counter()
    report = outside.scan(cfg, ledger)
    return time.perf_counter() - started, report


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / ".gitconfig").write_text("[user]\n\tname = B\n\temail = b@example.com\n")
        os.environ["HOME"] = str(home)
        os.environ[outside.WINDOW_ENV] = "600"
        for label in ("changed", "clean"):
            cfg = Config(
                transcripts=Path(tmp) / label / "t",
                memory=Path(tmp) / label / "mem",
                state=Path(tmp) / label / "s",
            )
            Path(cfg.transcripts).mkdir(parents=True)
            make_repo(Path(cfg.memory), n)
            ledger = Ledger.open(cfg.state)
            if label == "changed":
                expected = change(Path(cfg.memory), n)
                past_racy_window(Path(cfg.memory))  # the bench's own writes are not "racy" for the hash cache
                base = git_status(Path(cfg.memory))
                first, report = timed_scan(cfg, ledger)
                kinds: dict[str, int] = {}
                for item in outside.items(ledger):
                    kinds[item.kind] = kinds.get(item.kind, 0) + 1
                print(
                    f"{n} files, {expected} changes seen for the first time: scan {first:.2f}s "
                    f"(git status {base:.3f}s, ratio {first / base:.1f}); items {kinds}"
                )
                base = git_status(Path(cfg.memory))
                again, report = timed_scan(cfg, ledger)
                print(
                    f"  a start with nothing new, {len(outside.items(ledger))} items waiting: scan {again:.3f}s "
                    f"(git status {base:.3f}s, ratio {again / base:.1f}); files hashed: {report.hashed}"
                )
            else:
                past_racy_window(Path(cfg.memory))
                timed_scan(cfg, ledger)  # the first start hashes every file once
                base = git_status(Path(cfg.memory))
                again, report = timed_scan(cfg, ledger)
                print(
                    f"{n} files, clean: a start with nothing new: scan {again:.3f}s "
                    f"(git status {base:.3f}s, ratio {again / base:.1f}); files hashed: {report.hashed}"
                )
            ledger.close()


if __name__ == "__main__":
    main()
