"""Measure the heuristic extractor: precision/recall on hand labels, and its speed.

Run from the repository root: ``python3 tests/bench/measure_heuristic.py [--verbose] [--no-round4] [--every]``.
``--every`` measures the rules themselves (every moment they find, no confidence threshold); without it,
what the shipped extractor proposes.

Quality: the labelled fixtures (``tests/fixtures/heuristic``: the sets the rules were tuned on, including
``holdout/`` since round four), the hand-labelled lessons of ``../shared/corpus`` when present, and the
blind set ``round4_holdout/`` (written by somebody else while the round-four rules were made; reported
as its own row, never tuned on; ``--no-round4`` leaves it unread while working on the rules).
Speed: characters of digest per second, printed as a ratio against a baseline measured in the same
run on the same text (a plain regex sentence split: the least any sentence-level extractor must do),
because the machine is shared and absolute numbers drift.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/, for fakes.labels
sys.path.insert(0, str(HERE.parent.parent))  # the repository root, for dreamtui

from fakes.labels import HOLDOUT_DIR, TUNED_DIRS, Score, load_fixtures, score, score_corpus  # noqa: E402

from dreamtui.core.extract.base import ExtractContext  # noqa: E402
from dreamtui.core.extract.heuristic import EVERY_MOMENT, HeuristicExtractor  # noqa: E402
from dreamtui.core.models import Digest  # noqa: E402

CORPUS = (
    Path(os.environ.get("DREAMTUI_TEST_SHARED") or HERE.parent.parent.parent / "shared")
    / "corpus"
    / "projects"
)
ROUND4_DIR = "round4_holdout"
"""The blind set of round four: measured once with the final rules, never tuned on."""
_SPLIT = re.compile(r"[^\n]*?(?:[.!?]+(?=\s|$)|$)", re.MULTILINE)


def report(name: str, s: Score, verbose: bool) -> None:
    print(
        f"{name:<28} labels {s.labels:>3}  candidates {s.candidates:>3}  true {s.true_positives:>3}  "
        f"precision {s.precision:.2f}  recall {s.recall:.2f}"
    )
    if verbose:
        for miss in s.misses:
            print(f"    missed: {miss}")
        for fp in s.false_positives:
            print(f"    false positive: {fp}")


def corpus_digests() -> list[Digest]:
    from dreamtui.core.ingest.digest import digest_session
    from dreamtui.core.ingest.transcripts import discover, session_files

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
    print(
        f"speed: {chars} chars of digest; heuristic {chars / heur / 1e6:.1f} M chars/s, "
        f"baseline split {chars / base / 1e6:.1f} M chars/s; heuristic costs {heur / base:.1f}x the baseline"
    )


def corpus_speed(repeat: int = 5) -> None:
    """Seconds to digest and extract the whole corpus, per MB of transcript and per MB of digest text."""
    from dreamtui.core.ingest.digest import digest_session
    from dreamtui.core.ingest.transcripts import discover, session_files

    ex = HeuristicExtractor()
    raw = sum(p.stat().st_size for p in CORPUS.rglob("*.jsonl"))
    sessions = sorted({(tf.project, tf.session) for tf in discover(CORPUS)})
    best_digest = best_extract = float("inf")
    chars = 0
    for _ in range(repeat):
        t = time.perf_counter()
        digests = [digest_session(session_files(CORPUS, p, s)) for p, s in sessions]
        best_digest = min(best_digest, time.perf_counter() - t)
        chars = sum(len(turn.text) for d in digests for turn in d.turns)
        t = time.perf_counter()
        for d in digests:
            ex.extract(d, ExtractContext(project=d.project))
        best_extract = min(best_extract, time.perf_counter() - t)
    print(
        f"whole corpus: {raw / 1e6:.1f} MB of transcripts, {chars} chars of digest; digest {best_digest:.3f} s, "
        f"heuristic extraction {best_extract * 1000:.1f} ms = {best_extract / (raw / 1e6):.4f} s per MB of "
        f"transcript, {best_extract / (chars / 1e6):.2f} s per MB of digest text"
    )


def main() -> None:
    verbose = "--verbose" in sys.argv or "-v" in sys.argv
    ex = HeuristicExtractor(EVERY_MOMENT if "--every" in sys.argv else None)
    tuned = []
    for folder in (*TUNED_DIRS, HOLDOUT_DIR):
        items = load_fixtures(folder)
        tuned += items
        label = f"{folder or 'fixtures'}" + (" (was held out, rounds 1-3)" if folder == HOLDOUT_DIR else "")
        report(f"tuned on: {label}", score(ex, items), verbose)
    report("tuned on: all", score(ex, tuned), verbose)
    digests = [i.digest for i in tuned]
    if CORPUS.is_dir():
        report("../shared corpus (tuned on)", score_corpus(ex, CORPUS), verbose)
        digests += corpus_digests()
    else:
        print("../shared corpus: absent, skipped")
    if "--no-round4" in sys.argv:
        print("round4_holdout: not read (--no-round4)")
    elif (HERE.parent / "fixtures" / "heuristic" / ROUND4_DIR).is_dir():
        blind = load_fixtures(ROUND4_DIR)
        s = score(ex, blind)
        roles: dict[str, int] = {}
        for item in blind:
            for ti, _s, _e, _t in item.labels:
                role = item.digest.turns[ti].role
                roles[role] = roles.get(role, 0) + 1
        report("round4_holdout (blind)", s, verbose)
        print(f"    round4 lessons by role: {', '.join(f'{k} {v}' for k, v in sorted(roles.items()))}")
        digests += [i.digest for i in blind]
    else:
        print("round4_holdout: absent, skipped")
    speed(digests)
    if CORPUS.is_dir():
        corpus_speed()


if __name__ == "__main__":
    main()
