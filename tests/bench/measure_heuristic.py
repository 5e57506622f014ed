"""Measure the heuristic extractor: precision/recall on hand labels, and its speed.

Run from the repository root: ``python3 tests/bench/measure_heuristic.py [--verbose]``.

Quality: the labelled fixtures (``tests/fixtures/heuristic``: the sets the rules were tuned on, and the
held-out set written after the last tuning round), and the hand-labelled lessons of ``../shared/corpus``
when present.
Speed: characters of digest per second, printed as a ratio against a baseline measured in the same
run on the same text (a plain regex sentence split: the least any sentence-level extractor must do),
because the machine is shared and absolute numbers drift.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/, for fakes.labels

from fakes.labels import HOLDOUT_DIR, TUNED_DIRS, Score, load_fixtures, score, score_corpus  # noqa: E402

from dreamtui.core.extract.base import ExtractContext  # noqa: E402
from dreamtui.core.extract.heuristic import HeuristicExtractor  # noqa: E402
from dreamtui.core.models import Digest  # noqa: E402

CORPUS = HERE.parent.parent.parent / "shared" / "corpus" / "projects"
_SPLIT = re.compile(r"[^\n]*?(?:[.!?]+(?=\s|$)|$)", re.MULTILINE)


def report(name: str, s: Score, verbose: bool) -> None:
    print(f"{name:<28} labels {s.labels:>3}  candidates {s.candidates:>3}  true {s.true_positives:>3}  "
          f"precision {s.precision:.2f}  recall {s.recall:.2f}")
    if verbose:
        for miss in s.misses:
            print(f"    missed: {miss}")
        for fp in s.false_positives:
            print(f"    false positive: {fp}")


def corpus_digests() -> list[Digest]:
    from dreamtui.core.digest import digest_session
    from dreamtui.core.transcripts import discover, session_files

    sessions = sorted({(tf.project, tf.session) for tf in discover(CORPUS)})
    return [digest_session(session_files(CORPUS, p, s)) for p, s in sessions]


def interleaved(a, b, rounds: int = 9) -> tuple[float, float]:
    """Best time of ``a`` and of ``b``, run alternately so load changes hit both alike."""
    best_a = best_b = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        a()
        best_a = min(best_a, time.perf_counter() - t)
        t = time.perf_counter()
        b()
        best_b = min(best_b, time.perf_counter() - t)
    return best_a, best_b


def speed(digests: list[Digest], repeat: int = 10) -> None:
    ex = HeuristicExtractor()
    digests = digests * repeat  # long enough that timer and scheduler noise stay small
    chars = sum(len(t.text) for d in digests for t in d.turns)

    def baseline() -> None:
        for d in digests:
            for t in d.turns:
                for _m in _SPLIT.finditer(t.text):
                    pass

    def heuristic() -> None:
        for d in digests:
            ex.extract(d, ExtractContext(project=d.project))

    base, heur = interleaved(baseline, heuristic)
    print(f"speed: {chars} chars of digest; heuristic {chars / heur / 1e6:.1f} M chars/s, "
          f"baseline split {chars / base / 1e6:.1f} M chars/s; heuristic costs {heur / base:.1f}x the baseline")


def main() -> None:
    verbose = "--verbose" in sys.argv or "-v" in sys.argv
    ex = HeuristicExtractor()
    tuned = []
    for folder in TUNED_DIRS:
        items = load_fixtures(folder)
        tuned += items
        report(f"tuned on: {folder or 'fixtures'}", score(ex, items), verbose)
    report("tuned on: all", score(ex, tuned), verbose)
    held = load_fixtures(HOLDOUT_DIR)
    report("held out (never tuned on)", score(ex, held), verbose)
    digests = [i.digest for i in tuned + held]
    if CORPUS.is_dir():
        report("../shared corpus", score_corpus(ex, CORPUS), verbose)
        digests += corpus_digests()
    else:
        print("../shared corpus: absent, skipped")
    speed(digests)


if __name__ == "__main__":
    main()
