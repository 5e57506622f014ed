"""Secret scanner: speed and findings on real transcript text, the old module against the current one.

The old module is ``dreamtui/core/secrets.py`` as it is on a git revision (``main`` unless told),
imported from ``git show`` into a temporary module, and both run in the same process, on the same
lines, in alternating rounds, so the ratio holds on a loaded machine.

    python tests/bench/bench_secrets.py                  # ../shared corpus, 3 rounds
    python tests/bench/bench_secrets.py --rev main --rounds 5 --show   # list the findings only one finds
    python tests/bench/bench_secrets.py --paths docs README.md         # other text (each file a text)
    python tests/bench/bench_secrets.py --lines --paths ~/sessions     # other transcripts (each line)

Text: every line of every ``corpus/projects/**/*.jsonl`` (each line is one call, as the ledger and the
digest pass one text at a time), so MB/s counts characters of raw JSON lines.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dreamtui.core import secrets as current  # noqa: E402


def old_module(rev: str) -> ModuleType:
    """``dreamtui/core/secrets.py`` at ``rev``, imported as a module of its own."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:dreamtui/core/secrets.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "secrets_old.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("secrets_old", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["secrets_old"] = module
    spec.loader.exec_module(module)
    return module


def corpus_lines(shared: Path) -> list[str]:
    lines: list[str] = []
    for path in sorted((shared / "corpus" / "projects").rglob("*.jsonl")):
        lines.extend(path.read_text(encoding="utf-8", errors="replace").splitlines())
    return lines


def file_texts(paths: list[str], lines: bool = False) -> list[str]:
    texts: list[str] = []
    for p in paths:
        root = Path(p)
        files = sorted(f for f in root.rglob("*") if f.is_file()) if root.is_dir() else [root]
        for f in files:
            text = f.read_text(encoding="utf-8", errors="replace")
            texts.extend(text.splitlines() if lines else [text])
    return texts


def run(module: Any, texts: list[str]) -> tuple[float, list[Any]]:
    start = time.perf_counter()
    found = [module.scan(t) for t in texts]
    return time.perf_counter() - start, found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="main", help="git revision of the old module")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shared", default=os.environ.get("DREAMTUI_TEST_SHARED", str(ROOT.parent / "shared")))
    ap.add_argument("--paths", nargs="*", help="scan these files or folders instead of the corpus")
    ap.add_argument("--lines", action="store_true", help="with --paths: each line is a text (transcripts)")
    ap.add_argument("--show", action="store_true", help="print each finding that only one module makes")
    args = ap.parse_args()

    old = old_module(args.rev)
    texts = file_texts(args.paths, args.lines) if args.paths else corpus_lines(Path(args.shared))
    chars = sum(len(t) for t in texts)
    current.scan("warm up: AKIA" + "Q3EGRT7ZKLPX2M4N")
    old.scan("warm up")
    times: dict[str, list[float]] = {"old": [], "new": []}
    found: dict[str, list[Any]] = {}
    for _ in range(args.rounds):
        for name, module in (("old", old), ("new", current)):
            seconds, found[name] = run(module, texts)
            times[name].append(seconds)
    best = {name: min(ts) for name, ts in times.items()}
    print(f"{len(texts)} texts, {chars / 1e6:.2f} M characters, best of {args.rounds} rounds")
    for name in ("old", "new"):
        count = sum(len(f) for f in found[name])
        print(f"  {name}: {chars / best[name] / 1e6:6.1f} M characters/s   {count} findings")
    print(f"  new/old speed: {best['old'] / best['new']:.2f}")
    if args.show:
        for text, a, b in zip(texts, found["old"], found["new"], strict=True):
            spans_a = {(f.start, f.end) for f in a}
            for f in b:
                if (f.start, f.end) not in spans_a:
                    ctx = text[max(0, f.start - 50) : f.end + 10].replace("\n", "\\n")
                    print(f"new {f.rule}: …{ctx}…")
            spans_b = {(f.start, f.end) for f in b}
            for f in a:
                if (f.start, f.end) not in spans_b:
                    print(f"old only {f.rule}: …{text[max(0, f.start - 50) : f.end + 10]!r}…")


if __name__ == "__main__":
    main()
