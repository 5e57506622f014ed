"""Benchmark: accepts per second, against plain ``git add`` + ``git commit`` of one file measured in the
same run (the machine is shared and noisy, so only the ratio means something).

    python3 tests/bench/bench_accept.py [N]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions, gitops
from dreamtui.core.models import Candidate, Match


def baseline(root: Path, n: int) -> float:
    """Seconds for ``n`` plain git commits of one new file each."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    started = time.perf_counter()
    for i in range(n):
        (root / f"f{i}.md").write_text(f"file {i}\n")
        subprocess.run(["git", "-C", str(root), "add", f"f{i}.md"], check=True)
        subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", f"f{i}"], check=True)
    return time.perf_counter() - started


def accepts(tmp: Path, n: int) -> float:
    """Seconds for ``n`` dreamtui accepts (reconcile, topic file, index line, commit, ledger)."""
    cfg = Config(transcripts=tmp / "t", memory=tmp / "mem", state=tmp / "state")
    ledger = Ledger.open(cfg.state)
    gitops.open_repo(cfg.memory)
    for i in range(n):
        ledger.put_candidate(
            Candidate(
                id=f"b{i:05d}",
                session="s",
                project="p",
                transcript="t",
                claim=f"Benchmark lesson number {i}",
                why="because",
                how_to_apply="apply it",
                type="feedback",
                scope="global",
                quote="q",
                extractor="heuristic",
                model=None,
                provenance="person",
                matches=[Match("t", 1, None, None, "person")],
                created_at="2026-01-01T00:00:00Z",
            )
        )
    started = time.perf_counter()
    for i in range(n):
        decisions.accept(cfg, ledger, f"b{i:05d}")
    return time.perf_counter() - started


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / ".gitconfig").write_text("[user]\n\tname = B\n\temail = b@example.com\n")
        os.environ["HOME"] = str(home)
        base = baseline(Path(tmp) / "plain", n)
        ours = accepts(Path(tmp), n)
    print(
        f"plain git add+commit: {n / base:.1f}/s; dreamtui accept: {n / ours:.1f}/s; "
        f"ratio accept/plain = {base / ours:.2f} (1.0 = as fast as two git commands)"
    )


if __name__ == "__main__":
    main()
